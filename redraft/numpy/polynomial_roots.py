"""Polynomials and their roots, division and least-squares fits (as numpy.poly, roots,
polydiv and polyfit), coefficients highest power first."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.numpy import linalg
from redraft.numpy.polynomials import vander
from redraft.runtime.array import Array

__all__ = ["poly", "roots", "polydiv", "polyfit"]


def _inexact(a: Array) -> Array:
    return a if a.dtype.kind in "fc" else a.astype(jnp.float32)


def poly(seq_of_zeros) -> Array:
    """The monic polynomial whose roots are `seq_of_zeros` (or the eigenvalues of a square
    matrix: its characteristic polynomial)."""
    zeros = jnp.atleast_1d(jnp.asarray(seq_of_zeros))
    if zeros.ndim == 2 and zeros.shape[0] == zeros.shape[1] and zeros.shape[0] > 0:
        zeros = linalg.eigvals(zeros)
    elif zeros.ndim != 1:
        raise ValueError(f"poly: input must be 1-D or a non-empty square matrix, got shape "
                         f"{zeros.shape}")
    zeros = _inexact(zeros)
    coeffs = jnp.ones((1,), zeros.dtype)
    for k in range(zeros.shape[0]):
        coeffs = jnp.convolve(coeffs, jnp.stack([jnp.ones_like(zeros[k]), -zeros[k]]))
    return coeffs


def _stripped(p: np.ndarray) -> tuple[np.ndarray, int]:
    """p without its leading zeros, and how many zero roots its trailing zeros make."""
    nonzero = np.flatnonzero(p)
    if nonzero.size == 0:
        return p[:0], 0
    return p[nonzero[0]:nonzero[-1] + 1], p.size - 1 - nonzero[-1]


def roots(p, *, strip_zeros: bool = True) -> Array:
    """The (complex) roots of the polynomial p: the eigenvalues of its companion matrix.
    Leading and trailing zeros are read from p's values, so p must be concrete; with
    strip_zeros=False they are kept (a zero leading coefficient then gives NaN roots)."""
    p = jnp.atleast_1d(jnp.asarray(p))
    if p.ndim != 1:
        raise ValueError(f"roots: p must be 1-D, got shape {p.shape}")
    p = _inexact(p)
    trailing = 0
    if strip_zeros:
        kept, trailing = _stripped(np.asarray(p))
        p = jnp.asarray(kept)
    complex_dtype = jnp.result_type(p.dtype, jnp.complex64)
    if p.shape[0] < 2:
        return jnp.zeros((trailing,), complex_dtype)
    n = p.shape[0] - 1
    first_row = -p[1:] / p[0]
    companion = jnp.concatenate([first_row[None, :], jnp.eye(n - 1, n, dtype=p.dtype)])
    found = linalg.eigvals(companion).astype(complex_dtype)
    return jnp.concatenate([found, jnp.zeros((trailing,), complex_dtype)])


def polydiv(u, v, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """(quotient, remainder) of the polynomial division u / v."""
    u, v = _inexact(jnp.atleast_1d(jnp.asarray(u))), _inexact(jnp.atleast_1d(jnp.asarray(v)))
    dtype = jnp.result_type(u, v)
    u, v = u.astype(dtype), v.astype(dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros((max(m - n + 1, 1),), dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = r[min(leading_zero_count(r), r.shape[0] - 1):]
    return q, r


def leading_zero_count(p) -> int:
    """How many leading coefficients of the concrete polynomial p are zero (an int, read
    from the values: trimming them is not traceable, as in JAX)."""
    values = np.asarray(p)
    nonzero = np.flatnonzero(values)
    return int(nonzero[0]) if nonzero.size else values.size


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y) (columns of a 2-D y are
    fitted separately); with `full`, also (residuals, rank, singular values, rcond); with
    `cov`, also the covariance of the coefficients (scaled by the residuals unless
    cov='unscaled')."""
    x, y = _inexact(jnp.asarray(x)), _inexact(jnp.asarray(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError("polyfit: expected a non-empty 1-D x")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError("polyfit: expected a 1-D or 2-D y as long as x")
    dtype = jnp.result_type(x, y)
    x, y = x.astype(dtype), y.astype(dtype)
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.dtype(dtype)).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = jnp.asarray(w).astype(dtype)
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise TypeError("polyfit: expected a 1-D w as long as x")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        base = linalg.inv(lhs.T @ lhs) / jnp.outer(scale, scale)
        if cov == "unscaled":
            fac = 1.0
        else:
            if x.shape[0] <= order:
                raise ValueError("polyfit: the number of points must exceed the order to "
                                 "scale the covariance")
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, base * fac
        return c, base[:, :, None] * fac
    return c
