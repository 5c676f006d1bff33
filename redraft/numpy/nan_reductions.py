"""NaN-ignoring reductions (nansum, nanmean, nanmax, ...): the ordinary reductions with the
NaN entries masked out through `where` or replaced by the reduction's identity."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod"]


def _inexact(a) -> bool:
    return np.issubdtype(jnp.asarray(a).dtype, np.inexact)


def nansum(a, axis=None, dtype=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """sum, treating NaN as zero."""
    a = jnp.asarray(a)
    if _inexact(a):
        a = jnp.where(jnp.isnan(a), 0, a)
    return jnp.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """prod, treating NaN as one."""
    a = jnp.asarray(a)
    if _inexact(a):
        a = jnp.where(jnp.isnan(a), 1, a)
    return jnp.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extreme(a, axis, keepdims, initial, where, fill, reduce) -> Array:
    a = jnp.asarray(a)
    if not _inexact(a):
        return reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    nan = jnp.isnan(a)
    out = reduce(jnp.where(nan, fill, a), axis=axis, keepdims=keepdims, initial=initial,
                 where=where)
    all_nan = jnp.all(nan, axis=axis, keepdims=keepdims)
    return jnp.where(all_nan, jnp.nan, out) if initial is None else out


def nanmax(a, axis=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """max ignoring NaNs (NaN where a slice is all NaN)."""
    return _nan_extreme(a, axis, keepdims, initial, where, -np.inf, jnp.max)


def nanmin(a, axis=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """min ignoring NaNs (NaN where a slice is all NaN)."""
    return _nan_extreme(a, axis, keepdims, initial, where, np.inf, jnp.min)


def nanmean(a, axis=None, dtype=None, keepdims: bool = False, where=None) -> Array:
    """mean of the non-NaN entries."""
    a = jnp.asarray(a)
    if not _inexact(a):
        return jnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    keep = jnp.logical_not(jnp.isnan(a))
    if where is not None:
        keep = jnp.logical_and(keep, where)
    return jnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=keep)


def nanvar(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False,
           where=None) -> Array:
    """var of the non-NaN entries."""
    a = jnp.asarray(a)
    if not _inexact(a):
        return jnp.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    keep = jnp.logical_not(jnp.isnan(a))
    if where is not None:
        keep = jnp.logical_and(keep, where)
    mean = jnp.mean(a, axis=axis, dtype=dtype, keepdims=True, where=keep)
    centred = jnp.where(keep, a - mean, 0)
    squares = jnp.sum(centred * jnp.conj(centred), axis=axis, keepdims=keepdims)
    count = jnp.sum(keep, axis=axis, keepdims=keepdims)
    return jnp.real(squares) / jnp.maximum(count - ddof, 0)


def nanstd(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False,
           where=None) -> Array:
    """std of the non-NaN entries."""
    return jnp.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                           where=where))


def nanargmax(a, axis=None, keepdims: bool = False) -> Array:
    """argmax ignoring NaNs (-1 where a slice is all NaN)."""
    a = jnp.asarray(a)
    if not _inexact(a):
        return jnp.argmax(a, axis=axis, keepdims=keepdims)
    nan = jnp.isnan(a)
    out = jnp.argmax(jnp.where(nan, -np.inf, a), axis=axis, keepdims=keepdims)
    return jnp.where(jnp.all(nan, axis=axis, keepdims=keepdims), -1, out)


def nanargmin(a, axis=None, keepdims: bool = False) -> Array:
    """argmin ignoring NaNs (-1 where a slice is all NaN)."""
    a = jnp.asarray(a)
    if not _inexact(a):
        return jnp.argmin(a, axis=axis, keepdims=keepdims)
    nan = jnp.isnan(a)
    out = jnp.argmin(jnp.where(nan, np.inf, a), axis=axis, keepdims=keepdims)
    return jnp.where(jnp.all(nan, axis=axis, keepdims=keepdims), -1, out)


def nancumsum(a, axis=None, dtype=None) -> Array:
    """cumsum, treating NaN as zero."""
    a = jnp.asarray(a)
    if _inexact(a):
        a = jnp.where(jnp.isnan(a), 0, a)
    return jnp.cumsum(a, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None) -> Array:
    """cumprod, treating NaN as one."""
    a = jnp.asarray(a)
    if _inexact(a):
        a = jnp.where(jnp.isnan(a), 1, a)
    return jnp.cumprod(a, axis=axis, dtype=dtype)
