"""The IR builder this thread is staging into, set by the compiler driver while it stages: for
operations with no operand to find it through (lax.axis_index reads its value only when
compiled code runs)."""
from __future__ import annotations

import threading
from contextlib import contextmanager

_local = threading.local()


def active_builder():
    """The builder of the innermost jit staging on this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def staging(builder):
    """Mark `builder` as this thread's active builder for the block."""
    if not hasattr(_local, "stack"):
        _local.stack = []
    _local.stack.append(builder)
    try:
        yield builder
    finally:
        _local.stack.pop()
