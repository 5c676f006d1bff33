"""NumPy-style indexing as two primitives: `getitem` and `index_update` (the `.at[]` forms).

The static part of an index is a tuple `spec` with one entry per index item, already
normalised against the operand's shape (no Ellipsis, no negative static ints):

    ("slice", start, stop, step)   a basic slice, concrete ints
    ("int", i)                     a static integer, 0 <= i < dim
    ("none",)                      a new axis
    ("array", k)                   dynamic integer array operand k (after the operand(s))
    ("bool", k)                    boolean mask operand k (data-dependent result shape)

Dynamic integer indices wrap when negative and are clamped into range on reads; updates at
out-of-range indices are dropped. These are JAX's semantics.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import check_same_dtypes
from redraft.runtime.eager import impl_rules
from redraft.runtime.errors import NonConcreteBooleanIndexError

FAMILY = "indexing"

UPDATE_MODES = ("set", "add", "mul", "min", "max", "pow")


def _dims_consumed(spec) -> list[int | None]:
    """For each spec entry, the operand axis it indexes (None for new axes)."""
    axis, out = 0, []
    for entry in spec:
        if entry[0] == "none":
            out.append(None)
        else:
            out.append(axis)
            axis += 1
    return out


def numpy_index(x_shape, spec, dynamic, clamp: bool = True) -> tuple:
    """The NumPy index tuple for `spec`, with integer arrays wrapped and clamped."""
    index = []
    for entry, axis in zip(spec, _dims_consumed(spec)):
        kind = entry[0]
        if kind == "slice":  # a reversed slice down to index 0 stops at -1: "before 0"
            stop = entry[2] if entry[2] >= 0 else None
            index.append(slice(entry[1], stop, entry[3]))
        elif kind == "int":
            index.append(entry[1])
        elif kind == "none":
            index.append(None)
        elif kind == "array":
            idx = np.asarray(dynamic[entry[1]])
            n = x_shape[axis]
            idx = np.where(idx < 0, idx + n, idx)
            index.append(np.clip(idx, 0, max(n - 1, 0)) if clamp else idx)
        else:  # bool
            index.append(np.asarray(dynamic[entry[1]]))
    return tuple(index)


# ---- getitem ------------------------------------------------------------------------------

getitem_p = Primitive("getitem", FAMILY)


def _getitem_impl(x, *dynamic, spec):
    out = x[numpy_index(x.shape, spec, dynamic)]
    return out if type(out) is np.ndarray else np.asarray(out)


def _getitem_abstract(x: ShapedArray, *dynamic: ShapedArray, spec) -> ShapedArray:
    dummies = []
    for entry, axis in zip(spec, _dims_consumed(spec)):
        if entry[0] == "bool":
            raise NonConcreteBooleanIndexError(
                "array boolean indices must be concrete: the result's shape would depend on "
                "the mask's values; use jnp.where(mask, x, fill) or x[mask] outside jit")
        if entry[0] == "array":
            d = dynamic[entry[1]]
            if d.dtype.kind not in "iu":
                raise IndexError(f"index arrays must be integers, got {d.dtype.name}")
            dummies.append(np.zeros(d.shape, np.intp))
        elif entry[0] == "slice":
            dummies.append(slice(entry[1], entry[2] if entry[2] >= 0 else None, entry[3]))
        elif entry[0] == "int":
            dummies.append(0)
        else:
            dummies.append(None)
    array_axes = {axis for entry, axis in zip(spec, _dims_consumed(spec)) if entry[0] == "array"}
    probe_shape = tuple(max(d, 1) if i in array_axes else d for i, d in enumerate(x.shape))
    probe = np.broadcast_to(np.empty((), np.bool_), probe_shape)
    if len([e for e in spec if e[0] != "none"]) > x.ndim:
        raise IndexError(f"too many indices for an array of shape {x.shape}")
    shape = probe[tuple(dummies)].shape
    return ShapedArray(shape, x.dtype, x.weak_type)


impl_rules[getitem_p] = _getitem_impl
abstract_eval_rules[getitem_p] = _getitem_abstract


# ---- index_update --------------------------------------------------------------------------

index_update_p = Primitive("index_update", FAMILY, WeakRule.ALL)

_UFUNC_AT = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
             "pow": np.power}


def _index_update_impl(x, y, *dynamic, spec, mode: str):
    """Copy `x` with one trash slot added on every array-indexed axis, send out-of-range
    indices to it, apply the update, and cut the trash off again."""
    index = numpy_index(x.shape, spec, dynamic, clamp=False)
    trash_axes = sorted({axis for entry, axis in zip(spec, _dims_consumed(spec))
                         if entry[0] == "array"})
    out = np.pad(x, [(0, 1 if a in trash_axes else 0) for a in range(x.ndim)]) if (
        trash_axes) else x.copy()
    index = tuple(np.where((idx < 0) | (idx >= x.shape[axis]), x.shape[axis], idx)
                  if entry[0] == "array" else idx
                  for entry, axis, idx in zip(spec, _dims_consumed(spec), index))
    values = np.broadcast_to(y.astype(x.dtype, copy=False), out[index].shape)
    if mode == "set":
        out[index] = values
    else:
        _UFUNC_AT[mode].at(out, index, values)
    return out[tuple(slice(0, d) for d in x.shape)] if trash_axes else out


def _index_update_abstract(x: ShapedArray, y: ShapedArray, *dynamic: ShapedArray, spec,
                           mode: str) -> ShapedArray:
    if mode not in UPDATE_MODES:
        raise ValueError(f"unknown update mode {mode!r}; expected one of {UPDATE_MODES}")
    check_same_dtypes([x.dtype, y.dtype], f"index_update ({mode})")
    target = _getitem_abstract(x, *dynamic, spec=spec)
    try:
        np.broadcast_shapes(y.shape, target.shape)
        if len(y.shape) > len(target.shape):
            raise ValueError
    except ValueError:
        raise ValueError(f".at[].{mode}: values of shape {y.shape} do not fit the indexed "
                         f"shape {target.shape}") from None
    return x


impl_rules[index_update_p] = _index_update_impl
abstract_eval_rules[index_update_p] = _index_update_abstract
