"""The reference backend: run SSA IR equation by equation with the primitives' eager
`impl` rules. Every compiled backend must agree with it; it also runs what they cannot."""
from __future__ import annotations

import numpy as np

from redraft.compiler.ir.ssa import (Block, Eqn, Function, Literal, cond_p, for_p, fused_p,
                                     print_p, while_p)
from redraft.runtime.array import wrap_host
from redraft.runtime.eager import eager_impl


def run(fn: Function, args: list[np.ndarray]) -> list[np.ndarray]:
    """The results of `fn` on host buffers `args`."""
    env: dict[int, np.ndarray] = {}
    return _block(fn.body, list(args), env)


def _read(a, env):
    if isinstance(a, Literal):
        return a.value
    return env[a.id]


def _block(block: Block, params: list, env: dict) -> list:
    for p, v in zip(block.params, params):
        env[p.id] = v
    for eqn in block.eqns:
        _equation(eqn, [_read(a, env) for a in eqn.ins], env)
    return [_read(r, env) for r in block.results]


def run_eqn(eqn: Eqn, ins: list) -> list[np.ndarray]:
    """The results of one equation on host buffers `ins` (a compiled backend calls this
    for an equation it does not compile; the values its regions read from outside come
    in through `ins` only for a fused equation, the one kind it hands over with regions)."""
    return _equation(eqn, list(ins), {})


def _equation(eqn: Eqn, ins: list, env: dict) -> list[np.ndarray]:
    if eqn.prim is cond_p:
        outs = _block(eqn.regions[0] if bool(ins[0]) else eqn.regions[1], [], env)
    elif eqn.prim is while_p:
        outs = ins
        while bool(_block(eqn.regions[0], outs, env)[0]):
            outs = _block(eqn.regions[1], outs, env)
    elif eqn.prim is for_p:
        outs = ins[2:]
        for i in range(int(ins[0]), int(ins[1])):
            outs = _block(eqn.regions[0], [np.asarray(i, np.int32)] + outs, env)
    elif eqn.prim is fused_p:  # whole-array semantics give the same values
        outs = _block(eqn.regions[0], ins, env)
    elif eqn.prim is print_p:
        values = [wrap_host(np.asarray(v), a.aval.weak_type) for v, a in zip(ins, eqn.ins)]
        print(eqn.params["template"].format(*values), end="")
        outs = []
    else:
        params = {k: v for k, v in eqn.params.items() if not k.startswith("_")}
        result = eager_impl(eqn.prim)(*ins, **params)  # eager's code: same bits
        outs = list(result) if eqn.prim.multiple_results else [result]
    outs = [o if type(o) is np.ndarray else np.asarray(o, dtype=v.aval.dtype)
            for v, o in zip(eqn.outs, outs)]
    for v, o in zip(eqn.outs, outs):
        env[v.id] = o
    return outs
