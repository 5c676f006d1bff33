"""The gamma distribution with shape a."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote4


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote4(x, a, loc, scale)
    z = (x - loc) / scale
    safe_z = jnp.where(z > 0, z, 1.0)
    value = special.xlogy(a - 1, safe_z) - safe_z - special.gammaln(a) - jnp.log(scale)
    at_zero = jnp.where(a == 1, -jnp.log(scale), jnp.where(a < 1, jnp.inf, -jnp.inf))
    return jnp.where(z > 0, value, jnp.where(z == 0, at_zero, -jnp.inf))


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote4(x, a, loc, scale)
    z = jnp.maximum((x - loc) / scale, 0)
    return special.gammainc(a, z)


def logcdf(x, a, loc=0, scale=1):
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote4(x, a, loc, scale)
    z = jnp.maximum((x - loc) / scale, 0)
    return special.gammaincc(a, z)


def logsf(x, a, loc=0, scale=1):
    return jnp.log(sf(x, a, loc, scale))
