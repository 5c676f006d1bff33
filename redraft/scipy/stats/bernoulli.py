"""The Bernoulli distribution: 1 with probability p, else 0."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote2, promote3


def logpmf(k, p, loc=0):
    k, p, loc = promote3(k, p, loc)
    x = k - loc
    value = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return jnp.where(jnp.logical_or(x == 0, x == 1), value, -jnp.inf)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote2(k, p)
    value = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))
    return jnp.where(jnp.logical_and(p >= 0, p <= 1), value, jnp.nan)


def ppf(q, p):
    q, p = promote2(q, p)
    value = jnp.where(q <= 1 - p, 0.0, 1.0)
    bad = jnp.logical_or(jnp.logical_or(q < 0, q > 1), jnp.logical_or(p < 0, p > 1))
    return jnp.where(bad, jnp.nan, value)
