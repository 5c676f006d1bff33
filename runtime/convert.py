"""Turning user values (Arrays, NumPy arrays, Python scalars, nested lists) into Arrays."""
from __future__ import annotations

import numpy as np

from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def scalar_array(value, dtype=None) -> Array:
    """An Array from a Python scalar: weakly typed unless it is a bool or `dtype` is given."""
    if dtype is not None:
        return wrap_host(np.asarray(value, dtype=dtype), False)
    kind = type(value)
    if kind is int and not _INT32_MIN <= value <= _INT32_MAX:
        raise OverflowError(f"Python int {value} is too large for int32 (redraft's int type)")
    dt = dtypes.python_scalar_dtype(value)
    return wrap_host(np.asarray(value, dtype=dt), kind is not bool)


def host_array(value, dtype=None) -> np.ndarray:
    """A NumPy buffer for a NumPy value or nested sequence, canonicalised to 32 bits."""
    if dtype is not None:
        dtype = dtypes.check_dtype_arg(dtype)
    buf = np.asarray(value, dtype=dtype)
    if buf.dtype == object:
        raise TypeError(f"cannot make an array from {type(value).__name__} "
                        f"(ragged nesting or non-numeric items)")
    if buf.dtype.kind in "US":
        raise TypeError(f"cannot make a numeric array from strings: {value!r:.60}")
    canon = dtypes.canonicalize(buf.dtype)
    if canon != buf.dtype:
        buf = buf.astype(canon)
    return buf


def as_array(value) -> Array:
    """Any array-like as an Array, without copying an Array; Python scalars stay weak."""
    if type(value) is Array:
        return value
    if type(value) in (int, float, bool, complex):
        return scalar_array(value)
    if isinstance(value, Array):
        return value
    if hasattr(value, "__jax_array__"):
        return as_array(value.__jax_array__())
    buf = host_array(value)
    if buf is value:
        buf = buf.copy()  # the caller may write to their NumPy array later
    return wrap_host(buf, False)
