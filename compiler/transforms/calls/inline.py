"""Inline a rule function's Core at a call site: parameters become the call's atoms, the
rule's temporaries get fresh names of the target function, and its return value an atom."""
from __future__ import annotations

import operator
import types
from typing import Callable

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.core import ir
from redraft.compiler.primitives.registry import RuleName
from redraft.compiler.transforms.cache import TRANSFORM_CACHE
from redraft.compiler.transforms.runtime import ad, lad, lah

# The modules a rule's names stand for: what generated source imports under those names.
RULE_MODULES = {"jnp": jnp, "lax": lax, "ad": ad, "lad": lad, "lah": lah}
_RULE_GLOBALS: dict[str, dict] = {}  # module name -> its globals with the names bound


def rule_core(rule: Callable) -> ir.Function:
    """The Core of a rule function (lowered once, then cached)."""
    return TRANSFORM_CACHE.get(rule, "rule", lambda: _lower_rule(rule))


def _lower_rule(rule: Callable) -> ir.Function:
    from redraft.compiler.frontend.normalize import lower_function
    from redraft.compiler.frontend.ssa import to_ssa
    core = to_ssa(lower_function(with_rule_names(rule)))
    _plain_operators(core.body)
    return core


def with_rule_names(rule: Callable) -> Callable:
    """`rule` reading the real modules where its module holds placeholders for them
    (registry.RuleName: a family file below the transforms writes `jnp.cos(x)` in a rule
    without importing redraft.numpy). The code object, and so the source, is the same."""
    names = getattr(rule, "__globals__", None)
    if not isinstance(rule, types.FunctionType) or not any(
            isinstance(v, RuleName) for v in names.values()):
        return rule
    module = names.get("__name__", "")
    if module not in _RULE_GLOBALS:
        _RULE_GLOBALS[module] = {**names, **{k: RULE_MODULES[v.name] for k, v in names.items()
                                             if isinstance(v, RuleName)}}
    return types.FunctionType(rule.__code__, _RULE_GLOBALS[module], rule.__name__,
                              rule.__defaults__, rule.__closure__)


def _plain_operators(body: list[ir.Stmt]) -> None:
    """In place: `ad.safe_mul(a, b)`/`ad.safe_div(a, b)` with no mask are plain `a * b` and
    `a / b`. Rules spell them so; reverse mode adds the mask where a cotangent has
    structural zeros (vjp.py), and the derivative reads like the math elsewhere."""
    plain = {ad.safe_mul: ir.Ref(operator.mul, "*"),
             ad.safe_div: ir.Ref(operator.truediv, "/")}
    for s in ir.walk_stmts(body):
        call = s.expr if isinstance(s, ir.Assign) else None
        if (isinstance(call, ir.Call) and isinstance(call.fn, ir.Ref)
                and call.fn.value in plain and len(call.args) == 2 and not call.kwargs
                and call.star_args is None):
            s.expr = ir.Call(plain[call.fn.value], call.args)


def substitute_atoms(s: ir.Stmt, mapping: dict[str, ir.Atom]) -> ir.Stmt:
    """`s` with names read replaced by atoms (constants too) and written names renamed."""
    def atom(a):
        if isinstance(a, ir.Var) and a.name in mapping:
            return mapping[a.name]
        return a

    def name(n: str) -> str:
        a = mapping.get(n)
        return a.name if isinstance(a, ir.Var) else n

    return ir.map_stmt(s, atom, name)


def inline(rule: Callable, args: dict[str, ir.Atom], fresh: Callable[[str], str],
           origin: ir.Origin | None, simplify: Callable | None = None,
           result_name: str | None = None) -> tuple[list[ir.Stmt], ir.Atom]:
    """(statements, result atom) of `rule` applied to `args` (rule parameter -> atom).

    `result_name`, when given, names the value the rule returns (so a rule returning an
    expression ends in `x_bar = ...` rather than a temporary). `simplify(call)` may replace
    a call of the rule's body by an atom (peepholes such as a no-op unbroadcast)."""
    core = rule_core(rule)
    missing = [p for p in core.params if p not in args]
    if missing:
        raise TypeError(f"rule {rule!r} needs arguments {missing} the operation does not have")
    mapping: dict[str, ir.Atom] = dict(args)
    body = core.body[:-1]
    ret = core.body[-1]
    assert isinstance(ret, ir.Return)
    for name in sorted(ir.block_writes(body)):
        if name not in mapping:
            mapping[name] = ir.Var(fresh(name))
    out: list[ir.Stmt] = []
    for s in body:
        s = substitute_atoms(s, mapping)
        _set_origin(s, origin)
        if simplify is not None and isinstance(s, ir.Assign) and isinstance(s.expr, ir.Call):
            replacement = simplify(s.expr)
            if replacement is not None and len(s.targets) == 1:
                original = next(k for k, v in mapping.items()
                                if isinstance(v, ir.Var) and v.name == s.targets[0])
                mapping[original] = replacement  # later statements read the operand itself
                continue
        out.append(s)
    result = substitute_atoms(ret, mapping).value
    if result_name is not None:
        out = _retarget_result(out, result, result_name, origin)
        result = ir.Var(result_name)
    return out, result


def _retarget_result(out: list[ir.Stmt], result: ir.Atom, name: str, origin) -> list[ir.Stmt]:
    """Make the statement that computes `result` assign `name` directly, if it is the last."""
    if (out and isinstance(result, ir.Var) and isinstance(out[-1], ir.Assign)
            and out[-1].targets == (result.name,)
            and all(result.name not in ir.stmt_reads(s) for s in out[:-1])):
        out[-1] = ir.Assign((name,), out[-1].expr, origin)
        return out
    return out + [ir.Assign((name,), result, origin)]


def _set_origin(s: ir.Stmt, origin) -> None:
    for child in ir.walk_stmts([s]):
        child.origin = origin


def rule_args(rule, bound: dict[str, ir.Atom], leading: list[ir.Atom]) -> dict:
    """The atoms a rule function's parameters receive: its first parameters take `leading`
    (the tangent(s) or cotangent, then `ans`) by position, the rest the op's own arguments
    by name, and Const(None) for ones the call leaves out."""
    params = rule_core(rule).params
    out = dict(zip(params, leading))
    for p in params[len(leading):]:
        out[p] = bound.get(p, ir.Const(None))
    return out


def inline_function(core: ir.Function, args: tuple[ir.Atom, ...], targets: tuple[str, ...],
                    fresh: Callable[[str], str], origin: ir.Origin | None
                    ) -> list[ir.Stmt] | None:
    """`targets = f(*args)` as f's own statements (`core`, its Core in SSA form), its names
    renamed fresh and its last assignment made to `targets` where it computes the returned
    value; None where f's body is not straight-line code or the call does not fit it."""
    body, ret = core.body[:-1], core.body[-1]
    if (len(args) != len(core.params) or not isinstance(ret, ir.Return)
            or not all(isinstance(s, ir.Assign) for s in body)
            or ir.block_writes(body) & set(core.params)):
        return None
    mapping: dict[str, ir.Atom] = dict(zip(core.params, args))
    for name in sorted(ir.block_writes(body)):
        mapping[name] = ir.Var(fresh(name))
    out = [substitute_atoms(s, mapping) for s in body]
    result = substitute_atoms(ret, mapping).value
    if (len(targets) == 1 and out and isinstance(result, ir.Var)
            and out[-1].targets == (result.name,)
            and all(result.name not in ir.stmt_reads(s) for s in out)):
        out[-1] = ir.Assign(targets, out[-1].expr, out[-1].origin)
    else:
        out.append(ir.Assign(targets, result, origin))
    return out
