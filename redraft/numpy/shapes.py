"""Shape manipulation: reshape, ravel, transpose, axes moves, squeeze, broadcasting, joins."""
from __future__ import annotations

import math

import numpy as np

from redraft.compiler.primitives import shape as lax_shape
from redraft.compiler.primitives.checks import broadcast_shapes as _broadcast_shapes
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind

from redraft.numpy.promotion import promote


def _resolve_shape(newshape, size: int) -> tuple[int, ...]:
    """Fill in one -1 entry of `newshape` from `size`."""
    if isinstance(newshape, (int, np.integer)) or (isinstance(newshape, Array)
                                                   and newshape.ndim == 0):
        newshape = (int(newshape),)
    shape = [int(d) for d in newshape]
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"reshape: can only infer one dimension, got {tuple(shape)}")
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape an array of size {size} into shape {tuple(shape)}")
        shape[unknown[0]] = size // known
    return tuple(shape)


def reshape(a, shape=None, order: str = "C", *, newshape=None) -> Array:
    x = as_array(a)
    if shape is None:
        shape = newshape
    if order == "F":  # column-major: the reversed axes, reshaped row-major, reversed back
        shape = _resolve_shape(shape, x.size)
        flipped = lax_shape.reshape(transpose(x), tuple(reversed(shape)))
        return transpose(flipped)
    if order != "C":
        raise NotImplementedError(f"reshape supports order='C' and 'F', not {order!r}")
    shape = _resolve_shape(shape, x.size)
    return x if shape == x.shape else lax_shape.reshape(x, shape)


def ravel(a, order: str = "C") -> Array:
    return reshape(a, (-1,), order)


def transpose(a, axes=None) -> Array:
    x = as_array(a)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    else:
        axes = tuple(canonical_axis(ax, x.ndim, "transpose") for ax in axes)
    return x if axes == tuple(range(x.ndim)) else lax_shape.transpose(x, axes)


def permute_dims(a, axes) -> Array:
    return transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int) -> Array:
    x = as_array(a)
    perm = list(range(x.ndim))
    i, j = canonical_axis(axis1, x.ndim, "swapaxes"), canonical_axis(axis2, x.ndim, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def moveaxis(a, source, destination) -> Array:
    x = as_array(a)
    src = [canonical_axis(s, x.ndim, "moveaxis") for s in np.atleast_1d(source)]
    dst = [canonical_axis(d, x.ndim, "moveaxis") for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(a, axis) -> Array:
    x = as_array(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return lax_shape.expand_dims(x, axes)


def squeeze(a, axis=None) -> Array:
    x = as_array(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = canonical_axes(axis, x.ndim, "squeeze")
    return lax_shape.squeeze(x, axes) if axes else x


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if as_array(a).ndim == 0 else as_array(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        x = as_array(a)
        out.append(reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        x = as_array(a)
        if x.ndim == 0:
            x = reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = reshape(x, x.shape + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else out


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    return _broadcast_shapes(*(tuple(s) for s in shapes), op="broadcast_shapes")


def broadcast_to(array, shape) -> Array:
    x = as_array(array)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d)
                                                                            for d in shape)
    if x.shape == shape:
        return x
    if x.ndim == 0:  # a scalar spreads anywhere: skip the shape checks (hot in gradients)
        return bind(lax_shape.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=())
    if _broadcast_shapes(x.shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return lax_shape.broadcast_to_rank(x, shape)


def broadcast_arrays(*args) -> list[Array]:
    arrays = [as_array(a) for a in args]
    shape = _broadcast_shapes(*(a.shape for a in arrays), op="broadcast_arrays")
    return [lax_shape.broadcast_to_rank(a, shape) for a in arrays]


def concatenate(arrays, axis: int | None = 0, dtype=None) -> Array:
    xs = promote(*arrays) if len(arrays) else []
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if xs[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    out = lax_shape.concatenate(xs, axis)
    return out if dtype is None else out.astype(dtype)


concat = concatenate


def stack(arrays, axis: int = 0, dtype=None) -> Array:
    xs = [as_array(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    shapes = {x.shape for x in xs}
    if len(shapes) > 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got "
                         f"{sorted(shapes)}")
    axis = canonical_axis(axis, xs[0].ndim + 1, "stack")
    return concatenate([expand_dims(x, axis) for x in xs], axis, dtype)


def hstack(tup, dtype=None) -> Array:
    xs = [atleast_1d(a) for a in tup]
    return concatenate(xs, 0 if xs and xs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None) -> Array:
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)


row_stack = vstack


def dstack(tup, dtype=None) -> Array:
    return concatenate([atleast_3d(a) for a in tup], 2, dtype)


def column_stack(tup) -> Array:
    cols = [as_array(a) for a in tup]
    cols = [reshape(c, (c.size, 1)) if c.ndim < 2 else c for c in cols]
    return concatenate(cols, 1)


def shape(a) -> tuple[int, ...]:
    return np.shape(a) if not isinstance(a, Array) else a.shape


def ndim(a) -> int:
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def size(a, axis: int | None = None) -> int:
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]
