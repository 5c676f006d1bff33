"""The kernels the GPU backend generates: pointwise nests, reductions, tiled products.

Each builder returns a `Kernel` (kernel.py) whose operands are strided views of device
buffers (compiler/backend/llvm/views.py's `View`, with a buffer `Slot` as its base): the
offsets and strides are compile-time constants of the kernel, indices are 64-bit.

    pointwise   a grid-stride loop over the flat iteration space (fused elementwise nests,
                iota, copies that materialise a view)
    reduce_rows one thread per output element, a serial loop over the reduced axes (when
                those are short)
    reduce_tree one block per output element (grid-stride over outputs): each thread
                accumulates a strided share, then a tree in shared memory, log2(block) phases;
                few outputs over many elements: a first pass of one block per (output,
                chunk) writes partials, and a second reduces them
    scan        cumsum/cumprod/cummax/cummin: one thread per line along the axis
    matmul      C[b] = A[b] @ B[b] with 16x16 tiles of A and B staged in shared memory
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from redraft.compiler.backend.llvm.elementwise import ELEMENTWISE
from redraft.compiler.backend.llvm.loops import identity
from redraft.compiler.backend.llvm.types import (
    I1,
    I64,
    constant,
    i64,
    is_bool,
    is_float,
    memory_type,
)
from redraft.compiler.backend.llvm.views import View
from redraft.compiler.primitives import elementwise as ew

from .kernel import BlockLoop, Kernel, Phase, Thread, counted_loop

BLOCK = 256
MAX_GRID = 4096
TILE = 16
TREE_MIN_INNER = 128
SPLIT_MIN_CHUNK = 16 * BLOCK     # elements per block of a first pass, at least
SPLIT_MAX_OUTPUTS = 256          # from this many outputs on, one pass fills the grid
SPLIT_MAX_PARTIALS = 1024


def entry_alloca(b: ir.IRBuilder, ty: ir.Type) -> ir.Value:
    """A stack slot in the function's entry block (never one per loop iteration)."""
    here = b.block
    b.position_at_start(b.function.entry_basic_block)
    slot = b.alloca(ty)
    b.position_at_end(here)
    return slot


@dataclass(frozen=True)
class DynamicView(View):
    """A view whose offset also has run-time terms: `terms` holds (index, size, stride) with
    `index` a scalar integer view; each adds clamp(index (+ size if negative), 0, size - 1)
    * stride elements (NumPy indexing by a scalar known only at run time, clamped as JAX
    clamps reads). A fourth item False leaves negative indices unwrapped (lax's dynamic
    slices clamp them to 0). Later index maps keep the terms (they only add to the offset)."""
    terms: tuple = ()


def dynamic_offset(t: "Thread", args: "Args", view: View) -> ir.Value | None:
    """The run-time part of `view`'s offset (None for an ordinary view)."""
    terms = getattr(view, "terms", ())
    if not terms:
        return None
    b = t.b
    total: ir.Value = i64(0)
    for term in terms:
        index, size, stride = term[:3]
        value = load(t, args, index, i64(index.offset))
        if value.type.width < 64:
            value = (b.sext if index.dtype.kind == "i" else b.zext)(value, I64)
        if len(term) < 4 or term[3]:
            value = b.select(b.icmp_signed("<", value, i64(0)), b.add(value, i64(size)),
                             value)
        value = b.select(b.icmp_signed("<", value, i64(0)), i64(0), value)
        top = i64(max(size - 1, 0))
        value = b.select(b.icmp_signed(">", value, top), top, value)
        total = b.add(total, b.mul(value, i64(stride)))
    return total


class Slot:
    """A device buffer as the program sees it (bound to a real buffer at run time)."""
    _count = 0

    def __init__(self, dtype: np.dtype, size: int):
        self.dtype = np.dtype(dtype)
        self.size = int(size)
        Slot._count += 1
        self.id = Slot._count

    def __repr__(self) -> str:
        return f"buf{self.id}"


@dataclass
class Args:
    """The kernel's buffer arguments, in order."""
    slots: list[Slot]

    @staticmethod
    def of(views: list[View]) -> Args:
        slots: list[Slot] = []
        for v in views + [term[0] for v in views for term in getattr(v, "terms", ())]:
            if v.const is None and not any(v.base is s for s in slots):
                slots.append(v.base)
        return Args(slots)

    def index(self, view: View) -> int:
        return next(k for k, s in enumerate(self.slots) if s is view.base)

    def dtypes(self) -> list[np.dtype]:
        return [s.dtype for s in self.slots]


def grid_for(work: int, per_block: int) -> int:
    return max(1, min(-(-work // per_block), MAX_GRID))


def digits(b: ir.IRBuilder, flat: ir.Value, shape: tuple[int, ...]) -> list[ir.Value]:
    """The multi-index of row-major `flat` over `shape` (i64)."""
    out = []
    for n in reversed(shape):
        if n == 1:
            out.append(i64(0))
            continue
        out.append(b.urem(flat, i64(n)))
        flat = b.udiv(flat, i64(n))
    return out[::-1]


def element_index(b: ir.IRBuilder, view: View, digits_of: Callable[[], list],
                  flat: ir.Value | None) -> ir.Value:
    """The element index into the view's buffer at the current iteration point."""
    if flat is not None and view.is_contiguous() and not getattr(view, "terms", ()):
        return b.add(flat, i64(view.offset)) if view.offset else flat
    idx: ir.Value = i64(view.offset)
    for d, s in zip(digits_of(), view.strides):
        if s:
            idx = b.add(idx, b.mul(d, i64(s)))
    return idx


def load(t: Thread, args: Args, view: View, index: ir.Value) -> ir.Value:
    if view.const is not None:
        return constant(view.dtype, view.const)
    extra = dynamic_offset(t, args, view)
    if extra is not None:
        index = t.b.add(index, extra)
    ptr = t.b.gep(t.args[args.index(view)], [index])
    value = t.b.load(ptr)
    return t.b.icmp_unsigned("!=", value, ir.Constant(value.type, 0)) if is_bool(
        view.dtype) else value


def store(t: Thread, args: Args, view: View, index: ir.Value, value: ir.Value) -> None:
    if is_bool(view.dtype) and value.type == I1:
        value = t.b.zext(value, memory_type(view.dtype))
    extra = dynamic_offset(t, args, view)
    if extra is not None:
        index = t.b.add(index, extra)
    t.b.store(value, t.b.gep(t.args[args.index(view)], [index]))


class Point:
    """Lazy addressing at one point of an iteration space (digits computed once)."""

    def __init__(self, b: ir.IRBuilder, flat: ir.Value, shape: tuple[int, ...],
                 known_digits: list | None = None):
        self.b, self.flat, self.shape = b, flat, shape
        self._digits = known_digits

    def digits(self) -> list[ir.Value]:
        if self._digits is None:
            self._digits = digits(self.b, self.flat, self.shape)
        return self._digits

    def index(self, view: View) -> ir.Value:
        same = tuple(view.shape) == tuple(self.shape)
        return element_index(self.b, view, self.digits, self.flat if same else None)


Body = Callable[[Thread, list, Point], list]


def pointwise(name: str, shape: tuple[int, ...], ins: list[View], outs: list[View],
              body: Body) -> Kernel:
    """outs[k][i] = body(ins[..][i])[k] for every i of `shape`, one grid-stride loop."""
    args = Args.of(ins + outs)
    n = int(np.prod(shape, dtype=np.int64))

    def emit(t: Thread) -> None:
        b = t.b
        start = b.add(b.mul(t.bid, t.ntid), t.tid)
        stride = b.mul(t.nbid, t.ntid)

        def one(i):
            point = Point(b, i, shape)
            regs = [load(t, args, v, point.index(v)) for v in ins]
            for v, r in zip(outs, body(t, regs, point)):
                store(t, args, v, point.index(v), r)
        counted_loop(b, start, i64(n), stride, one)

    return Kernel(name, args.dtypes(), [Phase(emit)], BLOCK, grid_for(n, BLOCK),
                  slots=args.slots)


def combine(b: ir.IRBuilder, kind: str, dtype: np.dtype, acc: ir.Value, x: ir.Value
            ) -> ir.Value:
    if kind in ("max", "min"):
        prim = ew.max_p if kind == "max" else ew.min_p
        return ELEMENTWISE[prim](b, [acc, x], [dtype, dtype], dtype, {})
    if kind == "and":
        return b.and_(acc, x)
    if kind == "or":
        return b.or_(acc, x)
    if is_float(dtype):
        return (b.fadd if kind == "add" else b.fmul)(acc, x)
    return (b.add if kind == "add" else b.mul)(acc, x)


@dataclass
class Reduction:
    """Output `dest` (the reduced shape, contiguous) combines with `kind` over `axes`."""
    dest: View
    kind: str
    dtype: np.dtype


def _split(shape: tuple[int, ...], axes: tuple[int, ...]):
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    reduced = tuple(n for d, n in enumerate(shape) if d in axes)
    return kept, reduced


def _full_point(b, shape, axes, outer: ir.Value, inner: ir.Value) -> Point:
    kept, reduced = _split(shape, axes)
    od, rd = iter(digits(b, outer, kept)), iter(digits(b, inner, reduced))
    full = [next(rd) if d in axes else next(od) for d in range(len(shape))]
    return Point(b, None, shape, full)


def split_count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """Into how many chunks a first pass splits each output's reduced elements, so that a
    reduction with few outputs still fills the grid (1: one pass)."""
    kept, reduced = _split(shape, axes)
    n_out = int(np.prod(kept, dtype=np.int64))
    n_in = int(np.prod(reduced, dtype=np.int64))
    if n_out >= SPLIT_MAX_OUTPUTS:
        return 1
    return int(max(1, min(n_in // SPLIT_MIN_CHUNK, SPLIT_MAX_PARTIALS // max(n_out, 1))))


def reduce_kernel(name: str, shape: tuple[int, ...], axes: tuple[int, ...], ins: list[View],
                  outs: list[Reduction], body: Body, chunks: int = 1) -> Kernel:
    """Each output element combines body(ins at every point of the reduced axes); with
    `chunks` > 1, the dests hold (output, chunk) partials that a second pass combines."""
    kept, reduced = _split(shape, axes)
    n_out = int(np.prod(kept, dtype=np.int64))
    n_in = int(np.prod(reduced, dtype=np.int64))
    if n_in >= TREE_MIN_INNER or chunks > 1:
        return _reduce_tree(name, shape, axes, ins, outs, body, n_out, n_in, chunks)
    return _reduce_rows(name, shape, axes, ins, outs, body, n_out, n_in)


def _accumulate(t: Thread, args: Args, shape, axes, ins, outs, body, outer, start, stop,
                step) -> list[ir.Value]:
    """Registers holding each output's combination over inner indices start:stop:step."""
    b = t.b
    slots = [entry_alloca(b, constant(r.dtype, 0).type) for r in outs]
    for slot, r in zip(slots, outs):
        b.store(constant(r.dtype, identity(r.kind, r.dtype)), slot)

    def one(j):
        point = _full_point(b, shape, axes, outer, j)
        regs = [load(t, args, v, point.index(v)) for v in ins]
        for slot, r, x in zip(slots, outs, body(t, regs, point)):
            b.store(combine(b, r.kind, r.dtype, b.load(slot), x), slot)
    counted_loop(b, start, stop, step, one, "r")
    return [b.load(s) for s in slots]


def _reduce_rows(name, shape, axes, ins, outs, body, n_out, n_in) -> Kernel:
    args = Args.of(ins + [r.dest for r in outs])

    def emit(t: Thread) -> None:
        b = t.b

        def one(o):
            accs = _accumulate(t, args, shape, axes, ins, outs, body, o, i64(0), i64(n_in),
                               i64(1))
            for r, acc in zip(outs, accs):
                store(t, args, r.dest, b.add(o, i64(r.dest.offset)), acc)
        counted_loop(b, b.add(b.mul(t.bid, t.ntid), t.tid), i64(n_out), b.mul(t.nbid, t.ntid),
                     one, "o")

    return Kernel(name, args.dtypes(), [Phase(emit)], 128, grid_for(n_out, 128),
                  slots=args.slots)


def _reduce_tree(name, shape, axes, ins, outs, body, n_out, n_in, chunks) -> Kernel:
    args = Args.of(ins + [r.dest for r in outs])
    block = 32
    while block < min(-(-n_in // chunks), BLOCK):
        block *= 2
    shared = [(f"acc{k}", r.dtype, block) for k, r in enumerate(outs)]
    chunk = -(-n_in // chunks)

    def partial(t: Thread) -> None:
        b = t.b
        item = t.loop_vars[0]
        o, c = b.udiv(item, i64(chunks)), b.urem(item, i64(chunks))
        lo = b.mul(c, i64(chunk))
        hi = b.add(lo, i64(chunk))
        hi = b.select(b.icmp_signed("<", hi, i64(n_in)), hi, i64(n_in))
        accs = _accumulate(t, args, shape, axes, ins, outs, body, o, b.add(lo, t.tid), hi,
                           t.ntid)
        for k, (r, acc) in enumerate(zip(outs, accs)):
            _shared_store(t, k, r, t.tid, acc)

    def fold(width: int):
        def emit(t: Thread) -> None:
            b = t.b
            with b.if_then(b.icmp_unsigned("<", t.tid, i64(width))):
                for k, r in enumerate(outs):
                    x = _shared_load(t, k, r, t.tid)
                    y = _shared_load(t, k, r, b.add(t.tid, i64(width)))
                    _shared_store(t, k, r, t.tid, combine(b, r.kind, r.dtype, x, y))
        return emit

    def finish(t: Thread) -> None:
        b = t.b
        o = t.loop_vars[0]  # the (output, chunk) item: partials are stored in that order
        with b.if_then(b.icmp_unsigned("==", t.tid, i64(0))):
            for k, r in enumerate(outs):
                store(t, args, r.dest, b.add(o, i64(r.dest.offset)),
                      _shared_load(t, k, r, i64(0)))

    phases = [Phase(partial)]
    width = block // 2
    while width >= 1:
        phases.append(Phase(fold(width)))
        width //= 2
    phases.append(Phase(finish))
    items = n_out * chunks
    return Kernel(name, args.dtypes(), [BlockLoop(items, phases, grid_stride=True)], block,
                  min(max(items, 1), MAX_GRID), shared, args.slots)


def _shared_load(t: Thread, k: int, r: Reduction, index: ir.Value) -> ir.Value:
    value = t.b.load(t.b.gep(t.shared[f"acc{k}"], [index]))
    return t.b.trunc(value, I1) if is_bool(r.dtype) else value


def _shared_store(t: Thread, k: int, r: Reduction, index: ir.Value, value: ir.Value) -> None:
    if is_bool(r.dtype):
        value = t.b.zext(value, memory_type(r.dtype))
    t.b.store(value, t.b.gep(t.shared[f"acc{k}"], [index]))


def scan(name: str, x: View, dest: View, axis: int, kind: str, dtype: np.dtype,
         reverse: bool) -> Kernel:
    """dest = the running combination of x along `axis` (from the end when `reverse`): one
    thread per line along the axis, grid-stride over the lines."""
    args = Args.of([x, dest])
    n = x.shape[axis]
    lines = tuple(d for k, d in enumerate(x.shape) if k != axis)
    n_lines = int(np.prod(lines, dtype=np.int64))

    def at(b, view: View, line_digits: list, k: ir.Value) -> ir.Value:
        idx: ir.Value = b.add(i64(view.offset), b.mul(k, i64(view.strides[axis])))
        strides = [s for d, s in enumerate(view.strides) if d != axis]
        for digit, stride in zip(line_digits, strides):
            if stride:
                idx = b.add(idx, b.mul(digit, i64(stride)))
        return idx

    def emit(t: Thread) -> None:
        b = t.b
        acc = entry_alloca(b, constant(dtype, 0).type)

        def line(li):
            d = digits(b, li, lines)
            b.store(constant(dtype, identity(kind, dtype)), acc)

            def step(k):
                kk = b.sub(i64(n - 1), k) if reverse else k
                value = combine(b, kind, dtype, b.load(acc), load(t, args, x, at(b, x, d, kk)))
                b.store(value, acc)
                store(t, args, dest, at(b, dest, d, kk), value)
            counted_loop(b, i64(0), i64(n), i64(1), step, "k")
        counted_loop(b, b.add(b.mul(t.bid, t.ntid), t.tid), i64(n_lines),
                     b.mul(t.nbid, t.ntid), line, "line")

    return Kernel(name, args.dtypes(), [Phase(emit)], 128, grid_for(n_lines, 128),
                  slots=args.slots)


def matmul(name: str, lhs: View, rhs: View, out: View, dtype: np.dtype) -> Kernel:
    """out[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j], views of rank 3, 16x16 tiles."""
    batch, m, kk = lhs.shape
    n = rhs.shape[2]
    args = Args.of([lhs, rhs, out])
    tm, tn, tk = -(-m // TILE), -(-n // TILE), -(-kk // TILE)
    shared = [("a", dtype, TILE * TILE), ("b", dtype, TILE * TILE), ("c", dtype, TILE * TILE)]
    zero = constant(dtype, 0)

    def coords(t: Thread):
        b = t.b
        tile = t.loop_vars[0]
        bi = b.udiv(tile, i64(tm * tn))
        rest = b.urem(tile, i64(tm * tn))
        ty, tx = b.udiv(t.tid, i64(TILE)), b.urem(t.tid, i64(TILE))
        row = b.add(b.mul(b.udiv(rest, i64(tn)), i64(TILE)), ty)
        col = b.add(b.mul(b.urem(rest, i64(tn)), i64(TILE)), tx)
        return bi, row, col, ty, tx

    def at(b, view: View, i, j, k) -> ir.Value:
        s = view.strides
        idx = b.add(i64(view.offset), b.mul(i, i64(s[0])))
        idx = b.add(idx, b.mul(j, i64(s[1])))
        return b.add(idx, b.mul(k, i64(s[2])))

    def sh(t: Thread, name_: str, index: ir.Value) -> ir.Value:
        return t.b.gep(t.shared[name_], [index])

    def clear(t: Thread) -> None:
        t.b.store(zero, sh(t, "c", t.tid))

    def stage(t: Thread) -> None:
        b = t.b
        bi, row, col, ty, tx = coords(t)
        k0 = b.mul(t.loop_vars[1], i64(TILE))
        ka, kb = b.add(k0, tx), b.add(k0, ty)
        a_ok = b.and_(b.icmp_unsigned("<", row, i64(m)), b.icmp_unsigned("<", ka, i64(kk)))
        b_ok = b.and_(b.icmp_unsigned("<", kb, i64(kk)), b.icmp_unsigned("<", col, i64(n)))
        for ok, view, (i, j), dst in ((a_ok, lhs, (row, ka), "a"), (b_ok, rhs, (kb, col), "b")):
            slot = entry_alloca(b, zero.type)
            b.store(zero, slot)
            with b.if_then(ok):
                b.store(load(t, args, view, at(b, view, bi, i, j)), slot)
            b.store(b.load(slot), sh(t, dst, t.tid))

    def multiply(t: Thread) -> None:
        b = t.b
        _, _, _, ty, tx = coords(t)
        acc = b.load(sh(t, "c", t.tid))
        for k in range(TILE):
            a = b.load(sh(t, "a", b.add(b.mul(ty, i64(TILE)), i64(k))))
            bb = b.load(sh(t, "b", b.add(i64(k * TILE), tx)))
            acc = (b.fadd(acc, b.fmul(a, bb)) if is_float(dtype) else
                   b.add(acc, b.mul(a, bb)))
        b.store(acc, sh(t, "c", t.tid))

    def write(t: Thread) -> None:
        b = t.b
        bi, row, col, _, _ = coords(t)
        ok = b.and_(b.icmp_unsigned("<", row, i64(m)), b.icmp_unsigned("<", col, i64(n)))
        with b.if_then(ok):
            store(t, args, out, at(b, out, bi, row, col), b.load(sh(t, "c", t.tid)))

    tiles = batch * tm * tn
    body = [BlockLoop(tiles, [Phase(clear), BlockLoop(tk, [Phase(stage), Phase(multiply)]),
                              Phase(write)], grid_stride=True)]
    return Kernel(name, args.dtypes(), body, TILE * TILE, min(max(tiles, 1), MAX_GRID), shared,
                  args.slots)


__all__ = ["Args", "I64", "Reduction", "Slot", "matmul", "pointwise", "reduce_kernel"]
