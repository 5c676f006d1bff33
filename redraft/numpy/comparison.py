"""Whole-array comparisons: isclose, allclose, array_equal, array_equiv (JAX's semantics:
results are redraft Arrays, integers are compared as floats by isclose)."""
from __future__ import annotations

from redraft.compiler.primitives.checks import broadcast_shapes
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

from redraft.numpy import reductions, ufuncs
from redraft.numpy.creation import array
from redraft.numpy.promotion import cast, promote, promote_inexact

__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]


def _tolerance_dtype(dtype):
    """Tolerances of a complex comparison are real numbers of the same precision."""
    return dtypes.float32 if dtype == dtypes.complex64 else dtype


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """|a - b| <= atol + rtol * |b| elementwise; infinities are close only to themselves,
    NaNs to nothing (or to NaN when equal_nan)."""
    x, y = promote_inexact(a, b)
    tol_dtype = _tolerance_dtype(x.dtype)
    rtol_ = cast(as_array(rtol), tol_dtype)
    atol_ = cast(as_array(atol), tol_dtype)
    gap = ufuncs.absolute(ufuncs.subtract(x, y))
    close = ufuncs.less_equal(gap, ufuncs.add(atol_, ufuncs.multiply(rtol_,
                                                                     ufuncs.absolute(y))))
    x_inf, y_inf = ufuncs.isinf(x), ufuncs.isinf(y)
    close = ufuncs.logical_and(close, ufuncs.logical_not(ufuncs.logical_or(x_inf, y_inf)))
    same_inf = ufuncs.logical_and(ufuncs.logical_and(x_inf, y_inf), ufuncs.equal(x, y))
    close = ufuncs.logical_or(close, same_inf)
    x_nan, y_nan = ufuncs.isnan(x), ufuncs.isnan(y)
    close = ufuncs.logical_and(close, ufuncs.logical_not(ufuncs.logical_or(x_nan, y_nan)))
    if equal_nan:
        close = ufuncs.logical_or(close, ufuncs.logical_and(x_nan, y_nan))
    return close


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
             ) -> Array:
    """Whether every pair of elements is close (see isclose); a 0-d bool Array."""
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def _equal_values(x: Array, y: Array, equal_nan: bool) -> Array:
    x, y = promote(x, y)
    same = ufuncs.equal(x, y)
    if equal_nan and dtypes.is_inexact(x.dtype):
        same = ufuncs.logical_or(same, ufuncs.logical_and(ufuncs.isnan(x), ufuncs.isnan(y)))
    return reductions.all(same)


def array_equal(a1, a2, equal_nan: bool = False) -> Array:
    """Whether the arrays have the same shape and equal elements."""
    x, y = as_array(a1), as_array(a2)
    if x.shape != y.shape:
        return array(False)
    return _equal_values(x, y, equal_nan)


def array_equiv(a1, a2) -> Array:
    """Whether the arrays broadcast to one shape and are then equal elementwise."""
    x, y = as_array(a1), as_array(a2)
    try:
        broadcast_shapes(x.shape, y.shape, op="array_equiv")
    except ValueError:
        return array(False)
    return _equal_values(x, y, False)
