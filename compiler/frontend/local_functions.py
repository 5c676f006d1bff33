"""Functions defined inside a transformed function (`def body(i, x): ...`, lambdas), lifted
to Core functions of their own.

A local function becomes a Core function whose parameters are its own, followed by the
enclosing function's locals it reads (its captured values). Every call passes them along,
so `body(i, x)` reads as `body(i, x, W)` in Core. A local function may be called, or
passed to lax.fori_loop/while_loop/cond/switch/scan/map (which the frontend lowers to
Core loops and branches that call it); storing or returning it is refused.

One with *args, **kwargs or keyword-only parameters (GatheringLocal) is lowered per call
shape, each call bound as Python binds it. One that assigns a `nonlocal` of the function
enclosing it (ThreadingLocal) returns the new value with its result, and each direct call
assigns it in the caller; it may not be used as a value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import gast

from redraft.compiler.core import ir
from redraft.compiler.frontend.call_shape import CallShape


@dataclass(eq=False)
class LocalFunction:
    """A lifted local function: its Core (as a callable CoreFunction) and captured names;
    `params` its own parameters (empty: unknown, positional calls only) and `defaults`
    the atoms its trailing ones default to, evaluated where it was defined, as Python
    evaluates them (so `lambda t, i=i: t * i` keeps the i of its definition)."""
    name: str
    function: object  # callees.CoreFunction
    captured: tuple[str, ...]
    params: tuple[str, ...] = ()
    defaults: tuple = ()

    def __call__(self, *args):
        if self.captured:
            raise TypeError(f"local function {self.name} can only be called inside the "
                            "function that defines it")
        return self.function(*args)


class GatheringLocal(LocalFunction):
    """A local function with *args, **kwargs or keyword-only parameters. Each call seen in
    the enclosing function binds its arguments as Python would (a stub with the same
    signature binds them, so a bad call raises Python's own TypeError) and calls the
    function's Core specialised on that call's shape (compiler/frontend/call_shape.py):
    the named positional parameters, one per extra positional argument, every keyword-only
    parameter (sorted by name; those not passed get their default's atom), one per
    gathered keyword, then the captured values. `function`, what a use as a value reads,
    is the specialisation for positional arguments only."""

    def __init__(self, name: str, captured: tuple[str, ...], params: tuple[str, ...],
                 defaults: tuple, kwonly: tuple[str, ...], kwonly_defaults: dict,
                 binder: Callable,
                 specialise: Callable[[CallShape], object]):
        self.name = name
        self.captured = captured
        self.params = params
        self.defaults = defaults
        self.kwonly = tuple(sorted(kwonly))  # the keyword-only parameters
        self.kwonly_defaults = kwonly_defaults  # those with a default -> its atom
        self.binder = binder
        self.specialise = specialise
        self.specialised: dict[CallShape, object] = {}

    @property
    def function(self):
        return self.for_shape(CallShape())

    def for_shape(self, shape: CallShape):
        """The Core function specialised on `shape` (made once)."""
        made = self.specialised.get(shape)
        if made is None:
            made = self.specialised[shape] = self.specialise(shape)
        return made

    def bind(self, args: tuple, kwargs: tuple) -> tuple[object, tuple]:
        """(the specialisation, its arguments, captured values included) for a call with
        these atoms; raises TypeError as Python would for a bad call."""
        bound = self.binder(*args, **dict(kwargs))
        flat = [self.default_of(p, bound[p]) for p in self.params]
        extra = tuple(bound.get(VARARGS, ()))
        flat += list(extra) + [self.default_of(k, bound[k]) for k in self.kwonly]
        gathered = bound.get(VARKW, {})
        flat += [gathered[k] for k in sorted(gathered)]
        shape = CallShape(len(extra), self.kwonly, tuple(sorted(gathered)))
        return self.for_shape(shape), tuple(flat) + tuple(ir.Var(n) for n in self.captured)

    def default_of(self, param: str, value):
        if value is not DEFAULT:
            return value
        if param in self.kwonly_defaults:
            return self.kwonly_defaults[param]
        first = len(self.params) - len(self.defaults)
        return self.defaults[self.params.index(param) - first]


class ThreadingLocal(LocalFunction):
    """A local function that assigns names of the function enclosing it (`nonlocal total`,
    or a call of one that does). Its Core takes their values among its captured ones and
    returns (its result, their new values): a direct call `add(v)` is lowered as
    `t, total = add(v, total)`, so every transform sees the new value as data. Used as a
    value (returned, stored, passed to a loop or a transform) the new values would be
    lost, so `function` there raises `refuse()`."""

    def __init__(self, name: str, threading_function, captured: tuple[str, ...],
                 params: tuple[str, ...], defaults: tuple, threads: tuple[str, ...],
                 refuse: Callable[[], Exception]):
        self.name = name
        self.threading_function = threading_function
        self.captured = captured
        self.params = params
        self.defaults = defaults
        self.threads = threads  # the enclosing function's names a call assigns
        self.refuse = refuse

    @property
    def function(self):
        raise self.refuse()

    def __repr__(self) -> str:
        return f"<local function {self.name} assigning {', '.join(self.threads)}>"


class _Default:
    def __repr__(self) -> str:
        return "<default>"


DEFAULT = _Default()  # what the binder gives a parameter the call leaves to its default
VARARGS, VARKW = "*", "**"  # the binder's keys for what *args and **kwargs gather


def signature_binder(name: str, args) -> Callable:
    """A Python function with the signature of gast arguments `args` (defaults DEFAULT),
    returning {parameter: value} for a call, *args under VARARGS and **kwargs under VARKW:
    calling it binds a call exactly as Python binds it, with Python's TypeError text."""
    posonly = [a.id for a in getattr(args, "posonlyargs", [])]
    named = posonly + [a.id for a in args.args]
    first_default = len(named) - len(args.defaults)
    parts = [p + ("=_default" if i >= first_default else "") for i, p in enumerate(named)]
    if posonly:
        parts.insert(len(posonly), "/")
    if args.vararg is not None:
        parts.append("*" + args.vararg.id)
    elif args.kwonlyargs:
        parts.append("*")
    parts += [a.id + ("" if d is None else "=_default")
              for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        parts.append("**" + args.kwarg.id)
    every = named + [a.id for a in args.kwonlyargs]
    gather = ""
    if args.vararg is not None:
        gather += f"; bound[{VARARGS!r}] = {args.vararg.id}"
    if args.kwarg is not None:
        gather += f"; bound[{VARKW!r}] = {args.kwarg.id}"
    source = (f"def {name}({', '.join(parts)}):\n"
              f"    bound = {{{', '.join(f'{p!r}: {p}' for p in every)}}}{gather}\n"
              "    return bound\n")
    namespace = {"_default": DEFAULT}
    exec(compile(source, f"<signature of {name}>", "exec"), namespace)
    return namespace[name]


class Closure:
    """A local function that captures values, as a value at run time: what passing it to
    a function that is not a transform (tree_map, a user's higher-order helper) passes.
    Calling it calls the lifted function with the captured values appended."""

    def __init__(self, function, *captured):
        self.function = function
        self.captured = captured
        self.__name__ = getattr(function, "__name__", "closure")

    def __call__(self, *args):
        return self.function(*args, *self.captured)

    def __repr__(self) -> str:
        return f"<redraft closure {self.__name__}>"


def closure(function, *captured) -> Closure:
    """The value of a local function capturing `captured` (see Closure)."""
    return Closure(function, *captured)


def assigned_names(body: list) -> set[str]:
    """Names a block assigns, not looking inside nested functions or lambdas."""
    names: set[str] = set()

    def walk(node):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            if isinstance(node, gast.FunctionDef):
                names.add(node.name)
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(node.id)
        for child in gast.iter_child_nodes(node):
            walk(child)

    for stmt in body:
        walk(stmt)
    return names


def read_names(node) -> set[str]:
    """Names a function body reads (loads), nested functions included; a name a nested
    function declares nonlocal counts as read (its value is passed in, see ThreadingLocal)."""
    names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    for n in gast.walk(node):
        if isinstance(n, gast.Nonlocal):
            names |= set(n.names)
    return names


def declared_nonlocal(body: list) -> set[str]:
    """Names a block declares `nonlocal`, not looking inside nested functions."""
    names: set[str] = set()
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Nonlocal):
            names |= set(node.names)
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))
    return names


def closure_call(local: LocalFunction) -> ir.Call:
    """The Core expression making `local`'s value at run time (a Closure)."""
    return ir.Call(ir.Ref(closure, "closure"), (ir.Ref(local.function, local.name),)
                   + tuple(ir.Var(n) for n in local.captured))


def value_call(local: LocalFunction) -> ir.Call:
    """The Core expression making `local`'s value where it is stored or passed (a list of
    `lambda t, k=k: ...`): a Closure over its defaults, then its captured values. Its Core
    takes its own parameters, then the captured ones, so a call of the value with the
    parameters that have no default fills the rest as Python would."""
    return ir.Call(ir.Ref(closure, "closure"), (ir.Ref(local.function, local.name),)
                   + tuple(local.defaults) + tuple(ir.Var(n) for n in local.captured))


def call_atoms(local: LocalFunction, args: tuple, kwargs: tuple = ()) -> tuple:
    """The arguments of a call to `local`: the caller's (keywords put in their parameter's
    place, parameters left out given their defaults), then the captured values."""
    own = bind_arguments(local, tuple(args), tuple(kwargs))
    return own + tuple(ir.Var(n) for n in local.captured)


def bind_arguments(local: LocalFunction, args: tuple, kwargs: tuple) -> tuple:
    if not local.params:
        if kwargs:
            raise TypeError(f"{local.name}() takes positional arguments only")
        return args
    if len(args) > len(local.params):
        raise TypeError(f"{local.name}() takes {len(local.params)} positional arguments but "
                        f"{len(args)} were given")
    slots: list = list(args) + [None] * (len(local.params) - len(args))
    for key, atom in kwargs:
        if key not in local.params:
            raise TypeError(f"{local.name}() got an unexpected keyword argument '{key}'")
        k = local.params.index(key)
        if slots[k] is not None:
            raise TypeError(f"{local.name}() got multiple values for argument '{key}'")
        slots[k] = atom
    first_default = len(local.params) - len(local.defaults)
    for k, atom in enumerate(slots):
        if atom is None:
            if k < first_default:
                raise TypeError(f"{local.name}() missing required argument "
                                f"'{local.params[k]}'")
            slots[k] = local.defaults[k - first_default]
    return tuple(slots)
