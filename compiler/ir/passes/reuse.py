"""Buffer reuse analysis: where an equation may write its result into an operand's buffer,
so that immutable arrays cost no copies where a value is dead."""
from __future__ import annotations

from dataclasses import dataclass, replace

from redraft.compiler.ir.passes.common import is_elementwise, is_fused, reads, region_reads
from redraft.compiler.ir.ssa import Block, Eqn, Function, Value, cond_p, for_p, while_p
from redraft.compiler.primitives import gather, indexing, shape

# Indexed updates: the result is operand 0 with some elements replaced, so the update can be
# made in place when operand 0 is dead.
IN_PLACE_UPDATES = frozenset({indexing.index_update_p, shape.dynamic_update_slice_p,
                              gather.scatter_p, gather.scatter_add_p, gather.scatter_mul_p,
                              gather.scatter_min_p, gather.scatter_max_p})
# Shape primitives a backend may implement as views of their operand's buffer (strides, no
# copy); the LLVM backend does for these. Their results share the operand's buffer.
VIEW_PRIMITIVES = frozenset({shape.reshape_p, shape.squeeze_p, shape.broadcast_in_dim_p,
                             shape.transpose_p, shape.slice_p, shape.rev_p, shape.dynamic_slice_p,
                             indexing.getitem_p})
ANNOTATIONS = ("_donate", "_donate_into", "_writes_carry")


def reuse(fn: Function) -> Function:
    """Mark, on each equation, the operand buffers its results may be written into.

    Expects verified IR (after fusion: it reads `fused` kinds). Changes no computation; only
    adds parameters that printers and the verifier ignore:
    - `_donate=(p, ...)`, `_donate_into=(j, ...)`: operand p is dead after this equation,
      owned (below), and of result j's shape and dtype, so result j may be written into its
      buffer. Marked only where that is safe: elementwise equations and `fused` ones of kind
      "elementwise" (each element is read before the same element is written), the operand
      of an indexed update (index_update, dynamic_update_slice, scatter*), and a for/while
      initial carried value that the loop may take over as the carry's buffer.
    - `_writes_carry=(j, ...)` on a for/while: the body writes carried value j in place, so
      the loop must give it a buffer of its own at entry (the initial value's if donated to
      the loop, a copy otherwise: one copy per loop, none per iteration).

    The analysis, per block: a value is dead after the last equation of its block that reads
    it or any value that may share its buffer (a view: VIEW_PRIMITIVES; a result of
    cond/for/while, which may be any value the construct reads), counting reads in nested
    regions at the equation holding them, unless the block yields one of them. A value is
    owned when its buffer is its own: results of the other equations and of fused ones,
    results j of a loop with j in `_writes_carry`, and a loop body's carried parameter j
    when the body yields for it a value it owns, defined by one of its equations, yielded
    once. Never owned: function parameters (the caller owns them), values of enclosing
    blocks (a later iteration may read them again), views, cond results and other region
    parameters (they may share a buffer with a live value).
    """
    body = _analyse(fn.body, set()).block
    return Function(fn.name, body, dict(fn.meta))


@dataclass
class _Analysed:
    block: Block
    donated: set[int]  # values of the block whose buffers an equation takes over
    owned: set[int]  # values defined by the block's equations that own their buffers


def _analyse(block: Block, owned_params: set[int]) -> _Analysed:
    analysed = [_with_regions(_clear(eqn)) for eqn in block.eqns]
    last = _last_uses([eqn for eqn, _ in analysed], block.results)
    owned = set(owned_params)
    donated: set[int] = set()
    eqns = []
    for k, (eqn, owned_outs) in enumerate(analysed):
        pairs = _donations(eqn, [p for p, a in enumerate(eqn.ins)
                                 if isinstance(a, Value) and a.id in owned
                                 and last.get(a.id) == k])
        if pairs:
            eqn = replace(eqn, params={**eqn.params, "_donate": tuple(p for p, _ in pairs),
                                       "_donate_into": tuple(j for _, j in pairs)})
            donated.update(eqn.ins[p].id for p, _ in pairs)
        owned.update(v.id for v in owned_outs)
        eqns.append(eqn)
    new = Block(block.params, eqns, block.results)
    return _Analysed(new, donated, owned - owned_params)


def _last_uses(eqns: list[Eqn], results: list) -> dict[int, int]:
    """value id -> index of the last equation reading it or a value sharing its buffer (past
    the end when the block yields one)."""
    last: dict[int, int] = {}
    for k, eqn in enumerate(eqns):
        for i in reads(eqn):
            last[i] = k
    for a in results:
        if isinstance(a, Value):
            last[a.id] = len(eqns)
    for alias, sources in _aliases(eqns).items():
        for i in sources:
            last[i] = max(last.get(i, -1), last.get(alias, -1))
    return last


def _aliases(eqns: list[Eqn]) -> dict[int, set[int]]:
    """value id -> ids of the values in whose buffers it may live (a view of a view: both).
    A loop's written carries live in buffers of the loop's own."""
    aliases: dict[int, set[int]] = {}
    for eqn in eqns:
        if eqn.prim in VIEW_PRIMITIVES and isinstance(eqn.ins[0], Value):
            read = {eqn.ins[0].id}
        elif eqn.prim in (cond_p, for_p, while_p):
            read = reads(eqn)
        else:
            continue
        sources = set().union(*({i} | aliases.get(i, set()) for i in read))
        written = eqn.params.get("_writes_carry", ())
        for j, v in enumerate(eqn.outs):
            if not (eqn.prim in (for_p, while_p) and j in written):
                aliases[v.id] = sources
    return aliases


def _clear(eqn: Eqn) -> Eqn:
    """`eqn` without the annotations of an earlier run."""
    if not any(k in eqn.params for k in ANNOTATIONS):
        return eqn
    return replace(eqn, params={k: v for k, v in eqn.params.items() if k not in ANNOTATIONS})


# ---- regions: loops own the carries they write -----------------------------------------------

def _with_regions(eqn: Eqn) -> tuple[Eqn, list[Value]]:
    """`eqn` with its regions analysed, and which of its results own their buffers."""
    if eqn.prim is for_p:
        body, writes = _loop_body(eqn.regions[0], eqn.regions[0].params[1:])
        return _loop(eqn, [body], writes)
    if eqn.prim is while_p:
        cond = _analyse(eqn.regions[0], set()).block
        body, writes = _loop_body(eqn.regions[1], eqn.regions[1].params)
        return _loop(eqn, [cond, body], writes)
    if eqn.prim is cond_p:
        return replace(eqn, regions=[_analyse(r, set()).block for r in eqn.regions]), []
    assert not eqn.regions or is_fused(eqn), f"unexpected regions in {eqn.prim.name}"
    if eqn.prim in VIEW_PRIMITIVES:
        return eqn, []
    return eqn, list(eqn.outs)  # fresh buffers (fused regions are one loop nest: no reuse)


def _loop(eqn: Eqn, regions: list[Block], writes: list[int]) -> tuple[Eqn, list[Value]]:
    params = dict(eqn.params)
    if writes:
        params["_writes_carry"] = tuple(writes)
    return replace(eqn, regions=regions, params=params), [eqn.outs[j] for j in writes]


def _loop_body(body: Block, carried: list[Value]) -> tuple[Block, list[int]]:
    """The analysed body and the carried slots it writes in place."""
    first = _analyse(body, {p.id for p in carried})
    ownable = _ownable_slots(body, first.owned, len(carried))
    params = {carried[j].id for j in ownable}
    result = first
    if not first.donated & {p.id for p in carried} <= params:
        result = _analyse(body, params)
    return result.block, [j for j in ownable if carried[j].id in result.donated]


def _ownable_slots(body: Block, owned: set[int], n_carried: int) -> list[int]:
    """Slots whose yielded value the body owns, defined by its equations, yielded once."""
    yields = body.results[-n_carried:] if n_carried else []
    ids = [a.id if isinstance(a, Value) else None for a in yields]
    return [j for j, i in enumerate(ids) if i in owned and ids.count(i) == 1]


# ---- which operands each equation may overwrite ---------------------------------------------

def _donations(eqn: Eqn, candidates: list[int]) -> list[tuple[int, int]]:
    """(operand, result) pairs among the `candidates` (owned operands dead after `eqn`)."""
    if not candidates:
        return []
    if is_elementwise(eqn.prim) or (is_fused(eqn) and eqn.params.get("kind") == "elementwise"):
        return _match_types(eqn, candidates)
    if eqn.prim in IN_PLACE_UPDATES:
        return [(0, 0)] if 0 in candidates and _alone(eqn, 0) and _same_type(eqn, 0, 0) else []
    if eqn.prim in (for_p, while_p):
        return _loop_inits(eqn, candidates)
    return []


def _match_types(eqn: Eqn, candidates: list[int]) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for j in range(len(eqn.outs)):
        for p in candidates:
            if eqn.ins[p].id not in taken and _same_type(eqn, p, j):
                pairs.append((p, j))
                taken.add(eqn.ins[p].id)
                break
    return pairs


def _loop_inits(eqn: Eqn, candidates: list[int]) -> list[tuple[int, int]]:
    """Initial carried values the loop may take over: read nowhere else by the loop."""
    first = 2 if eqn.prim is for_p else 0
    inside = set().union(*(region_reads(r) for r in eqn.regions))
    return [(p, p - first) for p in candidates
            if p >= first and _alone(eqn, p) and eqn.ins[p].id not in inside]


def _alone(eqn: Eqn, p: int) -> bool:
    """Whether operand p appears once among the operands."""
    return sum(a is eqn.ins[p] for a in eqn.ins) == 1


def _same_type(eqn: Eqn, p: int, j: int) -> bool:
    a, out = eqn.ins[p].aval, eqn.outs[j].aval
    return a.shape == out.shape and a.dtype == out.dtype
