"""`x[idx]` and `x.at[idx].<op>(y)`: parse a NumPy index into the indexing primitives' spec."""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives.indexing import getitem_p, index_update_p
from redraft.compiler.primitives.shape import pad as lax_pad
from redraft.runtime import dtypes
from redraft.runtime.array import Array, recorder_in, wrap_host
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
    """x[idx] with NumPy's semantics, except that out-of-range integer indices, static or
    dynamic, are clamped into range, as JAX's reads are (x[10] of 3 elements is x[2])."""
    if type(idx) is int:  # the hot path: x[3]
        try:
            # `(idx, ...)` makes NumPy return a (0-d) array, never a NumPy scalar.
            if type(x._buf) is np.ndarray:
                return wrap_host(x._buf[idx, ...], x._weak)
        except IndexError:
            pass  # out of range, or a 0-d array: clamped, or parse_index's error
    recorder = recorder_in(idx)
    if recorder is not None:  # indexed by a traced value: recorded by it
        return recorder.__redraft_index__(x, idx)
    spec, dynamic = parse_index(x.shape, clamp_static_ints(x.shape, idx))
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
    """Elements of `a` at `indices` along `axis` (flattened when axis is None). As in JAX,
    mode None is 'fill': a negative index counts from the end once, and a position out of
    bounds reads `fill_value` (NaN for inexact dtypes; see _fill_value)."""
    x = as_array(a)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    from redraft.compiler.primitives.checks import canonical_axis
    axis = canonical_axis(axis, x.ndim, "take")
    idx = as_array(indices)
    if not dtypes.is_integer(idx.dtype):
        raise TypeError(f"take: indices must be integers, got {idx.dtype.name}")
    if mode in (None, "fill"):
        return at_get_mode(x, (slice(None),) * axis + (idx,), "fill", fill_value)
    return getitem(x, (slice(None),) * axis + (take_positions(idx, x.shape[axis], mode),))


def take_positions(idx: Array, n: int, mode) -> Array:
    """Where jnp.take reads along its axis of length n: mode 'wrap' modulo n, 'clip' into
    [0, n) (a negative index is not wrapped first, as in JAX); None or 'fill' leaves the
    indices as they are (take reads fill_value out of bounds: at_get_mode)."""
    if mode in (None, "fill"):
        return idx
    size = as_array(np.asarray(n, idx.dtype))
    if mode == "wrap":
        return bind(ew.rem_p, bind(ew.add_p, bind(ew.rem_p, idx, size), size), size)
    if mode == "clip":
        zero, last = as_array(np.asarray(0, idx.dtype)), as_array(np.asarray(n - 1, idx.dtype))
        return bind(ew.min_p, bind(ew.max_p, idx, zero), last)
    raise ValueError(f"take: mode must be one of None, 'fill', 'clip', 'wrap'; got {mode!r}")


def take_along_axis(arr, indices, axis: int | None, mode=None, fill_value=None) -> Array:
    """out[..., i, ...] = arr[..., indices[..., i, ...], ...] along `axis`; out-of-bounds
    reads as `x.at[...].get(mode=...)` does, mode None being 'fill' (as in JAX)."""
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
    return at_get_mode(x, tuple(index), "fill" if mode is None else mode, fill_value)


# ---- out-of-bounds modes: x.at[idx].get(mode=..., fill_value=...), .set(..., mode=...) ------
# JAX's semantics: without a mode, reads clamp indices into range and updates drop the
# out-of-bounds ones. 'clip' clamps (after wrapping negative indices once), 'fill' (reads)
# gives fill_value where an index is out of bounds, 'drop' drops updates there (and, for
# reads, fills as 'fill' does), 'promise_in_bounds' leaves the indices as they are. Each mode
# becomes a rewritten index for the ordinary indexing primitives, so jit, grad and vmap treat
# the result as any other index.

MODES = (None, "promise_in_bounds", "clip", "fill", "drop")


def _check_mode(mode) -> None:
    if mode not in MODES:
        raise ValueError(f"invalid indexing mode {mode!r}: use one of "
                         f"{[m for m in MODES if m]}")


def _items_with_axes(shape: tuple[int, ...], idx) -> list[tuple[object, int | None]]:
    """Each item of idx with the axis it indexes (None for None/bool items)."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    consumed = sum(_axes_used(it) for it in items)
    out, axis = [], 0
    for item in items:
        if item is Ellipsis:
            out.append((item, None))
            axis += len(shape) - consumed
        elif item is None or isinstance(item, (bool, np.bool_)):
            out.append((item, None))
        else:
            out.append((item, axis))
            axis += _axes_used(item)
    return out


def _integer_array(item) -> Array | None:
    if isinstance(item, (Array, np.ndarray, list)):
        arr = as_array(item) if not isinstance(item, list) else as_array(np.asarray(item))
        if arr.dtype.kind in "iu":
            return arr
    return None


def _remap(shape: tuple[int, ...], idx, out_of_bounds: str, wrap: bool = True):
    """idx with every integer index wrapped once (negative + size) and then, where still out
    of range, clamped (out_of_bounds='clip') or sent to position `size` (out_of_bounds='pad':
    the fill slot of an array padded by one, or an index the update primitive drops)."""
    from redraft.numpy import ufuncs
    items = []
    for item, axis in _items_with_axes(shape, idx):
        if axis is None:
            items.append(item)
            continue
        dim = shape[axis]
        value = _static_int(item)
        arr = None if value is not None else _integer_array(item)
        if value is not None:
            value = value + dim if value < 0 and wrap else value
            if out_of_bounds == "clip":
                value = min(max(value, 0), max(dim - 1, 0))
            elif not 0 <= value < dim:
                value = dim
            items.append(value)
        elif arr is not None:
            wrapped = ufuncs.where(ufuncs.less(arr, 0), ufuncs.add(arr, dim), arr) if wrap \
                else arr
            if out_of_bounds == "clip":
                items.append(ufuncs.clip(wrapped, 0, max(dim - 1, 0)))
            else:
                inside = ufuncs.logical_and(ufuncs.greater_equal(wrapped, 0),
                                            ufuncs.less(wrapped, dim))
                items.append(ufuncs.where(inside, wrapped, dim))
        else:
            items.append(item)
    return tuple(items)


def static_out_of_bounds(shape: tuple[int, ...], idx) -> bool:
    """Whether a Python-int item of idx is out of range even after wrapping negatives."""
    for item, axis in _items_with_axes(shape, idx):
        value = _static_int(item) if axis is not None and axis < len(shape) else None
        if value is not None and not -shape[axis] <= value < shape[axis]:
            return True
    return False


def _fill_value(dtype, fill_value):
    """JAX's default fill for out-of-bounds reads: NaN for inexact dtypes, the most negative
    value for signed integers, the largest for unsigned ones, True for bool."""
    if fill_value is not None:
        return fill_value
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def at_get_mode(x, idx, mode=None, fill_value=None, indices_are_sorted=False,
                unique_indices=False, wrap_negative_indices=True) -> Array:
    """x.at[idx].get(mode=..., fill_value=...) (see the section comment; the sorted/unique
    flags are performance hints that change no value)."""
    _check_mode(mode)
    x = as_array(x)
    wrap = bool(wrap_negative_indices)
    if mode in (None, "promise_in_bounds") and wrap and not static_out_of_bounds(x.shape, idx):
        return x[idx]
    if mode in (None, "promise_in_bounds", "clip"):
        return x[_remap(x.shape, idx, "clip", wrap)]
    padded_axes = {axis for item, axis in _items_with_axes(x.shape, idx)
                   if axis is not None and (_static_int(item) is not None
                                            or _integer_array(item) is not None)}
    config = [(0, 1, 0) if a in padded_axes else (0, 0, 0) for a in range(x.ndim)]
    fill = as_array(np.asarray(_fill_value(x.dtype, fill_value)).astype(x.dtype))
    return lax_pad(x, fill, config)[_remap(x.shape, idx, "pad", wrap)]


def _update_index(x: Array, idx, mode, wrap: bool):
    """The rewritten index of an update, or None when a Python-int index is out of range
    (the whole update is dropped)."""
    _check_mode(mode)
    if mode != "clip" and static_out_of_bounds(x.shape, idx):
        return None
    return _remap(x.shape, idx, "clip" if mode == "clip" else "pad", wrap)


def at_update_mode(x, idx, values, op: str, mode=None, indices_are_sorted=False,
                   unique_indices=False, wrap_negative_indices=True) -> Array:
    """x.at[idx].<op>(values, mode=mode): out-of-bounds updates are dropped (mode None,
    'drop', 'fill', 'promise_in_bounds') or clamped into range ('clip')."""
    x = as_array(x)
    remapped = _update_index(x, idx, mode, bool(wrap_negative_indices))
    if remapped is None:
        return x
    if op == "subtract":
        from redraft.numpy.ufuncs import negative
        return index_update(x, remapped, negative(as_array(values)), "add")
    if op == "divide":  # as JAX: by the product of each place's values, true division
        from redraft.numpy.ufuncs import divide
        from redraft.numpy.creation import ones_like
        return divide(x, index_update(ones_like(x), remapped, values, "mul"))
    return index_update(x, remapped, values, {"multiply": "mul", "power": "pow"}.get(op, op))


def at_set_mode(x, idx, values, mode=None, indices_are_sorted=False, unique_indices=False,
                wrap_negative_indices=True) -> Array:
    """x.at[idx].set(values, mode=mode) (its own function: the transforms' rules need it)."""
    return at_update_mode(x, idx, values, "set", mode, wrap_negative_indices=
                          wrap_negative_indices)


def at_add_mode(x, idx, values, mode=None, indices_are_sorted=False, unique_indices=False,
                wrap_negative_indices=True) -> Array:
    """x.at[idx].add(values, mode=mode)."""
    return at_update_mode(x, idx, values, "add", mode, wrap_negative_indices=
                          wrap_negative_indices)


def transpose_read_mode(mode):
    """The read mode that transposes an update of mode `mode`: dropped places carry
    nothing (fill 0), clamped ones carry from where they were clamped to."""
    return "fill" if mode in ("fill", "drop") else "clip"


def transpose_update_mode(mode):
    """The update mode that transposes a read of mode `mode`: filled places carry nothing
    (drop), clamped ones add into where they were clamped to."""
    return "drop" if mode in ("fill", "drop") else "clip"


def clamp_static_ints(shape: tuple[int, ...], idx):
    """idx with each out-of-range Python int wrapped once and clamped into its axis (an axis
    of size 0 keeps it, for parse_index's IndexError)."""
    if not static_out_of_bounds(shape, idx):
        return idx
    items = []
    for item, axis in _items_with_axes(shape, idx):
        value = _static_int(item) if axis is not None and axis < len(shape) else None
        if value is not None and shape[axis] > 0:
            value = value + shape[axis] if value < 0 else value
            item = min(max(value, 0), shape[axis] - 1)
        items.append(item)
    return tuple(items) if isinstance(idx, tuple) else items[0]


def clamped_index(shape: tuple[int, ...], idx):
    """idx with its integer arrays wrapped once and clamped into range: the places a read
    `x[idx]` takes its values from (reads clamp), for the transpose of that read."""
    idx = clamp_static_ints(shape, idx)
    if not any(_integer_array(item) is not None for item, axis in _items_with_axes(shape, idx)
               if axis is not None):
        return idx   # ints, slices, masks: nothing to clamp
    return _remap(shape, idx, "clip")


def clamped_index_of(x, idx):
    """clamped_index for the shape of x (a call the batched transposes emit)."""
    return clamped_index(tuple(x.shape), idx)
