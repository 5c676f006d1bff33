"""Which names Core may still read after each branch and at the head of each loop.

A name is live at a point when some path from there reads it before writing it. SSA
conversion merges a name after an `if` and carries it through a loop only where it is live:
a dead name merged or carried would make the merge read a version that one path never
binds, or make one loop-carried value hold two shapes where nothing needs it to.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from redraft.compiler.core import ir


@dataclass
class Liveness:
    after: dict[int, set[str]] = field(default_factory=dict)  # id(If/For/While) -> live after
    head: dict[int, set[str]] = field(default_factory=dict)   # id(loop) -> live as each
    # iteration starts, where the loop may also exit (a for's before its target is bound)

    def live_after(self, s: ir.Stmt) -> set[str] | None:
        return self.after.get(id(s))

    def live_at_head(self, s: ir.Stmt) -> set[str] | None:
        return self.head.get(id(s))


def liveness(body: list[ir.Stmt]) -> Liveness:
    """Liveness for every compound statement of a function body (nothing is live after it:
    its return ends it)."""
    info = Liveness()
    _block(body, set(), info)
    return info


def _block(body: list[ir.Stmt], out: set[str], info: Liveness) -> set[str]:
    live = set(out)
    for s in reversed(body):
        live = _stmt(s, live, info)
    return live


def _stmt(s: ir.Stmt, out: set[str], info: Liveness) -> set[str]:
    if isinstance(s, ir.Assign):
        return (out - set(s.targets)) | ir.expr_reads(s.expr)
    if isinstance(s, ir.ExprStmt):
        return out | ir.expr_reads(s.expr)
    if isinstance(s, ir.Return):
        return ir.expr_reads(s.value)
    # a union: a statement object that occurs twice is live after wherever either is
    info.after[id(s)] = info.after.get(id(s), set()) | out
    if isinstance(s, ir.If):
        return (_block(s.body, out, info) | _block(s.orelse, out, info)
                | ir.expr_reads(s.cond))
    if isinstance(s, ir.For):
        head = set(out)
        while True:  # grows to the fixed point; the last pass saw the final head
            new = out | (_block(s.body, head, info) - {s.target})
            if new == head:
                break
            head = new
        info.head[id(s)] = info.head.get(id(s), set()) | head
        return head | ir.expr_reads(s.iter)
    if isinstance(s, ir.While):
        head: set[str] = set()
        while True:
            leaves = out | ir.expr_reads(s.cond) | _block(s.body, head, info)
            new = head | _block(s.cond_body, leaves, info)
            if new == head:
                break
            head = new
        info.head[id(s)] = info.head.get(id(s), set()) | head
        return head
    raise TypeError(f"not a Core statement: {s!r}")
