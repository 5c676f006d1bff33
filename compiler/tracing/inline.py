"""A straight-line Core run on tracers: a transform of a traced function, called from traced
code, recorded statement by statement into the caller's trace.

`g = grad(loss)(params, x)` inside a traced function would otherwise be one recorded call
whose result is one tracer, though it is a list of layers the caller then iterates over.
Its Core (loss traced for this structure, then differentiated) is straight-line, so it is
run here as the caller's code: each library call on tracers is recorded, and the Python
structure of its values (tuples, lists, dicts, pytrees of tracers) stays Python, as JAX
gives a transform's result inside a trace. Core with branches or loops is not run here
(the caller records one call of it instead).
"""
from __future__ import annotations

import operator

from redraft.compiler.core import helpers, ir
from redraft.compiler.tracing.tracer import Recording, Tracer, holds_tracer
from redraft.runtime import pytree

# Functions that rebuild or take apart Python structure: run in Python when the structure
# they are given is Python (not one tracer), so their results keep it.
_STRUCTURAL = (operator.getitem, pytree.tree_leaves, pytree.tree_unflatten,
               pytree.tree_structure, helpers.make_dict, helpers.values_of, helpers.items_of,
               helpers.keys_of, helpers.append, helpers.concat, helpers.set_item, len, tuple,
               list, zip)


def _structural(fn) -> bool:
    from redraft.compiler.transforms.runtime.ad import unflatten_like
    return fn is unflatten_like or any(fn is s for s in _STRUCTURAL)


def straight_line(core: ir.Function) -> bool:
    """Whether `core` is assignments and a return only (no branches, loops or effects)."""
    return all(isinstance(s, ir.Assign) for s in core.body[:-1]) and isinstance(
        core.body[-1], ir.Return)


def run_core(rec: Recording, wrap, core: ir.Function, args: list):
    """The value of `core` called with `args` (trees of tracers and Python values), its
    statements recorded into `rec`; `wrap(value, name)` gives the trace's view of a
    function it calls (environment.py)."""
    env = dict(zip(core.params, args))
    for name, default in zip(core.params[len(args):],
                             core.defaults[len(core.defaults) - (len(core.params)
                                                                 - len(args)):]):
        env[name] = default
    for stmt in core.body[:-1]:
        value = _expr(rec, wrap, stmt.expr, env)
        if len(stmt.targets) == 1:
            env[stmt.targets[0]] = value
        else:
            env.update(zip(stmt.targets, _unpack(value, len(stmt.targets))))
    return _atom(core.body[-1].value, env)


def _unpack(value, n: int) -> list:
    if isinstance(value, Tracer):
        return [value[k] for k in range(n)]
    items = list(value)
    if len(items) != n:
        raise ValueError(f"cannot unpack {len(items)} values into {n} names")
    return items


def _atom(a, env: dict):
    if isinstance(a, ir.Var):
        return env[a.name]
    if isinstance(a, ir.Const):
        return a.value
    if isinstance(a, ir.Ref):
        return a.value
    raise TypeError(f"not a Core atom: {a!r}")


def _expr(rec: Recording, wrap, e, env: dict):
    if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
        return _atom(e, env)
    if isinstance(e, ir.Tuple):
        return tuple(_atom(a, env) for a in e.items)
    if isinstance(e, ir.List):
        return [_atom(a, env) for a in e.items]
    if isinstance(e, ir.Attr):
        return getattr(_atom(e.obj, env), e.name)
    if isinstance(e, ir.Call):
        return _call(rec, wrap, e, env)
    raise TypeError(f"not a Core expression: {e!r}")


def _call(rec: Recording, wrap, c: ir.Call, env: dict):
    args = [_atom(a, env) for a in c.args]
    if c.star_args is not None:
        args += list(_atom(c.star_args, env))
    kwargs = {k: _atom(v, env) for k, v in c.kwargs}
    if isinstance(c.fn, ir.Ref):
        fn = c.fn.value
        if _structural(fn) and not (args and isinstance(args[0], Tracer)):
            return fn(*args, **kwargs)
        if holds_tracer(tuple(args), kwargs):
            return rec.call(c.fn, tuple(args), kwargs)
        return fn(*args, **kwargs)
    fn = _expr(rec, wrap, c.fn, env) if isinstance(c.fn, ir.Attr) else _atom(c.fn, env)
    return wrap(fn, "fn")(*args, **kwargs)
