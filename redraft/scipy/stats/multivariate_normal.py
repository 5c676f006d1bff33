"""The multivariate normal distribution N(mean, cov) over the last axis of x.

The covariance is factored by lax.linalg's Cholesky decomposition (of the symmetrised
covariance, so its gradient is symmetric, as JAX's) and the Mahalanobis distance found by a
triangular solve; both primitives carry their derivatives and batch over leading axes.
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft.compiler.primitives import factorizations as lax_linalg
from redraft.scipy.stats._common import promote3


def _whiten(lower, d):
    """y with lower @ y = d, for d of shape (..., n) (lower's batch axes broadcast)."""
    batch = np.broadcast_shapes(lower.shape[:-2], d.shape[:-1])
    n = lower.shape[-1]
    lower = jnp.broadcast_to(lower, batch + (n, n))
    d = jnp.broadcast_to(d, batch + (n,))
    y = lax_linalg.triangular_solve(lower, d[..., None], left_side=True, lower=True)
    return y[..., 0]


def logpdf(x, mean, cov, allow_singular: bool | None = None):
    """log N(x; mean, cov); cov may be a matrix, a vector (its diagonal) or a scalar."""
    if allow_singular not in (None, False):
        raise NotImplementedError("allow_singular=True is not supported (as in JAX)")
    x, mean, cov = promote3(x, mean, cov)
    if mean.ndim == 0 and cov.ndim == 0:
        return (-0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * math.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if cov.ndim < 2:
        variances = jnp.broadcast_to(cov, (n,))
        z = (x - mean) / jnp.sqrt(variances)
        log_det = jnp.sum(jnp.log(variances))
        return -0.5 * (n * math.log(2 * math.pi) + log_det + jnp.sum(z * z, axis=-1))
    lower = lax_linalg.cholesky(cov)  # symmetrised: cov's gradient is symmetric, as JAX's
    y = _whiten(lower, x - mean)
    return (-0.5 * jnp.sum(y * y, axis=-1) - n / 2 * math.log(2 * math.pi)
            - jnp.sum(jnp.log(jnp.diagonal(lower, axis1=-2, axis2=-1)), axis=-1))


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
