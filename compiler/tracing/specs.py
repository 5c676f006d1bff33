"""What each parameter of a traced function is traced as, for one call's arguments: one
tracer, a pytree of tracers, or a known value (compiler/tracing/specialise.py chooses;
trace.py builds the arguments from them). Specs are hashable: they key the cache of Cores."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redraft.runtime.pytree import PyTreeDef


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
