"""Check the SSA IR's invariants (ssa.py): single definitions, definitions before uses
(in the same block or an enclosing one), types as the primitives' rules give them."""
from __future__ import annotations

from redraft.compiler.core.abstract import abstract_eval_rules
from redraft.compiler.ir.ssa import (CONTROL_PRIMITIVES, EFFECT_PRIMITIVES, Block, Function,
                                     Literal, Value, fused_p, walk_eqns)
from redraft.compiler.primitives.reductions import FUSIBLE_REDUCTIONS


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
        if eqn.prim is fused_p:
            _check_fused(eqn, here)
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


# ---- fused loop nests (the contract in ssa.py) -----------------------------------------------

_REDUCTIONS = frozenset(p.name for p in FUSIBLE_REDUCTIONS)


def _check_fused(eqn, where: str) -> None:
    """One closed region whose parameters match the operands and whose results match the
    outputs; elementwise work over `shape`, and for kind="reduce" trailing reductions over
    `axes` that give every output."""
    if len(eqn.regions) != 1:
        raise IRVerificationError(f"{where}: fused needs one region, has {len(eqn.regions)}")
    region = eqn.regions[0]
    _check_same_types(eqn.ins, region.params, where, "operands", "region parameters")
    _check_same_types(region.results, eqn.outs, where, "region results", "outputs")
    inner = {p.id for p in region.params} | {v.id for e in region.eqns for v in e.outs}
    for e in walk_eqns(region):
        if any(isinstance(a, Value) and a.id not in inner for a in e.ins):
            raise IRVerificationError(f"{where}: fused region reads a value it does not "
                                      "define (its region must be closed)")
    kind = eqn.params.get("kind")
    if kind == "elementwise":
        _check_elementwise_body(region, eqn.params["shape"], where)
    elif kind == "reduce":
        _check_reduce_body(region, eqn.params["shape"], eqn.params["axes"], where)
    else:
        raise IRVerificationError(f"{where}: fused kind {kind!r} is not elementwise or reduce")


def _check_same_types(atoms, values, where: str, what: str, against: str) -> None:
    if len(atoms) != len(values):
        raise IRVerificationError(f"{where}: {len(atoms)} {what} but {len(values)} {against}")
    for a, v in zip(atoms, values):
        if a.aval.shape != v.aval.shape or a.aval.dtype != v.aval.dtype:
            raise IRVerificationError(f"{where}: {what} type {a.aval.str_short()} does not "
                                      f"match {against} type {v.aval.str_short()}")


def _check_elementwise_body(region: Block, shape, where: str, eqns=None) -> None:
    for e in region.eqns if eqns is None else eqns:
        if e.prim.family != "elementwise" or e.regions:
            raise IRVerificationError(f"{where}: fused body holds {e.prim.name}, which is "
                                      "not elementwise")
        if tuple(e.outs[0].aval.shape) != tuple(shape):
            raise IRVerificationError(f"{where}: fused body computes {e.prim.name} over "
                                      f"{e.outs[0].aval.shape}, not the shape {shape}")


def _check_reduce_body(region: Block, shape, axes, where: str) -> None:
    n = len(region.eqns) - len(region.results)
    _check_elementwise_body(region, shape, where, region.eqns[:n])
    tail = region.eqns[n:]
    if [v for e in tail for v in e.outs] != list(region.results):
        raise IRVerificationError(f"{where}: a reduce fused body must end with one reduction "
                                  "per output, in output order")
    for e in tail:
        if e.prim.name not in _REDUCTIONS or tuple(e.ins[0].aval.shape) != tuple(shape):
            raise IRVerificationError(f"{where}: fused reduce ends with {e.prim.name} over "
                                      f"{e.ins[0].aval.shape}, not a reduction over {shape}")
        if tuple(e.params.get("axes", ())) != tuple(axes):
            raise IRVerificationError(f"{where}: reduction axes {e.params.get('axes')} differ "
                                      f"from the fused axes {axes}")
