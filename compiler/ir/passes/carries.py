"""Dead loop carries: a for or while loop stops carrying a value that nothing after the loop
reads and that the loop reads only to compute that same value.

A scan whose stacked outputs go unused (`h, _ = lax.scan(...)`) still writes them into a
buffer every iteration, and the loop copies that buffer's initial value in first; dce keeps
carried values (it never changes a loop's signature), so this pass drops them.
"""
from __future__ import annotations

from dataclasses import replace

from redraft.compiler.ir.passes.common import region_reads
from redraft.compiler.ir.passes.dce import dce
from redraft.compiler.ir.ssa import Block, Eqn, Function, Value, for_p, while_p


def drop_dead_carries(fn: Function) -> Function:
    """`fn` with its loops' dead carried values removed (then dead code cleaned).

    Expects verified IR. A carried value j of a loop is dropped when the loop's result j is
    read by nothing after it in its block (nor by the block's results), and neither the
    body's other results, its effects, nor (for while) the condition read parameter j.
    """
    body, changed = _block(fn.body)
    out = Function(fn.name, body, dict(fn.meta))
    return dce(out) if changed else out


def _block(block: Block) -> tuple[Block, bool]:
    live = {a.id for a in block.results if isinstance(a, Value)}
    kept, changed = [], False
    for eqn in reversed(block.eqns):
        if eqn.prim in (for_p, while_p):
            dropped = _without_dead_carries(eqn, live)
            changed |= dropped is not eqn
            eqn = dropped
        if eqn.regions:
            cleaned = [_block(r) for r in eqn.regions]
            if any(c for _, c in cleaned):
                eqn = replace(eqn, regions=[r for r, _ in cleaned])
                changed = True
        live.update(a.id for a in eqn.ins if isinstance(a, Value))
        for region in eqn.regions:
            live |= region_reads(region)
        kept.append(eqn)
    kept.reverse()
    return (Block(block.params, kept, block.results), True) if changed else (block, False)


def _without_dead_carries(eqn: Eqn, live: set[int]) -> Eqn:
    while True:
        dead = next((j for j, v in enumerate(eqn.outs)
                     if v.id not in live and _only_feeds_itself(eqn, j)), None)
        if dead is None:
            return eqn
        eqn = _without_carry(eqn, dead)


def _offsets(eqn: Eqn) -> tuple[int, int]:
    """(operands before the carried ones, body parameters before the carried ones)."""
    return (2, 1) if eqn.prim is for_p else (0, 0)


def _only_feeds_itself(eqn: Eqn, j: int) -> bool:
    """Whether nothing but result j of the body (and nothing of the condition) reads
    carried parameter j: its other results and effects are computed without it."""
    _, p0 = _offsets(eqn)
    body = eqn.regions[-1]
    others = [r for k, r in enumerate(body.results) if k != j]
    if body.params[p0 + j].id in _reads_for(Block(body.params, body.eqns, others)):
        return False
    if eqn.prim is while_p:
        cond = eqn.regions[0]
        return cond.params[j].id not in _reads_for(cond)
    return True


def _reads_for(block: Block) -> set[int]:
    """Ids of the values that computing `block`'s results and effects reads."""
    cleaned = dce(Function("region", block)).body
    return region_reads(cleaned)


def _without_carry(eqn: Eqn, j: int) -> Eqn:
    i0, p0 = _offsets(eqn)

    def drop(block: Block, param_at: int, result_at: int | None) -> Block:
        params = [p for k, p in enumerate(block.params) if k != param_at]
        results = [r for k, r in enumerate(block.results) if k != result_at]
        return Block(params, block.eqns, results)

    regions = [drop(eqn.regions[-1], p0 + j, j)]
    if eqn.prim is while_p:
        regions.insert(0, drop(eqn.regions[0], j, None))
    ins = [a for k, a in enumerate(eqn.ins) if k != i0 + j]
    outs = [v for k, v in enumerate(eqn.outs) if k != j]
    return replace(eqn, ins=ins, outs=outs, regions=regions)
