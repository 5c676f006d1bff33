"""Where values live: liveness over the IR, and a workspace allocator that reuses memory.

Every array intermediate gets a slice of one workspace buffer (64-byte aligned). Slices are
handed back once the value and every view of it are dead, so later values reuse them, and
an elementwise loop may write its result over an operand that dies there (in place).

Liveness numbers equations in program order (regions inside their equation) and records
each value's last use. A value used inside a `while`/`for` that it was defined outside of
stays live to the end of that loop, since every iteration reads it. Values made by view
primitives share their operand's buffer, so uses of a view keep that buffer alive.
"""
from __future__ import annotations

from redraft.compiler.ir.ssa import Block, Function, Value, for_p, fused_p, while_p

VIEW_PRIMITIVES = frozenset({"reshape", "squeeze", "broadcast_in_dim", "transpose", "slice",
                             "rev", "getitem", "dynamic_slice"})
ALIGN = 64


class Liveness:
    """Positions of equations and the last use of every value's buffer."""

    def __init__(self, fn: Function):
        self.pos: dict[int, int] = {}
        self.end: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.root: dict[int, int] = {}
        self._depth: dict[int, int] = {}   # loop depth of each value's definition
        self._counter = 0
        self._number(fn.body)
        self._uses(fn.body, [])
        for vid in list(self.root):
            root = self.find(vid)
            self.root[vid] = root
            if vid in self.last:
                self.last[root] = max(self.last.get(root, -1), self.last[vid])

    def find(self, value_id: int) -> int:
        """The value owning the buffer that `value_id` lives in."""
        while value_id in self.root and self.root[value_id] != value_id:
            value_id = self.root[value_id]
        return value_id

    def _number(self, block: Block) -> None:
        for eqn in block.eqns:
            self.pos[id(eqn)] = self._next()
            if eqn.prim is not fused_p:
                for region in eqn.regions:
                    self._number(region)
            self.end[id(eqn)] = self._next()
        self.pos[id(block)] = self._next()

    def _next(self) -> int:
        self._counter += 1
        return self._counter

    def _define(self, v: Value, loops: list) -> None:
        self._depth[v.id] = len(loops)

    def _use(self, a, at: int, loops: list) -> None:
        if not isinstance(a, Value):
            return
        depth = self._depth.get(a.id, 0)
        if depth < len(loops):  # read by every iteration of a loop it was defined outside
            at = self.end[id(loops[depth])]
        self.last[a.id] = max(self.last.get(a.id, -1), at)

    def _uses(self, block: Block, loops: list) -> None:
        for v in block.params:
            self._define(v, loops)
        for eqn in block.eqns:
            at = self.pos[id(eqn)]
            for a in eqn.ins:
                self._use(a, at, loops)
            if eqn.prim.name in VIEW_PRIMITIVES and isinstance(eqn.ins[0], Value):
                self.root[eqn.outs[0].id] = eqn.ins[0].id
            if eqn.prim is not fused_p:
                self._region_uses(eqn, loops)
            for v in eqn.outs:
                self._define(v, loops)
                # a loop's result buffer is its carried state: live through the whole loop
                self.last[v.id] = max(self.last.get(v.id, -1), self.end[id(eqn)])
        for a in block.results:
            self._use(a, self.pos[id(block)], loops)

    def _region_uses(self, eqn, loops: list) -> None:
        looping = eqn.prim in (while_p, for_p)
        inner = loops + [eqn] if looping else loops
        for region in eqn.regions:
            if looping and eqn.outs:  # region parameters are views of the carried buffers
                for p, out in zip(region.params[-len(eqn.outs):], eqn.outs):
                    self.root[p.id] = out.id
            self._uses(region, inner)

    def last_use(self, value_id: int) -> int:
        """Position after which the buffer owned by `value_id` is dead (-1: never used).
        Values this analysis never saw (inside `fused` regions) count as never dead."""
        root = self.find(value_id)
        if root not in self._depth:
            return 1 << 62
        return self.last.get(root, -1)


class Workspace:
    """First-fit allocation of byte ranges in the workspace; sizes fixed at compile time."""

    def __init__(self):
        self.size = 0
        self.free: list[tuple[int, int]] = []   # (offset, size), sorted by offset
        self.owner: dict[int, tuple[int, int]] = {}

    def allocate(self, owner: int, nbytes: int) -> int:
        nbytes = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
        for k, (offset, size) in enumerate(self.free):
            if size >= nbytes:
                if size == nbytes:
                    del self.free[k]
                else:
                    self.free[k] = (offset + nbytes, size - nbytes)
                self.owner[owner] = (offset, nbytes)
                return offset
        offset = self.size
        self.size += nbytes
        self.owner[owner] = (offset, nbytes)
        return offset

    def allocate_fresh(self, owner: int, nbytes: int) -> int:
        """A slice past every slice handed out so far, never one freed earlier: for a buffer
        a loop keeps across its iterations, which must not overlap what the loop body used
        and freed before it in program order (next iteration, that runs again)."""
        nbytes = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
        offset = self.size
        self.size += nbytes
        self.owner[owner] = (offset, nbytes)
        return offset

    def release(self, owner: int) -> None:
        offset, size = self.owner.pop(owner)
        self.free.append((offset, size))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for start, length in self.free:
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1] = (merged[-1][0], merged[-1][1] + length)
            else:
                merged.append((start, length))
        self.free = merged

    def transfer(self, old: int, new: int) -> None:
        """Hand `old`'s slice to `new` (an in-place result)."""
        self.owner[new] = self.owner.pop(old)
