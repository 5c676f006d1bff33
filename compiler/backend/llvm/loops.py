"""Loop nests: one pass over an iteration space, vectorised innermost, threaded outermost.

A `Nest` is the unit every array computation lowers to: an iteration space, inputs and
outputs given as strided views over that space (stride 0 broadcasts an input; on an output
it marks a reduced axis), and a body that maps input registers to output registers. The
emitter drops size-1 axes, merges axes that are contiguous for every operand, and writes:

    for i0 ...                          (split over threads when the nest is large)
      for i1 ...
        invariant inputs loaded once
        vector loop over the last axis:  W lanes at a time, loads, body, stores
        scalar loop for the remainder
        reductions along the last axis:  vector accumulators, one horizontal reduce

Reductions along other axes accumulate into the (identity-filled) output in memory. The
horizontal reduce carries the `reassoc` flag, so floating sums are re-associated as a
vectorised reduction must (JAX and XLA do the same).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir
from redraft.kernels.jit_host import host_vector_bits
from redraft.kernels.llvm_loops import for_range

from .elementwise import ELEMENTWISE, convert
from .types import (
    I1,
    I8,
    I32,
    I64,
    PTR,
    VOID,
    Unsupported,
    constant,
    declare,
    i64,
    intrinsic,
    is_bool,
    is_float,
    is_signed,
    lanes_of,
    memory_type,
    splat,
)
from .views import View

Body = Callable[[ir.IRBuilder, list], list]
REDUCE_KINDS = ("add", "mul", "max", "min", "and", "or")
PARALLEL_WORK = 1 << 18      # elements x cost below which one thread is faster
UNROLL = 1                   # vector registers per lane group (independent chains)


@dataclass
class NestInput:
    """A value read by the body: a strided view, or the index along one axis (`iota`)."""
    view: View                  # over the nest's iteration space
    iota_dim: int | None = None


@dataclass
class NestOutput:
    """A value written by the body: stored, or reduced (`reduce` names the operation)."""
    view: View                  # over the iteration space; stride 0 on reduced axes
    dest: View                  # the same output in its own shape (identity fill)
    reduce: str | None = None


@dataclass
class Nest:
    shape: tuple[int, ...]
    inputs: list[NestInput]
    outputs: list[NestOutput]
    body: Body
    cost: int = 1               # per-element work, relative to an add
    dtypes: tuple = ()          # dtypes the body computes in (to pick the vector width)
    parallel: bool = True       # may be split over threads
    widen: bool = True          # may view short rows as longer ones (see _widen)


class CodeContext:
    """What loop emission needs from the function being built: a builder, its module, a
    way to make entry-block allocas, and unique names."""

    def __init__(self, builder: ir.IRBuilder, entry: ir.Block, counter=None):
        self.b = builder
        self.entry = entry
        self.counter = counter if counter is not None else [0]
        # scratch(dtype, shape) -> (contiguous View, release()): workspace for rewrites
        self.scratch: Callable | None = None

    @property
    def module(self) -> ir.Module:
        return self.b.module

    def unique(self, stem: str) -> str:
        self.counter[0] += 1
        return f"{stem}{self.counter[0]}"

    def entry_alloca(self, ty: ir.Type, count: int = 1, name: str = "") -> ir.Value:
        """An alloca at the top of the entry block (so LLVM promotes or reuses it)."""
        b = ir.IRBuilder(self.entry)
        if self.entry.instructions:
            b.position_before(self.entry.instructions[0])
        slot = b.alloca(ty, size=count if count > 1 else None, name=name)
        slot.align = 64 if count > 1 else None
        return slot


# ---- small builders --------------------------------------------------------------------------

def element_ptr(b: ir.IRBuilder, base: ir.Value, dtype: np.dtype, index: ir.Value) -> ir.Value:
    return b.gep(base, [index], inbounds=True, source_etype=memory_type(dtype))


def load(b: ir.IRBuilder, base: ir.Value, dtype: np.dtype, index: ir.Value) -> ir.Value:
    """The scalar at `index` (bool becomes i1)."""
    value = b.load(element_ptr(b, base, dtype, index), typ=memory_type(dtype),
                   align=dtype.itemsize)
    if is_bool(dtype):
        value = b.icmp_unsigned("!=", value, ir.Constant(I8, 0))
    return value


def store(b: ir.IRBuilder, value: ir.Value, base: ir.Value, dtype: np.dtype,
          index: ir.Value) -> None:
    """Store a scalar register at `index`."""
    if is_bool(dtype):
        value = b.zext(value, I8)
    b.store(value, element_ptr(b, base, dtype, index), align=dtype.itemsize)


def masked_load(b: ir.IRBuilder, base: ir.Value, dtype: np.dtype, index: ir.Value,
                mask: ir.Value) -> ir.Value:
    """Contiguous lanes at index where `mask` is set (zero elsewhere); bool becomes i1."""
    lanes = mask.type.count
    vty = ir.VectorType(memory_type(dtype), lanes)
    zero = ir.Constant(vty, None)
    value = intrinsic(b, "llvm.masked.load", [element_ptr(b, base, dtype, index),
                                              ir.Constant(I32, dtype.itemsize), mask, zero],
                      ret=vty, suffix_types=[vty, PTR])
    if is_bool(dtype):
        value = b.icmp_unsigned("!=", value, zero)
    return value


def masked_store(b: ir.IRBuilder, value: ir.Value, base: ir.Value, dtype: np.dtype,
                 index: ir.Value, mask: ir.Value) -> None:
    if is_bool(dtype):
        value = b.zext(value, ir.VectorType(I8, lanes_of(value)))
    intrinsic(b, "llvm.masked.store", [value, element_ptr(b, base, dtype, index),
                                       ir.Constant(I32, dtype.itemsize), mask],
              ret=VOID, suffix_types=[value.type, PTR])


def _lane_pointers(b: ir.IRBuilder, base: ir.Value, dtype: np.dtype, index: ir.Value,
                   stride: int, lanes: int) -> ir.Value:
    """<lanes x ptr>: the addresses of elements index, index + stride, ..."""
    first = b.ptrtoint(element_ptr(b, base, dtype, index), I64)
    step = stride * dtype.itemsize
    ramp = ir.Constant(ir.VectorType(I64, lanes), [i64(lane * step) for lane in range(lanes)])
    return b.inttoptr(b.add(splat(b, first, lanes), ramp), ir.VectorType(PTR, lanes))


def masked_gather(b: ir.IRBuilder, base: ir.Value, dtype: np.dtype, index: ir.Value,
                  stride: int, mask: ir.Value) -> ir.Value:
    """Strided lanes where `mask` is set (lanes past the end are never read)."""
    lanes = mask.type.count
    vty = ir.VectorType(memory_type(dtype), lanes)
    zero = ir.Constant(vty, None)
    pointers = _lane_pointers(b, base, dtype, index, stride, lanes)
    value = intrinsic(b, "llvm.masked.gather", [pointers, ir.Constant(I32, dtype.itemsize),
                                                mask, zero],
                      ret=vty, suffix_types=[vty, pointers.type])
    if is_bool(dtype):
        value = b.icmp_unsigned("!=", value, zero)
    return value


def masked_scatter(b: ir.IRBuilder, value: ir.Value, base: ir.Value, dtype: np.dtype,
                   index: ir.Value, stride: int, mask: ir.Value) -> None:
    lanes = lanes_of(value)
    if is_bool(dtype):
        value = b.zext(value, ir.VectorType(I8, lanes))
    pointers = _lane_pointers(b, base, dtype, index, stride, lanes)
    intrinsic(b, "llvm.masked.scatter", [value, pointers, ir.Constant(I32, dtype.itemsize),
                                         mask],
              ret=VOID, suffix_types=[value.type, pointers.type])


# ---- reductions --------------------------------------------------------------------------------

def reduce_kind(prim_name: str, dtype: np.dtype) -> str:
    """The combining operation of a reduction primitive on `dtype` (bool sums are `or`)."""
    kind = {"reduce_sum": "add", "reduce_prod": "mul", "reduce_max": "max",
            "reduce_min": "min", "reduce_and": "and", "reduce_or": "or"}[prim_name]
    if is_bool(dtype):
        kind = {"add": "or", "mul": "and", "max": "or", "min": "and"}.get(kind, kind)
    return kind


def identity(kind: str, dtype: np.dtype):
    """The neutral element of `kind` on `dtype`, as a Python/NumPy scalar."""
    if kind == "add" or kind == "or":
        return 0
    if kind == "mul":
        return 1
    if kind == "and":
        return True if is_bool(dtype) else -1
    if is_float(dtype):
        return -np.inf if kind == "max" else np.inf
    if is_bool(dtype):
        return kind == "min"
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def combine(b: ir.IRBuilder, kind: str, dtype: np.dtype, acc: ir.Value,
            value: ir.Value) -> ir.Value:
    """acc (op) value, elementwise."""
    if kind in ("max", "min"):
        from redraft.compiler.primitives import elementwise as ew
        prim = ew.max_p if kind == "max" else ew.min_p
        return ELEMENTWISE[prim](b, [acc, value], [dtype, dtype], dtype, {})
    if kind == "and":
        return b.and_(acc, value)
    if kind == "or":
        return b.or_(acc, value)
    if is_float(dtype):
        return (b.fadd if kind == "add" else b.fmul)(acc, value, flags=("reassoc",))
    return (b.add if kind == "add" else b.mul)(acc, value)


def horizontal(b: ir.IRBuilder, kind: str, dtype: np.dtype, vec: ir.Value) -> ir.Value:
    """Reduce the lanes of `vec` to one scalar (reassociated for floats)."""
    if is_float(dtype):
        elem = vec.type.element
        if kind in ("add", "mul"):
            name = "llvm.vector.reduce.fadd" if kind == "add" else "llvm.vector.reduce.fmul"
            start = constant(dtype, 0.0 if kind == "add" else 1.0)
            return intrinsic(b, name, [start, vec], ret=elem, suffix_types=[vec.type],
                             fastmath=("reassoc",))
        name = "llvm.vector.reduce.fmaximum" if kind == "max" else "llvm.vector.reduce.fminimum"
        return intrinsic(b, name, [vec], ret=elem)
    if kind in ("max", "min"):
        kind = ("s" if is_signed(dtype) else "u") + kind
    return intrinsic(b, f"llvm.vector.reduce.{kind}", [vec], ret=vec.type.element)


# ---- planning: drop unit axes, merge contiguous ones -------------------------------------------

@dataclass
class _Operand:
    kind: str                   # "mem", "const" or "iota"
    dtype: np.dtype
    strides: list[int]
    offset: int = 0
    const: object = None
    base_index: int = -1        # position in the plan's base list ("mem" only)


@dataclass
class _Plan:
    shape: list[int]
    inputs: list[_Operand]
    outputs: list[_Operand]
    reduce: list[str | None]
    direct: list[bool]          # reduce output finished within one inner loop: plain store
    bases: list[ir.Value] = field(default_factory=list)
    lanes: int = 0

    @property
    def rank(self) -> int:
        return len(self.shape)


def _operand(view: View, iota_dim: int | None, bases: list, base_ids: dict) -> _Operand:
    if iota_dim is not None:
        strides = [1 if d == iota_dim else 0 for d in range(len(view.shape))]
        return _Operand("iota", view.dtype, strides)
    if view.const is not None:
        return _Operand("const", view.dtype, [0] * len(view.shape), const=view.const)
    key = id(view.base)
    if key not in base_ids:
        base_ids[key] = len(bases)
        bases.append(view.base)
    return _Operand("mem", view.dtype, list(view.strides), view.offset,
                    base_index=base_ids[key])


def plan(nest: Nest, merge: bool = True) -> _Plan:
    """The nest's loops: size-1 axes dropped and, with `merge`, adjacent axes along which
    every operand is contiguous merged into one."""
    bases: list[ir.Value] = []
    ids: dict = {}
    ins = [_operand(i.view, i.iota_dim, bases, ids) for i in nest.inputs]
    outs = [_operand(o.view, None, bases, ids) for o in nest.outputs]
    shape = list(nest.shape)
    ops = ins + outs
    keep = [d for d, n in enumerate(shape) if n != 1]
    shape = [shape[d] for d in keep]
    for op in ops:
        op.strides = [op.strides[d] for d in keep]
    d = len(shape) - 2 if merge else -1
    while d >= 0:  # merge axis d+1 into d where every operand is contiguous across them
        if all(op.strides[d] == op.strides[d + 1] * shape[d + 1] for op in ops):
            shape[d] *= shape[d + 1]
            del shape[d + 1]
            for op in ops:
                op.strides[d] = op.strides[d + 1]
                del op.strides[d + 1]
        d -= 1
    reduce = [o.reduce for o in nest.outputs]
    direct = []
    for op, kind in zip(outs, reduce):
        zeros = [s == 0 for s in op.strides]
        direct.append(kind is None or not any(zeros)
                      or (bool(zeros) and zeros[-1] and not any(zeros[:-1])))
    result = _Plan(shape, ins, outs, reduce, direct, bases)
    result.lanes = _choose_lanes(nest, result)
    return result


def _choose_lanes(nest: Nest, p: _Plan) -> int:
    """Vector width: the host's registers for the widest dtype (times UNROLL), down to the
    smallest power of two covering a short innermost axis."""
    if p.rank == 0:
        return 0
    sizes = [op.dtype.itemsize for op in p.inputs + p.outputs] + [
        np.dtype(t).itemsize for t in nest.dtypes]
    lanes = max(2, host_vector_bits() // (8 * max(sizes + [1]))) * UNROLL
    while lanes // 2 >= p.shape[-1] and lanes > 2:
        lanes //= 2
    return lanes


# ---- emission -----------------------------------------------------------------------------------

def emit_nest(cx: CodeContext, nest: Nest) -> None:
    """Write the loops of `nest` at the builder's position."""
    p = plan(nest)
    for out, direct, kind in zip(nest.outputs, p.direct, p.reduce):
        if kind is not None and (not direct or any(n == 0 for n in p.shape)):
            fill(cx, out.dest, identity(kind, out.dest.dtype))
    if any(n == 0 for n in p.shape):
        return
    finish = _widen(cx, nest, p)
    if _parallel_ok(nest, p):
        _emit_parallel(cx, nest, p)
    else:
        _Emitter(cx.b, nest, p, p.bases).run(None, None)
    for action in finish:
        action()


def emit_planned(b: ir.IRBuilder, nest: Nest, p: _Plan, bases: list, lo: ir.Value,
                 hi: ir.Value) -> None:
    """Indices lo..hi of axis 0 of a planned nest (`plan(nest)`), with `bases` (the plan's
    base pointers as seen where `b` writes): a chunk of it, run inside another task."""
    _Emitter(b, nest, p, bases).run(lo, hi)


def emit_planned_columns(b: ir.IRBuilder, nest: Nest, p: _Plan, bases: list, lo: ir.Value,
                         hi: ir.Value) -> None:
    """Indices lo..hi of the last axis of a planned nest of rank 2 (planned unmerged), every
    row: a chunk of columns, run inside another task."""
    if p.rank != 2:
        raise ValueError(f"a column chunk of a nest of rank {p.rank}")
    _Emitter(b, nest, p, bases).run(None, None, columns=(lo, hi))


# ---- short rows: widening ----------------------------------------------------------------------

WIDE_ROW = 256   # elements per widened row at most


def _widen(cx: CodeContext, nest: Nest, p: _Plan) -> list:
    """Rows much shorter than a vector waste most lanes (a (10000, 10) array with a (10,)
    row broadcast over it). View g rows as one row of g*n elements: operands contiguous
    across rows are reshaped; a row broadcast along the rows is tiled g times into scratch.
    Returns the scratch releases to run after the nest (the plan is rewritten in place)."""
    if p.rank != 2 or cx.scratch is None or not nest.widen:
        return []
    m, n = p.shape
    native = max(2, host_vector_bits() // (8 * max(op.dtype.itemsize
                                                    for op in p.inputs + p.outputs)))
    g = _row_group(m, n, native)
    if g < 2 or not all(_widenable(op, n, k is None) for op, k in
                        list(zip(p.inputs, [None] * len(p.inputs))) +
                        list(zip(p.outputs, p.reduce))):
        return []
    if any(k is not None and op.strides != [0, 0] for op, k in zip(p.outputs, p.reduce)):
        # along a row the widened row would mix rows; down the columns it would change the
        # order of the sums from NumPy's (row after row), which jit must match closely
        return []
    finish = []
    for op in p.inputs:
        release = _widen_operand(cx, p, op, g, n)
        if release is not None:
            finish.append(release)
    for op in p.outputs:
        if op.strides[0] != 0:
            op.strides = [g * op.strides[0], op.strides[1]]
    p.shape = [m // g, g * n]
    p.lanes = _choose_lanes(nest, p)
    return finish


def _row_group(m: int, n: int, native: int) -> int:
    """Rows per widened row: divides m, fills whole vectors if it can, <= WIDE_ROW long."""
    if n * 2 > native * 4 or m < 2:
        return 1
    limit = max(1, WIDE_ROW // n)
    candidates = [g for g in range(limit, 1, -1) if m % g == 0]
    for g in candidates:
        if (g * n) % native == 0:
            return g
    return candidates[0] if candidates else 1


def _widenable(op: _Operand, n: int, is_input: bool) -> bool:
    so, si = op.strides
    if op.kind == "iota":
        return False
    if op.kind == "const" or (so == 0 and si == 0):
        return True
    if so == n * si:
        return True
    return so == 0 and op.kind == "mem"   # a row broadcast over the rows (tiled or reduced)


def _widen_operand(cx: CodeContext, p: _Plan, op: _Operand, g: int, n: int):
    """Rewrite an input for widened rows; returns the release of its scratch, if any."""
    so, si = op.strides
    if op.kind != "mem" or (so == 0 and si == 0):
        return None
    if so != 0:
        op.strides = [g * so, si]
        return None
    row = View(p.bases[op.base_index], op.dtype, (g, n), (0, si), op.offset)
    tiled, release = cx.scratch(op.dtype, (g, n))
    copy(cx, row, tiled, widen=False)
    _rebase(p, op, tiled)
    op.strides = [0, 1]
    return release


def _rebase(p: _Plan, op: _Operand, view: View) -> None:
    p.bases.append(view.base)
    op.base_index = len(p.bases) - 1
    op.offset = view.offset


def fill(cx: CodeContext, dest: View, value) -> None:
    """dest[...] = value."""
    const = View.constant(value, dest.dtype, dest.shape)
    emit_nest(cx, Nest(dest.shape, [NestInput(const)], [NestOutput(dest, dest)],
                       lambda b, regs: regs, widen=False))


def copy(cx: CodeContext, src: View, dest: View, widen: bool = True) -> None:
    """dest[...] = src[...] (same shape; src may broadcast). Complex values are copied as
    their (real, imaginary) pairs of floats."""
    src = src.broadcast_to(dest.shape)
    if dest.dtype.kind == "c":
        src, dest = _as_float_pairs(src), _as_float_pairs(dest)
    emit_nest(cx, Nest(dest.shape, [NestInput(src)], [NestOutput(dest, dest)],
                       lambda b, regs: regs, widen=widen))


def _as_float_pairs(view: View) -> View:
    """A complex view as a float view with a last axis of 2 (real, imaginary)."""
    if view.const is not None:
        raise Unsupported("a complex constant broadcast into a buffer")
    part = np.dtype(np.float32 if view.dtype == np.complex64 else np.float64)
    return View(view.base, part, view.shape + (2,), tuple(2 * s for s in view.strides) + (1,),
                2 * view.offset)


def _parallel_ok(nest: Nest, p: _Plan) -> bool:
    if not nest.parallel or p.rank == 0 or not pool_available():
        return False
    size = int(np.prod(p.shape, dtype=np.int64))
    if size * max(nest.cost, 1) < PARALLEL_WORK or p.shape[0] < 2:
        return False
    return all(op.strides[0] != 0 for op in p.outputs)


@functools.cache
def pool_available() -> bool:
    from .parallel import thread_count
    return thread_count() > 1


def _emit_parallel(cx: CodeContext, nest: Nest, p: _Plan) -> None:
    """Outline the nest as fn(ctx, lo, hi) over axis 0 and run it on the thread pool."""
    module = cx.module
    name = cx.unique("redraft_nest")
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, I64, I64]), name=name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    ctx_arg, lo, hi = fn.args
    inner = ir.IRBuilder(fn.append_basic_block("entry"))
    bases = [inner.load(inner.gep(ctx_arg, [i64(k)], source_etype=PTR), typ=PTR)
             for k in range(len(p.bases))]
    _Emitter(inner, nest, p, bases).run(lo, hi)
    inner.ret_void()

    b = cx.b
    ctx = cx.entry_alloca(PTR, max(len(p.bases), 1), name="nest.ctx")
    for k, base in enumerate(p.bases):
        b.store(base, b.gep(ctx, [i64(k)], source_etype=PTR))
    grain = max(p.lanes, 1) if p.rank == 1 else 1
    runner = declare(module, "redraft_parallel_for", VOID, [PTR, PTR, I64, I64])
    b.call(runner, [fn, ctx, i64(p.shape[0]), i64(grain)])


class _Emitter:
    """Writes one planned nest with the given base pointers."""

    def __init__(self, b: ir.IRBuilder, nest: Nest, p: _Plan, bases: list):
        self.b, self.nest, self.p, self.bases = b, nest, p, bases
        self.columns: dict[int, ir.Value] = {}     # running column reductions (registers)
        self.column_in: dict[int, ir.Value] = {}
        self.column_range: tuple[ir.Value, ir.Value] | None = None

    def run(self, lo: ir.Value | None, hi: ir.Value | None,
            columns: tuple[ir.Value, ir.Value] | None = None) -> None:
        """Indices lo..hi of axis 0 (all of it for None), and of the last axis only
        `columns` (lo, hi) when given."""
        self.column_range = columns
        offsets = [i64(op.offset) for op in self.p.inputs + self.p.outputs]
        if self.p.rank == 0:
            self._straight(offsets)
        else:
            self._level(0, offsets, lo, hi)

    def _straight(self, offsets: list) -> None:
        n_in = len(self.p.inputs)
        regs = [self._read(op, off, 0, 0) for op, off in zip(self.p.inputs, offsets)]
        values = self.nest.body(self.b, regs)
        for k, (op, value) in enumerate(zip(self.p.outputs, values)):
            self._write(k, op, offsets[n_in + k], value, 0)

    def _level(self, level: int, offsets: list, lo, hi) -> None:
        p = self.p
        if level == p.rank - 1:
            self._inner(offsets, lo, hi)
            return
        start = lo if lo is not None else i64(0)
        stop = hi if hi is not None else i64(p.shape[level])
        ops = p.inputs + p.outputs
        columns = self._column_sums(level)

        def body(i, carried):
            moved = [off if op.strides[level] == 0 else
                     self.b.add(off, self.b.mul(i, i64(op.strides[level])))
                     for op, off in zip(ops, offsets)]
            self.columns = dict(zip(columns, carried))
            self._level(level + 1, moved, None, None)
            return [self.columns[k] for k in columns]

        init = [self._neutral(k, p.lanes) for k in columns]
        sums = for_range(self.b, start, stop, 1, init, body, f"l{level}")
        self.columns = {}
        for k, total in zip(columns, sums):  # one read-modify-write of the output row
            op = p.outputs[k]
            at = offsets[len(p.inputs) + k]
            mask = ir.Constant(ir.VectorType(ir.IntType(1), p.lanes),
                               [ir.Constant(ir.IntType(1), int(v < p.shape[-1]))
                                for v in range(p.lanes)])
            base = self.bases[op.base_index]
            old = masked_load(self.b, base, op.dtype, at, mask)
            masked_store(self.b, combine(self.b, p.reduce[k], op.dtype, old, total), base,
                         op.dtype, at, mask)

    def _column_sums(self, level: int) -> list[int]:
        """Outputs reduced over this (next-to-last) axis along rows that fit one vector:
        their running totals stay in registers across the rows, summed in the same order
        (row after row) as accumulating in memory would."""
        p = self.p
        if level != p.rank - 2 or p.shape[-1] > p.lanes:
            return []
        return [k for k, op in enumerate(p.outputs)
                if p.reduce[k] is not None and op.strides[level] == 0 and op.strides[-1] == 1]

    def _neutral(self, k: int, lanes: int) -> ir.Constant:
        op = self.p.outputs[k]
        return constant(op.dtype, identity(self.p.reduce[k], op.dtype), lanes)

    # ---- the innermost axis -------------------------------------------------------------
    def _inner(self, offsets: list, lo, hi) -> None:
        """One vector loop over the last axis; its final iteration is masked, so the body is
        emitted once and no scalar remainder loop is needed."""
        b, p = self.b, self.p
        n_in = len(p.inputs)
        if lo is None and self.column_range is not None:
            lo, hi = self.column_range
        start = lo if lo is not None else i64(0)
        stop = hi if hi is not None else i64(p.shape[-1])
        invariant = {k: self._read(op, offsets[k], 0, 0)
                     for k, op in enumerate(p.inputs) if op.strides[-1] == 0}
        accs = [k for k, op in enumerate(p.outputs)
                if p.reduce[k] is not None and op.strides[-1] == 0]
        lanes = p.lanes
        ramp = ir.Constant(ir.VectorType(I32, lanes), [ir.Constant(I32, v)
                                                        for v in range(lanes)])
        neutral = {k: constant(p.outputs[k].dtype, identity(p.reduce[k], p.outputs[k].dtype),
                               lanes) for k in accs}

        # an axis of whole vectors (chunk bounds of a parallel nest are multiples of the
        # lanes) needs no mask: a constant one lets LLVM's code generator emit plain loads
        # and stores without the optimiser (an RNN's 32x128 nests: 15% of its step)
        whole = ir.Constant(ir.VectorType(I1, lanes), [ir.Constant(I1, 1)] * lanes) if (
            lanes and p.shape[-1] % lanes == 0) else None

        def body(i, carried):
            if whole is not None:
                self.mask = whole
            else:
                remaining = b.sub(stop, i)
                short = b.select(b.icmp_signed("<", remaining, i64(lanes)), remaining,
                                 i64(lanes))
                self.mask = b.icmp_signed("<", ramp, splat(b, b.trunc(short, I32), lanes))
            at = [b.add(off, b.mul(i, i64(op.strides[-1]))) if op.strides[-1] else off
                  for op, off in zip(p.inputs + p.outputs, offsets)]
            regs = [invariant[k] if k in invariant else
                    self._read(op, at[k], lanes, op.strides[-1])
                    for k, op in enumerate(p.inputs)]
            values = self.nest.body(b, regs)
            new = list(carried)
            for k, (op, value) in enumerate(zip(p.outputs, values)):
                if k in accs:
                    j = accs.index(k)
                    value = splat(b, value, lanes) if not lanes_of(value) else value
                    value = b.select(self.mask, value, neutral[k])
                    new[j] = combine(b, p.reduce[k], op.dtype, carried[j], value)
                elif k in self.columns:
                    value = splat(b, value, lanes) if not lanes_of(value) else value
                    value = b.select(self.mask, value, self._neutral(k, lanes))
                    self.column_in[k] = combine(b, p.reduce[k], op.dtype, self.column_in[k],
                                                value)
                else:
                    self._write(k, op, at[n_in + k], value, lanes)
            return new

        columns = self.columns   # reductions kept in registers by the enclosing loop
        inner_body = body

        def body_with_columns(i, carried):
            saved = dict(zip(columns, carried[len(accs):]))
            self.column_in = saved
            new = inner_body(i, carried[:len(accs)])
            return new + [self.column_in[k] for k in columns]

        init = [neutral[k] for k in accs] + [columns[k] for k in columns]
        results = for_range(b, start, stop, lanes, init, body_with_columns, "vec")
        totals = results[:len(accs)]
        for k, total in zip(columns, results[len(accs):]):
            columns[k] = total
        for j, k in enumerate(accs):
            op, kind = p.outputs[k], p.reduce[k]
            total = horizontal(b, kind, op.dtype, totals[j])
            out_at = offsets[n_in + k]
            base = self.bases[op.base_index]
            if not p.direct[k]:
                total = combine(b, kind, op.dtype, load(b, base, op.dtype, out_at), total)
            store(b, total, base, op.dtype, out_at)

    # ---- operands ----------------------------------------------------------------------
    def _read(self, op: _Operand, index: ir.Value, lanes: int, stride: int) -> ir.Value:
        b = self.b
        if op.kind == "const":
            return constant(op.dtype, op.const)
        if op.kind == "iota":
            if lanes and stride:
                ramp = ir.Constant(ir.VectorType(I64, lanes),
                                   [i64(lane * stride) for lane in range(lanes)])
                index = b.add(splat(b, index, lanes), ramp)
            return convert(b, index, np.dtype(np.int64), op.dtype)
        base = self.bases[op.base_index]
        if not lanes or not stride:
            return load(b, base, op.dtype, index)
        if stride == 1:
            return masked_load(b, base, op.dtype, index, self.mask)
        return masked_gather(b, base, op.dtype, index, stride, self.mask)

    def _write(self, k: int, op: _Operand, index: ir.Value, value: ir.Value,
               lanes: int) -> None:
        b = self.b
        if lanes and not lanes_of(value):
            value = splat(b, value, lanes)
        base = self.bases[op.base_index]
        kind = self.p.reduce[k]
        stride = op.strides[-1] if self.p.rank else 1
        if not lanes:
            if kind is not None and not self.p.direct[k]:
                value = combine(b, kind, op.dtype, load(b, base, op.dtype, index), value)
            store(b, value, base, op.dtype, index)
            return
        if kind is not None and not self.p.direct[k]:
            old = (masked_load(b, base, op.dtype, index, self.mask) if stride == 1 else
                   masked_gather(b, base, op.dtype, index, stride, self.mask))
            value = combine(b, kind, op.dtype, old, value)
        if stride == 1:
            masked_store(b, value, base, op.dtype, index, self.mask)
        else:
            masked_scatter(b, value, base, op.dtype, index, stride, self.mask)
