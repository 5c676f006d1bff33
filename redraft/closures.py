"""closure_convert, and packed_closure (its form for library rules): a function's captured
values as explicit arguments, so that custom derivative rules can differentiate them.

Outside any transform these run as Python; inside a transformed function the frontend
lowers calls of them (compiler/frontend/control_flow.py), since only it knows which values
a local function captures (they are its lifted Core function's trailing parameters).
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["closure_convert", "packed_closure"]

def closure_convert(fun: Callable, *example_args) -> tuple[Callable, list]:
    """(converted, consts): `converted(*args, *consts)` is `fun(*args)`, and `consts` are the
    values `fun` captures that transforms follow, so a custom rule can take them as
    arguments. A local function of a transformed function is lifted with its captured values
    as trailing parameters (compiler/frontend/local_functions.py): those are the consts, and
    the frontend lowers this call to `(lifted, [captured...])`. Called on a plain Python
    function outside any transform there is nothing to differentiate, so, as in JAX outside
    a trace, the function itself comes back with no consts."""
    from redraft.compiler.frontend.local_functions import Closure
    if isinstance(fun, Closure):
        return fun.function, list(fun.captured)
    if not callable(fun):
        raise TypeError(f"closure_convert: {fun!r} is not a function")
    return fun, []


def packed_closure(fun: Callable) -> tuple[Callable, tuple]:
    """(packed, consts) with `packed(x, consts)` = `fun(x)`: closure_convert for a function
    of one argument whose values come as one tuple, so that library rules (lax.custom_root,
    custom_linear_solve) call it without spreading arguments. The frontend lowers it for a
    local function (compiler/frontend/control_flow.py); here, outside any transform, the
    function keeps what it captures."""
    from redraft.compiler.frontend.control_flow import packed_function
    from redraft.compiler.frontend.local_functions import Closure
    if isinstance(fun, Closure):  # a local function's value, made by transformed code
        name = getattr(fun.function, "__name__", "closure")
        return packed_function(fun.function, len(fun.captured), name), tuple(fun.captured)
    if not callable(fun):
        raise TypeError(f"{fun!r} is not a function")
    return (lambda x, consts: fun(x)), ()
