"""Loops over active sequences, rewritten to loops over indices before differentiation.

`for v in xs` (xs active) becomes

    items = iterated(xs)                # xs itself, or a dict's keys
    for k in range(len(items)): v = items[k]

so the element's derivative goes through the getitem rule in both modes, and reverse mode
can tape `k`. `iterated` is what the loop visits: a dict's keys, which carry no derivative.
"""
from __future__ import annotations

import operator

from redraft.compiler.core import helpers, ir
from redraft.compiler.transforms.common import Names, active_names

LEN = ir.Ref(len, "len")
RANGE = ir.Ref(range, "range")
GETITEM = ir.Ref(operator.getitem, "[]")
ITERATED = ir.Ref(helpers.iterated, "iterated")


def index_active_loops(fn: ir.Function, active_params: set[str]) -> ir.Function:
    active = active_names(fn, active_params)
    names = Names(fn)
    body = _block(fn.body, active, names)
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _block(body: list[ir.Stmt], active: set[str], names: Names) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.For):
            inner = _block(s.body, active, names)
            if isinstance(s.iter, ir.Var) and s.iter.name in active:
                items, n = names.fresh("items"), names.fresh("n")
                r, k = names.fresh("indices"), names.fresh("k")
                out.append(ir.Assign((items,), ir.Call(ITERATED, (s.iter,)), s.origin))
                out.append(ir.Assign((n,), ir.Call(LEN, (ir.Var(items),)), s.origin))
                out.append(ir.Assign((r,), ir.Call(RANGE, (ir.Var(n),)), s.origin))
                element = ir.Assign((s.target,), ir.Call(GETITEM, (ir.Var(items), ir.Var(k))),
                                    s.origin)
                out.append(ir.For(k, ir.Var(r), [element] + inner, s.origin))
            else:
                out.append(ir.For(s.target, s.iter, inner, s.origin))
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _block(s.body, active, names),
                             _block(s.orelse, active, names), s.origin))
        elif isinstance(s, ir.While):
            out.append(ir.While(_block(s.cond_body, active, names), s.cond,
                                _block(s.body, active, names), s.origin))
        else:
            out.append(s)
    return out
