"""gather and scatter: XLA's general indexed reads and indexed updates.

The index vector is always the last axis of the indices (XLA's index_vector_dim is implicit,
as in JAX); the other axes of the indices are the *batch* of windows.

gather: for each batch position, the start of a window of `slice_sizes` in the operand is
the index vector scattered into the operand axes `start_index_map` (and, for each pair of
operand_batching_dims / start_indices_batching_dims, the batch position along that indices
axis); other operand axes start at 0. The window's axes that are not collapsed (nor
batching) become the result's `offset_dims`; the batch axes fill the other result axes in
order.

scatter is the transpose: each update window (`update_window_dims` of the updates; the
other update axes are the batch) is combined into the operand at the start computed from
the indices in the same way, with `inserted_window_dims` the size-1 operand axes that the
update window lacks.

Out-of-bounds starts (`mode`): CLIP clamps a start so the whole window is in bounds;
FILL_OR_DROP fills a gathered window that is not wholly in bounds with `fill_value` and drops
such a scattered window; PROMISE_IN_BOUNDS clamps gathers and drops scatters (what XLA does).
Negative indices are out of bounds: lax does not wrap them (redraft.numpy does).

As a family file it also declares the lax functions' jvp and vjp rules and their batching
(compiler/primitives/registry.py).
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive
from redraft.compiler.primitives.checks import check_same_dtypes
from redraft.compiler.primitives.operands import strict_operands
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import (defbatch_loop, defjvp, defjvp_joint,
                                                  defstatic, defvjp, jnp, lad, lax,
                                                  names_primitive)

FAMILY = "gather"


class GatherDimensionNumbers(NamedTuple):
    """How the axes of operand, start indices and result of a gather correspond."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the axes of operand, scatter indices and updates of a scatter correspond."""
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that is not wholly in bounds."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode) -> GatherScatterMode:
        """A mode from an enum member or 'clip' / 'fill' / 'drop' / 'promise_in_bounds'.

        None means FILL_OR_DROP (scatter's default; gather passes its own default).
        """
        if isinstance(mode, GatherScatterMode):
            return mode
        names = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP, None: GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if mode not in names:
            raise ValueError(f"unknown gather/scatter mode {mode!r}; expected 'clip', 'fill', "
                             "'drop' or 'promise_in_bounds'")
        return names[mode]


# ---- shared index arithmetic (eager) ----------------------------------------------------------

def _window_starts(operand_shape, indices: np.ndarray, index_map, operand_batching_dims,
                   indices_batching_dims) -> list:
    """Per operand axis, the window start for every batch position (an int64 array of the
    batch shape, or 0 where the axis is neither indexed nor batched)."""
    batch_shape = indices.shape[:-1]
    starts: list = [0] * len(operand_shape)
    for k, axis in enumerate(index_map):
        starts[axis] = indices[..., k].astype(np.int64)
    for axis, batch_axis in zip(operand_batching_dims, indices_batching_dims):
        view = [1] * len(batch_shape)
        view[batch_axis] = batch_shape[batch_axis]
        starts[axis] = np.arange(batch_shape[batch_axis], dtype=np.int64).reshape(view)
    return starts


def _clamped(starts, operand_shape, window) -> list:
    """Starts moved so that each window lies wholly inside the operand."""
    return [np.clip(s, 0, size - w) if isinstance(s, np.ndarray) else s
            for s, size, w in zip(starts, operand_shape, window)]


def _in_bounds(starts, operand_shape, window, batch_shape) -> np.ndarray:
    """For each batch position, whether its whole window lies inside the operand."""
    ok = np.ones(batch_shape, bool)
    for s, size, w in zip(starts, operand_shape, window):
        if isinstance(s, np.ndarray):
            ok = ok & (s >= 0) & (s <= size - w)
    return ok


def _window_index(starts, window, batch_shape) -> tuple:
    """Index arrays of shape batch_shape + window addressing every window element."""
    nb, rank = len(batch_shape), len(window)
    full = tuple(batch_shape) + tuple(window)
    index = []
    for axis, (s, w) in enumerate(zip(starts, window)):
        offsets = np.arange(w, dtype=np.int64).reshape(
            (1,) * nb + tuple(w if a == axis else 1 for a in range(rank)))
        start = np.reshape(s, np.shape(s) + (1,) * rank)
        index.append(np.broadcast_to(start + offsets, full))
    return tuple(index)


# ---- checks shared by the abstract rules ------------------------------------------------------

def _check_axes(dims, bound: int, op: str, name: str, ordered: bool = True) -> None:
    """`dims` distinct (and ascending if `ordered`) axes in [0, bound)."""
    dims = tuple(dims)
    if len(set(dims)) != len(dims) or (ordered and list(dims) != sorted(dims)):
        order = "ascending and distinct" if ordered else "distinct"
        raise TypeError(f"{op}: {name} {dims} must be {order}")
    if any(not 0 <= d < bound for d in dims):
        raise TypeError(f"{op}: {name} {dims} must lie in [0, {bound})")


def _check_disjoint(a, b, op: str, names: str) -> None:
    if set(a) & set(b):
        raise TypeError(f"{op}: {names} must be disjoint, got {tuple(a)} and {tuple(b)}")


def _check_indices(indices: ShapedArray, n_index: int, op: str) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {indices.dtype.name}")
    if indices.ndim < 1:
        raise TypeError(f"{op}: indices need a trailing index vector axis, got a scalar; "
                        "add an axis of size 1")
    if indices.shape[-1] != n_index:
        raise TypeError(f"{op}: indices of shape {indices.shape} have index vectors of "
                        f"length {indices.shape[-1]}, but the dimension numbers map "
                        f"{n_index} operand axes")


def _check_batching(operand: ShapedArray, indices: ShapedArray, operand_batching_dims,
                    indices_batching_dims, op: str, indices_name: str) -> None:
    _check_axes(operand_batching_dims, operand.ndim, op, "operand_batching_dims")
    _check_axes(indices_batching_dims, indices.ndim - 1, op,
                f"{indices_name}_batching_dims (the index vector axis excluded)", False)
    if len(operand_batching_dims) != len(indices_batching_dims):
        raise TypeError(f"{op}: operand_batching_dims {tuple(operand_batching_dims)} and "
                        f"{indices_name}_batching_dims {tuple(indices_batching_dims)} "
                        "differ in length")
    operand_sizes = tuple(operand.shape[d] for d in operand_batching_dims)
    indices_sizes = tuple(indices.shape[d] for d in indices_batching_dims)
    if operand_sizes != indices_sizes:
        raise TypeError(f"{op}: operand batching axes have sizes {operand_sizes} but the "
                        f"indices batching axes have sizes {indices_sizes}")


# ---- gather -----------------------------------------------------------------------------------

gather_p = Primitive("gather", FAMILY)


def _gather_output_perm(offset_dims, n_batch: int, out_rank: int) -> list[int]:
    """Where each result axis comes from in (batch axes..., offset axes...)."""
    batch, offset = iter(range(n_batch)), iter(range(n_batch, out_rank))
    return [next(offset) if axis in offset_dims else next(batch) for axis in range(out_rank)]


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value=None,
                 unique_indices=False, indices_are_sorted=False):
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    starts = _window_starts(operand.shape, indices, dn.start_index_map,
                            dn.operand_batching_dims, dn.start_indices_batching_dims)
    inside = None
    if mode is GatherScatterMode.FILL_OR_DROP:
        inside = _in_bounds(starts, operand.shape, slice_sizes, batch_shape)
    starts = _clamped(starts, operand.shape, slice_sizes)
    windows = operand[_window_index(starts, slice_sizes, batch_shape)]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = tuple(w for axis, w in enumerate(slice_sizes) if axis not in dropped)
    windows = windows.reshape(tuple(batch_shape) + offsets)
    if inside is not None:
        mask = inside.reshape(inside.shape + (1,) * len(offsets))
        windows = np.where(mask, windows, np.asarray(fill_value).astype(operand.dtype))
    perm = _gather_output_perm(dn.offset_dims, len(batch_shape), windows.ndim)
    return np.transpose(windows, perm)


def _gather_abstract(operand: ShapedArray, indices: ShapedArray, *, dimension_numbers,
                     slice_sizes, mode, fill_value=None, unique_indices=False,
                     indices_are_sorted=False) -> ShapedArray:
    dn, op = dimension_numbers, "gather"
    _check_indices(indices, len(dn.start_index_map), op)
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    _check_axes(dn.offset_dims, out_rank, op, "offset_dims")
    _check_axes(dn.start_index_map, operand.ndim, op, "start_index_map", ordered=False)
    _check_axes(dn.collapsed_slice_dims, operand.ndim, op, "collapsed_slice_dims")
    _check_batching(operand, indices, dn.operand_batching_dims,
                    dn.start_indices_batching_dims, op, "start_indices")
    _check_disjoint(dn.collapsed_slice_dims, dn.operand_batching_dims, op,
                    "collapsed_slice_dims and operand_batching_dims")
    _check_disjoint(dn.start_index_map, dn.operand_batching_dims, op,
                    "start_index_map and operand_batching_dims")
    _check_slice_sizes(operand, dn, slice_sizes)
    batch = iter(indices.shape[:-1])
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = iter(w for axis, w in enumerate(slice_sizes) if axis not in dropped)
    shape = tuple(next(offsets) if axis in dn.offset_dims else next(batch)
                  for axis in range(out_rank))
    return ShapedArray(shape, operand.dtype, operand.weak_type and indices.weak_type)


def _check_slice_sizes(operand: ShapedArray, dn: GatherDimensionNumbers, slice_sizes) -> None:
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather: slice_sizes {tuple(slice_sizes)} need one entry per axis of "
                        f"the operand of shape {operand.shape}")
    kept = operand.ndim - len(dn.collapsed_slice_dims) - len(dn.operand_batching_dims)
    if kept != len(dn.offset_dims):
        raise TypeError(f"gather: offset_dims {tuple(dn.offset_dims)} must name one result "
                        f"axis for each of the {kept} operand axes that are neither collapsed "
                        f"{tuple(dn.collapsed_slice_dims)} nor batching "
                        f"{tuple(dn.operand_batching_dims)}")
    for axis, (size, w) in enumerate(zip(operand.shape, slice_sizes)):
        if not 0 <= w <= size:
            raise TypeError(f"gather: slice size {w} of axis {axis} does not fit the operand "
                            f"of shape {operand.shape}")
    for axis in dn.collapsed_slice_dims:
        if slice_sizes[axis] != 1:
            raise TypeError(f"gather: collapsed axis {axis} needs slice size 1, got "
                            f"{slice_sizes[axis]}")
    for axis in dn.operand_batching_dims:
        if slice_sizes[axis] > 1:
            raise TypeError(f"gather: batching axis {axis} needs slice size 0 or 1, got "
                            f"{slice_sizes[axis]}")


impl_rules[gather_p] = _gather_impl
abstract_eval_rules[gather_p] = _gather_abstract


# ---- scatter ------------------------------------------------------------------------------

def _scatter_window(operand_shape, updates_shape, dn: ScatterDimensionNumbers) -> tuple:
    """The update window's size along every operand axis (1 on inserted/batching axes)."""
    sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    absent = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return tuple(1 if axis in absent else next(sizes) for axis in range(len(operand_shape)))


def _scatter_impl(combine: str):
    def impl(operand, indices, updates, *, dimension_numbers, mode, indices_are_sorted=False,
             unique_indices=False):
        dn = dimension_numbers
        batch_shape = indices.shape[:-1]
        window = _scatter_window(operand.shape, updates.shape, dn)
        scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        values = np.transpose(updates, scatter_axes + list(dn.update_window_dims))
        values = values.reshape(tuple(batch_shape) + window)
        starts = _window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                                dn.operand_batching_dims, dn.scatter_indices_batching_dims)
        if mode is GatherScatterMode.CLIP:
            index = _window_index(_clamped(starts, operand.shape, window), window, batch_shape)
        else:
            keep = _in_bounds(starts, operand.shape, window, batch_shape)
            index = tuple(i[keep] for i in _window_index(starts, window, batch_shape))
            values = values[keep]
        return _combine_at(operand.copy(), index, values, combine)
    return impl


def _combine_at(out: np.ndarray, index: tuple, values: np.ndarray, combine: str) -> np.ndarray:
    """Apply the updates in place; repeated indices accumulate (set: the last one wins)."""
    if combine == "set":
        out[index] = values
    else:
        _UFUNCS[combine].at(out, index, values)
    return out


_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_abstract(name: str):
    def abstract_eval(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
                      dimension_numbers, mode, indices_are_sorted=False,
                      unique_indices=False) -> ShapedArray:
        dn = dimension_numbers
        check_same_dtypes([operand.dtype, updates.dtype], name)
        _check_indices(indices, len(dn.scatter_dims_to_operand_dims), name)
        _check_update_rank(indices, updates, dn, name)
        _check_axes(dn.update_window_dims, updates.ndim, name, "update_window_dims")
        _check_axes(dn.inserted_window_dims, operand.ndim, name, "inserted_window_dims")
        _check_axes(dn.scatter_dims_to_operand_dims, operand.ndim, name,
                    "scatter_dims_to_operand_dims", ordered=False)
        _check_batching(operand, indices, dn.operand_batching_dims,
                        dn.scatter_indices_batching_dims, name, "scatter_indices")
        _check_disjoint(dn.inserted_window_dims, dn.operand_batching_dims, name,
                        "inserted_window_dims and operand_batching_dims")
        _check_disjoint(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, name,
                        "scatter_dims_to_operand_dims and operand_batching_dims")
        _check_update_shape(operand, indices, updates, dn, name)
        weak = operand.weak_type and indices.weak_type and updates.weak_type
        return ShapedArray(operand.shape, operand.dtype, weak)
    return abstract_eval


def _check_update_rank(indices: ShapedArray, updates: ShapedArray, dn: ScatterDimensionNumbers,
                       name: str) -> None:
    rank = indices.ndim - 1 + len(dn.update_window_dims)
    if updates.ndim != rank:
        raise TypeError(f"{name}: updates of shape {updates.shape} need rank {rank} for "
                        f"indices of shape {indices.shape} and update_window_dims "
                        f"{tuple(dn.update_window_dims)}")


def _check_update_shape(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                        dn: ScatterDimensionNumbers, name: str) -> None:
    window_rank = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                   + len(dn.operand_batching_dims))
    if window_rank != operand.ndim:
        raise TypeError(f"{name}: update_window_dims {tuple(dn.update_window_dims)}, "
                        f"inserted_window_dims {tuple(dn.inserted_window_dims)} and "
                        f"operand_batching_dims {tuple(dn.operand_batching_dims)} must "
                        f"account for the {operand.ndim} axes of the operand")
    batch = tuple(s for d, s in enumerate(updates.shape) if d not in dn.update_window_dims)
    if batch != indices.shape[:-1]:
        raise TypeError(f"{name}: the scatter axes of updates of shape {updates.shape} have "
                        f"sizes {batch}, but the indices of shape {indices.shape} have batch "
                        f"sizes {indices.shape[:-1]}")
    window = _scatter_window(operand.shape, updates.shape, dn)
    if any(w > size for w, size in zip(window, operand.shape)):
        raise TypeError(f"{name}: update windows of shape {window} (per operand axis) do not "
                        f"fit the operand of shape {operand.shape}")


def _declare_scatter(name: str, combine: str) -> Primitive:
    prim = Primitive(name, FAMILY)
    impl_rules[prim] = _scatter_impl(combine)
    abstract_eval_rules[prim] = _scatter_abstract(name)
    return prim


scatter_p = _declare_scatter("scatter", "set")
scatter_add_p = _declare_scatter("scatter_add", "add")
scatter_mul_p = _declare_scatter("scatter_mul", "mul")
scatter_min_p = _declare_scatter("scatter_min", "min")
scatter_max_p = _declare_scatter("scatter_max", "max")


# ---- the lax functions ----------------------------------------------------------------------

def _ints(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _gather_dnums(dn) -> GatherDimensionNumbers:
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"gather: dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dn).__name__}")
    return GatherDimensionNumbers(*(_ints(field) for field in dn))


def _scatter_dnums(dn, name: str) -> ScatterDimensionNumbers:
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dn).__name__}")
    return ScatterDimensionNumbers(*(_ints(field) for field in dn))


def default_fill_value(dtype: np.dtype):
    """What an out-of-bounds gathered window holds: NaN, the lowest signed or the highest
    unsigned integer, or True."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return float("nan")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if dtype.kind == "i" else info.max)
    return True


def gather(operand, start_indices, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode=None, fill_value=None) -> Array:
    """lax.gather: windows of `slice_sizes` from `operand` at `start_indices` (see module
    docstring). `mode` defaults to PROMISE_IN_BOUNDS (starts are clamped)."""
    x, idx = as_array(operand), as_array(start_indices)
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                      else mode)
    if mode is GatherScatterMode.FILL_OR_DROP:
        fill_value = default_fill_value(x.dtype) if fill_value is None else fill_value
        fill_value = np.asarray(fill_value).astype(x.dtype).item()
    else:
        fill_value = None
    params = dict(dimension_numbers=_gather_dnums(dimension_numbers),
                  slice_sizes=_ints(slice_sizes), mode=mode, fill_value=fill_value,
                  unique_indices=bool(unique_indices),
                  indices_are_sorted=bool(indices_are_sorted))
    _gather_abstract(ShapedArray(x.shape, x.dtype, x._weak),
                     ShapedArray(idx.shape, idx.dtype, idx._weak), **params)
    return bind(gather_p, x, idx, **params)


def _scatter_fn(prim: Primitive, what: str):
    def fn(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers, *,
           indices_are_sorted: bool = False, unique_indices: bool = False,
           mode=None) -> Array:
        x, u = strict_operands(prim.name, (operand, updates))
        idx = as_array(scatter_indices)
        params = dict(dimension_numbers=_scatter_dnums(dimension_numbers, prim.name),
                      mode=GatherScatterMode.from_any(mode),
                      indices_are_sorted=bool(indices_are_sorted),
                      unique_indices=bool(unique_indices))
        avals = (ShapedArray(a.shape, a.dtype, a._weak) for a in (x, idx, u))
        abstract_eval_rules[prim](*avals, **params)
        return bind(prim, x, idx, u, **params)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = (f"lax.{prim.name}: {what} the update windows into `operand` at "
                  "`scatter_indices` (see the module docstring); out-of-bounds windows are "
                  "dropped unless mode='clip'.")
    return fn


scatter = _scatter_fn(scatter_p, "write")
scatter_add = _scatter_fn(scatter_add_p, "add")
scatter_mul = _scatter_fn(scatter_mul_p, "multiply")
scatter_min = _scatter_fn(scatter_min_p, "take the minimum of")
scatter_max = _scatter_fn(scatter_max_p, "take the maximum of")


for _fn, _p in ((gather, gather_p), (scatter, scatter_p), (scatter_add, scatter_add_p),
                (scatter_mul, scatter_mul_p), (scatter_min, scatter_min_p),
                (scatter_max, scatter_max_p)):
    names_primitive(_fn, _p)

# ---- derivatives: gather is linear in the operand, its transpose a scatter_add; a scatter's
# reverse rules gather the cotangent back at the update windows --------------------------------


def _gather_jvp(operand_dot, ans, operand, start_indices, dimension_numbers, slice_sizes,
                unique_indices, indices_are_sorted, mode, fill_value):
    """gather is linear in the operand; out-of-bounds windows have a zero tangent."""
    return lax.gather(operand_dot, start_indices, dimension_numbers, slice_sizes,
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=mode, fill_value=0)


def _gather_vjp(g, ans, operand, start_indices, dimension_numbers, slice_sizes,
                unique_indices, indices_are_sorted, mode, fill_value):
    """The windows' cotangents added back where they were read (repeats accumulate)."""
    return lax.scatter_add(jnp.zeros_like(operand), start_indices, g,
                           lad.gather_to_scatter_dnums(dimension_numbers),
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=lad.gather_bar_mode(mode))


defjvp(gather_p, _gather_jvp)
defvjp(gather_p, _gather_vjp)
defstatic(gather_p, "start_indices", "dimension_numbers", "slice_sizes")


def _scatter_add_jvp_updates(updates_dot, ans, operand, scatter_indices, updates,
                             dimension_numbers, indices_are_sorted, unique_indices, mode):
    return lax.scatter_add(jnp.zeros_like(ans), scatter_indices, updates_dot,
                           dimension_numbers, indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def _scatter_add_jvp_joint(operand_dot, updates_dot, ans, operand, scatter_indices, updates,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
    return lax.scatter_add(operand_dot, scatter_indices, updates_dot, dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def _scatter_add_vjp_updates(g, ans, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode):
    """Each update window's cotangent is g read at its window (zero if it was dropped)."""
    return lax.gather(g, scatter_indices, lad.scatter_to_gather_dnums(dimension_numbers),
                      lad.scatter_slice_sizes(operand, updates, dimension_numbers),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=lad.scatter_bar_mode(mode), fill_value=0)


defjvp(scatter_add_p, lambda operand_dot, ans, operand, scatter_indices, updates,
       dimension_numbers, indices_are_sorted, unique_indices, mode: operand_dot,
       None, _scatter_add_jvp_updates)
defjvp_joint(scatter_add_p, _scatter_add_jvp_joint, ("operand", "updates"))
defvjp(scatter_add_p, lambda g, ans, operand, scatter_indices, updates, dimension_numbers,
       indices_are_sorted, unique_indices, mode: g, None, _scatter_add_vjp_updates)


def _scatter_jvp_operand(operand_dot, ans, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode):
    """Overwritten elements lose their tangent."""
    return lax.scatter(operand_dot, scatter_indices, jnp.zeros_like(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _scatter_jvp_updates(updates_dot, ans, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode):
    return lax.scatter(jnp.zeros_like(ans), scatter_indices, updates_dot, dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _scatter_jvp_joint(operand_dot, updates_dot, ans, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
    return lax.scatter(operand_dot, scatter_indices, updates_dot, dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _scatter_vjp_operand(g, ans, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode):
    return lax.scatter(g, scatter_indices, jnp.zeros_like(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _scatter_vjp_updates(g, ans, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode):
    """Only the update that landed (the last of repeated indices) gets a cotangent."""
    read = lax.gather(g, scatter_indices, lad.scatter_to_gather_dnums(dimension_numbers),
                      lad.scatter_slice_sizes(operand, updates, dimension_numbers),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=lad.scatter_bar_mode(mode), fill_value=0)
    return read * lad.scatter_winners(operand, scatter_indices, updates, dimension_numbers,
                                      mode)


defjvp(scatter_p, _scatter_jvp_operand, None, _scatter_jvp_updates)
defjvp_joint(scatter_p, _scatter_jvp_joint, ("operand", "updates"))
defvjp(scatter_p, _scatter_vjp_operand, None, _scatter_vjp_updates)


def _scatter_mul_jvp_operand(operand_dot, ans, operand, scatter_indices, updates,
                             dimension_numbers, indices_are_sorted, unique_indices, mode):
    return lax.scatter_mul(operand_dot, scatter_indices, updates, dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def _scatter_mul_jvp_updates(updates_dot, ans, operand, scatter_indices, updates,
                             dimension_numbers, indices_are_sorted, unique_indices, mode):
    """d(x * u1 * u2 ...) = result * sum(du / u): exact where the updates are nonzero."""
    ratio = lax.scatter_add(jnp.zeros_like(ans), scatter_indices, updates_dot / updates,
                            dimension_numbers, indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
    return ans * ratio


def _scatter_mul_vjp_operand(g, ans, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode):
    return lax.scatter_mul(g, scatter_indices, updates, dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def _scatter_mul_vjp_updates(g, ans, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode):
    """g * result / u at each update's window: exact where the updates are nonzero."""
    read = lax.gather(g * ans, scatter_indices, lad.scatter_to_gather_dnums(dimension_numbers),
                      lad.scatter_slice_sizes(operand, updates, dimension_numbers),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=lad.scatter_bar_mode(mode), fill_value=0)
    return read / updates


defjvp(scatter_mul_p, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)
defvjp(scatter_mul_p, _scatter_mul_vjp_operand, None, _scatter_mul_vjp_updates)


def _scatter_extremum_jvp_operand(operand_dot, ans, operand, scatter_indices, updates,
                                  dimension_numbers, indices_are_sorted, unique_indices, mode):
    """The result's tangent is shared among the contributors that equal it."""
    weights = lad.scatter_extremum_weights(ans, operand, scatter_indices, updates,
                                           dimension_numbers, mode)
    return operand_dot * weights[0]


def _scatter_extremum_jvp_updates(updates_dot, ans, operand, scatter_indices, updates,
                                  dimension_numbers, indices_are_sorted, unique_indices, mode):
    weights = lad.scatter_extremum_weights(ans, operand, scatter_indices, updates,
                                           dimension_numbers, mode)
    return lax.scatter_add(jnp.zeros_like(ans), scatter_indices, updates_dot * weights[1],
                           dimension_numbers, indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def _scatter_extremum_vjp_operand(g, ans, operand, scatter_indices, updates,
                                  dimension_numbers, indices_are_sorted, unique_indices, mode):
    weights = lad.scatter_extremum_weights(ans, operand, scatter_indices, updates,
                                           dimension_numbers, mode)
    return g * weights[0]


def _scatter_extremum_vjp_updates(g, ans, operand, scatter_indices, updates,
                                  dimension_numbers, indices_are_sorted, unique_indices, mode):
    weights = lad.scatter_extremum_weights(ans, operand, scatter_indices, updates,
                                           dimension_numbers, mode)
    read = lax.gather(g, scatter_indices, lad.scatter_to_gather_dnums(dimension_numbers),
                      lad.scatter_slice_sizes(operand, updates, dimension_numbers),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=lad.scatter_bar_mode(mode), fill_value=0)
    return read * weights[1]


for _op in (scatter_min_p, scatter_max_p):
    defjvp(_op, _scatter_extremum_jvp_operand, None, _scatter_extremum_jvp_updates)
    defvjp(_op, _scatter_extremum_vjp_operand, None, _scatter_extremum_vjp_updates)
for _op in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    defstatic(_op, "scatter_indices", "dimension_numbers")

# ---- batching ------------------------------------------------------------------------------------

for _p in (gather_p, scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    defbatch_loop(_p, "no vectorised rule yet: batched by a loop over the examples")
