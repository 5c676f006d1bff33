"""What the passes share: substituting values, the values a region reads, effects, and the
primitive classes (elementwise, reductions) that fusion and buffer reuse reason about."""
from __future__ import annotations

from dataclasses import replace

from redraft.compiler.ir.ssa import EFFECT_PRIMITIVES, Atom, Block, Eqn, Value, fused_p, walk_eqns
from redraft.compiler.primitives import reductions

REDUCTIONS = reductions.FUSIBLE_REDUCTIONS


def is_elementwise(prim) -> bool:
    """Primitives that compute each output element from the same element of each operand
    (operands broadcast NumPy-style): the family declared in primitives/elementwise.py."""
    return prim.family == "elementwise"


def is_fused(eqn: Eqn) -> bool:
    return eqn.prim is fused_p


def _effectful(eqn: Eqn) -> bool:
    # a collective exchanges values with the other devices when it runs: never folded at
    # compile time, merged or dropped (every device must make the same calls)
    return eqn.prim in EFFECT_PRIMITIVES or eqn.prim.family == "collectives"


def has_effects(eqn: Eqn) -> bool:
    """True for effectful equations and for control flow whose regions hold one."""
    if _effectful(eqn):
        return True
    return any(_effectful(e) for r in eqn.regions for e in walk_eqns(r))


def resolve(a: Atom, subst: dict[int, Atom]) -> Atom:
    """`a` after the replacements in `subst` (value id -> atom), followed to the end."""
    while isinstance(a, Value) and a.id in subst:
        a = subst[a.id]
    return a


def substitute(eqn: Eqn, subst: dict[int, Atom]) -> Eqn:
    """`eqn` with its operands replaced (its regions are left to the caller)."""
    if not subst:
        return eqn
    return replace(eqn, ins=[resolve(a, subst) for a in eqn.ins])


def region_reads(block: Block) -> set[int]:
    """Ids of every value that `block` (nested regions included) reads, its own ones too."""
    ids = {a.id for a in block.results if isinstance(a, Value)}
    for eqn in walk_eqns(block):
        ids.update(a.id for a in eqn.ins if isinstance(a, Value))
    for eqn in walk_eqns(block):
        for region in eqn.regions:
            ids.update(a.id for a in region.results if isinstance(a, Value))
    return ids


def reads(eqn: Eqn) -> set[int]:
    """Ids of the values `eqn` reads: its operands and whatever its regions read."""
    ids = {a.id for a in eqn.ins if isinstance(a, Value)}
    for region in eqn.regions:
        ids |= region_reads(region)
    return ids


def visible_params(eqn: Eqn) -> dict:
    """The parameters that define what `eqn` computes (underscored ones are annotations)."""
    return {k: v for k, v in eqn.params.items() if not k.startswith("_")}
