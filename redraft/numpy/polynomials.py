"""Polynomials as coefficient arrays, highest power first (as numpy.polyval and friends)."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "vander"]


def polyval(p, x, *, unroll: int = 16) -> Array:
    """p[0] * x**(n-1) + ... + p[n-1], by Horner's rule."""
    p, x = jnp.asarray(p), jnp.asarray(x)
    dtype = jnp.result_type(p, x)
    out = jnp.zeros(x.shape, dtype)
    for k in np.arange(p.shape[0]):
        out = out * x + p[k]
    return out


def _trim_to_same_length(a: Array, b: Array) -> tuple[Array, Array]:
    n = max(a.shape[0], b.shape[0])
    return (jnp.pad(a, (n - a.shape[0], 0)), jnp.pad(b, (n - b.shape[0], 0)))


def polyadd(a1, a2) -> Array:
    """The sum of two polynomials."""
    a, b = _trim_to_same_length(jnp.atleast_1d(a1), jnp.atleast_1d(a2))
    return a + b


def polysub(a1, a2) -> Array:
    """The difference of two polynomials."""
    a, b = _trim_to_same_length(jnp.atleast_1d(a1), jnp.atleast_1d(a2))
    return a - b


def polymul(a1, a2, *, trim_leading_zeros: bool = False) -> Array:
    """The product of two polynomials (the convolution of their coefficients)."""
    a, b = jnp.atleast_1d(a1), jnp.atleast_1d(a2)
    if trim_leading_zeros:
        a = jnp.asarray(np.trim_zeros(np.asarray(a), "f")) if a.shape[0] > 1 else a
        b = jnp.asarray(np.trim_zeros(np.asarray(b), "f")) if b.shape[0] > 1 else b
    return jnp.convolve(a, b)


def polyder(p, m: int = 1) -> Array:
    """The m-th derivative of a polynomial."""
    if m < 0:
        raise ValueError("polyder: the order of derivative must be non-negative")
    p = jnp.asarray(p)
    if not np.issubdtype(p.dtype, np.inexact):
        p = p.astype(float)
    for _ in np.arange(m):
        n = p.shape[0] - 1
        p = p[:-1] * jnp.arange(n, 0, -1).astype(p.dtype)
    return p


def polyint(p, m: int = 1, k=None) -> Array:
    """The m-th antiderivative of a polynomial, with integration constants k (default 0)."""
    if m < 0:
        raise ValueError("polyint: the order of integral must be non-negative")
    p = jnp.asarray(p)
    if not np.issubdtype(p.dtype, np.inexact):
        p = p.astype(float)
    ks = jnp.zeros((m,), p.dtype) if k is None else jnp.broadcast_to(
        jnp.atleast_1d(jnp.asarray(k, p.dtype)), (m,))
    for i in np.arange(m):
        n = p.shape[0]
        p = jnp.concatenate([p / jnp.arange(n, 0, -1).astype(p.dtype), ks[i:i + 1]])
    return p


def vander(x, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix: columns x**(N-1), ..., x**0 (or increasing powers)."""
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array")
    n = x.shape[0] if N is None else int(N)
    powers = jnp.arange(n) if increasing else jnp.arange(n - 1, -1, -1)
    return x[:, None] ** powers[None, :]
