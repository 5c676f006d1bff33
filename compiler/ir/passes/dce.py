"""Dead-code elimination: drop the equations whose results nothing needs."""
from __future__ import annotations

from dataclasses import replace

from redraft.compiler.ir.passes.common import has_effects
from redraft.compiler.ir.ssa import Block, Function, Value


def dce(fn: Function) -> Function:
    """Remove equations none of whose results are used, in every block.

    Expects verified IR. Guarantees: an equation survives iff it has effects (debug_print,
    or control flow containing one) or one of its results is read later in its block, by a
    nested region, or by the block's results. Regions are cleaned too, from their results
    backwards; their parameters and results are kept as they are (an unused carried value
    of a loop stays, so loop signatures never change). A loop or branch none of whose
    results is used and which has no effects is removed whole.
    """
    body, _ = _block(fn.body)
    return Function(fn.name, body, dict(fn.meta))


def _block(block: Block) -> tuple[Block, set[int]]:
    """The cleaned block and the ids of the values it reads (its own included)."""
    live = {a.id for a in block.results if isinstance(a, Value)}
    kept = []
    for eqn in reversed(block.eqns):
        if not has_effects(eqn) and not any(v.id in live for v in eqn.outs):
            continue
        if eqn.regions:
            cleaned = [_block(r) for r in eqn.regions]
            eqn = replace(eqn, regions=[r for r, _ in cleaned])
            for _, used in cleaned:
                live |= used
        live.update(a.id for a in eqn.ins if isinstance(a, Value))
        kept.append(eqn)
    kept.reverse()
    return Block(block.params, kept, block.results), live

