"""Write small IR by hand for unit tests of single passes: `b = IRBuilder(); x = b.param();
y = b.op(exp_p, x); fn = b.function(y)`; types come from the primitives' rules."""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value, literal


class IRBuilder:
    """Equations appended to the innermost open block."""

    def __init__(self, name: str = "f"):
        self.name = name
        self.blocks = [Block([], [], [])]

    def param(self, shape=(4,), dtype=np.float32, weak: bool = False) -> Value:
        v = Value(ShapedArray(tuple(shape), np.dtype(dtype), weak))
        self.blocks[-1].params.append(v)
        return v

    def op(self, prim, *ins, **params):
        """The result (or results) of `prim` on `ins`; Python numbers become f32 literals."""
        ins = [a if isinstance(a, (Value, Literal)) else literal(a, np.float32) for a in ins]
        out = abstract_eval_rules[prim](*(a.aval for a in ins), **params)
        avals = out if isinstance(out, (tuple, list)) else (out,)
        outs = [Value(a) for a in avals]
        self.blocks[-1].eqns.append(Eqn(prim, list(ins), outs, dict(params)))
        return outs if prim.multiple_results else outs[0]

    def emit(self, prim, ins, out_avals, regions, **params) -> list[Value]:
        """A control-flow equation whose result types the caller gives."""
        outs = [Value(a) for a in out_avals]
        self.blocks[-1].eqns.append(Eqn(prim, list(ins), outs, dict(params), list(regions)))
        return outs

    def open(self, *param_avals) -> list[Value]:
        """Open a region; returns its parameters."""
        block = Block([Value(a) for a in param_avals], [], [])
        self.blocks.append(block)
        return list(block.params)

    def close(self, *results) -> Block:
        block = self.blocks.pop()
        block.results = list(results)
        return block

    def function(self, *results) -> Function:
        assert len(self.blocks) == 1, "unclosed region"
        self.blocks[0].results = list(results)
        return Function(self.name, self.blocks[0])


def f32(*shape, weak: bool = False) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(np.float32), weak)


def i32(*shape) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(np.int32))


def prims(fn_or_block) -> list[str]:
    """Names of the primitives of a function's top-level block, in order."""
    block = getattr(fn_or_block, "body", fn_or_block)
    return [e.prim.name for e in block.eqns]
