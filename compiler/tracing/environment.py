"""What a traced function sees: its globals and closure cells, with redraft's modules and
functions swapped for recording proxies.

The traced function is rebuilt around the same code object with a globals mapping that
wraps each value as it is first read: a redraft module becomes a proxy whose functions
record a Core call when a tracer is among their arguments (and run as they are when none
is, so constants fold); a user function whose source can be read is recorded as a call
(the transforms then read its source); one whose source cannot be read is run under the
same proxies, so its work is inlined into the trace.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from redraft.compiler.core import ir
from redraft.compiler.tracing.inline import run_core, straight_line
from redraft.compiler.tracing.readable import is_traced
from redraft.compiler.tracing.tracer import VIEWS, Recording, holds_tracer, unwrap


def _is_redraft(value) -> bool:
    module = getattr(value, "__module__", None)
    if isinstance(value, types.ModuleType):
        module = value.__name__
    return isinstance(module, str) and (module == "redraft" or module.startswith("redraft."))


_TREE_MODULES = ("redraft.tree_util", "redraft.tree", "redraft.runtime.pytree")


def _is_tree_util(value) -> bool:
    """A pytree utility (tree_map, tree_leaves, ...): the structure of a traced function's
    arguments is known while it runs, so these run as Python over tracers."""
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(
        value, "__module__", None)
    return module in _TREE_MODULES


def _has_rules(value) -> bool:
    from redraft.compiler.primitives.registry import rules_for
    try:
        return rules_for(value) is not None
    except TypeError:
        return False


# (fn, args) -> (fn specialised on args, its Core), or None where that is fn itself:
# installed by compiler/transforms/calls/callable_core.py, which reads Core (above us).
_SPECIALISED: list[Callable] = []


def install_specialised_core(specialised_core: Callable) -> None:
    """Called once by compiler/transforms/calls/callable_core.py when it is imported."""
    _SPECIALISED[:] = [specialised_core]


class Environment:
    """The proxies and rebuilt functions of one trace."""

    def __init__(self, rec: Recording):
        self.rec = rec
        self.globals: dict[int, TracingGlobals] = {}
        self.rebuilt: dict[int, types.FunctionType] = {}

    def wrap(self, value, path: str, root=None):
        """`value`, read by traced code under the name `path`, as the trace should see it."""
        if _is_tree_util(value):
            return value  # runs on the structure the trace holds, its leaves tracers
        if isinstance(value, types.ModuleType):
            return ModuleProxy(self, value, path, root) if _is_redraft(value) else value
        if isinstance(value, types.FunctionType) and not _is_redraft(value):
            if _readable(value) and not _has_rules(value):
                return Recorded(self, value, path, root)
            return TracedThrough(self, value) if not _has_rules(value) else Recorded(
                self, value, path, root)
        if callable(value) and not isinstance(value, type) and (
                _is_redraft(value) or _has_rules(value) or _is_transformed(value)):
            return Recorded(self, value, path, root)
        return value

    def rebuild(self, fn: types.FunctionType) -> types.FunctionType:
        """`fn` around the same code, reading its globals and cells through proxies."""
        key = id(fn)
        if key in self.rebuilt:
            return self.rebuilt[key]
        gkey = id(fn.__globals__)
        if gkey not in self.globals:
            self.globals[gkey] = TracingGlobals(self, fn.__globals__)
        cells = None
        if fn.__closure__:
            cells = tuple(self._cell(name, cell) for name, cell in
                          zip(fn.__code__.co_freevars, fn.__closure__))
        out = types.FunctionType(fn.__code__, self.globals[gkey], fn.__name__,
                                 fn.__defaults__, cells)
        out.__kwdefaults__ = fn.__kwdefaults__
        self.rec.codes.add(fn.__code__)
        self.rebuilt[key] = out
        return out

    def _cell(self, name: str, cell):
        try:
            value = cell.cell_contents
        except ValueError:
            return cell  # empty: assigned later (a recursive local function)
        return types.CellType(self.wrap(value, name))


def _readable(fn: types.FunctionType) -> bool:
    from redraft.compiler.frontend.source import SourceUnavailableError, parse_function
    try:
        parse_function(fn)
    except (SourceUnavailableError, OSError, SyntaxError):
        return False
    return True


def _is_transformed(value) -> bool:
    return hasattr(value, "__redraft_transformable__")


class TracingGlobals(dict):
    """A function's globals, each value wrapped for the trace when first read."""

    def __init__(self, env: Environment, original: dict):
        super().__init__()
        self.env = env
        self.original = original
        if "__builtins__" in original:
            self["__builtins__"] = original["__builtins__"]

    def __missing__(self, name: str):
        if name not in self.original:
            raise KeyError(name)  # Python then looks in the builtins
        value = self.env.wrap(self.original[name], name)
        self[name] = value
        return value


class ModuleProxy:
    """A redraft module read by traced code: its attributes are wrapped in turn."""

    def __init__(self, env: Environment, module: types.ModuleType, path: str, root):
        self._env, self._value, self._path = env, module, path
        self._root = root if root is not None else module

    def __getattr__(self, name: str):
        value = getattr(self._value, name)
        return self._env.wrap(value, f"{self._path}.{name}", self._root)

    def __repr__(self) -> str:
        return f"<traced view of {self._value.__name__}>"


class Recorded:
    """A library function (or a transformed one) read by traced code: a call with a tracer
    among its arguments is recorded; a call without runs now."""

    def __init__(self, env: Environment, value, path: str, root):
        self._env, self._value = env, value
        self._ref = ir.Ref(value, path, root)

    def __call__(self, *args, **kwargs):
        if holds_tracer(args, kwargs):
            found = self._specialised(args, kwargs)
            if found is None:
                return self._env.rec.call(self._ref, args, kwargs)
            target, core = found  # a transform of a traced function: run its Core here
            if straight_line(core) and len(args) <= len(core.params):
                return run_core(self._env.rec, self._env.wrap, core, list(args))
            ref = ir.Ref(target, self._env.rec.fresh_alias(target))
            return self._env.rec.call(ref, args, kwargs)
        out = self._value(*(unwrap(a) for a in args), **kwargs)
        if callable(out) and not isinstance(out, type) and _is_transformed(out):
            return Recorded(self._env, out, self._env.rec.fresh_alias(out), None)
        return out

    def _specialised(self, args: tuple, kwargs: dict):
        """(callable, its Core) where the call is of a traced function or a transform of
        one (grad(loss) inside a traced update): specialised on the structure its
        arguments have here, as at top level; else None (the call is recorded as it is)."""
        value = self._value
        if kwargs or not _SPECIALISED or not (hasattr(value, "__redraft_rewrap__")
                                              or is_traced(value)):
            return None
        return _SPECIALISED[0](value, tuple(unwrap(a) for a in args))

    def __getattr__(self, name: str):
        return getattr(self._value, name)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, self._value)

    def __repr__(self) -> str:
        return f"<traced view of {self._value!r}>"


class TracedThrough:
    """A user function without readable source, called from traced code: run it under the
    same proxies, so what it does is recorded inline."""

    def __init__(self, env: Environment, fn: types.FunctionType):
        self._env, self._fn = env, fn

    def __call__(self, *args, **kwargs):
        return self._env.rebuild(self._fn)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fn, name)


VIEWS.update({ModuleProxy: lambda proxy: proxy._value, Recorded: lambda proxy: proxy._value,
              TracedThrough: lambda proxy: proxy._fn})
