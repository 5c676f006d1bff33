"""The Core of any callable: a user function (its source read, or traced where it has none),
a partial, a bound method, a transformed or jitted function, a custom-rule function, or an
operation transformed directly. It is the entry point every transform and staging call to
read a function; it sits above the frontend and the transforms' shared helpers."""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import types

from redraft.compiler.core import ir
from redraft.compiler.core.core_function import carried_core
from redraft.compiler.tracing.environment import install_specialised_core
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state, identity
from redraft.compiler.transforms.common import TransformError
from redraft.compiler.primitives.registry import rules_for


def core_of(fn) -> ir.Function:
    """Core of a user function, a transformed function, or a jit-wrapped one (in SSA)."""
    from redraft.compiler.frontend.local_functions import LocalFunction
    from redraft.compiler.frontend.ssa import to_ssa
    if isinstance(fn, LocalFunction) and not fn.captured:
        fn = fn.function  # a lambda or def inside a function, capturing nothing
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        from redraft.compiler.frontend.specialise import bound
        fn = bound(fn.__func__, ((0, fn.__self__),), drop=True)  # self known, by identity
    elif _plain_callable_object(fn):
        from redraft.compiler.frontend.specialise import bound
        fn = bound(type(fn).__call__, ((0, fn),), drop=True)  # vmap(model): its __call__
    if isinstance(fn, functools.partial):
        from redraft.compiler.frontend.specialise import bind_function_arguments
        return to_ssa(bind_function_arguments(partial_core(fn)), coalesce=False)
    core = carried_core(fn)
    if core is not None:  # generated code reassigns names (x_bar = x_bar + t): rename it
        return to_ssa(core, coalesce=False)
    from redraft.compiler.frontend.specialise import sampler_batched_by_its_rule
    if rules_for(fn) is not None or sampler_batched_by_its_rule(fn):
        return _op_wrapper(fn)
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):
        return _call_wrapper(fn)
    if isinstance(fn, types.FunctionType) and _in_library(fn):
        return TRANSFORM_CACHE.get(fn, "library core", lambda: _read_core(fn))
    reads = getattr(_SESSION, "reads", None)
    if reads is None:
        return _read_core(fn)
    key = (identity(fn), code_state(fn), identity(getattr(fn, "__defaults__", None)),
           identity(getattr(fn, "__kwdefaults__", None)))
    if key not in reads:
        reads[key] = _read_core(fn)
    return reads[key]


def _plain_callable_object(fn) -> bool:
    """An object of the user's class with a Python `__call__` that is not a pytree (its
    fields are configuration: a list of layer functions), transformed as its bound
    `__call__`, the object held by identity."""
    from redraft.runtime.pytree import _REGISTRY
    call = getattr(type(fn), "__call__", None)
    module = getattr(type(fn), "__module__", "") or ""
    return (isinstance(call, types.FunctionType) and not isinstance(fn, type)
            and type(fn) not in _REGISTRY and not module.startswith("redraft")
            and not hasattr(fn, "__redraft_transformable__")
            and not isinstance(fn, functools.partial))


_SESSION = threading.local()


@contextlib.contextmanager
def reading_once():
    """Within it (one staging, on this thread), a user's function is read once: each
    transform around it asked for its Core again (per-example gradients read the loss
    four times). The key holds what the Core is read from besides its globals (its code,
    closure contents and defaults); staging runs none of the user's code that could
    rebind a global between two reads, as tracing reads each function once. Nested
    sessions share the outermost one's reads."""
    if getattr(_SESSION, "reads", None) is not None:
        yield
        return
    _SESSION.reads = {}
    try:
        yield
    finally:
        _SESSION.reads = None


def _read_core(fn) -> ir.Function:
    """The Core of a Python function, read from its source."""
    from redraft.compiler.frontend.normalize import lower_function
    from redraft.compiler.frontend.specialise import fold_static_calls
    from redraft.compiler.frontend.ssa import to_ssa
    from redraft.compiler.transforms.calls.closures import resolve_closure_calls
    return resolve_closure_calls(fold_static_calls(to_ssa(lower_function(fn), coalesce=False)),
                                 core_of)


def _in_library(fn) -> bool:
    """A function of redraft's own (an AD helper, say), whose source and globals do not
    change while it runs: its Core is read once (vmap read `ad._dot_dims` eight times in
    one per-example gradient's first call)."""
    return (getattr(fn, "__module__", None) or "").startswith("redraft.")


def partial_core(p) -> ir.Function:
    """`def f(x): out = fun(x, W_bound, scale=2.0); return out` for p = partial(fun, ...):
    its parameters are those `p` leaves open, in fun's order; what it binds is constant."""
    fun = p.func
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        raise TransformError(f"cannot read the signature of {fun!r}, bound by "
                             "functools.partial") from None
    args, kwargs, own, defaults = [], [], [], []
    for i, prm in enumerate(sig.parameters.values()):
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
            if i < len(p.args) and prm.kind is prm.VAR_POSITIONAL:
                args.extend(_bound_atom(v, f"{prm.name}_{k}") for k, v in
                            enumerate(p.args[i:]))
            continue
        if i < len(p.args):
            atom = _bound_atom(p.args[i], f"{prm.name}_bound")
        elif prm.name in p.keywords:
            atom = _bound_atom(p.keywords[prm.name], f"{prm.name}_bound")
        else:
            own.append(prm.name)
            atom = ir.Var(prm.name)
            if prm.default is not inspect.Parameter.empty:
                defaults.append(prm.default)
            elif defaults:
                raise TransformError(f"partial of {getattr(fun, '__name__', fun)} leaves "
                                     f"{prm.name!r} open after a parameter with a default")
        if prm.kind is prm.KEYWORD_ONLY:
            kwargs.append((prm.name, atom))
        else:
            args.append(atom)
    name = getattr(fun, "__name__", "partial")
    name = name if name.isidentifier() else "partial"
    ref = ir.Ref(fun, name if name.isidentifier() else "fun")
    body = [ir.Assign(("out",), ir.Call(ref, tuple(args), tuple(kwargs))),
            ir.Return(ir.Var("out"))]
    code = getattr(fun, "__code__", None)
    return ir.Function(f"{name}_partial", tuple(own), body, tuple(defaults),
                       code.co_filename if code else "<partial>",
                       code.co_firstlineno if code else 1)


def _bound_atom(value, name: str) -> ir.Atom:
    if isinstance(value, (int, float, bool, complex, str, type(None))):
        return ir.Const(value)
    return ir.Ref(value, name)


def _call_wrapper(fn) -> ir.Function:
    """`def f(x): out = f_custom(x); return out`: a custom-rule function, transformed
    directly, is a call the transforms then see (and answer with its rules)."""
    params = tuple(inspect.signature(fn.fun).parameters)
    code = fn.fun.__code__
    body = [ir.Assign(("out",), ir.Call(ir.Ref(fn, fn.__name__), tuple(ir.Var(p)
                                                                      for p in params))),
            ir.Return(ir.Var("out"))]
    return ir.Function(fn.__name__, params, body, (), code.co_filename, code.co_firstlineno)


def operation_core(op) -> ir.Function:
    """`def exp(x): out = jnp.exp(x); return out` for an operation transformed directly."""
    return TRANSFORM_CACHE.get(op, "operation core", lambda: _op_wrapper(op))


def _op_wrapper(op) -> ir.Function:
    """`def exp(x): out = jnp.exp(x); return out` for an operation transformed directly."""
    rules = rules_for(op)
    sig = rules.signature if rules is not None else inspect.signature(op)
    params = tuple(p.name for p in sig.parameters.values()
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    defaults = tuple(p.default for p in sig.parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                     and p.default is not inspect.Parameter.empty)
    name = getattr(op, "__name__", "op")
    module = getattr(op, "__module__", "") or ""
    path = f"jnp.{name}" if module.startswith("redraft.numpy") else name
    if module in ("redraft.numpy.linalg", "redraft.numpy.fft"):  # jnp.linalg.det, not jnp.det
        path = f"jnp.{module.rsplit('.', 1)[1]}.{name}"
    ref = ir.Ref(op, path, _module_root(op) if path.startswith("jnp.") else None)
    body = [ir.Assign(("out",), ir.Call(ref, tuple(ir.Var(p) for p in params))),
            ir.Return(ir.Var("out"))]
    return ir.Function(name, params, body, defaults, "<redraft op>", 1)


def _module_root(op):
    import redraft.numpy as jnp
    return jnp


def _specialised_core(fn, args: tuple):
    """(fn specialised on the structure of args, its Core), or None where fn is not traced
    per structure: a call that traced code makes (compiler/tracing/environment.py)."""
    from redraft.compiler.frontend.specialise import specialise_deep
    target = specialise_deep(fn, args)
    return None if target is fn else (target, core_of(target))


install_specialised_core(_specialised_core)
