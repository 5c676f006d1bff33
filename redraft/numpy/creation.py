"""Array creation: array, zeros, ones, full, *_like, arange, linspace, eye, identity, ..."""
from __future__ import annotations

import numpy as np

from redraft.compiler.primitives import shape as lax_shape
from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.convert import leaf_values as _leaf_values
from redraft.runtime.convert import new_array as _new_array
from redraft.runtime.staged import StagedBuf

from redraft.numpy import ufuncs
from redraft.numpy.promotion import cast


def array(object, dtype=None, copy: bool = True, ndmin: int = 0) -> Array:  # noqa: A002
    """A new Array from an array-like; with x64 off 64-bit inputs become 32-bit. Never
    weakly typed."""
    if isinstance(object, (list, tuple)) and _holds_unknown(object):
        return _stacked(object, dtype, ndmin, "array")
    if isinstance(object, Array) and type(object._buf) is StagedBuf:
        return _converted(object, dtype, ndmin, "array")
    return _new_array(object, dtype, ndmin, "array")


def asarray(a, dtype=None, order=None, copy=None) -> Array:
    """As `array`, but an Array of the right dtype is returned as it is."""
    if isinstance(a, Array) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    if isinstance(a, (list, tuple)) and _holds_unknown(a):
        return _stacked(a, dtype, 0, "asarray")
    if isinstance(a, Array) and type(a._buf) is StagedBuf:
        return _converted(a, dtype, 0, "asarray")
    return _new_array(a, dtype, 0, "asarray")


def _converted(a: Array, dtype, ndmin: int, name: str) -> Array:
    """An Array known only when compiled code runs, as `dtype` (a conversion, with x64's
    truncation of 64-bit requests) with at least `ndmin` axes."""
    if dtype is not None:
        a = cast(a, dtypes.check_dtype_arg(dtype, name))
    if a.ndim < ndmin:
        a = lax_shape.reshape(a, (1,) * (ndmin - a.ndim) + a.shape)
    return a


_KNOWN = (bool, int, float, complex, np.ndarray, np.generic)


def _holds_unknown(obj) -> bool:
    """Whether a nested list holds a value known only when compiled code runs (a staged
    Array, a tracer): such a list is stacked with operations, not read into NumPy."""
    if isinstance(obj, (list, tuple)):
        return any(_holds_unknown(o) for o in obj)
    if isinstance(obj, Array):
        return type(obj._buf) is StagedBuf
    return not isinstance(obj, _KNOWN)


def _stacked(obj, dtype, ndmin: int, name: str) -> Array:
    """jnp.array([[a, b], [c, d]]) of values some of which are staged: each leaf cast to the
    list's promoted type, then stacked level by level (one operation per level)."""
    if dtype is None:
        dtype = dtypes.promote_types(*(_leaf_type(o) for o in _leaves(obj)))[0]
    else:
        dtype = dtypes.check_dtype_arg(dtype, name)

    def build(o) -> Array:
        if not isinstance(o, (list, tuple)):
            leaf = as_array(o)
            return leaf if leaf.dtype == dtype and not leaf._weak else leaf.astype(dtype)
        items = [build(item) for item in o]
        shapes = {item.shape for item in items}
        if len(shapes) != 1:
            raise ValueError(f"{name}: the nested list is ragged (items of shapes "
                             f"{sorted(shapes)}), so it is not an array")
        return lax_shape.concatenate([lax_shape.expand_dims(i, (0,)) for i in items], 0)

    out = build(obj)
    if out.ndim < ndmin:
        out = lax_shape.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _leaves(obj) -> list:
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _leaf_type(o) -> tuple[np.dtype, bool]:
    if isinstance(o, Array):
        return o.dtype, o._weak
    a = as_array(o)
    return a.dtype, a._weak


def _filled(shape, fill, dtype, name: str) -> Array:
    shape = _shape_tuple(shape)
    dtype = dtypes.check_dtype_arg(dtype, name) if dtype is not None else dtypes.DEFAULT_FLOAT
    if fill is None:  # zeros: np.zeros takes zeroed pages from the system without writing
        # them (the zero cotangents a gradient's loop starts from are megabytes: np.full
        # wrote every page, 18 ms of an MLP update's first call)
        return wrap_host(np.zeros(shape, dtype), False)
    return wrap_host(np.full(shape, fill, dtype), False)


def _shape_tuple(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) or (isinstance(shape, Array) and shape.ndim == 0):
        shape = (int(shape),)
    if isinstance(shape, str):
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}")
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"negative dimensions are not allowed: shape {out}")
    return out


def zeros(shape, dtype=None) -> Array:
    return _filled(shape, None, dtype, "zeros")


def ones(shape, dtype=None) -> Array:
    return _filled(shape, 1, dtype, "ones")


def empty(shape, dtype=None) -> Array:
    return _filled(shape, None, dtype, "empty")


def full(shape, fill_value, dtype=None) -> Array:
    fill = as_array(fill_value)
    dt = dtypes.check_dtype_arg(dtype, "full") if dtype is not None else fill.dtype
    if type(fill._buf) is not np.ndarray or fill.ndim:  # staged, or an array to repeat
        from redraft.numpy.promotion import cast
        return lax_shape.broadcast_to_rank(cast(fill, dt), _shape_tuple(shape))
    out = _filled(shape, fill._buf.item(), dt, "full")
    return wrap_host(out._buf, True) if fill._weak and dtype is None else out  # as JAX's


def _like(a, dtype, shape):
    a = as_array(a)
    return (a.dtype if dtype is None else dtype), (a.shape if shape is None else shape)


def _weak_if(out: Array, a, dtype) -> Array:
    """As JAX's *_like: a weakly typed `a` (a Python scalar) gives a weak result unless a
    dtype is asked for."""
    if dtype is None and as_array(a)._weak and not out._weak:
        from redraft.numpy.promotion import convert
        return convert(out, out.dtype, True)
    return out


def zeros_like(a, dtype=None, shape=None) -> Array:
    dt, sh = _like(a, dtype, shape)
    return _weak_if(zeros(sh, dt), a, dtype)


def ones_like(a, dtype=None, shape=None) -> Array:
    dt, sh = _like(a, dtype, shape)
    return _weak_if(ones(sh, dt), a, dtype)


def empty_like(a, dtype=None, shape=None) -> Array:
    return zeros_like(a, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None) -> Array:
    dt, sh = _like(a, dtype, shape)
    return _weak_if(full(sh, fill_value, dt), a, dtype)


def arange(start, stop=None, step=None, dtype=None) -> Array:
    """Like numpy.arange; the default dtype is the default int for integers (int32, int64
    with x64) and the default float otherwise."""
    values = [v for v in (start, stop, step) if v is not None]
    for v in values:
        if isinstance(v, Array) and v.ndim:
            raise TypeError(f"arange takes scalars, got an array of shape {v.shape}")
    plain = [v.item() if isinstance(v, Array) else v for v in values]
    if dtype is None:
        dtype = (dtypes.DEFAULT_INT if all(isinstance(v, (int, np.integer)) for v in plain)
                 else dtypes.DEFAULT_FLOAT)
    dtype = dtypes.check_dtype_arg(dtype, "arange")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    return wrap_host(np.arange(*plain).astype(dtype), False)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """Like numpy.linspace, computed in float64 then cast to the dtype (the default float
    unless given)."""
    if int(num) < 0:
        raise ValueError(f"linspace: number of samples {num} must be non-negative")
    if any(isinstance(v, Array) and type(v._buf) is StagedBuf for v in (start, stop)):
        return _linspace_staged(start, stop, int(num), endpoint, retstep, dtype, axis)
    start_, stop_ = np.asarray(_leaf_values(start)), np.asarray(_leaf_values(stop))
    values, step = np.linspace(start_, stop_, int(num), endpoint=endpoint, retstep=True,
                               axis=axis)
    dt = dtypes.check_dtype_arg(dtype, "linspace") if dtype is not None else dtypes.DEFAULT_FLOAT
    out = wrap_host(values.astype(dt), False)
    return (out, wrap_host(np.asarray(step, dt))) if retstep else out


def _linspace_staged(start, stop, num: int, endpoint: bool, retstep: bool, dtype, axis: int):
    """linspace with an end known only when the compiled code runs: start + i * step, the
    last sample exactly stop when it is an endpoint (as JAX computes it)."""
    dt = dtypes.check_dtype_arg(dtype, "linspace") if dtype is not None else dtypes.DEFAULT_FLOAT
    start, stop = cast(as_array(start), dt), cast(as_array(stop), dt)
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = lax_shape.broadcast_to_rank(start, shape), lax_shape.broadcast_to_rank(stop,
                                                                                           shape)
    axis = axis % (len(shape) + 1)
    out_shape = shape[:axis] + (num,) + shape[axis:]
    div = num - 1 if endpoint else num
    step = ufuncs.divide(ufuncs.subtract(stop, start), max(div, 1))
    index = lax_shape.broadcast_in_dim(lax_shape.iota(dt, num), out_shape, (axis,))
    at = lax_shape.expand_dims
    out = ufuncs.add(at(start, (axis,)), ufuncs.multiply(index, at(step, (axis,))))
    if endpoint and num > 1:
        last = ufuncs.equal(index, num - 1)
        out = ufuncs.where(last, lax_shape.broadcast_to_rank(at(stop, (axis,)), out_shape), out)
    return (out, step) if retstep else out


def logspace(start, stop, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype=None) -> Array:
    values = np.logspace(float(start), float(stop), int(num), endpoint=endpoint, base=base)
    dt = dtypes.check_dtype_arg(dtype, "logspace") if dtype is not None else dtypes.DEFAULT_FLOAT
    return wrap_host(values.astype(dt))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None) -> Array:  # noqa: N803
    dt = dtypes.check_dtype_arg(dtype, "eye") if dtype is not None else dtypes.DEFAULT_FLOAT
    return wrap_host(np.eye(int(N), None if M is None else int(M), int(k), dtype=dt), False)


def identity(n: int, dtype=None) -> Array:
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None) -> Array:  # noqa: N803
    """Ones on and below diagonal k. float32 by default, with x64 on as well, as JAX's."""
    dt = dtypes.check_dtype_arg(dtype, "tri") if dtype is not None else dtypes.float32
    return wrap_host(np.tri(int(N), None if M is None else int(M), int(k), dtype=dt), False)


def iota(dtype, size: int) -> Array:
    return lax_shape.iota(dtype, size)
