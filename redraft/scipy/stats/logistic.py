"""The logistic distribution."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft import nn
from redraft.scipy import special
from redraft.scipy.stats._common import promote3, standardized


def logpdf(x, loc=0, scale=1):
    z, scale = standardized(x, loc, scale)
    return -z - 2 * nn.softplus(-z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.expit(z)


def sf(x, loc=0, scale=1):
    z, _ = standardized(x, loc, scale)
    return special.expit(-z)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    return special.logit(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote3(q, loc, scale)
    return -special.logit(q) * scale + loc
