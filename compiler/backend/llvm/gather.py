"""Indexing with index arrays: gather (`x[idx]`) and scatter (`x.at[idx].set/add/...(y)`).

`getitem` and `index_update` whose spec holds an integer array of rank >= 1 follow NumPy's
advanced indexing (compiler/primitives/indexing.py states JAX's rules for out-of-range
indices). `advanced_layout` works out, at compile time, what each axis of the result (of
the updated region, for a scatter) reads:

    basic      x axis a at start + i * step          (a slice, or an axis not indexed)
    new        nothing: a size-1 axis from None
    broadcast  axis d of the index arrays' common shape B

B sits where the advanced entries are when they are adjacent in the index (integers count
as advanced there, as in NumPy), and first otherwise. Both lowerings are a loop nest over
the result in row-major order that computes one element offset into x per iteration: a
gather clamps the (wrapped) indices into range, a scatter skips an element whose index is
out of range and applies its updates in order, so that repeated indices accumulate and the
last `set` wins, as the reference (NumPy's `ufunc.at`) does, to the bit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from redraft.compiler.primitives import elementwise as ew

from . import elementwise
from .loops import for_range, load, store
from .module import FunctionLowering
from .types import I1, I64, Unsupported, check_dtype, constant, i64, is_signed
from .views import View

UPDATE_PRIMS = {"add": ew.add_p, "mul": ew.mul_p, "min": ew.min_p, "max": ew.max_p,
                "pow": ew.pow_p}


@dataclass(frozen=True)
class ResultAxis:
    """What one axis of the result reads: `kind` is "basic" (x axis `x_axis`, `step` apart),
    "new" (a None axis) or "broadcast" (axis `b_dim` of the index arrays' shape)."""
    kind: str
    x_axis: int = -1
    step: int = 1
    b_dim: int = -1


@dataclass(frozen=True)
class IndexArray:
    """An index operand: dynamic operand `operand` indexes x axis `x_axis`."""
    operand: int
    x_axis: int


@dataclass(frozen=True)
class IndexLayout:
    """The geometry of x[spec] with index arrays: the result's shape and axes, the static
    start on every x axis, the index arrays and their broadcast shape."""
    shape: tuple[int, ...]
    axes: tuple[ResultAxis, ...]
    start: tuple[int, ...]
    arrays: tuple[IndexArray, ...]
    b_shape: tuple[int, ...]


def has_index_array(spec: tuple, dynamic: list) -> bool:
    """Whether `spec` indexes with an integer array of rank >= 1 (a gather or scatter)."""
    return any(entry[0] == "array" and tuple(dynamic[entry[1]].aval.shape) != ()
               for entry in spec)


def advanced_layout(x_shape: tuple[int, ...], spec: tuple,
                    index_shapes: list[tuple[int, ...]]) -> IndexLayout:
    """The layout of x[spec] (NumPy's advanced indexing) for index operands of
    `index_shapes`; Unsupported for boolean masks."""
    if any(entry[0] == "bool" for entry in spec):
        raise Unsupported("boolean mask indexing")
    start, arrays, basic = [0] * len(x_shape), [], []
    advanced_at, axis = [], 0
    for position, entry in enumerate(spec):
        kind = entry[0]
        if kind == "none":
            basic.append(ResultAxis("new"))
            continue
        if kind == "slice":
            start[axis] = entry[1]
            basic.append(ResultAxis("basic", axis, entry[3]))
        elif kind == "int":
            start[axis] = entry[1]
            advanced_at.append(position)
        else:  # "array"
            arrays.append(IndexArray(entry[1], axis))
            advanced_at.append(position)
        axis += 1
    trailing = [ResultAxis("basic", a, 1) for a in range(axis, len(x_shape))]
    b_shape = tuple(np.broadcast_shapes(*[index_shapes[a.operand] for a in arrays]))
    group = [ResultAxis("broadcast", b_dim=d) for d in range(len(b_shape))]
    adjacent = advanced_at == list(range(advanced_at[0], advanced_at[-1] + 1))
    # the result axes of the entries before the first advanced one (slices and Nones)
    before = sum(1 for entry in spec[:advanced_at[0]] if entry[0] in ("slice", "none"))
    axes = (basic[:before] + group + basic[before:] if adjacent else group + basic) + trailing
    shape = tuple(_axis_size(r, x_shape, spec, b_shape) for r in axes)
    return IndexLayout(shape, tuple(axes), tuple(start), tuple(arrays), b_shape)


def _axis_size(r: ResultAxis, x_shape, spec, b_shape) -> int:
    if r.kind == "new":
        return 1
    if r.kind == "broadcast":
        return b_shape[r.b_dim]
    entry = _entry_of_axis(spec, r.x_axis)
    if entry is None:  # an axis the index does not name
        return x_shape[r.x_axis]
    _, first, stop, step = entry  # as slice.indices gives them: range() walks the slice
    return len(range(first, stop, step))


def _entry_of_axis(spec: tuple, x_axis: int):
    axis = 0
    for entry in spec:
        if entry[0] == "none":
            continue
        if axis == x_axis:
            return entry
        axis += 1
    return None


# ---- code ------------------------------------------------------------------------------------

def emit_gather(L: FunctionLowering, x: View, spec: tuple, dynamic: list, out) -> None:
    """out = x[spec]: every index wrapped once, then clamped into range (JAX's reads)."""
    layout = _checked_layout(x, spec, dynamic, tuple(out.aval.shape))
    dest = L.dest(out)
    L.views[out.id] = dest
    if dest.size == 0:
        return
    if any(x.shape[a.x_axis] == 0 for a in layout.arrays):
        raise Unsupported("gather from an empty axis raises")
    indices = [L.read(a) for a in dynamic]

    def element(b: ir.IRBuilder, at: list[ir.Value]) -> None:
        offset, _ = _source_offset(b, x, layout, indices, at, clamp=True)
        value = _read(b, x, offset)
        store(b, value, dest.base, dest.dtype, _strided_offset(b, dest, at))

    _for_each(L, layout.shape, element)


def emit_scatter(L: FunctionLowering, dest: View, y: View, spec: tuple, dynamic: list,
                 mode: str) -> None:
    """dest[spec] op= y, in place, in row-major order of the updated region; elements whose
    index is out of range (after wrapping negative ones) are left alone."""
    layout = _checked_layout(dest, spec, dynamic, None)
    target_shape = layout.shape
    if int(np.prod(target_shape, dtype=np.int64)) == 0:
        return
    values = y.broadcast_to(target_shape)
    indices = [L.read(a) for a in dynamic]
    dtype = dest.dtype

    def element(b: ir.IRBuilder, at: list[ir.Value]) -> None:
        offset, inside = _source_offset(b, dest, layout, indices, at, clamp=False)
        with b.if_then(inside):
            value = _read(b, values, _strided_offset(b, values, at))
            if mode != "set":
                old = load(b, dest.base, dtype, offset)
                value = elementwise.lower(b, UPDATE_PRIMS[mode], [old, value], [dtype, dtype],
                                          dtype, {})
            store(b, value, dest.base, dtype, offset)

    _for_each(L, target_shape, element)


def _checked_layout(x: View, spec: tuple, dynamic: list, shape: tuple | None) -> IndexLayout:
    """The layout, checked against the result shape staging gave (a mismatch means a rule
    here is wrong: the equation then runs on the reference interpreter)."""
    layout = advanced_layout(tuple(x.shape), spec, [tuple(a.aval.shape) for a in dynamic])
    if shape is not None and layout.shape != shape:
        raise Unsupported(f"gather layout {layout.shape} differs from {shape}")
    for a in dynamic:
        check_dtype(a.aval.dtype)
    return layout


def _for_each(L: FunctionLowering, shape: tuple[int, ...], element) -> None:
    """Nested counted loops over `shape`, row-major; `element(b, indices)` innermost."""
    b = L.b

    def level(depth: int, at: list[ir.Value]) -> None:
        if depth == len(shape):
            element(b, at)
            return
        for_range(b, i64(0), i64(shape[depth]), 1, [],
                  lambda i, _: (level(depth + 1, at + [i]), [])[1], L.cx.unique("idx"))

    level(0, [])


def _strided_offset(b: ir.IRBuilder, view: View, at: list[ir.Value]) -> ir.Value:
    offset: ir.Value = i64(view.offset)
    for i, stride in zip(at, view.strides):
        if stride:
            offset = b.add(offset, b.mul(i, i64(stride)))
    return offset


def _read(b: ir.IRBuilder, view: View, offset: ir.Value) -> ir.Value:
    if view.const is not None:
        return constant(view.dtype, view.const)
    return load(b, view.base, view.dtype, offset)


def _source_offset(b: ir.IRBuilder, x: View, layout: IndexLayout, indices: list[View],
                   at: list[ir.Value], clamp: bool) -> tuple[ir.Value, ir.Value]:
    """The element offset into x for result position `at`, and an i1: every index array's
    value was in range (always true when clamping)."""
    offset: ir.Value = i64(x.offset + sum(s * st for s, st in zip(layout.start, x.strides)))
    b_at = [None] * len(layout.b_shape)
    for i, axis in zip(at, layout.axes):
        if axis.kind == "basic":
            offset = b.add(offset, b.mul(i, i64(axis.step * x.strides[axis.x_axis])))
        elif axis.kind == "broadcast":
            b_at[axis.b_dim] = i
    inside: ir.Value = ir.Constant(I1, 1)
    for array in layout.arrays:
        index = _index_value(b, indices[array.operand], layout.b_shape, b_at)
        n = i64(x.shape[array.x_axis])
        index = b.select(b.icmp_signed("<", index, i64(0)), b.add(index, n), index)
        if clamp:
            index = b.select(b.icmp_signed("<", index, i64(0)), i64(0), index)
            top = i64(x.shape[array.x_axis] - 1)
            index = b.select(b.icmp_signed(">", index, top), top, index)
        else:
            ok = b.and_(b.icmp_signed(">=", index, i64(0)), b.icmp_signed("<", index, n))
            inside = b.and_(inside, ok)
            index = b.select(ok, index, i64(0))
        offset = b.add(offset, b.mul(index, i64(x.strides[array.x_axis])))
    return offset, inside


def _index_value(b: ir.IRBuilder, view: View, b_shape: tuple[int, ...],
                 b_at: list[ir.Value]) -> ir.Value:
    """The index array's element at position `b_at` of the broadcast shape, as i64."""
    dtype = view.dtype
    if view.const is not None:
        return i64(int(view.const))
    placed = view.broadcast_to(b_shape)
    value = load(b, placed.base, dtype, _strided_offset(b, placed, b_at))
    if value.type.width >= 64:
        return value
    return b.sext(value, I64) if is_signed(dtype) else b.zext(value, I64)
