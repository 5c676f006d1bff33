"""`*args`, `**kwargs` and keyword-only parameters, desugared against the shape of a call.

Core functions take every argument by position. A function whose signature gathers
arguments (`def f(x, *args, lam=0.1, **kwargs)`) is therefore specialised on the shape of
each call: how many extra positional arguments it gets, which keyword-only parameters it is
given, which other keywords it gathers. The specialisation is an ordinary Core function
whose parameters are, in this order,

    the named positional parameters            x
    one per extra positional argument          args_0, args_1, ...
    the keyword-only parameters passed         lam          (sorted by name)
    one per gathered keyword                   kwargs_beta  (sorted by name)

and whose body starts by rebuilding what the user's code reads: `args = (args_0, args_1)`,
`kwargs = {"beta": kwargs_beta}`, and the keyword-only parameters not passed bound to their
default values. The arity and the keyword names are part of the specialisation (DESIGN.md,
"Python values, specialisation"), so every transform sees fixed positional parameters.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from typing import Any, Callable

from redraft.runtime.errors import RedraftError

_GATHERS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


@dataclass(frozen=True)
class CallShape:
    """What a call gives a gathering signature, beyond its named positional parameters."""
    n_extra: int = 0                 # positional arguments gathered by *args
    kwonly: tuple[str, ...] = ()     # keyword-only parameters given (sorted)
    extra_kw: tuple[str, ...] = ()   # keywords gathered by **kwargs (sorted)
    # parameters the body spreads (`f(*params)`, `f(**cfg)`), with the structure the call
    # gives them: (name, length of a tuple or list) or (name, keys of a dict)
    spread: tuple[tuple[str, object], ...] = ()


def gathers(fn) -> bool:
    """Whether the code that runs when `fn` is called has *args, **kwargs or keyword-only
    parameters (a plain Python function; a functools.wraps wrapper counts as itself)."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(code, type(gathers.__code__)):
        return False
    return bool(code.co_flags & _GATHERS) or code.co_kwonlyargcount > 0


_SPREAD_CACHE: dict = {}


def spread_parameters(fn) -> tuple[str, ...]:
    """Parameters of the user's function `fn` that its body spreads into a call (`*p`,
    `**p`) and never rebinds: their length or keys specialise its Core."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(code, type(gathers.__code__)):
        return ()
    if (getattr(fn, "__module__", "") or "").startswith("redraft."):
        return ()
    hit = _SPREAD_CACHE.get(code)
    if hit is None:
        hit = _SPREAD_CACHE[code] = _find_spread_parameters(fn)
    return hit


def _find_spread_parameters(fn) -> tuple[str, ...]:
    import gast

    from redraft.compiler.frontend.local_functions import assigned_names
    from redraft.compiler.frontend.source import parse_function
    try:
        node = parse_function(fn).node
    except (SyntaxError, OSError, TypeError, ValueError, RedraftError):
        return ()
    args = node.args
    params = {a.id for a in list(getattr(args, "posonlyargs", [])) + list(args.args)}
    body = node.body if isinstance(node.body, list) else [node.body]
    params -= assigned_names(body)
    found: set[str] = set()
    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.FunctionDef, gast.Lambda)):
            continue
        if isinstance(n, gast.Call):
            spread = [a.value for a in n.args if isinstance(a, gast.Starred)]
            spread += [k.value for k in n.keywords if k.arg is None]
            found |= {v.id for v in spread if isinstance(v, gast.Name) and v.id in params}
        todo.extend(gast.iter_child_nodes(n))
    return tuple(sorted(found))


def structure_of(fn, flat: list) -> tuple[tuple[str, object], ...]:
    """CallShape.spread for the flat arguments of a call of `fn`."""
    names = spread_parameters(fn)
    if not names:
        return ()
    params = [p.name for p in running_signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    for name in names:
        value = flat[params.index(name)] if name in params else None
        if isinstance(value, (tuple, list)):
            out.append((name, len(value)))
        elif isinstance(value, dict) and all(isinstance(k, str) for k in value):
            out.append((name, tuple(value)))
    return tuple(out)


def running_signature(fn) -> inspect.Signature:
    """The signature of the code that runs (not of what a functools.wraps wrapper wraps)."""
    return inspect.signature(fn, follow_wrapped=False)


def bind(fn, args: list, kwargs: dict, default: Callable[[str, Any], Any]) -> tuple[
        CallShape, list]:
    """(shape, flat arguments) of the call `fn(*args, **kwargs)`, in the order the module
    docstring gives. `args`/`kwargs` hold values or Core atoms alike; a named positional
    parameter left out becomes `default(name, value)`. Raises TypeError as Python would."""
    shape, flat, _ = bind_with_kinds(fn, args, kwargs, default)
    return shape, flat


def bind_with_kinds(fn, args: list, kwargs: dict, default: Callable[[str, Any], Any]):
    """bind(...), and for each flat argument where it came from: 'position', 'keyword' or
    'default' (vmap maps keywords along axis 0 and leaves defaults unmapped)."""
    sig = running_signature(fn)
    params = list(sig.parameters.values())
    named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    has_varkw = any(p.kind is p.VAR_KEYWORD for p in params)
    kwonly = {p.name: p for p in params if p.kind is p.KEYWORD_ONLY}
    name = getattr(fn, "__name__", "function")
    if len(args) > len(named) and not has_varargs:
        raise TypeError(f"{name}() takes {len(named)} positional arguments but {len(args)} "
                        "were given")
    given = {p.name: a for p, a in zip(named, args)}
    extra = list(args[len(named):])
    passed_kwonly, gathered = {}, {}
    for k, v in kwargs.items():
        if k in given:
            raise TypeError(f"{name}() got multiple values for argument {k!r}")
        if any(p.name == k and p.kind is p.POSITIONAL_OR_KEYWORD for p in named):
            given[k] = v
        elif k in kwonly:
            passed_kwonly[k] = v
        elif has_varkw:
            gathered[k] = v
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
    flat, kinds = [], []
    for i, p in enumerate(named):
        if p.name in given:
            flat.append(given[p.name])
            kinds.append("position" if i < len(args) else "keyword")
        elif p.default is not inspect.Parameter.empty:
            flat.append(default(p.name, p.default))
            kinds.append("default")
        else:
            raise TypeError(f"{name}() missing required argument {p.name!r}")
    for k, p in kwonly.items():
        if k not in passed_kwonly and p.default is inspect.Parameter.empty:
            raise TypeError(f"{name}() missing required keyword-only argument {k!r}")
    shape = CallShape(len(extra), tuple(sorted(passed_kwonly)), tuple(sorted(gathered)))
    flat += extra
    flat += [passed_kwonly[k] for k in shape.kwonly]
    flat += [gathered[k] for k in shape.extra_kw]
    kinds += ["position"] * len(extra) + ["keyword"] * (len(flat) - len(kinds) - len(extra))
    return shape, flat, kinds


def specialises(fn) -> bool:
    """Whether calls of the user's function `fn` are specialised on their shape."""
    return gathers(fn) or bool(spread_parameters(fn))


def with_structure(fn, shape: CallShape, flat: list) -> CallShape:
    """`shape` with the structure of the spread parameters that `flat` gives."""
    return replace(shape, spread=structure_of(fn, flat))


def unflatten(fn, shape: CallShape, flat: tuple) -> tuple[tuple, dict]:
    """(args, kwargs) that call `fn` as the flat arguments of `shape` say."""
    sig = running_signature(fn)
    n_named = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  for p in sig.parameters.values())
    n_args = n_named + shape.n_extra
    keys = shape.kwonly + shape.extra_kw
    if len(flat) != n_args + len(keys):
        raise TypeError(f"{getattr(fn, '__name__', 'function')}() specialised for "
                        f"{n_args + len(keys)} arguments got {len(flat)}")
    return tuple(flat[:n_args]), dict(zip(keys, flat[n_args:]))


def flat_names(fn, shape: CallShape) -> list[str]:
    """A name for each flat argument of `shape` (for signatures and error messages)."""
    params = list(running_signature(fn).parameters.values())
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
    varkw = next((p.name for p in params if p.kind is p.VAR_KEYWORD), "kwargs")
    return (named + [f"{var}_{i}" for i in range(shape.n_extra)] + list(shape.kwonly)
            + [f"{varkw}_{k}" for k in shape.extra_kw])
