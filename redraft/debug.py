"""redraft.debug: printing values from inside transformed and compiled functions.

`debug.print(fmt, *args, **kwargs)` formats like `str.format`. Run eagerly it prints at once;
inside a jit-compiled function it becomes the compiler's print operation, so it prints the
values of every run (not of the compilation), as a Python `print` there does.
"""
from __future__ import annotations

import builtins
from typing import Any

from redraft.runtime.array import Array
from redraft.runtime.pytree import tree_leaves
from redraft.runtime.staged import StagedBuf

__all__ = ["print", "callback"]


def _builder(values: list):
    """The IR builder staging any of `values`, or None when all are concrete."""
    for v in values:
        if isinstance(v, Array) and type(v._buf) is StagedBuf:
            return v._buf.builder
    return None


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> tuple:  # noqa: A001
    """Print `fmt.format(*args, **kwargs)`; in compiled code, when the code runs.

    Returns an empty tuple (JAX returns None), the empty pytree that vmap's per-example loop
    can stack."""
    builder = _builder(tree_leaves((args, kwargs)))
    if builder is None:
        builtins.print(fmt.format(*args, **kwargs))
    else:
        _stage_print(builder, fmt, args, kwargs)
    return ()


def _stage_print(builder, fmt: str, args: tuple, kwargs: dict) -> None:
    from redraft.compiler.ir.ssa import print_p
    from redraft.compiler.staging.values import StagedString
    for v in list(args) + list(kwargs.values()):
        if not isinstance(v, Array) and any(isinstance(leaf, Array)
                                            for leaf in tree_leaves(v)):
            raise TypeError("debug.print in compiled code formats arrays and Python values; "
                            f"pass the arrays of a {type(v).__name__} one by one")
    template, operands = StagedString(fmt, list(args), kwargs).template_and_operands()
    builder.emit(print_p, [builder.atom(o) for o in operands], [], {"template": template + "\n"},
                 [])


def callback(callback: Any, *args: Any, ordered: bool = False, **kwargs: Any) -> tuple:
    """Call `callback(*args, **kwargs)` for its effect, with concrete values (eager only);
    returns an empty tuple, as print does."""
    if _builder(tree_leaves((args, kwargs))) is not None:
        raise NotImplementedError("debug.callback inside a compiled function: the compiled "
                                  "code cannot call back into Python yet; call it outside jit")
    callback(*args, **kwargs)
    return ()


def _register_rules() -> None:
    """Printing has no derivative (the transforms keep the call and differentiate around
    it); under vmap it prints once per example, as JAX does."""
    from redraft.compiler.transforms.batch.batching import defbatch_loop
    from redraft.compiler.transforms.ad.registry import defnondiff
    defnondiff(print, "prints its arguments; its result is None")
    defnondiff(callback, "calls back into Python for an effect; its result is None")
    defbatch_loop(print, "prints each example's values", returns="any")
    defbatch_loop(callback, "calls back once per example", returns="any")


_register_rules()
