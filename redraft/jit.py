"""jit / compile: specialise a function on its arguments' types and run it compiled.

Until the compiler backend lands (issue 5), a jitted function runs its source eagerly; it
already composes with every transform (grad(jit(f)) differentiates f's source and keeps
the result jitted).
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence


class Jitted:
    """The callable `jit(fun)` returns."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = ()):
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        for i in self.static_argnums:
            if i < len(args):
                _check_hashable(args[i], f"static argument {i}")
        for name in self.static_argnames:
            if name in kwargs:
                _check_hashable(kwargs[name], f"static argument {name!r}")
        return self.fun(*args, **kwargs)

    def __redraft_transformable__(self):
        from redraft.compiler.transforms.common import core_of
        return core_of(self.fun)

    @property
    def __redraft_primal__(self):
        return self.fun

    def lower(self, *args, **kwargs):
        raise NotImplementedError("ahead-of-time lowering arrives with the compiler backend")

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _check_hashable(value, what: str) -> None:
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"{what} must be hashable, got {type(value).__name__}: static "
                         "arguments are part of the compiled function's cache key") from None


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), **options) -> Callable:
    """Compile `fun` for the shapes and dtypes of its arguments (usable as @jit too)."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, **options)
    return Jitted(fun, static_argnums, static_argnames)


compile = jit  # noqa: A001 - the design card's name for it
