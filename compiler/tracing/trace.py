"""Core of a Python function built by running it on tracers (no source needed).

The function is called once with one Tracer per positional parameter; what it does with
them is recorded (tracer.py, environment.py) and its result becomes the Return. The Core
is straight-line and shape-generic, like the Core the frontend makes from source, so every
transform and staging handle it; `redraft.emit(f, "core")` prints it.
"""
from __future__ import annotations

import inspect
import os
import sys
import types
import weakref

from redraft.compiler.core import ir
from redraft.compiler.frontend.source import SourceUnavailableError
from redraft.compiler.tracing.environment import Environment
from redraft.compiler.tracing.specs import Known, Opaque, Tree
from redraft.compiler.tracing.tracer import Recording, Tracer
from redraft.runtime.pytree import tree_leaves, tree_unflatten

TREE_LEAVES = ir.Ref(tree_leaves, "tree_leaves")

_LOGGED: "weakref.WeakSet" = weakref.WeakSet()


def log_path(fn, path: str, reason: str = "") -> None:
    """With REDRAFT_LOG_COMPILES=1, say once per function how its Core was obtained."""
    if not os.environ.get("REDRAFT_LOG_COMPILES"):
        return
    module = getattr(fn, "__module__", None) or ""
    if module == "redraft" or module.startswith("redraft."):
        return  # redraft's own rules and helpers
    try:
        if fn in _LOGGED:
            return
        _LOGGED.add(fn)
    except TypeError:
        pass  # not weakly referenceable: log every time
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    name = getattr(fn, "__qualname__", repr(fn))
    detail = f": {reason}" if reason else ""
    print(f"redraft: Core of {name}{where} from its {path}{detail}", file=sys.stderr)


def short_reason(error: Exception) -> str:
    """Why the source was unavailable, without the frontend's advice."""
    text = str(error).split(". Define it in a file")[0]
    return f"its source could not be read ({text})"


def trace_function(fn: types.FunctionType, error: SourceUnavailableError,
                   specs: tuple | None = None) -> ir.Function:
    """Core for `fn` by tracing it; `error` says why its source could not be read. `specs`
    (compiler/tracing/specialise.py) says what each parameter is traced as: one tracer
    (the default), a pytree of tracers, or a known value."""
    reason = short_reason(error)
    code = fn.__code__
    name = fn.__name__ if fn.__name__.isidentifier() else "lambda_"
    params = code.co_varnames[:code.co_argcount]
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise SourceUnavailableError(
            f"{code.co_filename}:{code.co_firstlineno}: {fn.__qualname__} takes *args or "
            f"**kwargs, so redraft cannot trace it, and {reason}") from None
    kwonly = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    missing = [k for k in kwonly if k not in (fn.__kwdefaults__ or {})]
    if missing:
        raise SourceUnavailableError(
            f"{code.co_filename}:{code.co_firstlineno}: {fn.__qualname__} has keyword-only "
            f"parameters without defaults ({', '.join(missing)}), so redraft cannot trace "
            f"it, and {reason}") from None
    log_path(fn, "trace", reason)
    rec = Recording(name, reason, code.co_filename, code.co_firstlineno)
    rec.reserved = set(params)
    env = Environment(rec)
    traced = env.rebuild(fn)
    specs = specs or (Opaque(),) * len(params)
    out = traced(*(_argument(rec, env, p, spec) for p, spec in zip(params, specs)))
    result = rec.atom(out)
    body = rec.body + [ir.Return(result, (code.co_filename, code.co_firstlineno))]
    return ir.Function(name, tuple(params), body, tuple(fn.__defaults__ or ()),
                       code.co_filename, code.co_firstlineno,
                       meta={"source_fn": fn, "traced": reason})


def _argument(rec: Recording, env: Environment, param: str, spec):
    """What the traced function receives for `param`: a tracer; a pytree whose leaves are
    tracers of `leaf_0, ..., leaf_n = tree_leaves(param)`; or a known value as itself."""
    if isinstance(spec, Known):
        return env.wrap(spec.value, param)
    if isinstance(spec, Tree):
        n = spec.treedef.num_leaves
        call = ir.Call(TREE_LEAVES, (ir.Var(param),))
        if n == 1:  # (one target is a plain assignment in Core)
            tracers = [rec.emit(call)[0]]
        else:
            tracers = rec.emit_unpacked(call, n) if n else []
        return tree_unflatten(spec.treedef, tracers)
    return Tracer(rec, ir.Var(param))
