"""The multivariate normal distribution N(mean, cov) over the last axis of x.

The covariance is factored by a Cholesky decomposition written here with redraft.numpy in a
lax.fori_loop over columns, and the Mahalanobis distance is found by forward substitution
the same way, so the whole log-density is array code the transforms can follow.
"""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft import lax
from redraft.scipy.stats._common import promote3


def _one_hot(j, n: int, like):
    """Row vector e_j of length n in like's dtype (j may be a loop counter)."""
    return (jnp.arange(n) == j).astype(like.dtype)


def _cholesky_step(j, carry):
    cov, lower = carry
    n = cov.shape[-1]
    e_j = _one_hot(j, n, cov)
    column = jnp.sum(cov * e_j, axis=-1)                       # cov[..., :, j]
    row_j = jnp.sum(lower * e_j[:, None], axis=-2)              # lower[..., j, :]
    column = column - jnp.sum(lower * row_j[..., None, :], axis=-1)
    pivot = jnp.sqrt(jnp.sum(column * e_j, axis=-1, keepdims=True))
    below = (jnp.arange(n) >= j).astype(cov.dtype)
    return cov, lower + (column / pivot * below)[..., :, None] * e_j


def _cholesky(cov):
    """The lower Cholesky factor of symmetric positive definite matrices cov (..., n, n),
    column by column (Cholesky-Crout)."""
    _, lower = lax.fori_loop(0, cov.shape[-1], _cholesky_step, (cov, jnp.zeros_like(cov)))
    return lower


def _forward_step(i, carry):
    lower, b, y = carry
    n = lower.shape[-1]
    e_i = _one_hot(i, n, lower)
    row = jnp.sum(lower * e_i[:, None], axis=-2)
    diag = jnp.sum(row * e_i, axis=-1)
    y_i = (jnp.sum(b * e_i, axis=-1) - jnp.sum(row * y, axis=-1)) / diag
    return lower, b, y + y_i[..., None] * e_i


def _forward_solve(lower, b):
    """y with lower @ y = b, for b of shape (..., n)."""
    b = b + jnp.zeros(lower.shape[:-1], lower.dtype)
    _, _, y = lax.fori_loop(0, lower.shape[-1], _forward_step, (lower, b, jnp.zeros_like(b)))
    return y


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
    lower = _cholesky(cov)
    y = _forward_solve(lower, x - mean)
    log_det = 2 * jnp.sum(jnp.log(jnp.diagonal(lower, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (n * math.log(2 * math.pi) + log_det + jnp.sum(y * y, axis=-1))


def pdf(x, mean, cov):
    return jnp.exp(logpdf(x, mean, cov))
