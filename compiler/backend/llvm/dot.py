"""dot_general: kernels/matmul.py for real matrix products, a loop nest for the rest.

Float products with enough work, at least 16 rows and 2 columns, call the packed,
register-blocked kernel (pack B once per batch element, then rows of C, both split over the
thread pool; narrow products, N up to one vector, run variants that read A in place);
operands are passed by row and column strides, so transposed views need no copy, and only
operands whose axes cannot be merged into (rows, cols) are copied first. Batched products
loop over the batch. Everything else (integers, bool, matrix-vector, tiny products) is a
nest over (batch, lhs free, contracted, rhs free) that multiplies and sum-reduces the
contracted axes; with the contracted axes before the rhs free ones, the innermost loop
runs along a row of the right operand and of the result (vectorised, no gathers).
"""
from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from redraft.compiler.ir.build import watch_staged
from redraft.compiler.ir.ssa import Block, Eqn, Value, fused_p
from redraft.kernels.matmul import gemm_rows_name, matmul_kernel, pack_b_name

from . import elementwise
from .epilogue import Epilogue, emit_epilogue, epilogue_dest, take_epilogue
from .loops import CodeContext, Nest, NestInput, NestOutput, copy, emit_nest, fill, reduce_kind
from .module import FunctionLowering, lowering
from .parallel import ensure_runtime, thread_count
from .types import I64, PTR, VOID, Unsupported, check_dtype, declare, i64, memory_type
from .views import View

KERNEL_MIN_WORK = 20_000         # m * n * k below which a nest is as fast (32x64x128:
#                                  nest 14 us, kernel 4.6 us; 16^3: nest 1.4, kernel 1.9)
KERNEL_MIN_SIDE = 16             # and m at least this (the kernel pads to 12 x 32 tiles)
KERNEL_MIN_COLUMNS = 2           # and n: narrow products (n <= one vector) read A in place
PARALLEL_FLOPS = 2 * 128 ** 3    # the matmul driver's threshold for using threads
NARROW_PARALLEL_FLOPS = 8 * PARALLEL_FLOPS  # and a narrow product's (N <= one vector), in
#                                  the flops its columns need: each chunk of rows sets up
#                                  its own copy of B, and 128x1024 @ 1024x10 (15 us on one
#                                  thread) took twice as long on two
COLUMN_SPLIT_ROWS = 256          # threaded products with at most this many rows (and at
#                                  least twice as many columns) split C by columns
COLUMN_SPLIT_A_BYTES = 2 << 20   # and any whose A fits in this (an L2 or two) and whose
COLUMN_SPLIT_PANELS = 8          # columns give every thread this many NR-column panels
COLUMN_CHUNK_MAX_PANELS = 32     # a thread's chunk of columns is its share, up to this many
#                                  panels (each chunk packs all of A again: on znver5, 128x1024
#                                  @ 1024x1024 ran at 427 GFLOP/s in chunks of 4 panels, 452
#                                  in 8, 466 in one chunk a thread, and 291 against 233 with
#                                  a busy process on the other core; 32 keeps a chunk's
#                                  packed B in L2 a K slice at a time)
ROW_CHUNK_BLOCKS = 2             # threads split by rows take chunks of up to this many MC
#                                  blocks: each chunk reads all of the shared packed B, half
#                                  of it from the other core's cache (512^3 in chunks of 72
#                                  rows: 427 GFLOP/s, of 264 or 288: 464-471)


def _free(ndim: int, contracting, batch) -> list[int]:
    return [i for i in range(ndim) if i not in contracting and i not in batch]


@lowering("dot_general")
def lower_dot_general(L: FunctionLowering, eqn: Eqn) -> None:
    lhs, rhs = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    dtype = check_dtype(eqn.ins[0].aval.dtype)
    out = eqn.outs[0]
    if check_dtype(out.aval.dtype) != dtype:
        raise Unsupported("dot_general with a different preferred_element_type")
    lf, rf = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    m, n, k = _sizes(eqn)
    if _uses_kernel(eqn) and np.prod(out.aval.shape, dtype=np.int64) > 0:
        share = _packing_plan(L).get(id(eqn))
        first = _first_iteration(L, eqn) if share is None and not lb else None
        columns = share is None and first is None and _splits_columns(m, n, k, dtype)
        fused = not lb
        dest = (epilogue_dest(L, eqn) if fused else None) or L.dest(out)
        L.views[out.id] = dest
        epilogue = None
        if fused:
            epilogue = take_epilogue(L, eqn, dest, _kernel(dtype.name).cfg.nr if columns else 0)
        _kernel_product(L, lhs, rhs, (lb, lf, lc), (rb, rc, rf), dest, (m, n, k), share,
                        first, epilogue, columns)
        return
    dest = L.dest(out)
    if dest.size == 0:
        pass
    elif k == 0:
        fill(L.cx, dest, 0)
    else:
        _nest_product(L, lhs, rhs, (lb, lf, lc), (rb, rc, rf), dest, dtype)
    L.views[out.id] = dest


def _first_iteration(L: FunctionLowering, eqn: Eqn) -> ir.Value | None:
    """For a product in the body of the for loop being lowered (not nested deeper) whose
    right operand comes from outside the loop: the condition "first iteration", under which
    alone it packs that operand (a scan's weights were packed again every step)."""
    loops = L.family_state.get("for loops")
    if not loops or not isinstance(eqn.ins[1], Value):
        return None
    first, region = loops[-1]
    if not any(e is eqn for e in region.eqns):
        return None
    inside = L.family_state.setdefault("defined in loop", {})
    defined = inside.get(id(region))
    if defined is None:
        defined = inside[id(region)] = _defined_in(region)
    return None if eqn.ins[1].id in defined else first


def _defined_in(block: Block) -> set[int]:
    """Ids of the values a block (and the blocks inside it) defines, parameters included."""
    ids = {p.id for p in block.params}
    for e in block.eqns:
        ids.update(v.id for v in e.outs)
        for region in e.regions:
            ids |= _defined_in(region)
    return ids


def _sizes(eqn: Eqn) -> tuple[int, int, int]:
    """(m, n, k) of a dot_general: its lhs free, rhs free and contracted sizes."""
    lhs, rhs = eqn.ins[0].aval.shape, eqn.ins[1].aval.shape
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]

    def size(shape, axes) -> int:
        return int(np.prod([shape[i] for i in axes], dtype=np.int64))

    return (size(lhs, _free(len(lhs), lc, lb)), size(rhs, _free(len(rhs), rc, rb)),
            size(lhs, lc))


def _uses_kernel(eqn: Eqn) -> bool:
    """Whether the product runs on the packed kernel (a float product big enough)."""
    m, n, k = _sizes(eqn)
    return (np.dtype(eqn.ins[0].aval.dtype).kind == "f" and k > 0
            and np.dtype(eqn.outs[0].aval.dtype) == np.dtype(eqn.ins[0].aval.dtype)
            and m >= KERNEL_MIN_SIDE and n >= KERNEL_MIN_COLUMNS
            and m * n * k >= KERNEL_MIN_WORK)


@dataclass(frozen=True)
class SharedPacking:
    """Products in one block with the same right operand in the same layout pack it once:
    the first packs into a buffer that lives until the last has run (an RNN's gradient
    multiplies by W and W.T fifty times each)."""
    key: tuple
    first: bool
    last: bool


def _packing_plan(L: FunctionLowering) -> dict[int, SharedPacking]:
    """id(eqn) -> its SharedPacking, for the kernel products of the function being lowered
    whose right operand another kernel product of the same block also multiplies by."""
    plan = L.family_state.get("packing plan")
    if plan is None:
        plan = L.family_state["packing plan"] = {}
        _plan_block(L.fn.body, plan)
    return plan


def _plan_block(block: Block, plan: dict[int, SharedPacking]) -> None:
    groups: dict[tuple, list[Eqn]] = {}
    for eqn in block.eqns:
        if eqn.prim.name == "dot_general" and isinstance(eqn.ins[1], Value) and _uses_kernel(
                eqn) and not eqn.params["dimension_numbers"][1][1]:
            contracting = tuple(eqn.params["dimension_numbers"][0][1])
            groups.setdefault((eqn.ins[1].id, contracting), []).append(eqn)
        if eqn.prim is not fused_p:
            for region in eqn.regions:
                _plan_block(region, plan)
    for key, eqns in groups.items():
        if len(eqns) > 1:
            for k, eqn in enumerate(eqns):
                plan[id(eqn)] = SharedPacking(key, k == 0, k == len(eqns) - 1)


def _nest_product(L, lhs: View, rhs: View, l_axes, r_axes, dest: View, dtype) -> None:
    """C = A @ B as a multiply-and-sum nest, with the loop order that runs the innermost
    loop along contiguous memory: along N (rows of B and C), along K (a dot product per
    element of C; operands copied K-contiguous if needed), or along M (into C transposed,
    then copied)."""
    lb, lf, lc = (list(a) for a in l_axes)
    rb, rc, rf = (list(a) for a in r_axes)
    order = _nest_order(lhs, rhs, lf, lc, rc, rf)
    if order == "k":
        lhs = _contiguous_along(L, lhs, lb + lf + lc, lc)
        rhs = _contiguous_along(L, rhs, rb + rf + rc, rc)
    target, key = dest, None
    if order == "m":  # compute C^T (batch, N, M) in scratch
        shape = tuple(dest.shape[:len(lb)]) + tuple(rhs.shape[j] for j in rf) + tuple(
            lhs.shape[i] for i in lf)
        target, key = L.temporary(dest.dtype, shape)
    _emit_product(L, lhs, rhs, (lb, lf, lc), (rb, rc, rf), target, dtype, order)
    if key is not None:
        nb, nm = len(lb), len(lf)
        perm = tuple(range(nb)) + tuple(range(len(target.shape) - nm, len(target.shape))) + \
            tuple(range(nb, len(target.shape) - nm))
        copy(L.cx, target.transpose(perm), dest)
        L.ws.release(key)


def _inner_stride(view: View, axes: list) -> int | None:
    """Stride of the last non-unit axis of `axes` (None if they are all size 1)."""
    live = [a for a in axes if view.shape[a] != 1]
    if not live or view.const is not None:
        return None
    return view.strides[live[-1]]


def _nest_order(lhs: View, rhs: View, lf, lc, rc, rf) -> str:
    """'n', 'k' or 'm': which axis runs innermost (see _nest_product)."""
    size = {"m": int(np.prod([lhs.shape[i] for i in lf], dtype=np.int64)),
            "n": int(np.prod([rhs.shape[j] for j in rf], dtype=np.int64)),
            "k": int(np.prod([lhs.shape[i] for i in lc], dtype=np.int64))}
    unit = (None, 0, 1)
    free = {"n": _inner_stride(rhs, rf) in unit,
            "m": _inner_stride(lhs, lf) in unit,
            "k": _inner_stride(lhs, lc) in unit and _inner_stride(rhs, rc) in unit}
    best = max((o for o in "nkm" if free[o]), key=lambda o: size[o], default=None)
    if best is not None and (size[best] >= 32 or size[best] * 2 >= max(size.values())):
        return best
    return "k" if size["k"] >= 32 else (best or "n")


def _contiguous_along(L, view: View, order: list, axes: list) -> View:
    """`view`, or a row-major copy in `order` (transposed back), if `axes` are strided."""
    if _inner_stride(view, axes) in (None, 0, 1):
        return view
    tmp, _ = L.temporary(view.dtype, tuple(view.shape[a] for a in order))
    copy(L.cx, view.transpose(tuple(order)), tmp)
    back = tuple(order.index(a) for a in range(view.ndim))
    return tmp.transpose(back)


def _emit_product(L, lhs: View, rhs: View, l_axes, r_axes, out: View, dtype, order) -> None:
    lb, lf, lc = l_axes
    rb, rc, rf = r_axes
    nb, nf, nc, nr = len(lb), len(lf), len(lc), len(rf)
    # iteration axes: batch, then the three groups in loop order; None = broadcast
    groups = {"m": (lf, [None] * nf, lf), "k": (lc, rc, [None] * nc),
              "n": ([None] * nr, rf, rf)}
    sequence = {"n": "mkn", "k": "mnk", "m": "nkm"}[order]
    l_axes_it, r_axes_it, shape = list(lb), list(rb), [lhs.shape[i] for i in lb]
    for g in sequence:
        la, ra, _ = groups[g]
        l_axes_it += la
        r_axes_it += ra
        shape += [lhs.shape[i] for i in lf] if g == "m" else (
            [lhs.shape[i] for i in lc] if g == "k" else [rhs.shape[j] for j in rf])
    out_strides = list(out.strides[:nb])
    position = {"m": 0, "n": nf} if order != "m" else {"n": 0, "m": nr}
    for g in sequence:
        count = {"m": nf, "k": nc, "n": nr}[g]
        if g == "k":
            out_strides += [0] * nc
        else:
            start = nb + position[g]
            out_strides += list(out.strides[start:start + count])
    shape = tuple(shape)

    def strides_of(view: View, axes: list) -> list[int]:
        return [0 if a is None or view.const is not None else view.strides[a] for a in axes]

    lhs_it = _remap(lhs, shape, strides_of(lhs, l_axes_it))
    rhs_it = _remap(rhs, shape, strides_of(rhs, r_axes_it))
    out_it = View(out.base, out.dtype, shape, tuple(out_strides), out.offset)
    kind = reduce_kind("reduce_sum", dtype)
    from redraft.compiler.primitives import elementwise as ew
    prim = ew.and_p if dtype.kind == "b" else ew.mul_p

    def body(b, regs):
        return [elementwise.lower(b, prim, regs, [dtype, dtype], dtype, {})]

    emit_nest(L.cx, Nest(shape, [NestInput(lhs_it), NestInput(rhs_it)],
                         [NestOutput(out_it, out, kind)], body, 2, (dtype,)))


def _remap(view: View, shape, strides) -> View:
    return View(view.base, view.dtype, tuple(shape), tuple(strides), view.offset, view.const)


def _merged_stride(view: View, axes: list) -> int | None:
    """The stride of `axes` taken together as one axis, or None if they do not merge."""
    live = [(view.shape[a], view.strides[a]) for a in axes if view.shape[a] != 1]
    for (n0, s0), (n1, s1) in itertools.pairwise(live):
        if s0 != s1 * n1:
            return None
    return live[-1][1] if live else 1


def _canonical(L, view: View, order: list, groups: list[list[int]]):
    """(view, strides of each axis group), copying into `order` layout if needed."""
    if view.const is None:
        strides = [_merged_stride(view, g) for g in groups]
        if all(s is not None for s in strides):
            return view, strides, None
    shape = tuple(view.shape[a] for a in order)
    tmp, key = L.temporary(view.dtype, shape)
    copy(L.cx, view.transpose(tuple(order)), tmp)  # a constant's shape permutes too
    position = {a: k for k, a in enumerate(order)}
    strides = [_merged_stride(tmp, [position[a] for a in g]) for g in groups]
    return tmp, strides, key


def _splits_columns(m: int, n: int, k: int, dtype: np.dtype) -> bool:
    """Whether a threaded product splits C by columns rather than by rows: when C has few
    rows and many columns, or A is small and every thread gets enough columns. Split by rows,
    every chunk streams all of the packed B from L3 (128 x 784 @ 784 x 1024 in chunks of 24
    rows read its 3.2 MB six times); split by columns, each chunk packs its own panels of B
    and uses them at once from L2, and packs all of A instead."""
    cfg = _kernel(dtype.name).cfg
    if 2 * m * cfg.padded_columns(n) * k < PARALLEL_FLOPS or n <= cfg.vl:
        return False
    few_rows = m <= COLUMN_SPLIT_ROWS and n >= 2 * m
    threads = thread_count()
    small_a = (threads > 1 and m * k * dtype.itemsize <= COLUMN_SPLIT_A_BYTES
               and -(-n // cfg.nr) >= COLUMN_SPLIT_PANELS * threads)
    return few_rows or small_a


def _even_chunk(total: int, most: int, unit: int) -> int:
    """The size (a multiple of `unit`) of the chunks that split `total` into a multiple of
    the thread count, each at most about `most`: every thread gets the same number of
    chunks (288-row chunks of 1000 rows gave one thread 576 and the other 424)."""
    threads = thread_count()
    share = -(-total // threads)
    chunks = threads * -(-share // most)
    size = -(-total // chunks)
    return max(unit, -(-size // unit) * unit)


def _column_chunk(panels: int) -> int:
    """Panels of a threaded column split's chunk: each thread's share, in chunks of at most
    COLUMN_CHUNK_MAX_PANELS (every chunk packs all of A again)."""
    return _even_chunk(panels, COLUMN_CHUNK_MAX_PANELS, 1)


def _row_chunk(cfg, m: int) -> int:
    """Rows of a threaded row split's chunk: each thread's share, in chunks of at most
    ROW_CHUNK_BLOCKS MC blocks, in whole MR-row tiles."""
    return _even_chunk(m, ROW_CHUNK_BLOCKS * cfg.mc, cfg.mr)


def _threaded(cfg, m: int, n: int, k: int) -> bool:
    """Whether a product on the kernel is worth the thread pool's hand-off."""
    if n <= cfg.vl:
        return 2 * m * n * k >= NARROW_PARALLEL_FLOPS
    return 2 * m * cfg.padded_columns(n) * k >= PARALLEL_FLOPS


def _kernel_product(L, lhs: View, rhs: View, l_axes, r_axes, dest: View, mnk,
                    share: SharedPacking | None = None, first: ir.Value | None = None,
                    epilogue: Epilogue | None = None, columns: bool = False) -> None:
    """dest = lhs . rhs on the packed kernel. `first` (a loop's first-iteration flag, see
    _first_iteration): pack rhs only under it, into a buffer kept for the whole function.
    `epilogue`: run on each chunk of rows of dest after it (epilogue.py). `columns`: the
    threads split C by columns, each packing its own panels of B (_splits_columns)."""
    lb, lf, lc = (list(a) for a in l_axes)
    rb, rc, rf = (list(a) for a in r_axes)
    m, n, k = mnk
    dtype = lhs.dtype
    kernel = _kernel(dtype.name)
    cfg = kernel.cfg
    a, (sab, sam, sak), key_a = _canonical(L, lhs, lb + lf + lc, [lb, lf, lc])
    kernel.prepare_narrow(sam, sak, k, n)  # (N <= one vector: compile its variant now)
    packs = share is None or share.first
    packings = L.family_state.setdefault("packed", {})
    bm, key_b, pack_task = None, None, None
    batch = int(np.prod([lhs.shape[i] for i in lb], dtype=np.int64))
    panels = -(-n // cfg.nr)
    threads = _threaded(cfg, m, n, k)
    cx, b = L.cx, L.b
    if packs:
        bm, (sbb, sbk, sbn), key_b = _canonical(L, rhs, rb + rc + rf, [rb, rc, rf])
        packed, key_p = L.temporary(dtype, (k * panels * cfg.nr,),
                                    kept_by_loop=first is not None)
        pack_task = None if columns else _pack_task(cx, cfg, (sbk, sbn, k, n))
    else:
        packed, key_p = packings[share.key]
    elem = memory_type(dtype)
    params = (sam, sak, n, n, k)
    if epilogue is None:
        rows_task = _rows_task(cx, cfg, params, dtype)
    else:
        rows_task = _rows_epilogue_task(cx, cfg, params, dtype, epilogue)
    extra = epilogue.bases if epilogue is not None else []
    ctx = cx.entry_alloca(PTR, 4 + len(extra), name="dot.ctx")
    for slot, base in enumerate(extra):
        b.store(base, b.gep(ctx, [i64(4 + slot)], source_etype=PTR))

    def at(view: View, index: ir.Value, stride: int) -> ir.Value:
        return b.gep(view.base, [b.add(i64(view.offset), b.mul(index, i64(stride)))],
                     inbounds=True, source_etype=elem)

    def one(index: ir.Value) -> None:
        source = at(bm, index, sbb) if packs else ir.Constant(PTR, None)
        pointers = [at(a, index, sab), source, packed_ptr, at(dest, index, m * n)]
        for slot, p in enumerate(pointers):
            b.store(p, b.gep(ctx, [i64(slot)], source_etype=PTR))
        if columns:
            shape = (sam, sak, sbk, sbn, m, n, k)
            task = _columns_task(cx, cfg, shape, dtype) if epilogue is None else \
                _columns_epilogue_task(cx, cfg, shape, dtype, epilogue)
            _run(cx, task, ctx, panels, _column_chunk(panels), threads)
            return
        if packs and first is not None:
            with b.if_then(first):
                _run(cx, pack_task, ctx, panels, 1, threads)
        elif packs:
            _run(cx, pack_task, ctx, panels, 1, threads)
        _run(cx, rows_task, ctx, m, _row_chunk(cfg, m), threads)

    packed_ptr = b.gep(packed.base, [i64(packed.offset)], inbounds=True, source_etype=elem)
    if batch == 1:
        one(i64(0))
    else:
        from .loops import for_range
        for_range(b, i64(0), i64(batch), 1, [], lambda i, c: (one(i), [])[1], "batch")
    if (share is not None and not share.last) or first is not None:
        if share is not None:
            packings[share.key] = (packed, key_p)  # kept for the next product of the group
        key_p = None  # (a loop's: kept for its later iterations, never released)
    for key in (key_a, key_b, key_p):
        if key is not None:
            L.ws.release(key)


def _run(cx: CodeContext, task: ir.Function, ctx: ir.Value, total: int, grain: int,
         threads: bool) -> None:
    if threads and total > grain:
        runner = declare(cx.module, "redraft_parallel_for", VOID, [PTR, PTR, I64, I64])
        cx.b.call(runner, [task, ctx, i64(total), i64(grain)])
    else:
        cx.b.call(task, [ctx, i64(0), i64(total)])


def _task(cx: CodeContext, stem: str) -> tuple[ir.Function, ir.IRBuilder, list]:
    fn = ir.Function(cx.module, ir.FunctionType(VOID, [PTR, I64, I64]), name=cx.unique(stem))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    # never inlined: a task holds a ~150 KB A-packing buffer on its stack, and inlined into
    # a function with many products (a scan unrolled by its gradient) those buffers add up
    # in one frame past the main thread's 8 MB stack
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptrs = [b.load(b.gep(fn.args[0], [i64(s)], source_etype=PTR), typ=PTR) for s in range(4)]
    return fn, b, ptrs


_TASKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> {key: task}


def _shared_task(build):
    """`build(cx, cfg, params, ...)` made once per module and arguments: the products of
    one shape share their task functions (an unrolled scan has hundreds of products of a
    few shapes, and each task function costs LLVM time)."""
    def task(cx: CodeContext, cfg, params, *rest) -> ir.Function:
        made = _TASKS.setdefault(cx.module, {})
        key = (build.__name__, cfg, tuple(params), *rest)
        if key not in made:
            made[key] = build(cx, cfg, params, *rest)
        return made[key]
    return task


@_shared_task
def _pack_task(cx: CodeContext, cfg, params) -> ir.Function:
    """task(ctx, lo, hi): pack column panels lo..hi of B (ctx: A, B, packed, C)."""
    sbk, sbn, k, n = params
    fn, b, (_, src, packed, _) = _task(cx, "redraft_dot_pack")
    pack = declare(cx.module, pack_b_name(cfg), VOID, [PTR, I64, I64, PTR, I64, I64, I64, I64])
    b.call(pack, [src, i64(sbk), i64(sbn), packed, i64(k), i64(n), fn.args[1], fn.args[2]])
    b.ret_void()
    return fn


@_shared_task
def _rows_task(cx: CodeContext, cfg, params, dtype) -> ir.Function:
    """task(ctx, lo, hi): rows lo..hi of C = A @ B from the packed B."""
    fn, b = _rows_body(cx, cfg, params, dtype)
    b.ret_void()
    return fn


@_shared_task
def _columns_task(cx: CodeContext, cfg, params, dtype) -> ir.Function:
    """task(ctx, lo, hi): column panels lo..hi of C = A @ B, all rows: those panels of B
    packed into their own stretch of the packed buffer (from column j0 at j0 * K), then
    multiplied while they are in this thread's cache."""
    fn, b, _ = _columns_body(cx, cfg, params, dtype)
    b.ret_void()
    return fn


def _columns_epilogue_task(cx: CodeContext, cfg, params, dtype, epilogue: Epilogue
                           ) -> ir.Function:
    """task(ctx, lo, hi): column panels lo..hi of C = A @ B, then the epilogue on those
    columns of every row (its base pointers in ctx after the product's four)."""
    fn, b, (j0, j1) = _columns_body(cx, cfg, params, dtype)
    bases = [b.load(b.gep(fn.args[0], [i64(4 + s)], source_etype=PTR), typ=PTR)
             for s in range(len(epilogue.bases))]
    emit_epilogue(b, epilogue, bases, j0, j1)
    b.ret_void()
    return fn


def _columns_body(cx: CodeContext, cfg, params, dtype
                  ) -> tuple[ir.Function, ir.IRBuilder, tuple[ir.Value, ir.Value]]:
    """A task function computing column panels lo..hi of C (its return left to the caller),
    and the columns j0..j1 they cover."""
    sam, sak, sbk, sbn, m, n, k = params
    fn, b, (a, src, packed, c) = _task(cx, "redraft_dot_cols")
    elem = memory_type(dtype)
    work = b.alloca(elem, size=cfg.workspace_size)
    work.align = 64
    lo, hi = fn.args[1], fn.args[2]
    j0 = b.mul(lo, i64(cfg.nr))
    j1 = b.mul(hi, i64(cfg.nr))
    j1 = b.select(b.icmp_signed("<", j1, i64(n)), j1, i64(n))
    width = b.sub(j1, j0)
    panel_src = b.gep(src, [b.mul(j0, i64(sbn))], inbounds=True, source_etype=elem)
    panel_packed = b.gep(packed, [b.mul(j0, i64(k))], inbounds=True, source_etype=elem)
    pack = declare(cx.module, pack_b_name(cfg), VOID, [PTR, I64, I64, PTR, I64, I64, I64, I64])
    b.call(pack, [panel_src, i64(sbk), i64(sbn), panel_packed, i64(k), width, i64(0),
                  b.sub(hi, lo)])
    rows = declare(cx.module, gemm_rows_name(cfg), VOID,
                   [PTR, I64, I64, PTR, PTR, I64, I64, I64, I64, I64, PTR])
    b.call(rows, [a, i64(sam), i64(sak), panel_packed, b.gep(c, [j0], inbounds=True,
                                                             source_etype=elem),
                  i64(n), width, i64(k), i64(0), i64(m), work])
    return fn, b, (j0, j1)


def _rows_epilogue_task(cx: CodeContext, cfg, params, dtype, epilogue: Epilogue
                        ) -> ir.Function:
    """task(ctx, lo, hi): rows lo..hi of C = A @ B, then the epilogue on those rows (its
    base pointers in ctx after the product's four)."""
    fn, b = _rows_body(cx, cfg, params, dtype)
    bases = [b.load(b.gep(fn.args[0], [i64(4 + s)], source_etype=PTR), typ=PTR)
             for s in range(len(epilogue.bases))]
    emit_epilogue(b, epilogue, bases, fn.args[1], fn.args[2])
    b.ret_void()
    return fn


def _rows_body(cx: CodeContext, cfg, params, dtype) -> tuple[ir.Function, ir.IRBuilder]:
    """A task function computing rows lo..hi of C (its return left to the caller)."""
    sam, sak, rsc, n, k = params
    fn, b, (a, _, packed, c) = _task(cx, "redraft_dot_rows")
    work = b.alloca(memory_type(dtype), size=cfg.workspace_size)
    work.align = 64
    rows = declare(cx.module, gemm_rows_name(cfg), VOID,
                   [PTR, I64, I64, PTR, PTR, I64, I64, I64, I64, I64, PTR])
    b.call(rows, [a, i64(sam), i64(sak), packed, c, i64(rsc), i64(n), i64(k), fn.args[1],
                  fn.args[2], work])
    return fn, b


_KERNELS: dict[str, Future] = {}
_KERNELS_LOCK = threading.Lock()


def _kernel_future(dtype_name: str) -> Future:
    """The compile of the matmul kernel for `dtype_name`, started on a background thread
    on first request (LLVM releases the GIL, so it overlaps with staging in Python)."""
    with _KERNELS_LOCK:
        future = _KERNELS.get(dtype_name)
        if future is None:
            if not _KERNELS:
                atexit.register(_finish_compiles)
            future = _KERNELS[dtype_name] = Future()
            threading.Thread(target=_compile_kernel, args=(dtype_name, future), daemon=True,
                             name=f"redraft-matmul-{dtype_name}").start()
    return future


def _forget_unfinished() -> None:
    """In a forked child: the threads compiling kernels did not come along, so a compile
    they had not finished starts again when the child needs it."""
    for name, future in list(_KERNELS.items()):
        if not future.done():
            del _KERNELS[name]


os.register_at_fork(after_in_child=_forget_unfinished)


def _finish_compiles() -> None:
    """At exit, wait for the kernel compiles still running: LLVM's static destructors must
    not run under a thread that is inside LLVM (the process would abort)."""
    for future in list(_KERNELS.values()):
        future.exception()


def _compile_kernel(dtype_name: str, future: Future) -> None:
    try:
        if dtype_name == RUNTIME:  # the thread pool (25 ms), which every function needs
            ensure_runtime()
            future.set_result(None)
            return
        kernel = matmul_kernel(dtype_name)  # the kernel library's, where it is loaded
        for name in (pack_b_name(kernel.cfg), gemm_rows_name(kernel.cfg)):
            llvm.add_symbol(name, kernel.address(name))
        future.set_result(kernel)
    except BaseException as e:  # noqa: BLE001 - handed to whoever waits for the kernel
        future.set_exception(e)


RUNTIME = "runtime"  # the key of the thread pool's compile among the kernels'


def warm_up() -> None:
    """Start compiling the thread pool now, in the background, and the matmul kernel of a
    dtype as soon as staging records the first product that runs on it, so that the first
    function does not wait for them after staging; a function without such a product (a
    matrix-vector product: per-example gradients) does not pay the kernel's 0.09 s of CPU."""
    watch_staged("dot_general", _start_kernel_for)
    watch_staged("conv_general_dilated", _start_kernel_for)  # passes/conv.py: products
    _kernel_future(RUNTIME)


def _start_kernel_for(eqn: Eqn) -> None:
    """Start compiling the kernel that a staged product (or convolution) will run on."""
    dtype = np.dtype(eqn.outs[0].aval.dtype)
    if dtype.name in ("float32", "float64") and (
            eqn.prim.name != "dot_general" or _uses_kernel(eqn)):
        _kernel_future(dtype.name)


def _kernel(dtype_name: str):
    """The compiled matmul kernel, its entry points registered for generated modules."""
    return _kernel_future(dtype_name).result()
