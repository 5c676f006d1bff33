"""Calls of transforms with constant arguments, made when the source is read.

`vmap(loss, in_axes=(None, 0))(w, xs)` inside a function first makes a function value, then
calls it; a transform cannot see what a function value is. The constructors registered here
(vmap, grad, jit, ...) are pure, so their call with constant arguments is made once, when
the Core is read, and the call of its result becomes a call of that known function:

    t1 = vmap(loss, in_axes=t0)          t1 = loss_made       # the vmapped loss itself
    t2 = t1(w, xs)               -->     t2 = loss_made(w, xs)
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.core import ir
from redraft.compiler.transforms.cache import IdentityTable

STATIC_CONSTRUCTORS: IdentityTable = IdentityTable()  # constructor -> itself
_CLOSING_ARGS: IdentityTable = IdentityTable()  # constructor -> how captured args close


def defstatic_constructor(fn: Callable, closing_args: Callable | None = None) -> None:
    """`fn(constants...)` is pure and cheap: it may be called when the source is read.
    `closing_args(n_own, n_captured, args, kwargs) -> (args, kwargs)` says how the
    constructor's other arguments change when the function it makes takes `n_captured`
    more trailing arguments (vmap: their in_axes are None); by default they stay."""
    STATIC_CONSTRUCTORS[fn] = fn
    if closing_args is not None:
        _CLOSING_ARGS[fn] = closing_args


INLINE_TRANSFORMS: IdentityTable = IdentityTable()  # jvp/vjp function -> its kind


def definline_transform(fn: Callable, kind: str) -> None:
    """`fn` ('jvp' or 'vjp') called inside a transformed function on a known function is
    read as a call of that function's derivative (compiler/frontend/normalize.py)."""
    INLINE_TRANSFORMS[fn] = kind


def construct_closure(constructor: Callable, local, args: tuple, kwargs: dict):
    """`constructor(local, *args, **kwargs)` for a local function `local` that captures
    values of its enclosing function (compiler/frontend/local_functions.py): the constructor
    is applied to the lifted Core function, whose trailing parameters are the captured
    values, and the result is again a local function capturing the same values. So
    `jit(lambda z: sin(a * z))(x)` reads as `jit(lifted)(x, a)`, and a transform of the
    enclosing function sees the call, and `a`, as any other."""
    from redraft.compiler.frontend.local_functions import LocalFunction
    n_captured = len(local.captured)
    n_own = len(local.function.__redraft_transformable__().params) - n_captured
    closing = _CLOSING_ARGS.get(constructor)
    if closing is not None:
        args, kwargs = closing(n_own, n_captured, tuple(args), dict(kwargs))
    made = constructor(local.function, *args, **kwargs)
    name = f"{local.name}_{getattr(constructor, '__name__', 'made')}"
    return LocalFunction(name, made, local.captured)


def fold_constructors(fn: ir.Function) -> ir.Function:
    if not STATIC_CONSTRUCTORS:
        return fn
    constants = ir.constant_names(fn)
    made = _made_functions(fn, constants)
    if not made:
        return fn
    body = [_resolve(s, made) for s in fn.body]
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _made_functions(fn: ir.Function, constants: dict) -> dict[str, object]:
    counts: dict[str, int] = {}
    for s in ir.walk_stmts(fn.body):
        for w in ir.stmt_writes(s):
            counts[w] = counts.get(w, 0) + 1
    made = {}
    for s in ir.walk_stmts(fn.body):
        if not (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref) and s.expr.fn.value in STATIC_CONSTRUCTORS
                and counts.get(s.targets[0]) == 1 and s.expr.star_args is None):
            continue
        try:
            args = [_value(a, constants, made) for a in s.expr.args]
            kwargs = {k: _value(a, constants, made) for k, a in s.expr.kwargs}
        except KeyError:
            continue
        made[s.targets[0]] = s.expr.fn.value(*args, **kwargs)
    return made


def _value(a, constants: dict, made: dict):
    if isinstance(a, ir.Ref):
        return _unwrap_local(a.value)
    if isinstance(a, ir.Const):
        return a.value
    if a.name in made:
        return made[a.name]
    return constants[a.name]


def constant_value(a: ir.Atom):
    """The value of a Ref or Const argument of a constructor; KeyError for a local function
    that captures values (not a constant)."""
    return _unwrap_local(a.value) if isinstance(a, ir.Ref) else a.value


def _unwrap_local(value):
    """A lambda or def inside the function (compiler/frontend/local_functions.py) that
    captures nothing is its Core function; one that captures locals is not a constant."""
    from redraft.compiler.frontend.local_functions import LocalFunction
    if isinstance(value, LocalFunction):
        if value.captured:
            raise KeyError(value.name)
        return value.function
    return value


def _made_ref(made: dict, name: str) -> ir.Ref:
    value = made[name]
    base = getattr(value, "__name__", "fn").replace("<", "").replace(">", "") or "fn"
    return ir.Ref(value, f"{base}_made" if base.isidentifier() else "made_fn")


def _resolve(s: ir.Stmt, made: dict) -> ir.Stmt:
    def fix(e):
        if isinstance(e, ir.Call) and isinstance(e.fn, ir.Var) and e.fn.name in made:
            return ir.Call(_made_ref(made, e.fn.name), e.args, e.kwargs, e.star_args)
        return e

    if (isinstance(s, ir.Assign) and len(s.targets) == 1 and s.targets[0] in made
            and isinstance(s.expr, ir.Call)):
        return ir.Assign(s.targets, _made_ref(made, s.targets[0]), s.origin)  # made once
    if isinstance(s, ir.Assign):
        return ir.Assign(s.targets, fix(s.expr), s.origin)
    if isinstance(s, ir.ExprStmt):
        return ir.ExprStmt(fix(s.expr), s.origin)
    return ir.with_blocks(s, lambda b: [_resolve(x, made) for x in b])
