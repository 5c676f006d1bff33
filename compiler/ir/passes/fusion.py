"""Fusion: group elementwise work, and the reductions it feeds, into `fused` loop nests (the
equation whose contract is in ssa.py), so that a backend makes one pass over memory per
group instead of one per primitive."""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field, replace

from redraft.compiler.ir.passes.common import (REDUCTIONS, has_effects, is_elementwise, is_fused,
                                               reads)
from redraft.compiler.ir.ssa import Atom, Block, Eqn, Function, Literal, Value, fused_p


def fusion(fn: Function) -> Function:
    """Fuse elementwise equations and reductions into `fused` equations, in every block.

    Expects verified IR without dead code (DCE first: a dead value would still be computed).
    Guarantees, in each block separately (never across a region boundary: the bodies of
    for/while/cond are fused on their own, and a group never takes in a control-flow eqn):
    - every elementwise equation and every reduce_{sum,max,min,prod,and,or} ends up inside
      exactly one `fused` equation, whose region is closed (it reads only its parameters);
    - a group joins equations of one iteration shape `shape` (their common output shape):
      an equation joins the group of each operand's producer of that shape, and groups of one
      kind, shape (and axes) that read the same full-size input are merged, whenever the
      merge keeps the block acyclic (effects keep their order);
    - a group whose values are used outside it only by reductions over the same axes takes
      them in as its terminal ops: `kind="reduce"`, `axes`, and its outputs are exactly those
      reductions. When only a tail of the group feeds such reductions, and whatever the tail
      reads from the rest is stored anyway, the tail splits off with them (tanh(x) returned
      and sum(tanh(x)**2): one loop stores tanh(x), one reads it and sums). Reductions left
      alone are one-reduction `fused` equations. Otherwise `kind="elementwise"`, and the
      outputs are the values used outside the group (later equations, nested regions or the
      block's results); a reduce group never reads its own results;
    - outputs keep their Values (and types), so nothing outside the group is renamed; the
      block is reordered only as the new dependencies require.
    """
    return Function(fn.name, _fuse_block(fn.body), dict(fn.meta))


def _fuse_block(block: Block) -> Block:
    eqns = [_fuse_regions(e) for e in block.eqns]
    graph = _Graph(eqns, block.results)
    groups = _Grouping(graph).run()
    return Block(block.params, _schedule(graph, groups), block.results)


def _fuse_regions(eqn: Eqn) -> Eqn:
    if not eqn.regions or is_fused(eqn):
        return eqn
    return replace(eqn, regions=[_fuse_block(r) for r in eqn.regions])


# ---- the dependence graph of one block -------------------------------------------------------

class _Graph:
    """Which equations of a block read which (regions' reads count as their equation's), and
    the order of effects as extra edges."""

    def __init__(self, eqns: list[Eqn], results: list[Atom]):
        self.eqns = eqns
        self.escaping = {a.id for a in results if isinstance(a, Value)}
        producer = {v.id: k for k, e in enumerate(eqns) for v in e.outs}
        self.users: dict[int, list[int]] = {}
        self.preds: list[list[int]] = []
        for k, eqn in enumerate(eqns):
            read = sorted(i for i in reads(eqn) if i in producer)
            for i in read:
                self.users.setdefault(i, []).append(k)
            self.preds.append(sorted({producer[i] for i in read}))
        self.succs: list[list[int]] = [[] for _ in eqns]
        for k, preds in enumerate(self.preds):
            for p in preds:
                self.succs[p].append(k)
        effects = [k for k, e in enumerate(eqns) if has_effects(e)]
        for a, b in itertools.pairwise(effects):
            self.succs[a].append(b)
            self.preds[b].append(a)

    def outside_users(self, v: Value, members: set[int]) -> list[int]:
        return [u for u in self.users.get(v.id, []) if u not in members]

    def escapes(self, v: Value, members: set[int]) -> bool:
        """Whether `v` is needed outside the equations `members`."""
        return v.id in self.escaping or bool(self.outside_users(v, members))


@dataclass(eq=False)
class _Group:
    members: list[int]
    shape: tuple[int, ...]
    kind: str = "elementwise"
    axes: tuple[int, ...] | None = None
    merged: bool = field(default=False)  # absorbed into another group

    def signature(self) -> tuple:
        return (self.kind, self.shape, self.axes)


# ---- forming the groups ----------------------------------------------------------------------

class _Grouping:
    """Assigns equations to groups: producer-consumer chains, terminal reductions, singleton
    reductions, then siblings that share an input."""

    def __init__(self, graph: _Graph):
        self.graph = graph
        self.group_of: dict[int, _Group] = {}
        self.last_grouped = -1  # the latest equation in any group

    def run(self) -> list[_Group]:
        self._chain_elementwise()
        self._absorb_reductions()
        self._lone_reductions()
        self._merge_siblings()
        return self.groups()

    def groups(self) -> list[_Group]:
        unique = {id(g): g for g in self.group_of.values()}
        return sorted(unique.values(), key=lambda g: g.members[0])

    # -- the steps --
    def _chain_elementwise(self) -> None:
        for k, eqn in enumerate(self.graph.eqns):
            if not is_elementwise(eqn.prim):
                continue
            group = self._assign(_Group([k], eqn.outs[0].aval.shape))
            for p in self.graph.preds[k]:
                producer = self.group_of.get(p)
                if (producer is not None and producer is not group
                        and producer.signature() == group.signature()):
                    group = self._try_merge(producer, group)

    def _absorb_reductions(self) -> None:
        """A group's tail that only feeds reductions over one set of axes becomes a reduce
        group with them: the whole group, or its tail when everything the tail reads from
        the rest of the group is needed outside anyway (so splitting stores nothing new)."""
        for group in self.groups():
            tail, reductions = self._reduction_tail(group)
            if not tail:
                continue
            rest = [m for m in group.members if m not in tail]
            if rest and not self._reads_only_escaping(tail, rest):
                continue
            reduce = _Group(sorted(tail | reductions), group.shape, "reduce",
                            self.graph.eqns[min(reductions)].params["axes"])
            if not self._acyclic(set(reduce.members)):
                continue
            if rest:
                group.members = rest
            else:
                group.merged = True
            self._assign(reduce)

    def _reduction_tail(self, group: _Group) -> tuple[set[int], set[int]]:
        """The members whose values are read only by one another and by reductions over one
        set of axes (never by the block's results), and those reductions."""
        members = set(group.members)
        tail: set[int] = set()
        reductions: set[int] = set()
        axes = None
        for m in reversed(group.members):  # readers inside the group come later
            users = [u for v in self.graph.eqns[m].outs for u in self.graph.users.get(v.id, [])]
            if any(v.id in self.graph.escaping for v in self.graph.eqns[m].outs) or not users:
                continue
            outside = [u for u in users if u not in tail]
            if any(u in members or self.graph.eqns[u].prim not in REDUCTIONS for u in outside):
                continue
            found = {self.graph.eqns[u].params["axes"] for u in outside}
            if len(found | ({axes} if axes is not None else set())) > 1:
                continue
            axes = next(iter(found), axes)
            tail.add(m)
            reductions.update(outside)
        return tail, reductions

    def _reads_only_escaping(self, tail: set[int], rest: list[int]) -> bool:
        """Whether every value the tail reads from `rest` is needed outside the group."""
        rest_set = set(rest)
        members = rest_set | tail
        produced = {v.id: v for m in rest for v in self.graph.eqns[m].outs}
        read = {a.id for m in tail for a in self.graph.eqns[m].ins
                if isinstance(a, Value) and a.id in produced}
        return all(self.graph.escapes(produced[i], members) for i in read)

    def _lone_reductions(self) -> None:
        for k, eqn in enumerate(self.graph.eqns):
            if eqn.prim in REDUCTIONS and k not in self.group_of:
                self._assign(_Group([k], eqn.ins[0].aval.shape, "reduce", eqn.params["axes"]))

    def _merge_siblings(self) -> None:
        """Merge groups of one signature that read the same full-size input (each group
        tries the latest group before it that reads it, which bounds the work)."""
        latest: dict[tuple, _Group] = {}
        for group in self.groups():
            keys = [(group.signature(), i) for i in self._full_size_inputs(group)]
            for key in keys:
                other = latest.get(key)
                other = self.group_of[other.members[0]] if other is not None else None
                if other is None or other is group:
                    continue
                if group.kind == "reduce" and self._connected(other, group):
                    continue  # a reduction's result cannot feed its own loop nest
                group = self._try_merge(other, group)
            for key in keys:
                latest[key] = group

    def _full_size_inputs(self, group: _Group) -> list[int]:
        members = set(group.members)
        inside = {v.id for m in members for v in self.graph.eqns[m].outs}
        return sorted({a.id for m in group.members for a in self.graph.eqns[m].ins
                       if isinstance(a, Value) and a.id not in inside
                       and a.aval.shape == group.shape})

    def _connected(self, a: _Group, b: _Group) -> bool:
        """Whether one group reads a value of the other directly."""
        succs = self.graph.succs
        return (any(s in b.members for m in a.members for s in succs[m])
                or any(s in a.members for m in b.members for s in succs[m]))

    # -- bookkeeping --
    def _assign(self, group: _Group) -> _Group:
        for m in group.members:
            self.group_of[m] = group
        self.last_grouped = max(self.last_grouped, group.members[-1])
        return group

    def _try_merge(self, a: _Group, b: _Group) -> _Group:
        """a and b merged into a if that keeps the graph acyclic; otherwise b."""
        members = set(a.members) | set(b.members)
        if not self._reads_only(b, a) and not self._acyclic(members):
            return b
        a.members = sorted(members)
        b.merged = True
        return self._assign(a)

    def _reads_only(self, b: _Group, a: _Group) -> bool:
        """Whether b is the latest grouped equation and reads only a's values: then joining
        a cannot close a cycle (the fast path of long elementwise chains)."""
        if len(b.members) != 1 or b.members[0] != self.last_grouped:
            return False
        return all(p in a.members for p in self.graph.preds[b.members[0]])

    def _acyclic(self, members: set[int]) -> bool:
        """Whether making `members` one node leaves no path from it back to itself; other
        groups count as single nodes (reaching one member reaches all of them)."""
        succs = self.graph.succs
        # past every grouped equation, paths only go forward through single equations
        horizon = max(max(members), self.last_grouped)
        stack = [s for m in members for s in succs[m] if s not in members]
        seen: set[int] = set()
        while stack:
            k = stack.pop()
            if k in members:
                return False
            if k in seen or k > horizon:
                continue
            group = self.group_of.get(k)
            for n in (group.members if group is not None else [k]):
                seen.add(n)
                stack.extend(s for s in succs[n] if s not in seen)
        return True


# ---- ordering the block and building the fused equations -------------------------------------

def _schedule(graph: _Graph, groups: list[_Group]) -> list[Eqn]:
    """The block's equations with each group replaced by its fused equation, in an order
    that respects every dependence (ties go to the original position of a node's last
    member)."""
    nodes: list[tuple[list[int], _Group | None]] = [(g.members, g) for g in groups]
    grouped = {m for g in groups for m in g.members}
    nodes += [([k], None) for k in range(len(graph.eqns)) if k not in grouped]
    node_of = {m: i for i, (members, _) in enumerate(nodes) for m in members}

    def neighbours(i: int, edges: list[list[int]]) -> set[int]:
        return {node_of[n] for m in nodes[i][0] for n in edges[m]} - {i}

    waiting = [len(neighbours(i, graph.preds)) for i in range(len(nodes))]
    ready = [(max(nodes[i][0]), i) for i in range(len(nodes)) if waiting[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for j in neighbours(i, graph.succs):
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, (max(nodes[j][0]), j))
    assert len(order) == len(nodes), "fusion made a cycle"
    return [_fused_eqn(graph, nodes[i][1]) if nodes[i][1] is not None
            else graph.eqns[nodes[i][0][0]] for i in order]


def _fused_eqn(graph: _Graph, group: _Group) -> Eqn:
    """`outs = fused[shape, kind(, axes)] ins { params . members' copies; yield }`."""
    members = set(group.members)
    outer: dict[int, Value] = {}
    params: dict[int, Value] = {}
    inner: dict[int, Value] = {}

    def inside(a: Atom) -> Atom:
        if isinstance(a, Literal):
            return a
        if a.id in inner:
            return inner[a.id]
        if a.id not in params:
            outer[a.id], params[a.id] = a, Value(a.aval)
        return params[a.id]

    body = []
    for m in _body_order(graph, group):
        eqn = graph.eqns[m]
        copy = Eqn(eqn.prim, [inside(a) for a in eqn.ins], [Value(v.aval) for v in eqn.outs],
                   dict(eqn.params), [], eqn.origin)
        inner.update((v.id, c) for v, c in zip(eqn.outs, copy.outs))
        body.append(copy)
    outs = _outputs(graph, group, members)
    region = Block(list(params.values()), body, [inner[v.id] for v in outs])
    fused_params = {"shape": group.shape, "kind": group.kind}
    if group.kind == "reduce":
        fused_params["axes"] = group.axes
    origin = graph.eqns[group.members[-1]].origin
    return Eqn(fused_p, list(outer.values()), outs, fused_params, [region], origin)


def _body_order(graph: _Graph, group: _Group) -> list[int]:
    """Members in block order, the terminal reductions last (nothing in the group reads
    them)."""
    last = [m for m in group.members if graph.eqns[m].prim in REDUCTIONS]
    return [m for m in group.members if m not in last] + last


def _outputs(graph: _Graph, group: _Group, members: set[int]) -> list[Value]:
    """The reductions of a reduce group; the values needed outside an elementwise one (the
    last member's results if none is, so that the equation still has a result)."""
    if group.kind == "reduce":
        return [v for m in group.members if graph.eqns[m].prim in REDUCTIONS
                for v in graph.eqns[m].outs]
    outs = [v for m in group.members for v in graph.eqns[m].outs
            if graph.escapes(v, members)]
    return outs or list(graph.eqns[group.members[-1]].outs)
