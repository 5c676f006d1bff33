"""What forward and reverse mode share: fresh names, activity analysis, binding a call's
arguments to the operation's parameter names, peepholes, and the Core of any callable."""
from __future__ import annotations

import copy
import inspect
import operator

from redraft.compiler.core import ir
from redraft.compiler.frontend.methods import STATIC_ATTRIBUTES
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.ad.registry import OpRules, rules_for
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


class Names:
    """Fresh, readable names: `x_dot`, `x_bar`, `t7`; never one already used."""

    def __init__(self, fn: ir.Function):
        self.used: set[str] = set(fn.params) | {n for s in ir.walk_stmts(fn.body)
                                                for n in ir.stmt_writes(s)}
        self.derived: dict[tuple[str, str], str] = {}
        self.last_temp: int | None = None

    def fresh(self, base: str) -> str:
        base = base.rstrip("_") or "t"
        if base == "t" or _is_temp(base):
            return self.temp()
        name, k = base, 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name

    def temp(self) -> str:
        """The next numbered temporary, `t7`, after every one the function already has."""
        if self.last_temp is None:
            self.last_temp = max((int(n[1:]) for n in self.used if _is_temp(n)), default=0)
        self.last_temp += 1
        while f"t{self.last_temp}" in self.used:
            self.last_temp += 1
        name = f"t{self.last_temp}"
        self.used.add(name)
        return name

    def scratch(self) -> "Names":
        """An independent generator in this one's state, for a trial run whose names are
        thrown away (vmap's batch-type inference)."""
        out = copy.copy(self)
        out.used, out.derived = set(self.used), dict(self.derived)
        return out

    def derived_name(self, var: str, suffix: str) -> str:
        """The one name of `var`'s tangent (suffix 'dot') or cotangent ('bar')."""
        key = (var, suffix)
        if key not in self.derived:
            self.derived[key] = self.fresh(f"{var}_{suffix}")
        return self.derived[key]


def _is_temp(name: str) -> bool:
    """`t7`-style generated temporaries."""
    return len(name) > 1 and name[0] == "t" and name[1:].isdigit()


# ---- activity ------------------------------------------------------------------------------------

def call_is_differentiable(call: ir.Call) -> bool:
    fn = call.fn
    if isinstance(fn, ir.Attr):
        return False  # methods of non-array values (str.format, list.copy) carry no derivative
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
        if k not in names and not var_kw:
            return None
        out[k] = v
    return out


def bind_call(rules: OpRules, call: ir.Call, origin) -> dict[str, ir.Atom]:
    """{parameter name: atom} for `call`, defaults included, using the op's signature."""
    sig = rules.signature
    if sig is None:
        raise TransformError(f"{where(origin)}cannot bind the arguments of {call.fn.path}")
    if call.star_args is not None:
        raise TransformError(f"{where(origin)}*args in a call to {call.fn.path} cannot be "
                             "differentiated yet")
    out = bind_to_signature(sig, call)
    if out is None:
        raise TransformError(f"{where(origin)}the arguments of this call do not fit "
                             f"{call.fn.path}{sig}")
    for p in sig.parameters.values():
        if p.name not in out and p.default is not inspect.Parameter.empty:
            out[p.name] = ir.Const(p.default) if _is_literal(p.default) else ir.Ref(
                p.default, repr(p.default))
    return out


def _is_literal(v) -> bool:
    return isinstance(v, (int, float, bool, complex, str, type(None), tuple))


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
        atom = ir.Const(value) if _is_literal(value) else ir.Ref(value, f"{p}_default")
        binds.append(ir.Assign((p,), atom, origin))
    return ir.Function(fn.name, fn.params[:n_args], binds + list(fn.body),
                       fn.defaults[:n_args - first_default], fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def positional_args(call: ir.Call, origin) -> tuple[ir.Atom, ...]:
    """The arguments of a call to a user function, all positional: keywords are placed by
    the callee's signature and parameters they skip get their defaults (transformed
    functions take every argument by position)."""
    if call.star_args is not None:
        raise TransformError(f"{where(origin)}*args in a call to {call.fn.path} cannot be "
                             "differentiated yet")
    if not call.kwargs:
        return call.args
    try:
        sig = inspect.signature(call.fn.value)
    except (TypeError, ValueError):
        raise TransformError(f"{where(origin)}cannot bind the keyword arguments of "
                             f"{call.fn.path}") from None
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    given = {p.name: a for p, a in zip(params, call.args)}
    for k, v in call.kwargs:
        if k in given or k not in {p.name for p in params}:
            raise TransformError(f"{where(origin)}{call.fn.path} got an unexpected or "
                                 f"repeated keyword argument {k!r}")
        given[k] = v
    last = max(i for i, p in enumerate(params) if p.name in given)
    out = []
    for p in params[:last + 1]:
        if p.name in given:
            out.append(given[p.name])
        elif p.default is inspect.Parameter.empty:
            raise TransformError(f"{where(origin)}{call.fn.path} is called without its "
                                 f"argument {p.name!r}")
        else:
            out.append(ir.Const(p.default) if _is_literal(p.default) else ir.Ref(
                p.default, f"{p.name}_default"))
    return tuple(out)


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
