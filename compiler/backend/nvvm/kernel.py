"""A kernel as the GPU runs it, emitted for two targets from one description.

A kernel is a list of nodes: a `Phase` is code that every thread of a block runs (a
Python function emitting LLVM IR for one thread, given the special registers), and a
`BlockLoop` repeats its nodes with a loop variable that is the same for all threads of the
block. Consecutive phases are separated by a barrier. Values never cross a barrier in
registers: what one phase hands the next goes through shared memory.

    target "nvvm": one `ptx_kernel` function; thread and block indices are the special
                   registers, a barrier is `llvm.nvvm.barrier0`, shared memory is addrspace 3.
    target "host": `name(args..., shared, grid, block)` that loops over the blocks and, in
                   each phase, over the block's threads one after the other (which honours
                   every barrier); shared memory is a buffer the launcher passes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir

from redraft.compiler.backend.llvm.types import I32, I64, VOID, i64, memory_type

SHARED_ALIGN = 16


@dataclass
class Thread:
    """What a phase's code sees: the builder, the thread's registers, the kernel's
    arguments (typed pointers) and shared arrays, and the enclosing block-loop variables."""
    b: ir.IRBuilder
    target: str
    tid: ir.Value
    ntid: ir.Value
    bid: ir.Value
    nbid: ir.Value
    args: list[ir.Value]
    shared: dict[str, ir.Value]
    loop_vars: list[ir.Value]


PhaseFn = Callable[[Thread], None]


@dataclass
class Phase:
    emit: PhaseFn


@dataclass
class BlockLoop:
    """`for v in range(start, count, step)`, uniform across the block; start/step are
    "block" (the block index and the grid size: a grid-stride loop over work items) or 0/1."""
    count: int
    body: list
    grid_stride: bool = False


@dataclass
class Kernel:
    name: str
    arg_dtypes: list[np.dtype]
    body: list
    block: int                       # threads per block (1-D)
    grid: int                        # blocks
    shared: list[tuple[str, np.dtype, int]] = field(default_factory=list)
    slots: list = field(default_factory=list)   # the buffers behind the arguments

    @property
    def shared_bytes(self) -> int:
        return sum(_round_up(n * np.dtype(d).itemsize) for _, d, n in self.shared)


def _round_up(n: int) -> int:
    return -(-n // SHARED_ALIGN) * SHARED_ALIGN


def counted_loop(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: ir.Value,
                 body: Callable[[ir.Value], None], name: str = "i") -> None:
    """`for i = start; i < stop; i += step: body(i)` over i64, signed compare."""
    pre = b.block
    head = b.append_basic_block(f"{name}.head")
    loop = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name=name)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", i, stop), loop, done)
    b.position_at_end(loop)
    body(i)
    nxt = b.add(i, step)
    i.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(done)


def pointer(dtype: np.dtype, addrspace: int = 0) -> ir.PointerType:
    return ir.PointerType(memory_type(np.dtype(dtype)), addrspace)


# ---- the two targets --------------------------------------------------------------------------

def emit_nvvm(kernel: Kernel, module: ir.Module) -> ir.Function:
    """The kernel as an NVVM `ptx_kernel` in `module` (typed pointers)."""
    fn = ir.Function(module, ir.FunctionType(VOID, [pointer(d) for d in kernel.arg_dtypes]),
                     name=kernel.name)
    for arg in fn.args:  # one argument per buffer, and a kernel writes only fresh ones
        arg.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def sreg(name: str) -> ir.Value:
        full = f"llvm.nvvm.read.ptx.sreg.{name}"
        f = module.globals.get(full) or ir.Function(module, ir.FunctionType(I32, []), full)
        return b.zext(b.call(f, []), I64)

    shared = {}
    for name, dtype, n in kernel.shared:
        elem = memory_type(np.dtype(dtype))
        g = ir.GlobalVariable(module, ir.ArrayType(elem, n), f"{kernel.name}_{name}",
                              addrspace=3)
        g.linkage = "internal"
        g.align = SHARED_ALIGN
        shared[name] = b.gep(g, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    thread = Thread(b, "nvvm", sreg("tid.x"), sreg("ntid.x"), sreg("ctaid.x"),
                    sreg("nctaid.x"), list(fn.args), shared, [])
    barrier_name = "llvm.nvvm.barrier0"
    barrier = module.globals.get(barrier_name) or ir.Function(
        module, ir.FunctionType(VOID, []), barrier_name)

    def nodes(body: list) -> None:
        for node in body:
            if isinstance(node, Phase):
                node.emit(thread)
                if kernel.shared:
                    b.call(barrier, [])
            else:
                _block_loop(b, node, thread, nodes)

    nodes(kernel.body)
    b.ret_void()
    _annotate(module, fn)
    return fn


def emit_host(kernel: Kernel, module: ir.Module) -> ir.Function:
    """The kernel and its launcher for the CPU: `name(args..., i8* shared, i64 grid,
    i64 block)` runs every block, and every phase thread by thread."""
    i8p = ir.PointerType(ir.IntType(8))
    fn = ir.Function(module, ir.FunctionType(
        VOID, [pointer(d) for d in kernel.arg_dtypes] + [i8p, I64, I64]), name=kernel.name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    *args, shared_base, grid, block = fn.args
    shared, offset = {}, 0
    for name, dtype, n in kernel.shared:
        raw = b.gep(shared_base, [i64(offset)])
        shared[name] = b.bitcast(raw, pointer(dtype))
        offset += _round_up(n * np.dtype(dtype).itemsize)

    def per_block(bid: ir.Value) -> None:
        def nodes(body: list, loop_vars: list) -> None:
            for node in body:
                if isinstance(node, Phase):
                    def per_thread(tid, node=node):
                        node.emit(Thread(b, "host", tid, block, bid, grid, list(args), shared,
                                         list(loop_vars)))
                    counted_loop(b, i64(0), block, i64(1), per_thread, "tid")
                else:
                    start = bid if node.grid_stride else i64(0)
                    step = grid if node.grid_stride else i64(1)
                    counted_loop(b, start, i64(node.count), step,
                                 lambda v, node=node: nodes(node.body, loop_vars + [v]), "blk")
        nodes(kernel.body, [])

    counted_loop(b, i64(0), grid, i64(1), per_block, "bid")
    b.ret_void()
    return fn


def _block_loop(b: ir.IRBuilder, node: BlockLoop, thread: Thread, nodes) -> None:
    start = thread.bid if node.grid_stride else i64(0)
    step = thread.nbid if node.grid_stride else i64(1)

    def body(v):
        thread.loop_vars.append(v)
        nodes(node.body)
        thread.loop_vars.pop()
    counted_loop(b, start, i64(node.count), step, body, "blk")


def _annotate(module: ir.Module, fn: ir.Function) -> None:
    """Mark `fn` a kernel (without the mark libNVVM silently emits a device `.func`)."""
    md = module.add_metadata([fn, ir.MetaDataString(module, "kernel"), ir.Constant(I32, 1)])
    module.add_named_metadata("nvvm.annotations", md)


def nvvm_module(name: str) -> ir.Module:
    """An empty module with the triple, data layout and IR version libNVVM wants."""
    from . import libnvvm
    module = ir.Module(name=name)
    module.triple = "nvptx64-nvidia-cuda"
    module.data_layout = ("e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"
                          "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-"
                          "v128:128:128-n16:32:64")
    try:
        major, minor = libnvvm.ir_version()[:2]
    except libnvvm.NvvmError:
        major, minor = 2, 0
    module.add_named_metadata("nvvmir.version", [ir.Constant(I32, major),
                                                 ir.Constant(I32, minor)])
    return module


__all__ = ["BlockLoop", "Kernel", "Phase", "Thread", "counted_loop", "emit_host",
           "emit_nvvm", "nvvm_module", "pointer"]
