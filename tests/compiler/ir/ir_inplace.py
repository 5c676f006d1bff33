"""A test interpreter that honours the buffer-reuse annotations the way an in-place backend
would: a donated operand's buffer receives the result (np.copyto), loops own the carries
they write, and nothing is copied otherwise (loop carries and branch results share buffers,
shape primitives return NumPy views where NumPy makes them, as the LLVM backend's strided
views do). If the analysis marked a buffer that is still needed, results or the caller's
arrays change.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.ir.passes.reuse import VIEW_PRIMITIVES
from redraft.compiler.ir.ssa import Block, Function, Literal, cond_p, for_p, fused_p, while_p
from redraft.runtime.eager import impl_rules


def run_in_place(fn: Function, args: list[np.ndarray]) -> list[np.ndarray]:
    return _block(fn.body, list(args), {})


def _read(a, env):
    return a.value if isinstance(a, Literal) else env[a.id]


def _block(block: Block, params: list, env: dict) -> list:
    for p, v in zip(block.params, params):
        env[p.id] = v
    for eqn in block.eqns:
        ins = [_read(a, env) for a in eqn.ins]
        if eqn.prim is cond_p:
            outs = _block(eqn.regions[0] if bool(ins[0]) else eqn.regions[1], [], env)
        elif eqn.prim is for_p:
            outs = _own_carries(eqn, ins[2:], 2)
            for i in range(int(ins[0]), int(ins[1])):
                outs = _block(eqn.regions[0], [np.asarray(i, np.int32)] + outs, env)
        elif eqn.prim is while_p:
            outs = _own_carries(eqn, ins, 0)
            while bool(_block(eqn.regions[0], outs, env)[0]):
                outs = _block(eqn.regions[1], outs, env)
        else:
            outs = _fresh(eqn, ins, env)
            for p, j in zip(eqn.params.get("_donate", ()), eqn.params.get("_donate_into", ())):
                np.copyto(ins[p], outs[j])
                outs[j] = ins[p]
        for v, o in zip(eqn.outs, outs):
            env[v.id] = o
    return [_read(r, env) for r in block.results]


def _own_carries(eqn, inits: list, first: int) -> list:
    """The loop's carries: a copy of each written one unless its init was donated."""
    donated = {p - first for p in eqn.params.get("_donate", ())}
    return [np.array(v) if j in eqn.params.get("_writes_carry", ()) and j not in donated
            else v for j, v in enumerate(inits)]


def _fresh(eqn, ins, env) -> list:
    """The equation's results in new buffers."""
    if eqn.prim is fused_p:
        outs = _block(eqn.regions[0], ins, env)
    elif not eqn.outs:  # debug_print: not what this interpreter checks
        return []
    else:
        params = {k: v for k, v in eqn.params.items() if not k.startswith("_")}
        result = impl_rules[eqn.prim](*ins, **params)
        outs = list(result) if eqn.prim.multiple_results else [result]
        if eqn.prim in VIEW_PRIMITIVES:
            return [np.asarray(o) for o in outs]
    return [np.array(o, dtype=v.aval.dtype) for o, v in zip(outs, eqn.outs)]
