"""The SSA IR: typed values, equations on lax primitives, structured control-flow regions.

Grammar (what `print_function` writes; jaxpr-like):

    function  ::= { lambda NAME ; param* . let eqn* in ( atom* ) }
    param     ::= %ID:TYPE                         TYPE: f32[3,4], i32[], bool[2]
    eqn       ::= out* = PRIM[param=value, ...] atom*  region*
    region    ::= { param* . eqn* yield atom* }    (a block: parameters, body, results)
    atom      ::= %ID | LITERAL:TYPE

Control flow is structured, with regions that may read values of enclosing blocks:

    cond      outs = cond pred { . then... yield } { . else... yield }
    while     outs = while init* { carried* . cond... yield pred } { carried* . body... yield }
    for       outs = for lo hi init* { i carried* . body... yield carried* }    (step 1)

Invariants (checked by verify.py): every value is defined exactly once, before use, in its
block or an enclosing one; each equation's output types are what its primitive's
abstract_eval rule gives for its input types; region parameter and result types match.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from redraft.compiler.core.abstract import ShapedArray
from redraft.compiler.primitives.base import Primitive, WeakRule

_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Value:
    """An SSA value: one definition, a type. Identity is the object."""
    aval: ShapedArray
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"%{self.id}:{self.aval.str_short()}"


@dataclass(frozen=True, eq=False)
class Literal:
    """A constant operand: a small NumPy array of the given type."""
    value: np.ndarray
    aval: ShapedArray

    def __repr__(self) -> str:
        return f"{_literal_text(self.value)}:{self.aval.str_short()}"


def _literal_text(v: np.ndarray) -> str:
    if v.ndim == 0:
        item = v.item()
        return repr(item) if not isinstance(item, float) else f"{item!r}"
    if v.size <= 4:
        return np.array2string(v, separator=",").replace(" ", "")
    return f"<{v.dtype.name}{list(v.shape)}>"


Atom = Union[Value, Literal]


@dataclass
class Block:
    """A region: parameters, equations, results."""
    params: list[Value]
    eqns: list["Eqn"]
    results: list[Atom]


@dataclass
class Eqn:
    prim: Primitive
    ins: list[Atom]
    outs: list[Value]
    params: dict[str, Any] = field(default_factory=dict)
    regions: list[Block] = field(default_factory=list)
    origin: tuple[str, int] | None = None


@dataclass
class Function:
    name: str
    body: Block
    meta: dict = field(default_factory=dict)

    @property
    def params(self) -> list[Value]:
        return self.body.params

    @property
    def results(self) -> list[Atom]:
        return self.body.results

    def __str__(self) -> str:
        from redraft.compiler.ir.printer import print_function
        return print_function(self)


# ---- IR-level primitives: control flow and effects -----------------------------------------

cond_p = Primitive("cond", "control", WeakRule.NEVER, multiple_results=True)
while_p = Primitive("while", "control", WeakRule.NEVER, multiple_results=True)
for_p = Primitive("for", "control", WeakRule.NEVER, multiple_results=True)
print_p = Primitive("debug_print", "effects", WeakRule.NEVER, multiple_results=True)

# A loop nest made by the fusion pass: `outs = fused[shape=S, kind=K] ins { params . body }`.
# The region's params correspond one to one to `ins`; its body holds only elementwise
# primitives (and, for kind="reduce", one trailing reduction per output over `axes`), and
# computes one element at a time over the iteration space `shape`: operands whose shape
# differs from `shape` are broadcast NumPy-style. Backends emit it as ONE pass over memory.
fused_p = Primitive("fused", "control", WeakRule.NEVER, multiple_results=True)

CONTROL_PRIMITIVES = (cond_p, while_p, for_p, fused_p)
EFFECT_PRIMITIVES = (print_p,)


def walk_eqns(block: Block):
    """Every equation of `block`, nested regions included, in order."""
    for eqn in block.eqns:
        yield eqn
        for region in eqn.regions:
            yield from walk_eqns(region)


def literal(value, dtype=None, weak: bool = False) -> Literal:
    arr = np.asarray(value, dtype=dtype)
    return Literal(arr, ShapedArray(arr.shape, arr.dtype, weak))
