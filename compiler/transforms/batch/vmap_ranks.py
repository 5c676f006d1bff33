"""Which per-example ranks are equal or ordered, known from the code alone: the analysis that
lets batched code skip a `vm.align` that could not insert an axis.

An elementwise operation's result has the highest rank of its operands (NumPy
broadcasting), so `t1 = x > 0` has x's rank and `t3 = alpha * t2` has the larger of alpha's
and t2's. `sources(v)` is a set of names whose highest rank is v's rank; aligning v against
`other` is a no-op where sources(other) is a subset of sources(v). Only names assigned once
take part (a name assigned again may change rank); anything else is unknown (None).
"""
from __future__ import annotations

import operator

from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.batching import batch_entry

_SCALARS = (int, float, bool, complex)
# operators that act on tuples and lists too (concatenation, repetition): see `_exact`
_SEQUENCE_OPERATORS = (operator.add, operator.mul)


class RankSources:
    """The single assignments of one function, read for the rank relations they imply."""

    def __init__(self, fn: ir.Function, type_of):
        self.type_of = type_of  # batch type of an atom, read at query time
        counts: dict[str, int] = {}
        self.defs: dict[str, ir.Expr] = {}  # name -> the expression it is bound to
        for p in fn.params:
            counts[p] = counts.get(p, 0) + 1
        for s in ir.walk_stmts(fn.body):
            targets = s.targets if isinstance(s, ir.Assign) else (
                (s.target,) if isinstance(s, ir.For) else ())
            for k, t in enumerate(targets):
                counts[t] = counts.get(t, 0) + 1
                if isinstance(s, ir.Assign):
                    self.defs[t] = s.expr if len(targets) == 1 else _Unpacked(s.expr, k)
        self.single = {n for n, k in counts.items() if k == 1}

    def sources(self, a: ir.Atom) -> frozenset[str] | None:
        """Names whose highest per-example rank is `a`'s rank (None: not known)."""
        if not isinstance(a, ir.Var) or a.name not in self.single:
            return None
        return self._sources(a.name, {})

    def _sources(self, name: str, memo: dict) -> frozenset[str]:
        if name in memo:
            return memo[name]
        memo[name] = frozenset((name,))  # a cycle (none in SSA) stays opaque
        e = self._bound(name)
        if isinstance(e, ir.Var) and e.name in self.single:  # a copy: the same value
            memo[name] = self._sources(e.name, memo)
            return memo[name]
        if e is None or not self._exact(e):
            return memo[name]
        found: set[str] = set()
        for arg in e.args:
            if isinstance(arg, ir.Var) and arg.name in self.single:
                found |= self._sources(arg.name, memo)
            elif not _is_scalar(arg):
                return memo[name]
        if found:
            memo[name] = frozenset(found)
        return memo[name]

    def _bound(self, name: str) -> ir.Expr | None:
        """The expression `name` holds: an item of a tuple built in the code is the item."""
        e = self.defs.get(name)
        if isinstance(e, _Unpacked):
            whole = e.expr
            if isinstance(whole, ir.Var) and whole.name in self.single:
                whole = self._bound(whole.name)
            if isinstance(whole, ir.Tuple) and e.index < len(whole.items):
                return whole.items[e.index]
            return None
        return e

    def _exact(self, e: ir.Expr) -> bool:
        """Whether `e` is an elementwise call whose result has its operands' highest rank."""
        if not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and not e.kwargs
                and e.star_args is None and e.args):
            return False
        entry = batch_entry(e.fn.value)
        rule = getattr(entry, "rule", None)
        exact = getattr(rule, "rank_exact", False)
        if not (exact(e) if callable(exact) else exact):
            return False
        if e.fn.value in _SEQUENCE_OPERATORS:
            return all(not bt.is_sequence(self.type_of(a)) for a in e.args)
        return True


class _Unpacked:
    """Item `index` of the value of `expr` (`a, b = expr`)."""

    def __init__(self, expr: ir.Expr, index: int):
        self.expr, self.index = expr, index


def _is_scalar(a: ir.Atom) -> bool:
    if isinstance(a, ir.Const):
        return isinstance(a.value, _SCALARS)
    if isinstance(a, ir.Ref):
        return isinstance(a.value, _SCALARS) or getattr(a.value, "ndim", None) == 0
    return False


def covers(have: frozenset[str] | None, other: frozenset[str] | None) -> bool:
    """Whether a value of rank max(have) is at least as high as one of rank max(other)."""
    return have is not None and other is not None and other <= have
