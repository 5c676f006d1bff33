"""The Poisson distribution with mean mu."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote2, promote3


def logpmf(k, mu, loc=0):
    k, mu, loc = promote3(k, mu, loc)
    x = k - loc
    value = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    valid = jnp.logical_and(x >= 0, x == jnp.round(x))
    return jnp.where(valid, value, -jnp.inf)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote3(k, mu, loc)
    x = jnp.floor(k - loc)
    return jnp.where(x < 0, 0.0, special.gammaincc(jnp.maximum(x, 0) + 1, mu))


_ENTROPY_TERMS = 224  # covers k <= mu + 10 sqrt(mu) + 20 for every mu < 100


def entropy(mu, loc=0):
    """-sum_k pmf(k) log pmf(k): summed over k < 224 for mu < 100, from the asymptotic
    (Stirling) series 0.5 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3) above;
    nan for mu <= 0. loc does not change the entropy."""
    mu, loc = promote2(mu, loc)
    mu = mu + jnp.zeros_like(loc)
    small = mu < 100
    safe_mu = jnp.where(small, jnp.maximum(mu, 1e-30), 1.0)
    ks = jnp.arange(_ENTROPY_TERMS, dtype=mu.dtype).reshape((_ENTROPY_TERMS,) + (1,) * mu.ndim)
    log_p = special.xlogy(ks, safe_mu) - special.gammaln(ks + 1) - safe_mu
    summed = -jnp.sum(jnp.exp(log_p) * log_p, axis=0)
    big = jnp.where(small, 100.0, mu)
    asymptotic = (0.5 * jnp.log(2 * jnp.pi * jnp.e * big) - 1 / (12 * big)
                  - 1 / (24 * big ** 2) - 19 / (360 * big ** 3))
    return jnp.where(mu <= 0, jnp.nan, jnp.where(small, summed, asymptotic))
