"""Turning user values (Arrays, NumPy arrays, Python scalars, nested lists) into Arrays."""
from __future__ import annotations

import numpy as np

from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host

def scalar_array(value, dtype=None) -> Array:
    """An Array from a Python scalar: weakly typed unless it is a bool or `dtype` is given."""
    if dtype is not None:
        return wrap_host(np.asarray(value, dtype=dtypes.canonicalize(dtype)), False)
    kind = type(value)
    dt = dtypes.python_scalar_dtype(value)
    if kind is int:
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python int {value} is too large for {dt} (redraft's int type; "
                                f"int64 with x64 on)")
    return wrap_host(np.asarray(value, dtype=dt), kind is not bool)


def host_array(value, dtype=None, name: str = "asarray") -> np.ndarray:
    """A NumPy buffer for a NumPy value or nested sequence, canonicalised (to 32 bits with
    x64 off); `name` is the API function a requested `dtype` is reported under."""
    if dtype is not None:
        dtype = dtypes.check_dtype_arg(dtype, name)
    buf = np.asarray(value, dtype=dtype)
    if buf.dtype == object:
        raise TypeError(f"cannot make an array from {type(value).__name__} "
                        f"(ragged nesting or non-numeric items)")
    if buf.dtype.kind in "US":
        raise TypeError(f"cannot make a numeric array from strings: {value!r:.60}")
    dtypes.check_supported(buf.dtype)
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


def leaf_values(obj):
    """Replace Arrays nested in lists/tuples by their buffers, for np.asarray."""
    if isinstance(obj, Array):
        return obj._buf
    if isinstance(obj, (list, tuple)):
        return [leaf_values(o) for o in obj]
    return obj


def _nested_dtype(obj) -> tuple[np.dtype, bool] | None:
    """JAX's promoted type of the leaves of a nested list (weak only if every leaf is)."""
    leaves = []

    def walk(o):
        if isinstance(o, (list, tuple)):
            for item in o:
                walk(item)
        else:
            leaves.append(as_array(o) if not isinstance(o, np.ndarray) else o)
    walk(obj)
    if not leaves:
        return None
    types = [(a.dtype, getattr(a, "_weak", False)) for a in leaves]
    return dtypes.promote_types(*types)


def new_array(object, dtype=None, ndmin: int = 0, name: str = "array") -> Array:  # noqa: A002
    """A new Array from an array-like (jnp.array, device_put): with x64 off 64-bit inputs
    become 32-bit; nested lists take JAX's promoted type of their leaves. Weakly typed only
    when made from a Python number without a dtype, as JAX's are. `name` is the API function a
    truncated `dtype` request is reported under."""
    if isinstance(object, Array) and dtype is None and ndmin <= object.ndim:
        return wrap_host(object._buf, False) if object._weak else object
    if dtype is None and isinstance(object, (list, tuple)):
        promoted = _nested_dtype(object)
        dtype = promoted[0] if promoted else dtypes.DEFAULT_FLOAT
    weak = type(object) in (int, float, complex) and dtype is None
    if weak:
        dtype = dtypes.python_scalar_dtype(object)
    buf = host_array(leaf_values(object), dtype, name)
    if buf is object or (isinstance(object, np.ndarray) and np.shares_memory(buf, object)):
        buf = buf.copy()
    if buf.ndim < ndmin:
        buf = buf.reshape((1,) * (ndmin - buf.ndim) + buf.shape)
    return wrap_host(buf, weak)
