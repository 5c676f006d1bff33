"""The beta distribution on [loc, loc + scale]."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote5


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    z = (x - loc) / scale
    inside = jnp.logical_and(z >= 0, z <= 1)
    safe = jnp.where(inside, z, 0.5)
    value = (special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe)
             - special.betaln(a, b) - jnp.log(scale))
    return jnp.where(inside, value, -jnp.inf)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    z = jnp.clip((x - loc) / scale, 0, 1)
    return special.betainc(a, b, z)


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    z = jnp.clip((x - loc) / scale, 0, 1)
    return special.betainc(b, a, 1 - z)


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
