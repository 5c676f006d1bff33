"""A traced function specialised on its arguments' structure, as JAX traces per tree.

A function without readable source is traced, and tracing runs its Python: `for w, b in
params` needs the length of `params`, `d["w"]` its keys. So each call's arguments give
the structure the function is traced for: a parameter whose argument is a list, tuple,
dict, namedtuple or registered pytree is traced as that structure of tracers; a function
value, a jitted function's static argument or a default the call leaves to the function is
passed as itself (a constant). `traced_for` gives one
TracedFor per (function, structure), cached, so a call with another structure (three
layers after two) traces again and never runs a Core traced for another.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

from redraft.compiler.core import ir
from redraft.compiler.frontend.source import SourceUnavailableError, parse_function
from redraft.compiler.frontend.ssa import to_ssa
from redraft.compiler.tracing.specs import Known, Opaque, Tree
from redraft.compiler.tracing.trace import trace_function
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state
from redraft.runtime.pytree import tree_flatten

# What the frontend's specialisation lends this module (it sits above: it calls traced_for),
# installed by compiler/frontend/specialise.py at import: "finish" (Core -> Core, the
# folding every read Core gets) and "is_function_value" (value -> bool).
_FRONTEND: dict[str, Callable] = {}


def install_frontend(finish: Callable, is_function_value: Callable) -> None:
    """Called once by compiler/frontend/specialise.py when it is imported."""
    _FRONTEND.update(finish=finish, is_function_value=is_function_value)


# ---- what each parameter is traced as --------------------------------------------------------

ParamSpec = Any  # Opaque | Tree | Known


def spec_of(value, static: bool) -> ParamSpec:
    """What a parameter whose argument is `value` is traced as."""
    if static:
        return Known(value, by_identity=not _hashable(value))
    if _FRONTEND["is_function_value"](value):
        return Known(value, by_identity=True)
    _, treedef = tree_flatten(value)
    if treedef.kind is None:
        return Opaque()
    return Tree(treedef)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def specs_of(fn, args: tuple, static=()) -> tuple[ParamSpec, ...]:
    """One spec per positional parameter of `fn` for a call with positional `args`; a
    parameter the call leaves out is its default, a constant (as in JAX)."""
    n = fn.__code__.co_argcount
    defaults = fn.__defaults__ or ()
    first_default = n - len(defaults)
    specs = []
    for i in range(n):
        if i < len(args):
            specs.append(spec_of(args[i], i in static))
        elif i >= first_default:
            specs.append(spec_of(defaults[i - first_default], True))
        else:
            specs.append(Opaque())
    return tuple(specs)


# ---- the specialised function ------------------------------------------------------------------

class TracedFor:
    """`fn` traced for one structure of its arguments: called, it runs `fn`; its Core
    (every transform reads it) is the trace on tracers of that structure."""

    def __init__(self, fn: types.FunctionType, specs: tuple[ParamSpec, ...]):
        self.fn = fn
        self.specs = specs
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__signature__ = inspect.signature(fn)
        self._core: ir.Function | None = None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __redraft_transformable__(self) -> ir.Function:
        if self._core is None:
            try:
                parse_function(self.fn)
                raise AssertionError("a readable function is not traced")
            except SourceUnavailableError as e:
                core = trace_function(self.fn, e, self.specs)
            self._core = _FRONTEND["finish"](to_ssa(core, coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} traced for {self.specs!r}>"


def traced_for(fn: types.FunctionType, args: tuple, static=()) -> TracedFor:
    """The one TracedFor of `fn` for these arguments' structure (cached by it)."""
    specs = specs_of(fn, args, set(static))
    return TRANSFORM_CACHE.get(fn, ("traced for", code_state(fn), specs),
                               lambda: TracedFor(fn, specs))


def specialise_traced_call(fn, args: tuple, kwargs: dict, static=()):
    """(TracedFor, positional arguments, where each came from) for `fn(*args, **kwargs)`,
    as compiler/frontend/specialise.py's specialise_call gives them."""
    from redraft.compiler.frontend.call_shape import bind_with_kinds
    _, flat, kinds = bind_with_kinds(fn, list(args), dict(kwargs), lambda name, value: value)
    defaulted = {i for i, kind in enumerate(kinds) if kind == "default"}
    return traced_for(fn, tuple(flat), set(static) | defaulted), tuple(flat), tuple(kinds)
