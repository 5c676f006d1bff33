"""Loops rewritten before differentiation: loops over active sequences become loops over
indices, and the user's functions an active loop calls are inlined into its body.

`for v in xs` (xs active) becomes

    items = iterated(xs)                # xs itself, or a dict's keys
    for k in range(len(items)): v = items[k]

so the element's derivative goes through the getitem rule in both modes, and reverse mode
can tape `k`. `iterated` is what the loop visits: a dict's keys, which carry no derivative.
"""
from __future__ import annotations

import operator
import types

from redraft.compiler.core import helpers, ir
from redraft.compiler.primitives.registry import rules_for
from redraft.compiler.transforms.calls.inline import inline_function
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


def inline_calls_in_loops(fn: ir.Function, active_params: set[str]) -> ir.Function:
    """The user's functions that an active `for` loop's body calls on active values (a
    scan's cell, say), inlined into the body when their code is straight-line. Reverse mode
    then sees the iteration's own operations, so its tape can save the values their
    adjoints read (vjp.py: values_to_save) instead of a backward call recomputing them."""
    active = active_names(fn, active_params)
    names = Names(fn)
    body = _inline_block(fn.body, active, names, in_loop=False)
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _inline_block(body: list[ir.Stmt], active: set[str], names: Names,
                  in_loop: bool) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.For):
            out.append(ir.For(s.target, s.iter, _inline_block(s.body, active, names, True),
                              s.origin))
        elif isinstance(s, (ir.If, ir.While)):
            out.append(ir.with_blocks(s, lambda b: _inline_block(b, active, names, in_loop)))
        elif in_loop and isinstance(s, ir.Assign):
            out.extend(_inlined(s, active, names) or [s])
        else:
            out.append(s)
    return out


def _inlined(s: ir.Assign, active: set[str], names: Names) -> list[ir.Stmt] | None:
    """`s`'s call of a user function as that function's statements, or None."""
    call = s.expr
    if not (isinstance(call, ir.Call) and isinstance(call.fn, ir.Ref) and not call.kwargs
            and call.star_args is None and rules_for(call.fn.value) is None
            and _plain_function(call.fn.value)
            and any(isinstance(a, ir.Var) and a.name in active for a in call.args)):
        return None
    from redraft.compiler.transforms.calls.callable_core import core_of
    try:
        core = core_of(call.fn.value)
    except Exception:  # noqa: BLE001 - not readable here: reverse mode calls its own bwd
        return None
    return inline_function(core, call.args, s.targets, names.fresh, s.origin)


def _plain_function(value) -> bool:
    """A function of the user's or one redraft made (a lifted local function), with no
    rules of its own: its Core is what reverse mode would differentiate anyway."""
    from redraft.compiler.core.core_function import CoreFunction
    from redraft.compiler.frontend.local_functions import LocalFunction
    from redraft.compiler.transforms.calls.custom import is_custom
    if isinstance(value, LocalFunction):
        if value.captured:
            return False
        value = value.function
    return isinstance(value, (types.FunctionType, CoreFunction)) and not is_custom(value)
