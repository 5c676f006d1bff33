"""Function annotations that keep a function's values: `checkpoint`/`remat` and `named_call`.

In JAX, `checkpoint` makes reverse mode recompute the function's intermediate values in the
backward pass instead of storing them: a memory/time trade with the same values and
derivatives. redraft's reverse mode stores what the backward pass reads, so here it returns
the function itself (same values and derivatives; no memory saving). `named_call` names a
function for profiles, which redraft has no use for.
"""
from __future__ import annotations

import functools
from typing import Any, Callable


def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True,
               policy: Callable | None = None, static_argnums: Any = ()) -> Callable:
    """`fun` with the same values and derivatives (see the module docstring). Usable as
    `checkpoint(f)` and as `@checkpoint(policy=...)`."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint expects a function, got {type(fun).__name__}")
    return fun


remat = checkpoint


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` itself (a name for profiles in JAX)."""
    if not callable(fun):
        raise TypeError(f"named_call expects a function, got {type(fun).__name__}")
    return fun
