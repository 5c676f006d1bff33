"""The Dirichlet distribution over the probability simplex (the last axis of x)."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.scipy import special
from redraft.scipy.stats._common import promote2


def logpdf(x, alpha):
    x, alpha = promote2(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, (1 - jnp.sum(x, axis=0))[None]], axis=0)
    normalize = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    log_probs = jnp.sum(special.xlogy(a - 1, x), axis=0) - normalize
    on_simplex = jnp.logical_and(jnp.all(x >= 0, axis=0),
                                 jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-5)
    return jnp.where(on_simplex, log_probs, -jnp.inf)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
