"""The normal distribution N(loc, scale**2)."""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote3, standardized

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x, loc=0, scale=1):
    z, scale = standardized(x, loc, scale)
    return -0.5 * z * z - _HALF_LOG_2PI - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.ndtr(z)


def logcdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.log_ndtr(z)


def sf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.ndtr(-z)


def logsf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.log_ndtr(-z)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    return special.ndtri(1 - q) * scale + loc
