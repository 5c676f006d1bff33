"""Reductions with axis/keepdims: sum, mean, var, std, max, min, prod, arg*, any, all, cum*."""
from __future__ import annotations

import builtins

import numpy as np

from redraft.compiler.primitives import reductions as red
from redraft.compiler.primitives import shape as lax_shape
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind

from redraft.numpy.promotion import cast
from redraft.numpy import ufuncs


def _keep(out: Array, x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return lax_shape.reshape(out, shape)


def _sum_dtype(x: Array, dtype) -> np.dtype:
    if dtype is not None:
        return dtypes.check_dtype_arg(dtype)
    if x.dtype == dtypes.bool_:
        return dtypes.DEFAULT_INT
    if x.dtype.kind in "iu" and x.dtype.itemsize < dtypes.DEFAULT_INT.itemsize:
        return dtypes.DEFAULT_INT if x.dtype.kind == "i" else dtypes.DEFAULT_UINT
    return x.dtype


def _cumulative_dtype(x: Array, dtype) -> np.dtype:
    """A running sum or product keeps a small integer's dtype, as JAX's (only bools become
    the default int), where sum and prod widen it."""
    if dtype is None and x.dtype != dtypes.bool_:
        return x.dtype
    return _sum_dtype(x, dtype)


def _where_fill(x: Array, where, fill) -> Array:
    if where is None:
        return x
    return ufuncs.where(where, x, fill)


def sum(a, axis=None, dtype=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None) -> Array:
    x = as_array(a)
    if axis is None and dtype is None and where is None and initial is None and not keepdims:
        if x._buf.dtype.kind in "fc" or x._buf.dtype == dtypes.int32:  # the hot path
            return bind(red.reduce_sum_p, x, axes=tuple(range(x._buf.ndim)))
    axes = canonical_axes(axis, x.ndim, "sum")
    x = cast(_where_fill(x, where, 0), _sum_dtype(x, dtype))
    out = bind(red.reduce_sum_p, x, axes=axes)
    if initial is not None:
        out = ufuncs.add(out, initial)
    return _keep(out, x, axes, keepdims)


def prod(a, axis=None, dtype=None, keepdims: bool = False, initial=None,
         where=None) -> Array:
    x = as_array(a)
    axes = canonical_axes(axis, x.ndim, "prod")
    x = cast(_where_fill(x, where, 1), _sum_dtype(x, dtype))
    out = bind(red.reduce_prod_p, x, axes=axes)
    if initial is not None:
        out = ufuncs.multiply(out, initial)
    return _keep(out, x, axes, keepdims)


def _extremum(prim, name: str):
    def fn(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None) -> Array:
        if out is not None:
            raise TypeError(f"{name}: out= is not supported (arrays are immutable)")
        x = as_array(a)
        axes = canonical_axes(axis, x.ndim, name)
        if where is not None:
            if initial is None:
                raise ValueError(f"{name}: where= needs an initial= value")
            x = ufuncs.where(where, x, initial)
        if initial is None and (x.size == 0 or builtins.any(x.shape[i] == 0 for i in axes)):
            raise ValueError(f"{name}: zero-size array (shape {x.shape}) along axis {axis} "
                             "has no identity; pass initial=")
        if builtins.any(x.shape[i] == 0 for i in axes):  # empty, but initial= given
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
            from redraft.numpy.creation import full
            return _keep(full(shape, initial, x.dtype), x, axes, keepdims)
        if x.dtype == dtypes.bool_:
            out_ = bind(red.reduce_or_p if name == "max" else red.reduce_and_p, x, axes=axes)
        else:
            out_ = bind(prim, x, axes=axes)
        if initial is not None:
            out_ = (ufuncs.maximum if name == "max" else ufuncs.minimum)(out_, initial)
        return _keep(out_, x, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    return fn


max = amax = _extremum(red.reduce_max_p, "max")  # noqa: A001
min = amin = _extremum(red.reduce_min_p, "min")  # noqa: A001


def all(a, axis=None, keepdims: bool = False, where=None) -> Array:  # noqa: A001
    x = cast(as_array(a), dtypes.bool_)
    axes = canonical_axes(axis, x.ndim, "all")
    x = _where_fill(x, where, True)
    return _keep(bind(red.reduce_and_p, x, axes=axes), x, axes, keepdims)


def any(a, axis=None, keepdims: bool = False, where=None) -> Array:  # noqa: A001
    x = cast(as_array(a), dtypes.bool_)
    axes = canonical_axes(axis, x.ndim, "any")
    x = _where_fill(x, where, False)
    return _keep(bind(red.reduce_or_p, x, axes=axes), x, axes, keepdims)


def _count(x: Array, axes: tuple[int, ...]) -> int:
    return int(np.prod([x.shape[i] for i in axes], dtype=np.int64))


def mean(a, axis=None, dtype=None, keepdims: bool = False, where=None) -> Array:
    x = as_array(a)
    axes = canonical_axes(axis, x.ndim, "mean")
    dt = dtypes.check_dtype_arg(dtype) if dtype is not None else (
        x.dtype if dtypes.is_inexact(x.dtype) else dtypes.DEFAULT_FLOAT)
    total = sum(x, axis=axes, dtype=dt, keepdims=keepdims, where=where)
    if where is not None:
        mask = lax_shape.broadcast_to_rank(cast(as_array(where), dt), x.shape)
        return ufuncs.divide(total, sum(mask, axis=axes, keepdims=keepdims))
    return ufuncs.divide(total, cast(as_array(_count(x, axes)), dt))


def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False,
        where=None) -> Array:
    x = as_array(a)
    axes = canonical_axes(axis, x.ndim, "var")
    if where is not None:
        raise NotImplementedError("var(where=...) is not supported yet")
    centred = ufuncs.subtract(x, mean(x, axis=axes, dtype=dtype, keepdims=True))
    if dtypes.is_inexact(centred.dtype) and centred.dtype.kind == "c":
        sq = ufuncs.real(ufuncs.multiply(centred, ufuncs.conj(centred)))
    else:
        sq = ufuncs.multiply(centred, centred)
    n = _count(x, axes) - ddof
    total = sum(sq, axis=axes, keepdims=keepdims)
    return ufuncs.divide(total, cast(as_array(n if n > 0 else np.nan), total.dtype))


def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False,
        where=None) -> Array:
    return ufuncs.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                           where=where))


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        x = as_array(a)
        count = _count(x, canonical_axes(axis, x.ndim, "average"))
        return (avg, ufuncs.multiply(ufuncs.add(ufuncs.multiply(avg, 0), 1), count)) if (
            returned) else avg
    x, w = as_array(a), as_array(weights)
    if w.shape != x.shape:
        if axis is None or w.ndim != 1:
            raise ValueError(f"average: weights of shape {w.shape} need axis= to fit "
                             f"shape {x.shape}")
        ax = canonical_axis(axis, x.ndim, "average")
        shape = [1] * x.ndim
        shape[ax] = w.shape[0]
        w = lax_shape.reshape(w, tuple(shape))
    total_w = sum(lax_shape.broadcast_to_rank(w, x.shape), axis=axis, keepdims=keepdims)
    avg = ufuncs.divide(sum(ufuncs.multiply(x, w), axis=axis, keepdims=keepdims), total_w)
    return (avg, total_w) if returned else avg


def _arg_extremum(prim, name: str):
    def fn(a, axis=None, out=None, keepdims: bool = False) -> Array:
        x = as_array(a)
        original = x
        if axis is None:
            x = lax_shape.reshape(x, (x.size,))
        axis = canonical_axis(0 if axis is None else axis, x.ndim, name)
        if x.shape[axis] == 0:
            raise ValueError(f"{name} of an empty sequence (shape {x.shape}, axis {axis})")
        out_ = bind(prim, x, axis=axis, index_dtype=dtypes.DEFAULT_INT)
        if keepdims and x is not original:  # axis=None: one size-1 axis per input axis
            return lax_shape.reshape(out_, (1,) * original.ndim)
        return _keep(out_, x, (axis,), keepdims)
    fn.__name__ = fn.__qualname__ = name
    return fn


argmax = _arg_extremum(red.argmax_p, "argmax")
argmin = _arg_extremum(red.argmin_p, "argmin")


def _cumulative(prim, name: str):
    def fn(a, axis=None, dtype=None) -> Array:
        x = as_array(a)
        if axis is None:
            x = lax_shape.reshape(x, (x.size,))
            axis = 0
        axis = canonical_axis(axis, x.ndim, name)
        x = cast(x, _cumulative_dtype(x, dtype))
        return bind(prim, x, axis=axis, reverse=False)
    fn.__name__ = fn.__qualname__ = name
    return fn


cumsum = _cumulative(red.cumsum_p, "cumsum")
cumprod = _cumulative(red.cumprod_p, "cumprod")


def ptp(a, axis=None, keepdims: bool = False) -> Array:
    return ufuncs.subtract(max(a, axis=axis, keepdims=keepdims),
                           min(a, axis=axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims: bool = False) -> Array:
    return sum(ufuncs.not_equal(a, 0), axis=axis, keepdims=keepdims)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """log(sum(b * exp(a))) shifted by the max, so it neither overflows nor underflows."""
    x = as_array(a)
    axes = canonical_axes(axis, x.ndim, "logsumexp")
    x = cast(x, x.dtype if dtypes.is_inexact(x.dtype) else dtypes.DEFAULT_FLOAT)
    peak = max(x, axis=axes, keepdims=True)
    peak = ufuncs.where(ufuncs.isfinite(peak), peak, 0)
    scaled = ufuncs.exp(ufuncs.subtract(x, peak))
    if b is not None:
        scaled = ufuncs.multiply(scaled, b)
    total = sum(scaled, axis=axes, keepdims=True)
    sign = ufuncs.sign(total)
    out = ufuncs.add(ufuncs.log(ufuncs.absolute(total)), peak)
    if not keepdims:
        out = lax_shape.squeeze(out, axes) if axes else out
        sign = lax_shape.squeeze(sign, axes) if axes else sign
    return (out, sign) if return_sign else out
