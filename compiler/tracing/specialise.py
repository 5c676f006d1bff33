"""A traced function specialised on its arguments' structure, as JAX traces per tree.

A function without readable source is traced, and tracing runs its Python: `for w, b in
params` needs the length of `params`, `d["w"]` its keys. So each call's arguments give
the structure the function is traced for: a parameter whose argument is a list, tuple,
dict, namedtuple or registered pytree is traced as that structure of tracers; a function
value or a jitted function's static argument is passed as itself. `traced_for` gives one
TracedFor per (function, structure), cached, so a call with another structure (three
layers after two) traces again and never runs a Core traced for another.
"""
from __future__ import annotations

import inspect
import types
import weakref
from dataclasses import dataclass
from typing import Any

from redraft.compiler.core import ir
from redraft.runtime.pytree import PyTreeDef, tree_flatten

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


def traced_within(fn) -> bool:
    """Whether `fn` is traced, or a transform (grad, jit, vmap, ...) of a traced function:
    then its Core depends on the structure of its arguments."""
    while hasattr(fn, "__redraft_rewrap__") and getattr(fn, "__redraft_inner__", None):
        fn = fn.__redraft_inner__
    return is_traced(fn)


# ---- what each parameter is traced as --------------------------------------------------------

@dataclass(frozen=True)
class Opaque:
    """An array (or a parameter the call leaves to its default): one tracer."""


@dataclass(frozen=True)
class Tree:
    """A pytree argument: traced as this structure with one tracer per leaf."""
    treedef: PyTreeDef


@dataclass(frozen=True, eq=False)
class Known:
    """A value the trace uses as it is (a function argument, a static argument)."""
    value: Any
    by_identity: bool

    def _key(self):
        return ("id", id(self.value)) if self.by_identity else ("value", self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, Known) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())


ParamSpec = Any  # Opaque | Tree | Known


def spec_of(value, static: bool) -> ParamSpec:
    """What a parameter whose argument is `value` is traced as."""
    from redraft.compiler.frontend.specialise import is_function_value
    if static:
        return Known(value, by_identity=False)
    if is_function_value(value):
        return Known(value, by_identity=True)
    _, treedef = tree_flatten(value)
    if treedef.kind is None:
        return Opaque()
    return Tree(treedef)


def specs_of(fn, args: tuple, static=()) -> tuple[ParamSpec, ...]:
    """One spec per positional parameter of `fn` for a call with positional `args`."""
    n = fn.__code__.co_argcount
    return tuple(spec_of(args[i], i in static) if i < len(args) else Opaque()
                 for i in range(n))


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
            from redraft.compiler.frontend.source import SourceUnavailableError, parse_function
            from redraft.compiler.frontend.specialise import fold_static_calls
            from redraft.compiler.frontend.ssa import to_ssa
            from redraft.compiler.tracing.trace import trace_function
            try:
                parse_function(self.fn)
                raise AssertionError("a readable function is not traced")
            except SourceUnavailableError as e:
                core = trace_function(self.fn, e, self.specs)
            self._core = fold_static_calls(to_ssa(core, coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} traced for {self.specs!r}>"


def traced_for(fn: types.FunctionType, args: tuple, static=()) -> TracedFor:
    """The one TracedFor of `fn` for these arguments' structure (cached by it)."""
    from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state
    specs = specs_of(fn, args, set(static))
    return TRANSFORM_CACHE.get(fn, ("traced for", code_state(fn), specs),
                               lambda: TracedFor(fn, specs))


def specialise_traced_call(fn, args: tuple, kwargs: dict, static=()):
    """(TracedFor, positional arguments, where each came from) for `fn(*args, **kwargs)`,
    as compiler/frontend/specialise.py's specialise_call gives them."""
    from redraft.compiler.frontend.call_shape import bind_with_kinds
    _, flat, kinds = bind_with_kinds(fn, list(args), dict(kwargs), lambda name, value: value)
    return traced_for(fn, tuple(flat), static), tuple(flat), tuple(kinds)
