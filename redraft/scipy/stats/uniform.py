"""The uniform distribution on [loc, loc + scale]."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy.stats._common import promote3


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote3(x, loc, scale)
    inside = jnp.logical_and(x >= loc, x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -jnp.inf)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote3(x, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    return jnp.where(jnp.logical_and(q >= 0, q <= 1), loc + q * scale, jnp.nan)
