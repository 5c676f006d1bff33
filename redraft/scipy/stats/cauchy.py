"""The Cauchy distribution."""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft.scipy.stats._common import promote3, standardized


def logpdf(x, loc=0, scale=1):
    z, scale = standardized(x, loc, scale)
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(z * z)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return 0.5 + jnp.arctan(z) / math.pi


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return 0.5 - jnp.arctan(z) / math.pi


def logsf(x, loc=0, scale=1):
    return jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    inside = jnp.logical_and(q >= 0, q <= 1)
    return jnp.where(inside, loc + scale * jnp.tan(math.pi * (q - 0.5)), jnp.nan)


def isf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    inside = jnp.logical_and(q >= 0, q <= 1)
    return jnp.where(inside, loc - scale * jnp.tan(math.pi * (q - 0.5)), jnp.nan)
