"""A tiny thread pool in LLVM IR: `redraft_parallel_for(fn, ctx, total, grain)`.

Generated code calls it to run `fn(ctx, lo, hi)` over chunks of [0, total) on every core.
It lives in machine code, not Python, because a parallel loop may sit inside a compiled
`while` and must cost microseconds, not a GIL round trip. Workers are pthreads that spin
briefly (a budget of time-stamp-counter ticks, since the cost of `pause` differs fivefold
between CPUs) and then sleep on a futex; chunks are claimed with one compare-and-swap on a word
holding (job number, next chunk), so a worker that wakes late can never run a chunk of a
newer job with stale parameters. The caller runs chunks too and then waits for the rest.
A second caller that finds the pool busy (two Python threads at once) runs serially.

REDRAFT_NUM_THREADS sets the thread count (default: the CPUs this process may use). Where the
kernel library is built (compiler/cache/kernel_library.py) its pool is used and this module
is not compiled: one pool a process, shared with the compile cache's entries.
"""
from __future__ import annotations

import ctypes
import os
import threading

import llvmlite.binding as llvm
from llvmlite import ir
from redraft.kernels.jit_host import CompiledModule, precompiled

from .codegen import optimise
from .types import I32, I64, PTR, VOID, declare, i32, i64

CHUNKS_PER_THREAD = 4
WORKER_SPIN_TICKS = 60_000    # time-stamp-counter ticks a worker spins before it sleeps
#                               (~20-30 us: the gap between the parallel loops of one call,
#                               not the Python time between calls, when it only burns CPU)
WAITER_SPINS = 2000           # pause loops before the caller starts yielding
MAX_WORKERS = 63
_SYS_FUTEX, _FUTEX_WAIT, _FUTEX_WAKE = 202, 128, 129   # x86-64 Linux, private futexes


def thread_count() -> int:
    """Threads a parallel loop uses (the caller included)."""
    return _runtime().threads


_RUNTIME: list[_Runtime] = []
_RUNTIME_LOCK = threading.Lock()   # the warm-up thread and the first compile may race


def _runtime() -> _Runtime:
    if not _RUNTIME:
        with _RUNTIME_LOCK:
            if not _RUNTIME:
                _RUNTIME.append(_Runtime())
    return _RUNTIME[0]


def _new_lock_in_child() -> None:
    """A fork while another thread builds the pool would leave the child a held lock."""
    global _RUNTIME_LOCK
    _RUNTIME_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def ensure_runtime() -> None:
    """Compile the pool and register its entry point for generated modules (the driver's
    warm-up does it on a background thread while the first function is staged)."""
    _runtime()


class _Runtime:
    def __init__(self):
        library = precompiled()
        self.compiled, self._workers = None, None
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)
        if library is not None:  # its pool started (and stopped in a forked child) by its loader
            self.threads = library.threads
            llvm.add_symbol("redraft_parallel_for", library.address("redraft_parallel_for"))
            return
        self.threads = requested_threads()
        # the short pipeline (codegen.py): the pool's code is small and waits on atomics;
        # LLVM's O3 doubled its compile (30 ms of CPU in every process's first call)
        self.compiled = CompiledModule(_build_module(), optimiser=lambda m: optimise(m, 0))
        llvm.add_symbol("redraft_parallel_for", self.compiled.address("redraft_parallel_for"))
        self._workers = ctypes.c_int64.from_address(
            self.compiled.engine.get_global_value_address("rd_workers"))
        if self.threads > 1:
            start = self.compiled.function("redraft_pool_start", ctypes.c_int64,
                                           [ctypes.c_int64])
            self.threads = 1 + start(self.threads - 1)

    def _after_fork(self) -> None:
        """A forked child has no worker threads: run every loop serially there."""
        if self._workers is not None:
            self._workers.value = 0
        self.threads = 1


def requested_threads() -> int:
    """REDRAFT_NUM_THREADS, else the CPUs this process may use."""
    text = os.environ.get("REDRAFT_NUM_THREADS")
    if text:
        return max(1, int(text))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# ---- the module ---------------------------------------------------------------------------

class _Pool:
    """Globals and helpers of the pool module."""

    def __init__(self, module: ir.Module):
        self.m = module
        self.job = self._global("rd_job", I32)          # futex word: current job number
        self.claim = self._global("rd_claim", I64)      # (job << 32) | next chunk
        self.fn = self._global("rd_fn", I64)           # pointers kept as integers
        self.ctx = self._global("rd_ctx", I64)
        self.total = self._global("rd_total", I64)
        self.per = self._global("rd_per", I64)
        self.chunks = self._global("rd_chunks", I64)
        self.pending = self._global("rd_pending", I64)
        self.sleeping = self._global("rd_sleeping", I32)
        self.workers = self._global("rd_workers", I64)
        self.busy = self._global("rd_busy", I32)
        self.handles = ir.GlobalVariable(module, ir.ArrayType(I64, MAX_WORKERS), "rd_handles")
        self.handles.initializer = ir.Constant(ir.ArrayType(I64, MAX_WORKERS), None)
        self.handles.linkage = "internal"
        self.syscall = declare(module, "syscall", I64, [I64], var_arg=True)
        self.pause = declare(module, "llvm.x86.sse2.pause", VOID, [])
        self.sched_yield = declare(module, "sched_yield", I32, [])
        self.ticks = declare(module, "llvm.readcyclecounter", I64, [])
        self.task_ty = ir.FunctionType(VOID, [PTR, I64, I64])

    def _global(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.m, ty, name)
        g.initializer = ir.Constant(ty, None)
        g.align = 64
        return g

    def get(self, b: ir.IRBuilder, g, ty: ir.Type, order: str = "acquire") -> ir.Value:
        return b.load_atomic(g, order, ty.width // 8 if isinstance(ty, ir.IntType) else 8,
                             typ=ty)

    def put(self, b: ir.IRBuilder, value: ir.Value, g, order: str = "release") -> None:
        width = value.type.width // 8 if isinstance(value.type, ir.IntType) else 8
        b.store_atomic(value, g, order, width)


def _build_module() -> ir.Module:
    module = ir.Module(name="redraft_pool")
    pool = _Pool(module)
    run_chunks = _emit_run_chunks(pool)
    _emit_parallel_for(pool, run_chunks)
    worker = _emit_worker(pool, run_chunks)
    _emit_start(pool, worker)
    return module


def _emit_run_chunks(pool: _Pool) -> ir.Function:
    """run_chunks(job): claim and run chunks of `job` until none are left."""
    fn = ir.Function(pool.m, ir.FunctionType(VOID, [I32]), name="rd_run_chunks")
    fn.linkage = "internal"
    job = fn.args[0]
    entry = fn.append_basic_block("entry")
    top = fn.append_basic_block("top")
    check = fn.append_basic_block("check")
    attempt = fn.append_basic_block("attempt")
    run = fn.append_basic_block("run")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(top)
    b.position_at_end(top)
    word = pool.get(b, pool.claim, I64)
    same_job = b.icmp_unsigned("==", b.lshr(word, i64(32)), b.zext(job, I64))
    b.cbranch(same_job, check, done)
    b.position_at_end(check)
    chunk = b.and_(word, i64(0xFFFFFFFF))
    chunks = pool.get(b, pool.chunks, I64, "monotonic")
    b.cbranch(b.icmp_unsigned("<", chunk, chunks), attempt, done)
    b.position_at_end(attempt)
    pair = b.cmpxchg(pool.claim, word, b.add(word, i64(1)), "acq_rel", "acquire")
    b.cbranch(b.extract_value(pair, 1), run, top)
    b.position_at_end(run)
    per = pool.get(b, pool.per, I64, "monotonic")
    total = pool.get(b, pool.total, I64, "monotonic")
    task = b.inttoptr(pool.get(b, pool.fn, I64, "monotonic"), ir.PointerType(pool.task_ty))
    ctx = b.inttoptr(pool.get(b, pool.ctx, I64, "monotonic"), PTR)
    lo = b.mul(chunk, per)
    hi = b.add(lo, per)
    hi = b.select(b.icmp_signed("<", hi, total), hi, total)
    b.call(task, [ctx, lo, hi])
    b.atomic_rmw("sub", pool.pending, i64(1), "acq_rel")
    b.branch(top)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _spin_pause(pool: _Pool, b: ir.IRBuilder) -> None:
    b.call(pool.pause, [])


def _emit_parallel_for(pool: _Pool, run_chunks: ir.Function) -> ir.Function:
    """parallel_for(fn, ctx, total, grain): fn(ctx, lo, hi) over [0, total) on all threads."""
    # The task parameter is typed so llvmlite can call through it (it prints as a pointer).
    fn = ir.Function(pool.m, ir.FunctionType(VOID, [ir.PointerType(pool.task_ty), PTR, I64,
                                                    I64]), name="redraft_parallel_for")
    task, ctx, total, grain = fn.args
    blocks = {n: fn.append_basic_block(n) for n in (
        "entry", "try", "plan", "launch", "wake", "work", "wait", "spin", "backoff", "finish",
        "release", "serial")}
    b = ir.IRBuilder(blocks["entry"])
    workers = pool.get(b, pool.workers, I64, "monotonic")
    worth = b.and_(b.icmp_signed(">", workers, i64(0)), b.icmp_signed(">", total, grain))
    b.cbranch(worth, blocks["try"], blocks["serial"])

    b.position_at_end(blocks["try"])
    was_busy = b.atomic_rmw("xchg", pool.busy, i32(1), "acquire")
    b.cbranch(b.icmp_unsigned("==", was_busy, i32(0)), blocks["plan"], blocks["serial"])

    b.position_at_end(blocks["plan"])
    parts = b.mul(b.add(workers, i64(1)), i64(CHUNKS_PER_THREAD))
    per = b.sdiv(b.add(total, b.sub(parts, i64(1))), parts)
    per = b.mul(b.sdiv(b.add(per, b.sub(grain, i64(1))), grain), grain)
    chunks = b.sdiv(b.add(total, b.sub(per, i64(1))), per)
    b.cbranch(b.icmp_signed(">", chunks, i64(1)), blocks["launch"], blocks["release"])

    b.position_at_end(blocks["launch"])
    job = b.add(pool.get(b, pool.job, I32, "monotonic"), i32(1))
    job_word = b.shl(b.zext(job, I64), i64(32))
    pool.put(b, b.or_(job_word, i64(0xFFFFFFFF)), pool.claim, "seq_cst")
    for g, value in ((pool.fn, b.ptrtoint(task, I64)), (pool.ctx, b.ptrtoint(ctx, I64)),
                     (pool.total, total), (pool.per, per),
                     (pool.chunks, chunks), (pool.pending, chunks)):
        pool.put(b, value, g, "monotonic")
    pool.put(b, job_word, pool.claim, "release")
    pool.put(b, job, pool.job, "seq_cst")
    sleepers = pool.get(b, pool.sleeping, I32, "seq_cst")
    b.cbranch(b.icmp_signed(">", sleepers, i32(0)), blocks["wake"], blocks["work"])

    b.position_at_end(blocks["wake"])
    b.call(pool.syscall, [i64(_SYS_FUTEX), pool.job, i64(_FUTEX_WAKE), i64(MAX_WORKERS)])
    b.branch(blocks["work"])

    b.position_at_end(blocks["work"])
    b.call(run_chunks, [job])
    b.branch(blocks["wait"])

    b.position_at_end(blocks["wait"])
    spins = b.phi(I64)
    spins.add_incoming(i64(0), blocks["work"])
    left = pool.get(b, pool.pending, I64, "acquire")
    b.cbranch(b.icmp_signed(">", left, i64(0)), blocks["spin"], blocks["finish"])

    b.position_at_end(blocks["spin"])
    _spin_pause(pool, b)
    spins.add_incoming(b.add(spins, i64(1)), blocks["spin"])
    b.cbranch(b.icmp_signed(">", spins, i64(WAITER_SPINS)), blocks["backoff"], blocks["wait"])

    b.position_at_end(blocks["backoff"])
    b.call(pool.sched_yield, [])
    b.branch(blocks["wait"])
    spins.add_incoming(spins, blocks["backoff"])

    b.position_at_end(blocks["finish"])
    pool.put(b, i32(0), pool.busy, "release")
    b.ret_void()

    b.position_at_end(blocks["release"])
    pool.put(b, i32(0), pool.busy, "release")
    b.branch(blocks["serial"])

    b.position_at_end(blocks["serial"])
    b.call(task, [ctx, i64(0), total])
    b.ret_void()
    return fn


def _emit_worker(pool: _Pool, run_chunks: ir.Function) -> ir.Function:
    """worker(arg): forever wait for a new job number, then help run its chunks."""
    fn = ir.Function(pool.m, ir.FunctionType(PTR, [PTR]), name="rd_worker")
    fn.linkage = "internal"
    blocks = {n: fn.append_basic_block(n) for n in (
        "entry", "outer", "spin", "pause", "sleep", "wait", "woken", "work")}
    b = ir.IRBuilder(blocks["entry"])
    seen_slot = b.alloca(I32)
    b.store(pool.get(b, pool.job, I32, "acquire"), seen_slot)
    b.branch(blocks["outer"])

    b.position_at_end(blocks["outer"])
    start = b.call(pool.ticks, [])
    b.branch(blocks["spin"])

    b.position_at_end(blocks["spin"])
    seen = b.load(seen_slot, typ=I32)
    current = pool.get(b, pool.job, I32, "acquire")
    b.cbranch(b.icmp_unsigned("!=", current, seen), blocks["work"], blocks["pause"])

    b.position_at_end(blocks["pause"])
    _spin_pause(pool, b)
    spent = b.sub(b.call(pool.ticks, []), start)
    b.cbranch(b.icmp_unsigned("<", spent, i64(WORKER_SPIN_TICKS)), blocks["spin"],
              blocks["sleep"])

    b.position_at_end(blocks["sleep"])
    b.atomic_rmw("add", pool.sleeping, i32(1), "seq_cst")
    again = pool.get(b, pool.job, I32, "seq_cst")
    b.cbranch(b.icmp_unsigned("==", again, seen), blocks["wait"], blocks["woken"])

    b.position_at_end(blocks["wait"])
    b.call(pool.syscall, [i64(_SYS_FUTEX), pool.job, i64(_FUTEX_WAIT), b.zext(seen, I64),
                          ir.Constant(PTR, None), ir.Constant(PTR, None), i64(0)])
    b.branch(blocks["woken"])

    b.position_at_end(blocks["woken"])
    b.atomic_rmw("sub", pool.sleeping, i32(1), "seq_cst")
    b.branch(blocks["outer"])

    b.position_at_end(blocks["work"])
    b.store(current, seen_slot)
    b.call(run_chunks, [current])
    b.branch(blocks["outer"])
    return fn


def _emit_start(pool: _Pool, worker: ir.Function) -> None:
    """pool_start(n): start n worker threads; returns how many started."""
    fn = ir.Function(pool.m, ir.FunctionType(I64, [I64]), name="redraft_pool_start")
    create = declare(pool.m, "pthread_create", I32, [PTR, PTR, PTR, PTR])
    wanted = fn.args[0]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    loop = fn.append_basic_block("loop")
    make = fn.append_basic_block("make")
    done = fn.append_basic_block("done")
    limit = b.select(b.icmp_signed("<", wanted, i64(MAX_WORKERS)), wanted, i64(MAX_WORKERS))
    entry = b.block
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I64)
    k.add_incoming(i64(0), entry)
    b.cbranch(b.icmp_signed("<", k, limit), make, done)
    b.position_at_end(make)
    handle = b.gep(pool.handles, [i64(0), k], inbounds=True)
    status = b.call(create, [handle, ir.Constant(PTR, None), worker, ir.Constant(PTR, None)])
    k.add_incoming(b.add(k, i64(1)), make)
    b.cbranch(b.icmp_unsigned("==", status, i32(0)), loop, done)
    b.position_at_end(done)
    started = b.phi(I64)
    started.add_incoming(k, loop)
    started.add_incoming(k, make)
    pool.put(b, started, pool.workers, "seq_cst")
    b.ret(started)
