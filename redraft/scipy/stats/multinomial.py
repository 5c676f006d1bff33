"""The multinomial distribution: counts x (last axis) of n trials with probabilities p."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote1, promote2


def logpmf(x, n, p):
    x, p = promote2(x, p)
    n = promote1(n)
    log_factorials = special.gammaln(n + 1) - jnp.sum(special.gammaln(x + 1), axis=-1)
    value = log_factorials + jnp.sum(special.xlogy(x, p), axis=-1)
    return jnp.where(jnp.sum(x, axis=-1) == n, value, -jnp.inf)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
