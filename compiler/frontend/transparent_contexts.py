"""Context managers that change no value, so a `with` block of one in transformed source is
its body: `with named_scope("layer"): y = f(x)` lowers to `y = f(x)`.

redraft.contexts registers them (named_scope, default_matmul_precision,
ensure_compile_time_eval: redraft computes with concrete values at once anyway). Any other
`with` in transformed source is refused, saying why.
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.transforms.cache import IdentityTable

TRANSPARENT: IdentityTable = IdentityTable()  # context manager function -> itself


def deftransparent_context(fn: Callable) -> None:
    """`with fn(...):` in transformed source is read as its body alone."""
    TRANSPARENT[fn] = fn


def is_transparent(fn) -> bool:
    try:
        return fn in TRANSPARENT
    except TypeError:
        return False
