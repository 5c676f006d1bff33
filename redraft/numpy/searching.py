"""Sorting, searching and order statistics: sort, argsort, searchsorted, nonzero, unique,
median, quantile.

Results whose length depends on the data (nonzero, unique) read that length eagerly, as
JAX does outside jit; pass `size=` for a static length (padded with `fill_value`), which
is the form that compiles. Every step is a lax primitive or a redraft.numpy function.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from redraft.compiler.primitives import reductions as lax_red
from redraft.compiler.primitives import shape as lax_shape
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

from redraft.numpy import reductions, shapes, ufuncs
from redraft.numpy.creation import full, zeros
from redraft.numpy.indexing import getitem, take, take_along_axis
from redraft.numpy.promotion import cast, promote, promote_inexact

__all__ = ["sort", "argsort", "searchsorted", "nonzero", "flatnonzero", "argwhere", "unique",
           "unique_values", "unique_counts", "unique_inverse", "unique_all", "median",
           "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"]


# ---- sorting --------------------------------------------------------------------------------

def _check_sort_args(order, name: str) -> None:
    if order is not None:
        raise NotImplementedError(f"{name}: order= (structured arrays) is not supported")


def sort(a, axis: int | None = -1, kind=None, order=None, *, stable: bool = True,
         descending: bool = False) -> Array:
    """Sorted copy along `axis` (flattened when None); NaNs sort to the end. Always stable."""
    _check_sort_args(order, "sort")
    x = as_array(a)
    if axis is None:
        x, axis = shapes.ravel(x), 0
    if x.ndim == 0:
        raise ValueError("sort: cannot sort a 0-d array along an axis")
    axis = canonical_axis(axis, x.ndim, "sort")
    out = lax_red.sort(x, axis)
    return lax_shape.rev(out, (axis,)) if descending else out


def argsort(a, axis: int | None = -1, kind=None, order=None, *, stable: bool = True,
            descending: bool = False) -> Array:
    """Indices (the default int) that sort `a` along `axis`; equal elements keep their order."""
    _check_sort_args(order, "argsort")
    x = as_array(a)
    if axis is None:
        x, axis = shapes.ravel(x), 0
    if x.ndim == 0:
        raise ValueError("argsort: cannot sort a 0-d array along an axis")
    order = lax_red.argsort(x, canonical_axis(axis, x.ndim, "argsort"), descending)
    return cast(order, dtypes.DEFAULT_INT)  # int32 positions; int64 with x64 on, as JAX


# ---- searchsorted ------------------------------------------------------------------------------

def _sort_less(x: Array, y: Array) -> Array:
    """x < y in sort order, where NaN is larger than every number."""
    if not dtypes.is_inexact(x.dtype):
        return ufuncs.less(x, y)
    nan_above = ufuncs.logical_and(ufuncs.isnan(y), ufuncs.logical_not(ufuncs.isnan(x)))
    return ufuncs.logical_or(ufuncs.less(x, y), nan_above)


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan") -> Array:
    """Insertion points (int32, also with x64 on, as JAX's) of `v` in the sorted 1-D `a`, by a
    binary search of ceil(log2(n + 1)) steps of gathers and comparisons."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    sorted_, values = promote(a, v)
    if sorted_.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {sorted_.shape}")
    if sorter is not None:
        sorted_ = take(sorted_, sorter)
    n = sorted_.shape[0]
    lo = zeros(values.shape, dtypes.int32)
    hi = full(values.shape, n, dtypes.int32)
    for _ in range(math.ceil(math.log2(n + 1))):
        active = ufuncs.less(lo, hi)
        mid = ufuncs.floor_divide(ufuncs.add(lo, hi), 2)
        probe = take(sorted_, ufuncs.minimum(mid, n - 1))
        if side == "left":
            go_right = _sort_less(probe, values)
        else:
            go_right = ufuncs.logical_not(_sort_less(values, probe))
        lo = ufuncs.where(ufuncs.logical_and(active, go_right), ufuncs.add(mid, 1), lo)
        hi = ufuncs.where(ufuncs.logical_and(active, ufuncs.logical_not(go_right)), mid, hi)
    return lo


# ---- nonzero and friends -------------------------------------------------------------------

def _static_size(mask: Array, size) -> int:
    """The result length: `size` when given, else the number of true entries (eager)."""
    if size is not None:
        size = int(size)
        if size < 0:
            raise ValueError(f"size must be non-negative, got {size}")
        return size
    return int(reductions.sum(mask))


def _flat_true_positions(mask: Array, size: int) -> tuple[Array, Array]:
    """(positions, valid): flat indices of the first `size` true entries of the 1-D `mask`,
    and which of the `size` slots hold one. A scatter of iota to the running count."""
    if size == 0:
        return zeros((0,), dtypes.DEFAULT_INT), zeros((0,), dtypes.bool_)
    counts = reductions.cumsum(cast(mask, dtypes.DEFAULT_INT))
    slot = ufuncs.where(mask, ufuncs.subtract(counts, 1), size)
    source = lax_shape.iota(dtypes.DEFAULT_INT, mask.shape[0])
    positions = zeros((size,), dtypes.DEFAULT_INT).at[slot].set(source)
    total = reductions.sum(cast(mask, dtypes.DEFAULT_INT))
    valid = ufuncs.less(lax_shape.iota(dtypes.DEFAULT_INT, size), total)
    return positions, valid


def _fill_values(fill_value, ndim: int) -> tuple:
    if fill_value is None:
        return (0,) * ndim
    if np.ndim(fill_value) == 0:
        return (fill_value,) * ndim
    fills = tuple(fill_value)
    if len(fills) != ndim:
        raise ValueError(f"nonzero: fill_value has {len(fills)} entries for {ndim} dimensions")
    return fills


def nonzero(a, *, size: int | None = None, fill_value=None) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one default-int array per dimension."""
    x = as_array(a)
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not allowed; use atleast_1d(a).nonzero()")
    mask = shapes.ravel(ufuncs.not_equal(x, 0) if x.dtype != dtypes.bool_ else x)
    count = _static_size(mask, size)
    flat, valid = _flat_true_positions(mask, count)
    strides = [math.prod(x.shape[d + 1:]) for d in range(x.ndim)]
    out = []
    for dim, stride, fill in zip(x.shape, strides, _fill_values(fill_value, x.ndim)):
        coord = ufuncs.remainder(ufuncs.floor_divide(flat, stride), max(dim, 1))
        out.append(ufuncs.where(valid, coord, cast(as_array(fill), dtypes.DEFAULT_INT)))
    return tuple(out)


def flatnonzero(a, *, size: int | None = None, fill_value=None) -> Array:
    """Indices of the non-zero elements of the flattened array."""
    return nonzero(shapes.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None) -> Array:
    """Indices of the non-zero elements as rows of a (count, ndim) array."""
    x = as_array(a)
    if x.ndim == 0:
        count = _static_size(shapes.reshape(ufuncs.not_equal(x, 0), (1,)), size)
        return zeros((count, 0), dtypes.DEFAULT_INT)
    return shapes.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)


# ---- unique ---------------------------------------------------------------------------------

class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _first_of_runs(s: Array, equal_nan: bool) -> Array:
    """True where sorted `s` starts a run of equal values (NaNs equal when equal_nan)."""
    n = s.shape[0]
    later = getitem(s, slice(1, n))
    earlier = getitem(s, slice(0, max(n - 1, 0)))
    differs = ufuncs.not_equal(later, earlier)
    if equal_nan and dtypes.is_inexact(s.dtype):
        both_nan = ufuncs.logical_and(ufuncs.isnan(later), ufuncs.isnan(earlier))
        differs = ufuncs.logical_and(differs, ufuncs.logical_not(both_nan))
    if s.ndim == 2:  # rows: a row starts a run where any of its entries differs
        differs = reductions.any(differs, axis=1)
    head = full((min(n, 1),), True, dtypes.bool_)
    return shapes.concatenate([head, differs])


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None, sorted: bool = True):  # noqa: A002
    """Sorted distinct values of the flattened array (and, optionally, first indices,
    the inverse map and counts). `size=` pads to a static length with `fill_value`
    (default: the smallest value)."""
    x = as_array(ar)
    if axis is not None:
        return _unique_slices(x, canonical_axis(axis, x.ndim, "unique"), return_index,
                              return_inverse, return_counts, equal_nan, size, fill_value)
    flat = shapes.ravel(x)
    order = argsort(flat)
    s = take(flat, order)
    first = _first_of_runs(s, equal_nan)
    count = _static_size(first, size)
    starts, valid = _flat_true_positions(first, count)
    values = take(s, starts, mode="clip")  # padding past the values found: masked below
    if fill_value is not None or size is not None:
        fill = take(s, as_array(0)) if fill_value is None else fill_value
        if flat.shape[0]:
            values = ufuncs.where(valid, values, cast(as_array(fill), values.dtype))
    extras = _unique_extras(order, starts, first, count, x.shape, return_index,
                            return_inverse, return_counts)
    return (values, *extras) if extras else values


def _unique_extras(order: Array, starts: Array, first: Array, count: int, inverse_shape,
                   return_index: bool, return_inverse: bool, return_counts: bool) -> list:
    """What unique returns beside the values, from the sorting permutation `order`, the
    sorted positions where each distinct value starts (`starts`, `first` marking them) and
    their number: first indices, the inverse map (of `inverse_shape`) and the counts."""
    extras = []
    if return_index:
        extras.append(take(order, starts, mode="clip"))
    if return_inverse or return_counts:
        group = ufuncs.subtract(reductions.cumsum(cast(first, dtypes.DEFAULT_INT)), 1)
        if return_inverse:
            inverse = zeros((order.shape[0],), dtypes.DEFAULT_INT).at[order].set(group)
            extras.append(shapes.reshape(inverse, inverse_shape))
        if return_counts:
            extras.append(zeros((count,), dtypes.DEFAULT_INT).at[group].add(1))
    return extras


def _unique_slices(x: Array, axis: int, return_index: bool, return_inverse: bool,
                   return_counts: bool, equal_nan: bool, size, fill_value):
    """unique along `axis`: the distinct slices x[..., i, ...] in lexicographic order (as
    rows, each slice flattened), with first indices, inverse map (one per slice) and
    counts."""
    moved = shapes.moveaxis(x, axis, 0)
    n = moved.shape[0]
    rows = shapes.reshape(moved, (n, math.prod(moved.shape[1:])))
    order = lax_shape.iota(dtypes.DEFAULT_INT, n)
    for j in range(rows.shape[1] - 1, -1, -1):  # stable sorts, the last column first
        column = take(getitem(rows, (slice(None), j)), order)
        order = take(order, argsort(column))
    s = take(rows, order, axis=0)
    first = _first_of_runs(s, equal_nan)
    count = _static_size(first, size)
    starts, valid = _flat_true_positions(first, count)
    values = take(s, starts, axis=0, mode="clip")
    if (fill_value is not None or size is not None) and n:
        fill = take(s, as_array(0), axis=0) if fill_value is None else fill_value
        values = ufuncs.where(valid[:, None], values, cast(as_array(fill), values.dtype))
    values = shapes.moveaxis(shapes.reshape(values, (count,) + moved.shape[1:]), 0, axis)
    extras = _unique_extras(order, starts, first, count, (n,), return_index, return_inverse,
                            return_counts)
    return (values, *extras) if extras else values


def unique_values(x, *, size: int | None = None, fill_value=None) -> Array:
    """The distinct values (array API)."""
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size: int | None = None, fill_value=None) -> UniqueCountsResult:
    """The distinct values and how often each occurs (array API)."""
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, *, size: int | None = None, fill_value=None) -> UniqueInverseResult:
    """The distinct values and, for every element, the index of its value (array API)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size,
                                       fill_value=fill_value))


def unique_all(x, *, size: int | None = None, fill_value=None) -> UniqueAllResult:
    """Values, first indices, inverse indices and counts (array API)."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, size=size, fill_value=fill_value))


# ---- quantiles ------------------------------------------------------------------------------

_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _gather_per_slice(sorted_: Array, position: Array) -> Array:
    """out[q..., r...] = sorted_[r..., position[q..., r...]] for `sorted_` of shape
    rest + (n,) and integer `position` of shape q_shape + rest."""
    rest = sorted_.ndim - 1
    q_ndim = position.ndim - rest
    q_shape = position.shape[:q_ndim]
    index = shapes.moveaxis(position, tuple(range(q_ndim)), tuple(range(rest, position.ndim)))
    index = shapes.reshape(index, sorted_.shape[:-1] + (-1,))
    picked = take_along_axis(sorted_, index, axis=-1)
    picked = shapes.reshape(picked, sorted_.shape[:-1] + q_shape)
    return shapes.moveaxis(picked, tuple(range(rest, picked.ndim)), tuple(range(q_ndim)))


def _interpolate(sorted_: Array, position: Array, method: str) -> Array:
    """Values at fractional `position` (shape q_shape + rest) along the last axis."""
    lo = ufuncs.floor(position)
    hi = ufuncs.ceil(position)
    lo_v = _gather_per_slice(sorted_, cast(lo, dtypes.DEFAULT_INT))
    hi_v = _gather_per_slice(sorted_, cast(hi, dtypes.DEFAULT_INT))
    if method == "lower":
        return lo_v
    if method == "higher":
        return hi_v
    if method == "nearest":  # as JAX: a position halfway between takes the lower value
        return ufuncs.where(ufuncs.less_equal(ufuncs.subtract(position, lo), 0.5), lo_v, hi_v)
    if method == "midpoint":
        return ufuncs.multiply(ufuncs.add(lo_v, hi_v), 0.5)
    frac = cast(ufuncs.subtract(position, lo), lo_v.dtype)
    return ufuncs.add(lo_v, ufuncs.multiply(ufuncs.subtract(hi_v, lo_v), frac))


def _check_quantiles(q) -> None:
    """Refuse q outside [0, 1] when it is a static value (as NumPy does)."""
    if isinstance(q, Array):
        return
    values = np.asarray(q, dtype=np.float64)
    if values.size and (np.any(values < 0) or np.any(values > 1)):
        raise ValueError(f"quantiles must be in the range [0, 1], got {q!r}")


def _move_to_last(x: Array, axis) -> tuple[Array, tuple[int, ...]]:
    """`x` with the reduced axes merged into one last axis; returns (x, reduced axes)."""
    axes = canonical_axes(axis, x.ndim, "quantile")
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = shapes.transpose(x, kept + list(axes))
    merged = shapes.reshape(moved, tuple(x.shape[i] for i in kept) + (-1,))
    return merged, axes


def _keepdims_shape(out: Array, q_ndim: int, x: Array, axes: tuple[int, ...]) -> Array:
    shape = out.shape[:q_ndim] + tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return shapes.reshape(out, shape)


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, interpolation=None) -> Array:
    """The q-th quantiles along `axis` (q in [0, 1]); the result's leading axes are q's.
    Any NaN in a reduced slice makes that result NaN."""
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "quantile", ignore_nan=False)


def _quantile(a, q, axis, method: str, keepdims: bool, name: str, ignore_nan: bool) -> Array:
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{name}: method {method!r} is not supported; use one of "
                         f"{_QUANTILE_METHODS}")
    _check_quantiles(q)
    x = promote_inexact(a)[0]
    position_dtype = dtypes.float32 if x.dtype == dtypes.float16 else x.dtype
    qs = cast(as_array(q), position_dtype)
    merged, axes = _move_to_last(x, axis)
    if merged.shape[-1] == 0:
        raise ValueError(f"{name}: cannot take quantiles of an empty slice (shape {x.shape})")
    sorted_ = sort(merged, axis=-1)
    last = merged.shape[-1] - 1
    if ignore_nan:
        counts = reductions.sum(ufuncs.logical_not(ufuncs.isnan(merged)), axis=-1)
        top = cast(ufuncs.maximum(ufuncs.subtract(counts, 1), 0), position_dtype)
    else:
        top = full(merged.shape[:-1], last, position_dtype)
    position = ufuncs.multiply(_expand_leading(qs, top.ndim), top)
    result = _interpolate(sorted_, position, method)
    if not ignore_nan:
        has_nan = ufuncs.isnan(take(sorted_, as_array(last), axis=-1))
        result = ufuncs.where(has_nan, np.nan, result)
    if keepdims:
        result = _keepdims_shape(result, qs.ndim, x, axes)
    return result


def _expand_leading(q: Array, rest: int) -> Array:
    return shapes.reshape(q, q.shape + (1,) * rest)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, interpolation=None) -> Array:
    """The q-th percentiles along `axis` (q in [0, 100])."""
    q = ufuncs.divide(q, 100.0) if isinstance(q, Array) else np.asarray(q, np.float64) / 100
    return quantile(a, q, axis, method=method, keepdims=keepdims, interpolation=interpolation)


def median(a, axis=None, out=None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median along `axis`: the mean of the two middle values for even lengths."""
    return quantile(a, 0.5, axis, method="midpoint", keepdims=keepdims)


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, interpolation=None
                ) -> Array:
    """quantile ignoring NaNs (an all-NaN slice gives NaN)."""
    return _quantile(a, q, axis, method if interpolation is None else interpolation,
                     keepdims, "nanquantile", ignore_nan=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, interpolation=None
                  ) -> Array:
    """percentile ignoring NaNs."""
    q = ufuncs.divide(q, 100.0) if isinstance(q, Array) else np.asarray(q, np.float64) / 100
    return nanquantile(a, q, axis, method=method, keepdims=keepdims,
                       interpolation=interpolation)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """median ignoring NaNs."""
    return nanquantile(a, 0.5, axis, method="midpoint", keepdims=keepdims)


ufuncs._install_one_argument_where(nonzero)  # see ufuncs.where
