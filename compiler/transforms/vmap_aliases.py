"""Resolve `jnp = _jnp()` in helper source, so that vmap can see which function `jnp.sum` is.

The AD helpers import redraft.numpy lazily inside each function (`jnp = _jnp()`); Core keeps
`jnp.sum(g)` as a call through a local value. For functions registered here (they return a
module and nothing else), such calls become calls of the module's function itself.
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.core import ir
from redraft.compiler.frontend import methods

MODULE_GETTERS: set[int] = set()


def defmodule_getter(fn: Callable) -> None:
    """`fn()` returns a module, always the same one: calls through its result resolve."""
    MODULE_GETTERS.add(id(fn))


def fold_module_aliases(fn: ir.Function) -> ir.Function:
    modules = _module_names(fn.body)
    if not modules:
        return fn
    packed = {s.targets[0]: s.expr.items for s in ir.walk_stmts(fn.body)
              if isinstance(s, ir.Assign) and len(s.targets) == 1
              and isinstance(s.expr, ir.Tuple)}
    body = [_fold(s, modules, packed) for s in fn.body]
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, dict(fn.meta))


def _module_names(body: list[ir.Stmt]) -> dict[str, object]:
    out = {}
    for s in ir.walk_stmts(body):
        if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref) and not s.expr.args
                and id(s.expr.fn.value) in MODULE_GETTERS):
            out[s.targets[0]] = s.expr.fn.value()
    return out


def _fold(s: ir.Stmt, modules: dict, packed: dict) -> ir.Stmt:
    def fix(e):
        if (isinstance(e, ir.Call) and isinstance(e.fn, ir.Attr)
                and isinstance(e.fn.obj, ir.Var) and e.fn.obj.name in modules):
            module = modules[e.fn.obj.name]
            ref = ir.Ref(getattr(module, e.fn.name), f"{e.fn.obj.name}.{e.fn.name}", module)
            return ir.Call(ref, e.args, e.kwargs, e.star_args)
        if (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and e.args
                and isinstance(e.args[0], ir.Var) and e.args[0].name in modules):
            # `jnp.sum(g)` with jnp a local was read as the array method `jnp.sum()`
            module = modules[e.args[0].name]
            name = e.fn.path.split(".")[-1]
            ref = ir.Ref(getattr(module, name), f"{e.args[0].name}.{name}", module)
            args = e.args[1:]
            if (name in methods.VARARG_SHAPE_METHODS and len(args) == 1
                    and isinstance(args[0], ir.Var) and args[0].name in packed):
                args = packed[args[0].name]  # `jnp.reshape(a, s)` was packed as a.reshape(*s)
            return ir.Call(ref, tuple(args), e.kwargs, e.star_args)
        return e

    if isinstance(s, ir.Assign):
        return ir.Assign(s.targets, fix(s.expr), s.origin)
    if isinstance(s, ir.ExprStmt):
        return ir.ExprStmt(fix(s.expr), s.origin)
    block = lambda b: [_fold(x, modules, packed) for x in b]
    if isinstance(s, ir.If):
        return ir.If(s.cond, block(s.body), block(s.orelse), s.origin)
    if isinstance(s, ir.For):
        return ir.For(s.target, s.iter, block(s.body), s.origin)
    if isinstance(s, ir.While):
        return ir.While(block(s.cond_body), s.cond, block(s.body), s.origin)
    return s
