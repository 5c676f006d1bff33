"""`x[idx]` and `x.at[idx].<op>(y)`: parse a NumPy index into the indexing primitives' spec."""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.indexing import getitem_p, index_update_p
from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind

from redraft.numpy.promotion import cast


def _static_int(item) -> int | None:
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
        return int(item)
    return None


def _is_array_index(item) -> bool:
    return isinstance(item, (Array, np.ndarray, list)) or isinstance(item, (bool, np.bool_))


def parse_index(shape: tuple[int, ...], idx) -> tuple[tuple, list[Array]]:
    """(spec, dynamic operands) for index `idx` into an array of `shape`."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    n_ellipsis = sum(1 for it in items if it is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_axes_used(it) for it in items)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array has {len(shape)} dimensions, "
                         f"but {consumed} were indexed")
    spec, dynamic, axis = [], [], 0
    for item in items:
        if item is Ellipsis:
            for _ in range(len(shape) - consumed):
                spec.append(("slice", 0, shape[axis], 1))
                axis += 1
            continue
        if item is None:
            spec.append(("none",))
            continue
        entry, operand = _parse_item(item, shape, axis)
        if operand is not None:
            entry = (entry[0], len(dynamic))
            dynamic.append(operand)
        spec.append(entry)
        axis += _axes_used(item)
    return tuple(spec), dynamic


def _axes_used(item) -> int:
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, (bool, np.bool_)):
        return 0
    if isinstance(item, (Array, np.ndarray)) and np.dtype(item.dtype) == np.bool_:
        return max(item.ndim, 1)
    return 1


def _parse_item(item, shape, axis):
    """One spec entry (and its dynamic operand, if any) for index item `item` on `axis`."""
    dim = shape[axis] if axis < len(shape) else 0
    value = _static_int(item)
    if value is not None:
        if not -dim <= value < dim:
            raise IndexError(f"index {value} is out of bounds for axis {axis} with size {dim}")
        return ("int", value % dim), None
    if isinstance(item, slice):
        start, stop, step = item.indices(dim)
        return ("slice", start, stop, step), None
    if isinstance(item, (bool, np.bool_)):
        return ("bool", None), as_array(np.asarray(item))
    if isinstance(item, (Array, np.ndarray, list, tuple)):
        operand = as_array(item) if not isinstance(item, (list, tuple)) else as_array(
            np.asarray(item))
        if operand.dtype == np.bool_:
            return ("bool", None), operand
        if operand.dtype.kind not in "iu":
            raise IndexError(f"index arrays must be integers or bools, got "
                             f"{operand.dtype.name}")
        return ("array", None), operand
    raise TypeError(f"cannot index an array with {type(item).__name__} ({item!r:.40}); use "
                    "ints, slices, None, ..., integer arrays or boolean masks")


def getitem(x: Array, idx) -> Array:
    """x[idx] with NumPy's semantics (dynamic integer indices are clamped, as in JAX)."""
    if type(idx) is int:  # the hot path: x[3]
        try:
            # `(idx, ...)` makes NumPy return a (0-d) array, never a NumPy scalar.
            if type(x._buf) is np.ndarray:
                return wrap_host(x._buf[idx, ...], x._weak)
        except IndexError:
            pass  # out of range, or a 0-d array: parse_index raises the error users see
    spec, dynamic = parse_index(x.shape, idx)
    if any(e[0] == "bool" for e in spec):
        return _boolean_getitem(x, spec, dynamic)
    return bind(getitem_p, x, *dynamic, spec=spec)


def _boolean_getitem(x: Array, spec, dynamic) -> Array:
    """Masks have data-dependent result shapes: computed eagerly, refused by abstract eval."""
    for entry in spec:
        if entry[0] == "bool":
            mask = dynamic[entry[1]]
            if mask.ndim and mask.shape != x.shape[:mask.ndim] and len(spec) == 1:
                raise IndexError(f"boolean index of shape {mask.shape} does not match the "
                                 f"indexed array's shape {x.shape}")
    return bind(getitem_p, x, *dynamic, spec=spec)


def index_update(x: Array, idx, values, mode: str) -> Array:
    """x.at[idx].<mode>(values): a new array; `x` itself never changes."""
    x = as_array(x)
    spec, dynamic = parse_index(x.shape, idx)
    y = as_array(values)
    if y.dtype != x.dtype:
        y = cast(y, x.dtype)
    if not any(e[0] == "bool" for e in spec):
        abstract_eval_rules[index_update_p](
            ShapedArray(x.shape, x.dtype, x._weak), ShapedArray(y.shape, y.dtype, y._weak),
            *(ShapedArray(d.shape, d.dtype) for d in dynamic), spec=spec, mode=mode)
    return bind(index_update_p, x, y, *dynamic, spec=spec, mode=mode)


def take(a, indices, axis: int | None = None, mode=None, fill_value=None) -> Array:
    """Elements of `a` at `indices` along `axis` (flattened when axis is None)."""
    x = as_array(a)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    from redraft.compiler.primitives.checks import canonical_axis
    axis = canonical_axis(axis, x.ndim, "take")
    idx = as_array(indices)
    if not dtypes.is_integer(idx.dtype):
        raise TypeError(f"take: indices must be integers, got {idx.dtype.name}")
    return getitem(x, (slice(None),) * axis + (idx,))


def take_along_axis(arr, indices, axis: int | None) -> Array:
    """out[..., i, ...] = arr[..., indices[..., i, ...], ...] along `axis`."""
    x, idx = as_array(arr), as_array(indices)
    if axis is None:
        x, axis = x.reshape(-1), 0
    from redraft.compiler.primitives.checks import canonical_axis
    axis = canonical_axis(axis, x.ndim, "take_along_axis")
    if idx.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of rank {idx.ndim} need the rank of the "
                         f"array ({x.ndim})")
    index = []
    for d in range(x.ndim):
        if d == axis:
            index.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d] if idx.shape[d] != 1 else 1
            index.append(wrap_host(np.arange(shape[d], dtype=np.int32).reshape(shape)))
    return getitem(x, tuple(index))
