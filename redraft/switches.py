"""Process-wide switches the context managers of redraft.contexts set and the runtime reads:
kept apart so that jit (which reads them) and the context managers (which set them) import
nothing of each other."""
from __future__ import annotations

import threading

_local = threading.local()


def jit_disabled() -> bool:
    """Whether `with redraft.disable_jit():` is in force on this thread."""
    return getattr(_local, "jit_disabled", False)


def set_jit_disabled(value: bool) -> bool:
    """Set the switch; returns its previous value."""
    previous = jit_disabled()
    _local.jit_disabled = bool(value)
    return previous


def name_stack() -> tuple[str, ...]:
    """The names of the enclosing `with redraft.named_scope(...)` blocks, outermost first."""
    return getattr(_local, "names", ())


def set_name_stack(names: tuple[str, ...]) -> tuple[str, ...]:
    previous = name_stack()
    _local.names = names
    return previous


def tracing_forbidden() -> bool:
    """Whether `with redraft.no_tracing():` is in force: compiling a function raises."""
    return getattr(_local, "no_tracing", False)


def set_tracing_forbidden(value: bool) -> bool:
    previous = tracing_forbidden()
    _local.no_tracing = bool(value)
    return previous
