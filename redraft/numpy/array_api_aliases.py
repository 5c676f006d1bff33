"""The array-API spellings of existing functions (acos for arccos, pow for power, ...) and a
few elementwise functions composed from existing ones (fmax, fmin, rint, trunc, modf,
ldexp, frexp-free ones, spacing-free ones)."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "pow",
           "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "matrix_transpose",
           "cumulative_sum", "cumulative_prod", "fmax", "fmin", "rint", "trunc", "modf",
           "ldexp", "unstack", "rollaxis", "matvec", "vecmat", "sort_complex", "copy"]

acos = jnp.arccos
acosh = jnp.arccosh
asin = jnp.arcsin
asinh = jnp.arcsinh
atan = jnp.arctan
atan2 = jnp.arctan2
atanh = jnp.arctanh
pow = jnp.power  # noqa: A001
bitwise_invert = jnp.invert
bitwise_left_shift = jnp.left_shift
bitwise_right_shift = jnp.right_shift


def matrix_transpose(x) -> Array:
    """x with its last two axes swapped."""
    x = jnp.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.ndim}")
    return jnp.swapaxes(x, -1, -2)


def _cumulative(x, axis, dtype, include_initial: bool, cumulate, identity) -> Array:
    x = jnp.asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative functions need an axis for arrays of more than one "
                             "dimension")
        axis = 0
    out = cumulate(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis % out.ndim] = 1
        out = jnp.concatenate([jnp.full(shape, identity, out.dtype), out], axis=axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """The running sum along axis (optionally starting with a 0)."""
    return _cumulative(x, axis, dtype, include_initial, jnp.cumsum, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Array:
    """The running product along axis (optionally starting with a 1)."""
    return _cumulative(x, axis, dtype, include_initial, jnp.cumprod, 1)


def fmax(x1, x2) -> Array:
    """The elementwise maximum, ignoring a NaN when the other value is a number."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    return jnp.where(jnp.isnan(x2) | (x1 > x2), x1, x2)  # a tie takes x2, as in JAX


def fmin(x1, x2) -> Array:
    """The elementwise minimum, ignoring a NaN when the other value is a number."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    return jnp.where(jnp.isnan(x2) | (x1 < x2), x1, x2)  # a tie takes x2, as in JAX


def rint(x) -> Array:
    """Round to the nearest integer, ties to even (as a float)."""
    x = jnp.asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        return x.astype(float)
    return jnp.round(x)


def trunc(x) -> Array:
    """Round towards zero."""
    x = jnp.asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        return x
    return jnp.where(x < 0, jnp.ceil(x), jnp.floor(x))


def modf(x) -> tuple[Array, Array]:
    """(fractional part, integral part), both with x's sign."""
    whole = trunc(x)
    return jnp.asarray(x) - whole, whole


def ldexp(x1, x2) -> Array:
    """x1 * 2**x2 for integer x2."""
    x2 = jnp.asarray(x2)
    if not np.issubdtype(x2.dtype, np.integer):
        raise TypeError(f"ldexp: the exponent must be an integer, got {x2.dtype}")
    x1 = jnp.asarray(x1)
    if not np.issubdtype(x1.dtype, np.inexact):
        x1 = x1.astype(float)
    return x1 * jnp.exp2(x2.astype(x1.dtype))


def unstack(x, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of x along axis, as a tuple."""
    x = jnp.asarray(x)
    moved = jnp.moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


def rollaxis(a, axis: int, start: int = 0) -> Array:
    """Move `axis` to before position `start` (numpy's older moveaxis)."""
    a = jnp.asarray(a)
    n = a.ndim
    axis = axis % n
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start {start} is out of range for {n} dimensions")
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return jnp.moveaxis(a, axis, start)


def matvec(x1, x2, /) -> Array:
    """Matrix-vector products over broadcast batch axes: x1 (..., m, n), x2 (..., n)."""
    return jnp.matmul(x1, jnp.asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /) -> Array:
    """Vector-matrix products conj(x1) @ x2 over broadcast batch axes."""
    return jnp.matmul(jnp.conj(jnp.asarray(x1))[..., None, :], x2)[..., 0, :]


def sort_complex(a) -> Array:
    """a sorted (by real part, then imaginary part), as a complex array."""
    a = jnp.sort(jnp.asarray(a))
    if np.issubdtype(a.dtype, np.complexfloating):
        return a
    return a.astype(jnp.complex64)


def copy(a, order=None) -> Array:
    """A copy of a (arrays are immutable, so the same values)."""
    return jnp.array(a, copy=True)
