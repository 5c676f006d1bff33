"""Functions defined inside a transformed function (`def body(i, x): ...`, lambdas), lifted
to Core functions of their own.

A local function becomes a Core function whose parameters are its own, followed by the
enclosing function's locals it reads (its captured values). Every call passes them along,
so `body(i, x)` reads as `body(i, x, W)` in Core. A local function may be called, or
passed to lax.fori_loop/while_loop/cond/switch/scan/map (which the frontend lowers to
Core loops and branches that call it); storing or returning it is refused.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from redraft.compiler.core import ir


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
    """Names a function body reads (loads), nested functions included."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


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
