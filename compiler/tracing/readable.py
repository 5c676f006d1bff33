"""Which functions redraft reads by tracing: a user's plain function without readable source
(made by `exec`, typed into a plain `python` REPL), or a transform of one. Their Core depends
on the structure of their arguments (compiler/tracing/specialise.py), so the callers that see
arguments ask this first."""
from __future__ import annotations

import types
import weakref

_TRACED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # code -> bool


def is_traced(fn) -> bool:
    """Whether transforms read `fn` by tracing it: a user's plain function (no rules of
    its own, not redraft's) whose source cannot be read."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, "__redraft_transformable__"):
        return False
    if (getattr(fn, "__module__", "") or "").startswith("redraft"):
        return False
    code = fn.__code__
    found = _TRACED.get(code)
    if found is None:
        found = _TRACED[code] = _unreadable(fn)
    return found


def traced_within(fn) -> bool:
    """Whether `fn` is traced, or a transform (grad, jit, vmap, ...) of a traced function:
    then its Core depends on the structure of its arguments."""
    while hasattr(fn, "__redraft_rewrap__") and getattr(fn, "__redraft_inner__", None):
        fn = fn.__redraft_inner__
    return is_traced(fn)


def _unreadable(fn) -> bool:
    from redraft.compiler.frontend.source import SourceUnavailableError, parse_function
    from redraft.compiler.primitives.registry import rules_for
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn) or rules_for(fn) is not None:
        return False
    try:
        parse_function(fn)
    except SourceUnavailableError:
        return True
    except (OSError, SyntaxError):
        return False
    return False
