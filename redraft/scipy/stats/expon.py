"""The exponential distribution with rate 1 / scale, shifted by loc."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy.stats._common import promote3, standardized


def logpdf(x, loc=0, scale=1):
    z, scale = standardized(x, loc, scale)
    return jnp.where(z < 0, -jnp.inf, -z - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 0.0, -jnp.expm1(-jnp.maximum(z, 0)))


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 1.0, jnp.exp(-jnp.maximum(z, 0)))


def logsf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 0.0, -z)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    inside = jnp.logical_and(q >= 0, q <= 1)
    return jnp.where(inside, loc - scale * jnp.log1p(-q), jnp.nan)
