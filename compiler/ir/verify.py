"""Check the SSA IR's invariants (ssa.py): single definitions, definitions before uses
(in the same block or an enclosing one), types as the primitives' rules give them."""
from __future__ import annotations

from redraft.compiler.core.abstract import abstract_eval_rules
from redraft.compiler.ir.ssa import (CONTROL_PRIMITIVES, EFFECT_PRIMITIVES, Block, Function,
                                     Literal, Value)


class IRVerificationError(AssertionError):
    """The IR breaks an invariant; the message names the equation."""


def verify(fn: Function) -> Function:
    """Raise IRVerificationError if `fn` is malformed; return it otherwise."""
    defined: set[int] = set()
    _block(fn.body, [set()], defined, fn.name)
    return fn


def _use(a, scopes, where: str) -> None:
    if isinstance(a, Literal):
        return
    if not isinstance(a, Value):
        raise IRVerificationError(f"{where}: operand {a!r} is not a Value or Literal")
    if not any(a.id in s for s in scopes):
        raise IRVerificationError(f"{where}: %{a.id} is used before it is defined")


def _define(v: Value, scopes, defined: set[int], where: str) -> None:
    if v.id in defined:
        raise IRVerificationError(f"{where}: %{v.id} is defined twice")
    defined.add(v.id)
    scopes[-1].add(v.id)


def _block(block: Block, scopes, defined, where: str) -> None:
    scopes = scopes + [set()]
    for p in block.params:
        _define(p, scopes, defined, where)
    for k, eqn in enumerate(block.eqns):
        here = f"{where}: equation {k} ({eqn.prim.name})"
        for a in eqn.ins:
            _use(a, scopes, here)
        for region in eqn.regions:
            _block(region, scopes, defined, here)
        _check_types(eqn, here)
        for v in eqn.outs:
            _define(v, scopes, defined, here)
    for a in block.results:
        _use(a, scopes, f"{where}: block results")


def _check_types(eqn, where: str) -> None:
    if eqn.prim in CONTROL_PRIMITIVES or eqn.prim in EFFECT_PRIMITIVES:
        return
    rule = abstract_eval_rules.get(eqn.prim)
    if rule is None:
        raise IRVerificationError(f"{where}: primitive {eqn.prim.name} has no abstract_eval")
    params = {k: v for k, v in eqn.params.items() if not k.startswith("_")}
    out = rule(*(a.aval for a in eqn.ins), **params)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    got = [v.aval for v in eqn.outs]
    for expected, actual in zip(outs, got):
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            raise IRVerificationError(f"{where}: output type {actual.str_short()} but the rule "
                                      f"gives {expected.str_short()}")
    if len(outs) != len(got):
        raise IRVerificationError(f"{where}: {len(got)} outputs, the rule gives {len(outs)}")
