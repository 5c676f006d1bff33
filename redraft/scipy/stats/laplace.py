"""The Laplace (double exponential) distribution."""
from __future__ import annotations


import redraft.numpy as jnp
from redraft.scipy.stats._common import standardized


def logpdf(x, loc=0, scale=1):
    z, scale = standardized(x, loc, scale)
    return -jnp.abs(z) - jnp.log(2 * scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    half_tail = 0.5 * jnp.exp(-jnp.abs(z))
    return jnp.where(z <= 0, half_tail, 1 - half_tail)


