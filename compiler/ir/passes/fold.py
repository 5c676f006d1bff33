"""Constant folding: evaluate at compile time what depends only on literals, and drop the
algebraic identities that are exact for every input."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from redraft.compiler.ir.passes.common import has_effects, resolve, substitute, visible_params
from redraft.compiler.ir.ssa import CONTROL_PRIMITIVES, Atom, Block, Eqn, Function, Literal, Value
from redraft.compiler.primitives.elementwise import convert_element_type_p, mul_p
from redraft.runtime.eager import impl_rules

MAX_FOLD_ELEMENTS = 100_000  # a larger result is computed at run time, not stored in the IR
MAX_GROWN_ELEMENTS = 1_024  # a result larger than its operands (a broadcast, an iota) is
#                             folded only up to this size: computing it is cheaper than storing


def fold(fn: Function) -> Function:
    """Constant folding and exact identities, in every block.

    Expects verified IR. Guarantees: an equation that is neither control flow nor effectful,
    whose operands are all literals and whose results are small (MAX_FOLD_ELEMENTS, or
    MAX_GROWN_ELEMENTS when they outgrow the operands), is replaced by literal results
    computed by its `impl` rule (an equation whose rule raises is kept, so the error happens
    at run time); `mul x 1` (not complex: inf*(1+0j) has a NaN part) and
    `convert_element_type` to x's own type are replaced by x when the type (weak type
    included) is unchanged. Every other equation and every value's type is unchanged.
    """
    return Function(fn.name, _block(fn.body, {}), dict(fn.meta))


def _block(block: Block, subst: dict[int, Atom]) -> Block:
    eqns = []
    for eqn in block.eqns:
        eqn = substitute(eqn, subst)
        if eqn.regions:
            eqn = replace(eqn, regions=[_block(r, subst) for r in eqn.regions])
        replacement = _constant(eqn)
        if replacement is None:
            replacement = _identity(eqn)
        if replacement is None:
            eqns.append(eqn)
        else:
            subst.update((v.id, r) for v, r in zip(eqn.outs, replacement))
    return Block(block.params, eqns, [resolve(a, subst) for a in block.results])


def _constant(eqn: Eqn) -> list[Literal] | None:
    """The literal results of `eqn` if it can and should be evaluated now."""
    if eqn.prim in CONTROL_PRIMITIVES or has_effects(eqn) or eqn.prim not in impl_rules:
        return None
    if not all(isinstance(a, Literal) for a in eqn.ins) or not _small(eqn):
        return None
    try:
        with np.errstate(all="ignore"):
            result = impl_rules[eqn.prim](*(a.value for a in eqn.ins), **visible_params(eqn))
    except Exception:  # noqa: BLE001 - the error belongs to run time, where it is reported
        return None
    results = list(result) if eqn.prim.multiple_results else [result]
    literals = [_literal(r, v) for r, v in zip(results, eqn.outs)]
    if len(results) != len(eqn.outs) or any(lit is None for lit in literals):
        return None
    return literals


def _small(eqn: Eqn) -> bool:
    out_size = sum(v.aval.size for v in eqn.outs)
    in_size = sum(a.aval.size for a in eqn.ins)
    return out_size <= MAX_FOLD_ELEMENTS and (out_size <= in_size
                                              or out_size <= MAX_GROWN_ELEMENTS)


def _literal(result, out: Value) -> Literal | None:
    value = np.asarray(result, dtype=out.aval.dtype)
    if value.shape != out.aval.shape:
        return None
    return Literal(value, out.aval)


def _identity(eqn: Eqn) -> list[Atom] | None:
    """[x] when `eqn` is `mul x 1` or a conversion of x to its own type."""
    if eqn.prim is mul_p:
        x = _other_operand_if_one(eqn.ins)
    elif eqn.prim is convert_element_type_p:
        x = eqn.ins[0]
    else:
        return None
    if x is None or x.aval != eqn.outs[0].aval:
        return None
    return [x]


def _other_operand_if_one(ins: list[Atom]) -> Atom | None:
    for k, a in enumerate(ins):
        other = ins[1 - k]
        if (isinstance(a, Literal) and a.value.dtype.kind in "biuf"
                and other.aval.dtype.kind in "biuf" and np.all(a.value == 1)):
            return other
    return None
