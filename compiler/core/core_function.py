"""A Core function redraft made itself (no Python source) as a Python value: callable, and
transformable by the one protocol the transforms read.

The protocol: an object whose Core redraft knows has a method `__redraft_transformable__()`
returning that Core (an ir.Function); every transform, staging and specialisation read a
callable's Core through it before reading its source. A CoreFunction, a loaded generated
function (compiler/core/loader.py), a transformed or jitted function and a specialised one
carry it."""
from __future__ import annotations

import inspect
from typing import Callable

from redraft.compiler.core.loader import load


def carries_core(obj) -> bool:
    """Whether `obj` carries its Core (the protocol above)."""
    return hasattr(obj, "__redraft_transformable__")


def carried_core(obj):
    """The Core `obj` carries, or None when it carries none."""
    method = getattr(obj, "__redraft_transformable__", None)
    return method() if method is not None else None


class CoreFunction:
    """A Core function made by redraft itself (no Python source): callable, transformable."""

    def __init__(self, core, header: str = ""):
        self.core = core
        self.header = header
        self.__name__ = core.name
        self._fn: Callable | None = None

    def __call__(self, *args):
        if self._fn is None:
            self._fn = load(self.core, header=self.header)
        return self._fn(*args)

    def __redraft_transformable__(self):
        return self.core

    @property
    def __signature__(self):
        """Its Core's parameters, so that jit and the transforms bind arguments to them."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        n_required = len(self.core.params) - len(self.core.defaults)
        return inspect.Signature([
            inspect.Parameter(p, kind) if i < n_required else
            inspect.Parameter(p, kind, default=self.core.defaults[i - n_required])
            for i, p in enumerate(self.core.params)])
