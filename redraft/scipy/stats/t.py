"""Student's t distribution with df degrees of freedom."""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote4


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote4(x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * (df + 1)
    norm_const = (special.gammaln(half) - special.gammaln(0.5 * df)
                  - 0.5 * jnp.log(df * math.pi) - jnp.log(scale))
    return norm_const - half * jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
