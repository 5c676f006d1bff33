"""The factorisations, the fft and sorting as calls into the host kernels
(kernels/host_calls.py).

Each equation becomes one call `redraft_host_kernel(site, pointers)`: operands are passed
where they are (a strided view of an argument, a workspace slice, a constant), results are
written straight into their destination buffers. Only pointers and byte geometry cross the
call, so complex operands and results (the fft's) are handled here although the elementwise
lowering does not compute with complex numbers.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from redraft.compiler.ir.ssa import Eqn
from redraft.compiler.primitives.factorizations import FACTORIZATIONS
from redraft.compiler.primitives.fft import fft_p
from redraft.compiler.primitives.reductions import argsort_p, sort_p
from redraft.kernels.host_calls import SYMBOL, BufferSpec, KernelSite, register
from redraft.runtime.eager import impl_rules

from .module import FunctionLowering, lowering
from .types import I64, PTR, VOID, declare, i64
from .views import View

# sort and argsort run NumPy's stable sort, as eager mode does (the same order for equal
# keys, NaN last); a call costs a few microseconds next to the O(n log n) sort.
HOST_KERNEL_PRIMITIVES = tuple(p.name for p in FACTORIZATIONS) + (
    fft_p.name, sort_p.name, argsort_p.name)


def _spec(view: View) -> BufferSpec:
    const = None if view.const is None else view.const.item()
    return BufferSpec(np.dtype(view.dtype), tuple(view.shape), tuple(view.strides),
                      int(view.offset), const)


@lowering(*HOST_KERNEL_PRIMITIVES)
def lower_host_kernel(L: FunctionLowering, eqn: Eqn) -> None:
    operands = [L.read(a) for a in eqn.ins]
    results = []
    for v in eqn.outs:
        dest = L.dest(v)
        L.views[v.id] = dest
        results.append(dest)
    params = tuple(sorted((k, v) for k, v in eqn.params.items() if not k.startswith("_")))
    site = KernelSite(impl_rules[eqn.prim], params, tuple(_spec(v) for v in operands),
                      tuple(_spec(v) for v in results), eqn.prim.multiple_results)
    key = register(site)
    bases = [v.base for v in operands + results]
    b = L.b
    ctx = L.cx.entry_alloca(PTR, max(len(bases), 1), name="kernel.ctx")
    for k, base in enumerate(bases):
        b.store(base if base is not None else ir.Constant(PTR, None),
                b.gep(ctx, [i64(k)], source_etype=PTR))
    callback = declare(L.module, SYMBOL, VOID, [I64, PTR])
    b.call(callback, [i64(key), ctx])
