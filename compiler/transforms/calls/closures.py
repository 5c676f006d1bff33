"""Closures a function makes and then calls, read as direct calls of their lifted functions.

    t1 = make_layer(w)          # make_layer:  out = closure(layer, w); return out
    t2 = t1(x)          -->     t2 = layer(x, w)

A local function's value (a Closure, compiler/frontend/local_functions.py) carries what it
captured, but a transform differentiates a call through a value in its arguments only.
Where the function being read makes the closure itself, or gets it from a user's function
whose body is straight-line code ending in one (a layer factory: inlined here), and then
calls it, the call becomes a call of the lifted function with the captured values as its
trailing arguments, as Closure.__call__ passes them; every transform then follows them.
The closure's assignment goes when nothing else reads it.
"""
from __future__ import annotations

import types

from redraft.compiler.core import ir
from redraft.compiler.frontend.local_functions import closure
from redraft.compiler.primitives.registry import rules_for
from redraft.compiler.transforms.calls.inline import inline_function


def resolve_closure_calls(fn: ir.Function, core_of) -> ir.Function:
    """`fn` (Core in SSA form) with calls of the closures it makes resolved; `core_of(g)`
    reads a user's function `g` (callable_core.core_of, passed in: it sits above)."""
    called = _called_values(fn.body)
    if not called:
        return fn
    fresh = _fresh_names(fn)
    body = []
    for s in fn.body:
        inlined = _inlined_factory(s, called, core_of, fresh)
        body.extend(inlined if inlined is not None else [s])
    made = _made_closures(body)
    if not made:
        return fn
    body = [_directed(s, made) for s in body]
    read = set().union(*(ir.stmt_reads(s) for s in ir.walk_stmts(body)))
    body = [s for s in body if not (isinstance(s, ir.Assign) and len(s.targets) == 1
                                    and s.targets[0] in made and s.targets[0] not in read)]
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _called_values(body: list) -> set[str]:
    """Names the body calls as functions (`t2 = t1(x)`), positional arguments only."""
    return {s.expr.fn.name for s in ir.walk_stmts(body)
            if isinstance(s, ir.Assign) and _plain_call(s.expr)
            and isinstance(s.expr.fn, ir.Var)}


def _plain_call(e) -> bool:
    return isinstance(e, ir.Call) and not e.kwargs and e.star_args is None


def _inlined_factory(s, called: set[str], core_of, fresh) -> list | None:
    """`t1 = make_layer(w)`, t1 called later and make_layer a user's function whose body is
    straight-line code returning a closure: its statements, renamed, else None."""
    if not (isinstance(s, ir.Assign) and len(s.targets) == 1 and s.targets[0] in called
            and _plain_call(s.expr) and isinstance(s.expr.fn, ir.Ref)):
        return None
    factory = s.expr.fn.value
    if not _users_function(factory):
        return None
    try:
        core = core_of(factory)
    except Exception:  # unreadable here: the call stays a call
        return None
    if not _returns_closure(core):
        return None
    return inline_function(core, s.expr.args, s.targets, fresh, s.origin)


def _users_function(fn) -> bool:
    """A function of the user's (or one specialised on a call's shape: *args, **kwargs)."""
    from redraft.compiler.frontend.specialise import Shaped
    if isinstance(fn, Shaped):
        fn = fn.fn
    return (isinstance(fn, types.FunctionType) and rules_for(fn) is None
            and not (fn.__module__ or "").startswith("redraft."))


def _returns_closure(core: ir.Function) -> bool:
    body = core.body
    if len(body) < 2 or not isinstance(body[-1], ir.Return):
        return False
    last, value = body[-2], body[-1].value
    return (isinstance(last, ir.Assign) and isinstance(value, ir.Var)
            and last.targets == (value.name,) and _is_closure(last.expr))


def _is_closure(e) -> bool:
    return (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and e.fn.value is closure
            and not e.kwargs and e.star_args is None and bool(e.args))


def _made_closures(body: list) -> dict[str, ir.Call]:
    """Names assigned once, at the top level, a `closure(f, *captured)` call."""
    counts: dict[str, int] = {}
    for s in ir.walk_stmts(body):
        for name in ir.stmt_writes(s):
            counts[name] = counts.get(name, 0) + 1
    return {s.targets[0]: s.expr for s in body
            if isinstance(s, ir.Assign) and len(s.targets) == 1 and _is_closure(s.expr)
            and counts[s.targets[0]] == 1}


def _directed(s, made: dict):
    """`s` (nested blocks included) with each `y = v(a, b)`, v = closure(f, c1, c2), made
    `y = f(a, b, c1, c2)`; statements without such calls are kept as they are (shared)."""
    if isinstance(s, ir.Assign):
        e = s.expr
        if _plain_call(e) and isinstance(e.fn, ir.Var) and e.fn.name in made:
            fn, *captured = made[e.fn.name].args
            return ir.Assign(s.targets, ir.Call(fn, e.args + tuple(captured)), s.origin)
        return s
    return ir.with_blocks(s, lambda block: [_directed(c, made) for c in block])


def _fresh_names(fn: ir.Function):
    taken = set(fn.params) | set().union(*(ir.stmt_writes(s) for s in ir.walk_stmts(fn.body)))

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name
    return fresh
