"""What forward and reverse mode share: activity analysis, binding a call's
arguments to the operation's parameter names, peepholes, and the Core of any callable."""
from __future__ import annotations

import inspect
import operator

from redraft.compiler.core import ir
from redraft.compiler.core.names import Names  # noqa: F401 (the transforms' generator)
from redraft.compiler.frontend.methods import STATIC_ATTRIBUTES
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.primitives.registry import OpRules, rules_for
from redraft.runtime.errors import RedraftError

ADD = ir.Ref(operator.add, "+")
NEG = ir.Ref(operator.neg, "unary neg")
GETITEM = ir.Ref(operator.getitem, "[]")


class TransformError(RedraftError, TypeError):
    """A function cannot be transformed; the message names the user's file and line."""


def helper(name: str) -> ir.Ref:
    """Ref to `ad.<name>` (compiler/transforms/runtime/ad.py) as generated code spells it."""
    return ir.Ref(getattr(ad, name), f"ad.{name}", ad)


def where(origin: ir.Origin | None) -> str:
    return f"{origin[0]}:{origin[1]}: " if origin else ""


# ---- activity ------------------------------------------------------------------------------------

def call_is_differentiable(call: ir.Call) -> bool:
    fn = call.fn
    if isinstance(fn, ir.Ref):
        rules = rules_for(fn.value)
        if rules is not None and rules.nondiff_reason:
            return False
    return True


def differentiable_atoms(call: ir.Call) -> list[ir.Var]:
    """The Var operands of `call` through which derivatives can flow (not static ones)."""
    atoms = [a for a in ir.expr_atoms(call) if isinstance(a, ir.Var)]
    rules = rules_for(call.fn.value) if isinstance(call.fn, ir.Ref) else None
    if rules is None or not rules.static or rules.signature is None:
        return atoms
    try:
        bound = bind_call(rules, call, None)
    except TransformError:
        return atoms
    return [a for p, a in bound.items() if p not in rules.static and isinstance(a, ir.Var)]


def expr_is_active(e: ir.Expr, active: set[str]) -> bool:
    if isinstance(e, ir.Var):
        return e.name in active
    if isinstance(e, (ir.Const, ir.Ref)):
        return False
    if isinstance(e, ir.Attr):
        return e.name not in STATIC_ATTRIBUTES and expr_is_active(e.obj, active)
    if isinstance(e, ir.Call):
        if not call_is_differentiable(e):
            return False
        return any(a.name in active for a in differentiable_atoms(e))
    if isinstance(e, (ir.Tuple, ir.List)):
        return any(expr_is_active(a, active) for a in e.items)
    return False


def active_names(fn: ir.Function, active_params: set[str]) -> set[str]:
    """Names whose values depend differentiably on the active parameters (a fixpoint, so
    loop-carried names are found)."""
    active = set(active_params)
    changed = True
    while changed:
        changed = False
        for s in ir.walk_stmts(fn.body):
            if isinstance(s, ir.Assign) and not set(s.targets) <= active:
                if expr_is_active(s.expr, active):
                    active |= set(s.targets)
                    changed = True
            elif isinstance(s, ir.For) and s.target not in active:
                if expr_is_active(s.iter, active):
                    active.add(s.target)
                    changed = True
    return active


# ---- binding call arguments to parameter names ---------------------------------------------------

def bind_to_signature(sig: inspect.Signature | None, call: ir.Call) -> dict | None:
    """{parameter name: atom} for `call` under `sig` (a tuple of atoms for *args), without
    defaults; None when there is no signature, the call spreads *args, or does not fit."""
    if sig is None or call.star_args is not None:
        return None
    params = list(sig.parameters.values())
    out: dict = {}
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = [p for p in params if p.kind is p.VAR_POSITIONAL]
    for p, a in zip(positional, call.args):
        out[p.name] = a
    extra = call.args[len(positional):]
    if extra:
        if not varargs:
            return None
        out[varargs[0].name] = tuple(extra)
    names = {p.name for p in params}
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    for k, v in call.kwargs:
        if (k not in names and not var_kw) or k in out:
            return None
        out[k] = v
    return out


def bind_call(rules: OpRules, call: ir.Call, origin) -> dict[str, ir.Atom]:
    """{parameter name: atom} for `call`, defaults included, using the op's signature."""
    if rules.signature is None:
        raise TransformError(f"{where(origin)}cannot bind the arguments of {call.fn.path}")
    return _bound_with_defaults(rules.signature, call, origin)


def _bound_with_defaults(sig: inspect.Signature, call: ir.Call, origin) -> dict:
    """bind_to_signature with every default filled in; a call that does not fit is an error
    naming the user's line."""
    if call.star_args is not None:
        raise TransformError(f"{where(origin)}*args in a call to {call.fn.path} cannot be "
                             "transformed yet")
    out = bind_to_signature(sig, call)
    if out is None:
        raise TransformError(f"{where(origin)}the arguments of this call do not fit "
                             f"{call.fn.path}{sig}")
    for p in sig.parameters.values():
        if p.name not in out and p.default is not inspect.Parameter.empty:
            out[p.name] = default_atom(p.name, p.default)
    return out


def default_atom(name: str, value) -> ir.Atom:
    """A parameter's default value as an atom: a constant where it is a literal, else a
    reference spelled `<name>_default`."""
    return ir.Const(value) if _is_literal(value) else ir.Ref(value, f"{name}_default")


def _is_literal(v) -> bool:
    if isinstance(v, tuple):
        return all(_is_literal(x) for x in v)
    return isinstance(v, (int, float, bool, complex, str, type(None)))


def broadcasting_simplifier(bound: dict[str, ir.Atom], param: str):
    """Peephole: `ad.unbroadcast(g, x)` / `ad.broadcast_like(t, ans)` are no-ops when every
    other operand of the op is a Python number (no broadcasting can have happened)."""
    others = [a for k, a in bound.items()
              if k != param and isinstance(a, (ir.Var, ir.Const, ir.Ref))]
    trivial = all(isinstance(a, (ir.Const, ir.Ref)) and isinstance(a.value, (
        int, float, type(None), str, bool)) for a in others)  # a Ref: a closure's value

    def simplify(call: ir.Call):
        if not trivial or not isinstance(call.fn, ir.Ref):
            return None
        if call.fn.value in (ad.unbroadcast, ad.broadcast_like):
            return call.args[0]
        return None

    return simplify


def bind_defaults(fn: ir.Function, n_args: int) -> ir.Function:
    """`fn` for a call that passes only its first `n_args` arguments: the parameters left
    out are bound to their default values at the top of the body."""
    if n_args >= len(fn.params):
        return fn
    first_default = len(fn.params) - len(fn.defaults)
    if n_args < first_default:
        missing = ", ".join(fn.params[n_args:first_default])
        raise TransformError(f"{where((fn.filename, fn.firstline))}{fn.name}() is called "
                             f"without its argument(s) {missing}, which have no default")
    origin = (fn.filename, fn.firstline)
    binds: list[ir.Stmt] = []
    for p, value in zip(fn.params[n_args:], fn.defaults[n_args - first_default:]):
        binds.append(ir.Assign((p,), default_atom(p, value), origin))
    return ir.Function(fn.name, fn.params[:n_args], binds + list(fn.body),
                       fn.defaults[:n_args - first_default], fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def positional_args(call: ir.Call, origin, sig: inspect.Signature | None = None,
                    every: bool = False) -> tuple[ir.Atom, ...]:
    """The arguments of a call to a user function, all positional, in the order of `sig`
    (the callee's signature by default): keywords are placed and parameters they skip get
    their defaults (transformed functions take every argument by position). Up to the last
    argument given, or `every` parameter."""
    if call.star_args is not None:
        raise TransformError(f"{where(origin)}*args in a call to {call.fn.path} cannot be "
                             "transformed yet")
    if not call.kwargs and not every:
        return call.args
    if sig is None:
        try:
            sig = inspect.signature(call.fn.value)
        except (TypeError, ValueError):
            raise TransformError(f"{where(origin)}cannot bind the keyword arguments of "
                                 f"{call.fn.path}") from None
    bound = _bound_with_defaults(sig, call, origin)
    params = [p.name for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    given = {p for p, _ in call.kwargs} | set(params[:len(call.args)])
    if not every:
        params = params[:max((i for i, p in enumerate(params) if p in given), default=-1) + 1]
    missing = [p for p in params if p not in bound]
    if missing:
        raise TransformError(f"{where(origin)}{call.fn.path} is called without its "
                             f"argument {missing[0]!r}")
    return tuple(bound[p] for p in params)


def is_transformable_callable(value) -> bool:
    import types
    import functools
    from redraft.compiler.transforms.calls.custom import is_custom
    return (isinstance(value, (types.FunctionType, functools.partial))
            or (isinstance(value, types.MethodType)
                and isinstance(value.__func__, types.FunctionType))
            or hasattr(value, "__redraft_transformable__") or is_custom(value))


def unsupported_op(call: ir.Call, origin, mode: str) -> TransformError:
    name = call.fn.path if isinstance(call.fn, ir.Ref) else "a function value"
    return TransformError(
        f"{where(origin)}redraft has no {mode} rule for `{name}` and cannot read its source "
        "to transform it. Use redraft.numpy functions, or give it rules with "
        "redraft.custom_jvp / custom_vjp")
