"""lax's conveniences over one axis and over whole shapes, as JAX defines them.

Each is a composition of lax primitives (slice, dynamic_slice, reshape, broadcast_in_dim,
and dot_general): the transforms read its source like a user's function, so jvp, vjp and
vmap come from the primitives' rules, and jit lowers the primitives. The static arithmetic on
shapes and axes sits in small helpers the source calls with constants.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from redraft.compiler.primitives.checks import broadcast_shapes as _broadcast_shapes
from redraft.compiler.primitives.checks import canonical_axis
from redraft.compiler.primitives.elementwise import convert_element_type, integer_pow
from redraft.compiler.primitives.linalg import dot_general
from redraft.compiler.primitives.reductions import reduce_sum
from redraft.compiler.primitives.shape import (broadcast_in_dim, concatenate, dynamic_slice,
                                               dynamic_update_slice, pad, reshape, squeeze)
from redraft.compiler.primitives.shape import slice as slice_static
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.numpy.creation import asarray as as_array

# ---- static helpers: shapes and axes -------------------------------------------------------

def _static_slice(shape: tuple[int, ...], axis: int, start, limit, stride: int, op: str):
    """(starts, limits, strides) of a slice of one axis; negative bounds count from the end."""
    axis = canonical_axis(axis, len(shape), op)
    size = shape[axis]
    start = 0 if start is None else int(start)
    limit = size if limit is None else int(limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis] = start + size if start < 0 else start
    limits[axis] = limit + size if limit < 0 else limit
    strides[axis] = int(stride)
    return tuple(starts), tuple(limits), tuple(strides)


def _axis_window(shape: tuple[int, ...], axis: int, size, op: str):
    """(axis, slice sizes) of a window of `size` along one axis and the full others."""
    axis = canonical_axis(axis, len(shape), op)
    sizes = list(shape)
    sizes[axis] = int(size)
    return axis, tuple(sizes)


def _axis_starts(ndim: int, axis: int, start) -> list:
    """Start indices: `start` along `axis`, 0 elsewhere (start may be a traced value)."""
    return [start if d == axis else 0 for d in range(ndim)]


def _collapsed_shape(shape: tuple[int, ...], start: int, stop) -> tuple[int, ...]:
    ndim = len(shape)
    stop = ndim if stop is None else stop
    start, stop = (d + ndim if d < 0 else d for d in (start, stop))
    if not 0 <= start <= stop <= ndim:
        raise ValueError(f"lax.collapse: dimensions [{start}, {stop}) are not within the "
                         f"{ndim} axes of shape {shape}")
    return shape[:start] + (int(np.prod(shape[start:stop], dtype=np.int64)),) + shape[stop:]


def _leading_ones(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    if rank < len(shape):
        raise ValueError(f"lax.broadcast_to_rank: rank {rank} is below the rank of shape {shape}")
    return (1,) * (rank - len(shape)) + tuple(shape)


def _split_bounds(shape: tuple[int, ...], sizes, axis: int):
    axis = canonical_axis(axis, len(shape), "lax.split")
    sizes = tuple(int(s) for s in sizes)
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"lax.split: sizes {sizes} must be non-negative and add up to the "
                         f"{shape[axis]} elements of axis {axis}")
    bounds, start = [], 0
    for s in sizes:
        bounds.append(_static_slice(shape, axis, start, start + s, 1, "lax.split"))
        start += s
    return bounds


def _tile_reps(shape: tuple[int, ...], reps) -> tuple[int, ...]:
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape) or any(r < 0 for r in reps):
        raise ValueError(f"lax.tile: {reps} must be one non-negative count per axis of an "
                         f"operand of rank {len(shape)}")
    return reps


def _full_dtype(fill_value, dtype):
    if dtype is not None:
        return dtypes.check_dtype_arg(dtype)
    return as_array(fill_value).dtype


def _weak_dtype(x: Array, dtype):
    return x.dtype if dtype is None else dtypes.check_dtype_arg(dtype)


def _batch_matmul_dims(lhs_shape, rhs_shape):
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ValueError(f"lax.batch_matmul needs operands of one rank of at least 2, got "
                         f"shapes {lhs_shape} and {rhs_shape}")
    batch = tuple(range(len(lhs_shape) - 2))
    return (((len(lhs_shape) - 1,), (len(rhs_shape) - 2,)), (batch, batch))


# ---- one axis --------------------------------------------------------------------------------

def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0) -> Array:
    """operand[..., start_index:limit_index:stride, ...] along `axis`."""
    x = as_array(operand)
    starts, limits, strides = _static_slice(x.shape, axis, start_index, limit_index, stride,
                                            "lax.slice_in_dim")
    return slice_static(x, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """operand[..., index, ...] along `axis` (a static index), kept as a size-1 axis or not."""
    x = as_array(operand)
    axis, _ = _axis_window(x.shape, axis, 1, "lax.index_in_dim")
    start = index + x.shape[axis] if index < 0 else index
    if not 0 <= start < x.shape[axis]:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"of size {x.shape[axis]}")
    out = slice_in_dim(x, start, start + 1, 1, axis)
    if keepdims:
        return out
    return squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0) -> Array:
    """`slice_size` elements from `start_index` (a traced value allowed) along `axis`."""
    x = as_array(operand)
    axis, sizes = _axis_window(x.shape, axis, slice_size, "lax.dynamic_slice_in_dim")
    return dynamic_slice(x, _axis_starts(x.ndim, axis, start_index), sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int) -> Array:
    """`operand` with `update` written from `start_index` along `axis`."""
    x = as_array(operand)
    axis, _ = _axis_window(x.shape, axis, 1, "lax.dynamic_update_slice_in_dim")
    return dynamic_update_slice(x, update, _axis_starts(x.ndim, axis, start_index))


def dynamic_update_index_in_dim(operand, update, index, axis: int) -> Array:
    """`operand` with the slice at `index` along `axis` replaced by `update` (which may lack
    that axis)."""
    x, u = as_array(operand), as_array(update)
    axis, sizes = _axis_window(x.shape, axis, 1, "lax.dynamic_update_index_in_dim")
    if u.ndim == x.ndim - 1:
        u = reshape(u, sizes)
    return dynamic_update_slice_in_dim(x, u, index, axis)


def split(operand, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """Consecutive pieces of `sizes` elements along `axis`."""
    x = as_array(operand)
    return [slice_static(x, lo, hi, st) for lo, hi, st in _split_bounds(x.shape, sizes, axis)]


# ---- whole shapes ----------------------------------------------------------------------------

def collapse(operand, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Axes [start_dimension, stop_dimension) merged into one."""
    x = as_array(operand)
    return reshape(x, _collapsed_shape(x.shape, start_dimension, stop_dimension))


def broadcast_to_rank(x, rank: int) -> Array:
    """`x` with leading size-1 axes added up to `rank`."""
    x = as_array(x)
    return reshape(x, _leading_ones(x.shape, int(rank)))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes`; a TypeError names them when they do not broadcast."""
    return _broadcast_shapes(*(tuple(int(d) for d in s) for s in shapes),
                             op="lax.broadcast_shapes")


def tile(operand, reps: Sequence[int]) -> Array:
    """`operand` repeated `reps[i]` times along each axis i."""
    x = as_array(operand)
    for axis, r in enumerate(_tile_reps(x.shape, reps)):
        if r != 1:
            x = concatenate([x for _ in range(r)], axis)
    return x


def full(shape: Sequence[int], fill_value, dtype=None) -> Array:
    """An array of `shape` filled with `fill_value`."""
    dtype = _full_dtype(fill_value, dtype)
    value = convert_element_type(fill_value, dtype)
    if value.ndim != 0:
        raise TypeError(f"lax.full: fill_value must be a scalar, got shape {value.shape}")
    return broadcast_in_dim(value, tuple(int(d) for d in shape), ())


def full_like(x, fill_value, dtype=None, shape: Sequence[int] | None = None) -> Array:
    """`full` with the shape and dtype of `x` unless given."""
    x = as_array(x)
    return full(x.shape if shape is None else shape, fill_value, _weak_dtype(x, dtype))


def dtype(x, *, canonicalize: bool = False) -> np.dtype:
    """The dtype of `x` (an array, a Python or NumPy scalar, or a dtype-like)."""
    if isinstance(x, (type, np.dtype, str)):
        return dtypes.check_dtype_arg(x)
    return as_array(x).dtype


def reciprocal(x) -> Array:
    """1 / x, elementwise."""
    return integer_pow(x, -1)


def batch_matmul(lhs, rhs, precision=None) -> Array:
    """Matrix products over the leading (batch) axes: (..., m, k) @ (..., k, n)."""
    a, b = as_array(lhs), as_array(rhs)
    return dot_general(a, b, _batch_matmul_dims(a.shape, b.shape), precision)


# ---- transposes the derivative rules use (compositions too) -------------------------------

def slice_in_dim_padding(shape: tuple[int, ...], start_index, limit_index, stride: int = 1,
                         axis: int = 0) -> tuple:
    """The pad config putting slice_in_dim's result back where it came from."""
    starts, limits, strides = _static_slice(tuple(shape), axis, start_index, limit_index,
                                            stride, "lax.slice_in_dim")
    config = []
    for d, lo, hi, st in zip(shape, starts, limits, strides):
        n = max(0, -(-(hi - lo) // st))
        used = 0 if n == 0 else 1 + (n - 1) * st
        config.append((lo, d - lo - used, st - 1 if n > 1 else 0))
    return tuple(config)


def _index_bar_plan(shape: tuple[int, ...], index: int, axis: int):
    axis = canonical_axis(axis, len(shape), "lax.index_in_dim")
    start = index + shape[axis] if index < 0 else index
    kept = tuple(1 if d == axis else s for d, s in enumerate(shape))
    config = tuple((start, s - start - 1, 0) if d == axis else (0, 0, 0)
                   for d, s in enumerate(shape))
    return kept, config


def index_in_dim_bar(g, operand, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The cotangent of index_in_dim's operand: g put back at `index`, zeros elsewhere."""
    x, g = as_array(operand), as_array(g)
    kept, config = _index_bar_plan(x.shape, index, axis)
    return pad(reshape(g, kept), convert_element_type(0, g.dtype), config)


def _tile_bar_plan(shape: tuple[int, ...], reps):
    reps = _tile_reps(shape, reps)
    wide = tuple(d for r, s in zip(reps, shape) for d in (r, s))
    return wide, tuple(range(0, 2 * len(shape), 2))


def tile_bar(g, operand, reps: Sequence[int]) -> Array:
    """The cotangent of tile's operand: the tiles of g summed."""
    x, g = as_array(operand), as_array(g)
    wide, axes = _tile_bar_plan(x.shape, reps)
    return reduce_sum(reshape(g, wide), axes)
