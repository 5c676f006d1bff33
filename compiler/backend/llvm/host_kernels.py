"""The factorisations, the fft and sorting as calls into the host kernels
(kernels/host_calls.py), and every equation no lowering computes as a call into the
reference interpreter for it alone.

Each equation becomes one call `redraft_host_kernel(site, pointers)`: operands are passed
where they are (a strided view of an argument, a workspace slice, a constant), results are
written straight into their destination buffers. Only pointers and byte geometry cross the
call, so complex operands and results (the fft's) are handled here although the elementwise
lowering does not compute with complex numbers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from redraft.compiler.backend import interpret
from redraft.compiler.ir.ssa import Eqn, fused_p
from redraft.compiler.primitives.factorizations import FACTORIZATIONS
from redraft.compiler.primitives.fft import fft_p
from redraft.compiler.primitives.reductions import argsort_p, sort_p
from redraft.kernels.host_calls import SYMBOL, BufferSpec, KernelSite, register
from redraft.runtime.eager import impl_rules

from .module import ON_HOST, FunctionLowering, lowering
from .types import I64, PTR, VOID, Unsupported, declare, i64
from .views import View

# sort and argsort run NumPy's stable sort, as eager mode does (the same order for equal
# keys, NaN last); a call costs a few microseconds next to the O(n log n) sort.
HOST_KERNEL_PRIMITIVES = tuple(p.name for p in FACTORIZATIONS) + (
    fft_p.name, sort_p.name, argsort_p.name)


def _spec(view: View) -> BufferSpec:
    const = None if view.const is None else view.const.item()
    return BufferSpec(np.dtype(view.dtype), tuple(view.shape), tuple(view.strides),
                      int(view.offset), const)


@lowering(*HOST_KERNEL_PRIMITIVES, complex_ok=True)
def lower_host_kernel(L: FunctionLowering, eqn: Eqn) -> None:
    params = tuple(sorted((k, v) for k, v in eqn.params.items() if not k.startswith("_")))
    _call_kernel(L, eqn, impl_rules[eqn.prim], params, eqn.prim.multiple_results)


def lower_on_host(L: FunctionLowering, eqn: Eqn) -> None:
    """An equation no lowering computes, run by the reference interpreter at run time on
    the buffers where its operands are (a fused equation: its whole region, in NumPy)."""
    if eqn.regions and eqn.prim is not fused_p:
        raise Unsupported(f"{eqn.prim.name} with a region that runs on the host")
    _call_kernel(L, eqn, _Interpreted(eqn), (), True)


ON_HOST.append(lower_on_host)


@dataclass(frozen=True, eq=False)
class _Interpreted:
    """A host kernel that runs one equation with the reference interpreter."""
    eqn: Eqn

    def __call__(self, *operands):
        return interpret.run_eqn(self.eqn, list(operands))


def _call_kernel(L: FunctionLowering, eqn: Eqn, kernel, params: tuple,
                 multiple_results: bool) -> None:
    """One call of host kernel `kernel` on the equation's operands, writing its results."""
    operands = [L.read(a) for a in eqn.ins]
    results = []
    for v in eqn.outs:
        dest = L.dest(v)
        L.views[v.id] = dest
        results.append(dest)
    site = KernelSite(kernel, params, tuple(_spec(v) for v in operands),
                      tuple(_spec(v) for v in results), multiple_results)
    key = register(site)
    bases = [v.base for v in operands + results]
    b = L.b
    ctx = L.cx.entry_alloca(PTR, max(len(bases), 1), name="kernel.ctx")
    for k, base in enumerate(bases):
        b.store(base if base is not None else ir.Constant(PTR, None),
                b.gep(ctx, [i64(k)], source_etype=PTR))
    callback = declare(L.module, SYMBOL, VOID, [I64, PTR])
    b.call(callback, [i64(key), ctx])
