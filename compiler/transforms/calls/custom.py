"""User-defined derivative rules: custom_jvp and custom_vjp, as Core.

A call to a custom_jvp function in forward mode calls the user's jvp rule; in reverse
mode it transposes that rule (which is linear in the tangents) by differentiating it in
reverse with respect to the tangents. A custom_vjp function's backward pass is the user's
fwd then bwd, and reverse-mode code computes its value with fwd too (f_fwd_primal), so that
forward mode over a gradient differentiates the rules, not the function, as in JAX. Each is
a small Core function, so derivatives of derivatives still work:

    def f_jvp(x, y, x_dot):                 def f_bwd(x, y, ct):
        primals = (x, y)                        pair = f_fwd(x, y)
        zero = ad.zeros_like(y)                 res = pair[1]
        tangents = (x_dot, zero)                bars = f_bwd_rule(res, ct)
        pair = f_jvp_rule(primals, tangents)    return bars[0]
        return pair
"""
from __future__ import annotations

import functools
import operator
from typing import Callable

from redraft.compiler.core import ir
from redraft.compiler.transforms.common import TransformError, helper

GETITEM = ir.Ref(operator.getitem, "[]")


class custom_jvp:  # noqa: N801 - JAX's name
    """A function with a user-supplied forward-mode rule (`@f.defjvp`)."""

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp_rule: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        """jvp(primals, tangents) -> (primal_out, tangent_out)."""
        self.jvp_rule = jvp
        return jvp

    def defjvps(self, *rules: Callable | None) -> None:
        """One rule per argument, rule_i(tangent_i, primal_out, *primals) -> its share of
        the output tangent (None: that argument contributes nothing); the shares add up.
        The jvp rule they make is Core (jvps_rule_core), transformed as any rule."""
        from redraft.compiler.core.core_function import CoreFunction
        self.jvp_rule = CoreFunction(jvps_rule_core(self, rules))

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)


def jvps_rule_core(fn: custom_jvp, rules: tuple) -> ir.Function:
    """The jvp rule that defjvps' per-argument rules make, for a function of n arguments:

        def f_jvps(primals, tangents):
            p0 = primals[0]; ...; t0 = tangents[0]; ...
            ans = f(p0, ..., pn)
            share_0 = rule_0(t0, ans, p0, ..., pn)      # one per rule that is not None
            out = share_0 + share_1
            return (ans, out)
    """
    n = len(rules)
    code = getattr(fn.fun, "__code__", None)
    origin = (code.co_filename, code.co_firstlineno) if code else None
    body: list[ir.Stmt] = []

    def let(name: str, expr) -> ir.Var:
        body.append(ir.Assign((name,), expr, origin))
        return ir.Var(name)

    ps = [let(f"p{i}", ir.Call(GETITEM, (ir.Var("primals"), ir.Const(i)))) for i in range(n)]
    ts = [let(f"t{i}", ir.Call(GETITEM, (ir.Var("tangents"), ir.Const(i)))) for i in range(n)]
    ans = let("ans", ir.Call(ir.Ref(fn.fun, fn.__name__), tuple(ps)))
    out = None
    for i, rule in enumerate(rules):
        if rule is None:
            continue
        share = let(f"share_{i}", ir.Call(ir.Ref(rule, f"rule_{i}"), (ts[i], ans) + tuple(ps)))
        out = share if out is None else let(f"out_{i}", ir.Call(
            ir.Ref(operator.add, "+"), (out, share)))
    if out is None:
        out = let("out", ir.Call(helper("zeros_like"), (ans,)))
    pair = let("pair", ir.Tuple((ans, out)))
    body.append(ir.Return(pair, origin))
    return ir.Function(f"{fn.__name__}_jvps", ("primals", "tangents"), body, (),
                       origin[0] if origin else "<custom_jvp>", origin[1] if origin else 1)


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with a user-supplied reverse-mode rule (`f.defvjp(fwd, bwd)`)."""

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        # (primals, tangents) -> (out, out_dot) where forward mode exists too (a pmap's is a
        # pmap of jvp); a user's custom_vjp has none, so jvp of it raises, as in JAX
        self.jvp_rule: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """fwd(*args) -> (out, residuals); bwd(residuals, g) -> a cotangent per argument."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def primal_by_fwd(self):
        """fwd's result without its residuals, as a Core function (made once): what
        reverse-mode code computes for a call of this function, so that forward mode over
        the gradient differentiates the user's fwd, an ordinary function, as JAX does."""
        made = getattr(self, "_primal_by_fwd", None)
        if made is None:
            from redraft.compiler.core.core_function import CoreFunction
            made = self._primal_by_fwd = CoreFunction(custom_vjp_primal_core(self))
        return made


def is_custom(fn) -> bool:
    return isinstance(fn, (custom_jvp, custom_vjp))


def _params(fn) -> tuple[str, ...]:
    import inspect
    return tuple(inspect.signature(fn.fun).parameters)


def _fresh(params: tuple[str, ...]):
    taken = set(params)

    def nm(base: str) -> str:
        while base in taken:
            base += "_"
        taken.add(base)
        return base
    return nm


def _function(name: str, params, body, fn) -> ir.Function:
    code = getattr(fn.fun, "__code__", None) or getattr(getattr(fn.fun, "fn", None),
                                                        "__code__", None)  # a Bound's own
    return ir.Function(name, tuple(params), body, (), code.co_filename, code.co_firstlineno)


def custom_jvp_core(fn: custom_jvp | custom_vjp, mask: tuple[bool, ...]) -> ir.Function:
    """(params..., tangents of active params) -> (out, out_dot) via `fn.jvp_rule`."""
    if fn.jvp_rule is None:
        raise TransformError(f"custom_jvp function {fn.__name__} has no jvp rule: decorate "
                             "one with @{name}.defjvp".replace("{name}", fn.__name__))
    params = _params(fn)
    nm = _fresh(params)
    dots = [nm(f"{p}_dot") for p, m in zip(params, mask) if m]
    body: list[ir.Stmt] = []
    tangent_of, it = {}, iter(dots)
    for i, (p, m) in enumerate(zip(params, mask)):
        if m:
            tangent_of[i] = ir.Var(next(it))
        elif i not in _nondiff(fn, params):
            z = nm(f"{p}_zero")
            body.append(ir.Assign((z,), ir.Call(helper("zeros_like"), (ir.Var(p),))))
            tangent_of[i] = ir.Var(z)
    pair = nm("pair")
    body.append(ir.Assign((pair,), _rule_call(fn, params, tangent_of, nm, body)))
    body.append(ir.Return(ir.Var(pair)))
    return _function(f"{fn.__name__}_jvp", params + tuple(dots), body, fn)


def _nondiff(fn: custom_jvp | custom_vjp, params) -> list[int]:
    """The positions of fn's nondiff_argnums among its parameters, in order."""
    return sorted(i % len(params) for i in fn.nondiff_argnums)


def _rule_call(fn, params, tangent_of: dict, nm, body: list) -> ir.Call:
    """The call of the user's jvp rule as JAX makes it: the nondiff arguments first, then
    the tuples of the other primals and of their tangents (`tangent_of[i]`)."""
    nondiff = _nondiff(fn, params)
    diff = [i for i in range(len(params)) if i not in nondiff]
    primals, tangents = nm("primals"), nm("tangents")
    body.append(ir.Assign((primals,), ir.Tuple(tuple(ir.Var(params[i]) for i in diff))))
    body.append(ir.Assign((tangents,), ir.Tuple(tuple(tangent_of[i] for i in diff))))
    rule = ir.Ref(fn.jvp_rule, fn.jvp_rule.__name__)
    return ir.Call(rule, tuple(ir.Var(params[i]) for i in nondiff)
                   + (ir.Var(primals), ir.Var(tangents)))


def batched_rule_core(fn: custom_jvp, batched_rule, n: int) -> ir.Function:
    """The jvp rule of vmap(fn): its primals are fn's n arguments and the number of
    examples; it calls the batched user rule on the first n primals and tangents.

        def f_rule_batched(primals, tangents):
            p0 = primals[0]; t0 = tangents[0]; size = primals[1]
            pair = rule_batched((p0,), (t0,), size)
            return pair
    """
    body: list[ir.Stmt] = []

    def let(name: str, expr) -> ir.Var:
        body.append(ir.Assign((name,), expr))
        return ir.Var(name)

    ps = [let(f"p{i}", ir.Call(GETITEM, (ir.Var("primals"), ir.Const(i)))) for i in range(n)]
    ts = [let(f"t{i}", ir.Call(GETITEM, (ir.Var("tangents"), ir.Const(i)))) for i in range(n)]
    size = let("size", ir.Call(GETITEM, (ir.Var("primals"), ir.Const(n))))
    p_tuple, t_tuple = let("ps", ir.Tuple(tuple(ps))), let("ts", ir.Tuple(tuple(ts)))
    rule = ir.Ref(batched_rule, f"{fn.__name__}_rule_batched")
    pair = let("pair", ir.Call(rule, (p_tuple, t_tuple, size)))
    body.append(ir.Return(pair))
    return _function(f"{fn.__name__}_rule_batched", ("primals", "tangents"), body, fn)


def custom_jvp_tangent_map(fn: custom_jvp) -> ir.Function:
    """(params..., every tangent) -> tangent_out: linear in the tangents."""
    params = _params(fn)
    nm = _fresh(params)
    dots = [nm(f"{p}_dot") for p in params]
    pair, out = nm("pair"), nm("out_dot")
    body: list[ir.Stmt] = []
    call = _rule_call(fn, params, {i: ir.Var(d) for i, d in enumerate(dots)}, nm, body)
    body += [ir.Assign((pair,), call),
             ir.Assign((out,), ir.Call(GETITEM, (ir.Var(pair), ir.Const(1)))),
             ir.Return(ir.Var(out))]
    return _function(f"{fn.__name__}_tangent_map", params + tuple(dots), body, fn)


def custom_jvp_bwd_core(fn: custom_jvp, mask: tuple[bool, ...], linear_bwd) -> ir.Function:
    """(params..., ct) -> bars: the transpose of the tangent map, at zero tangents."""
    params = _params(fn)
    nm = _fresh(params)
    ct = nm("ct")
    body: list[ir.Stmt] = []
    zeros = []
    for p in params:
        z = nm(f"{p}_zero")
        body.append(ir.Assign((z,), ir.Call(helper("zeros_like"), (ir.Var(p),))))
        zeros.append(ir.Var(z))
    bars = nm("bars")
    call = ir.Call(ir.Ref(linear_bwd, f"{fn.__name__}_transpose"),
                   tuple(ir.Var(p) for p in params) + tuple(zeros) + (ir.Var(ct),))
    body.append(ir.Assign((bars,), call))
    body.append(ir.Return(ir.Var(bars)))
    return _function(f"{fn.__name__}_bwd", params + (ct,), body, fn)


def custom_vjp_primal_core(fn: custom_vjp) -> ir.Function:
    """(params...) -> fwd(params...)[0], with fn's defaults:

        def f_fwd_primal(x, y):
            pair = f_fwd(x, y)
            out = pair[0]
            return out
    """
    import inspect
    if fn.fwd is None:
        raise TransformError(f"custom_vjp function {fn.__name__} has no rules: call "
                             f"{fn.__name__}.defvjp(fwd, bwd)")
    params = _params(fn)
    nm = _fresh(params)
    pair, out = nm("pair"), nm("out")
    body: list[ir.Stmt] = [
        ir.Assign((pair,), ir.Call(ir.Ref(fn.fwd, fn.fwd.__name__),
                                   tuple(ir.Var(p) for p in params))),
        ir.Assign((out,), ir.Call(GETITEM, (ir.Var(pair), ir.Const(0)))),
        ir.Return(ir.Var(out))]
    core = _function(f"{fn.__name__}_fwd_primal", params, body, fn)
    defaults = [p.default for p in inspect.signature(fn.fun).parameters.values()
                if p.default is not inspect.Parameter.empty]
    core.defaults = tuple(defaults)
    return core


def custom_vjp_bwd_core(fn: custom_vjp, mask: tuple[bool, ...], single: bool) -> ir.Function:
    """(params..., ct) -> bars of the active params, from the user's fwd and bwd."""
    if fn.fwd is None or fn.bwd is None:
        raise TransformError(f"custom_vjp function {fn.__name__} has no rules: call "
                             f"{fn.__name__}.defvjp(fwd, bwd)")
    params = _params(fn)
    nm = _fresh(params)
    ct, pair, res, bars = nm("ct"), nm("pair"), nm("res"), nm("all_bars")
    # nondiff_argnums: bwd takes them first, and returns cotangents of the others only
    nondiff = _nondiff(fn, params)
    position = {i: j for j, i in enumerate(i for i in range(len(params)) if i not in nondiff)}
    body: list[ir.Stmt] = [
        ir.Assign((pair,), ir.Call(ir.Ref(fn.fwd, fn.fwd.__name__),
                                   tuple(ir.Var(p) for p in params))),
        ir.Assign((res,), ir.Call(GETITEM, (ir.Var(pair), ir.Const(1)))),
        ir.Assign((bars,), ir.Call(ir.Ref(fn.bwd, fn.bwd.__name__), tuple(
            ir.Var(params[i]) for i in nondiff) + (ir.Var(res), ir.Var(ct)))),
    ]
    picked = []
    for i, m in enumerate(mask):
        if m:
            b = nm(f"{params[i]}_bar")
            if i in position:
                bar = ir.Call(GETITEM, (ir.Var(bars), ir.Const(position[i])))
            else:  # a nondiff argument: no cotangent from the rule
                bar = ir.Call(helper("zeros_like"), (ir.Var(params[i]),))
            body.append(ir.Assign((b,), bar))
            picked.append(ir.Var(b))
    if single:
        body.append(ir.Return(picked[0]))
    else:
        out = nm("bars")
        body.append(ir.Assign((out,), ir.Tuple(tuple(picked))))
        body.append(ir.Return(ir.Var(out)))
    return _function(f"{fn.__name__}_bwd", params + (ct,), body, fn)
