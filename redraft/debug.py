"""redraft.debug: printing values from inside transformed and compiled functions.

`debug.print(fmt, *args, **kwargs)` formats like `str.format`. Run eagerly it prints at once;
inside a jit-compiled function it becomes the compiler's print operation, so it prints the
values of every run (not of the compilation), as a Python `print` there does.
"""
from __future__ import annotations

import builtins
import inspect
import logging
import pdb
from typing import Any, Callable, Sequence

from redraft.runtime.array import Array
from redraft.runtime.devices import devices
from redraft.sharding import SingleDeviceSharding
from redraft.runtime.pytree import tree_flatten, tree_leaves, tree_unflatten
from redraft.runtime.staged import StagedBuf

__all__ = ["print", "callback", "log", "breakpoint", "inspect_array_sharding",
           "visualize_array_sharding", "visualize_sharding", "DebugEffect",
           "OrderedDebugEffect", "SingleDeviceSharding"]


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


class _CallbackCall:
    """Stands where a print's template does: compiled code and the IR interpreter call
    `format(*operands)` at run time and print what it returns, so this calls the user's
    callback with the run's values and returns "" (nothing printed)."""

    def __init__(self, fn: Callable, treedef, leaves: list, array_slots: list[int]) -> None:
        self.fn, self.treedef, self.leaves, self.array_slots = fn, treedef, leaves, array_slots

    def format(self, *values: Any) -> str:
        leaves = list(self.leaves)
        for slot, value in zip(self.array_slots, values):
            leaves[slot] = value
        args, kwargs = tree_unflatten(self.treedef, leaves)
        self.fn(*args, **kwargs)
        return ""

    def __add__(self, _end: str) -> "_CallbackCall":
        return self

    def __repr__(self) -> str:
        return f"callback {getattr(self.fn, '__name__', 'fn')}"


def callback(callback: Callable, *args: Any, ordered: bool = False, **kwargs: Any) -> tuple:
    """Call `callback(*args, **kwargs)` for its effect: at once when the values are concrete,
    and in a compiled function each time it runs, with that run's values (as Arrays).
    Returns an empty tuple, as print does."""
    leaves, treedef = tree_flatten((args, kwargs))
    builder = _builder(leaves)
    if builder is None:
        callback(*args, **kwargs)
        return ()
    slots = [k for k, leaf in enumerate(leaves) if isinstance(leaf, Array)]
    from redraft.compiler.ir.ssa import print_p
    call = _CallbackCall(callback, treedef, leaves, slots)
    builder.emit(print_p, [builder.atom(leaves[k]) for k in slots], [], {"template": call}, [])
    return ()


def log(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> tuple:
    """As print, but the text goes to the `redraft.debug` logger at INFO level (Python's
    logging decides where it shows), at run time in compiled code."""
    return callback(_log_formatted, fmt, *args, **kwargs)


def _log_formatted(fmt: str, *args: Any, **kwargs: Any) -> None:
    logging.getLogger("redraft.debug").info(fmt.format(*args, **kwargs))


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None,
               **kwargs: Any) -> tuple:
    """Stop in Python's debugger (pdb) in the caller's frame, where its arrays can be
    inspected; eager only. Compiled code has no Python frame to stop in: under jit this
    raises, so call the function un-jitted (or use debug.print / debug.callback) to look."""
    from redraft.runtime.staging_context import active_builder
    frame = inspect.currentframe().f_back
    if active_builder() is not None:
        raise NotImplementedError(
            "debug.breakpoint inside a compiled function: compiled code has no Python frame "
            "to stop in; run the function without jit, or use debug.print/debug.callback")
    pdb.Pdb(nosigint=True).set_trace(frame)
    return ()


# ---- sharding on a single device -----------------------------------------------------------

def _sharding_of(value: Any) -> SingleDeviceSharding:
    device = value.device if isinstance(value, Array) and type(value._buf) is not StagedBuf \
        else devices()[0]
    return SingleDeviceSharding(device)


def inspect_array_sharding(value: Any, *, callback: Callable) -> None:
    """Call `callback(sharding)` for each array in `value` with its sharding (when the
    function is traced, under jit; at once eagerly): a SingleDeviceSharding, redraft's only
    layout."""
    for leaf in tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_sharding(shape: Sequence[int], sharding: SingleDeviceSharding, *,
                       use_color: bool = True, scale: float = 1.0, min_width: int = 9,
                       max_width: int = 80, color_map=None) -> None:
    """Print a box showing which device holds the array of `shape` (one box: the whole
    array lives on one device)."""
    if len(shape) > 2:
        raise ValueError(f"visualize_sharding draws arrays of rank at most 2, got shape "
                         f"{tuple(shape)}")
    device = next(iter(sharding.device_set))
    label = f"{device.platform.upper()} {device.id}"
    width = max(min_width, min(max_width, int(round(len(label) + 4) * scale)))
    inner = width - 2
    builtins.print("┌" + "─" * inner + "┐")
    builtins.print("│" + label.center(inner) + "│")
    builtins.print("└" + "─" * inner + "┘")


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """visualize_sharding of the array's own shape and sharding."""
    visualize_sharding(tuple(arr.shape), _sharding_of(arr), **kwargs)


class DebugEffect:
    """The effect of debug.print/callback/log without ordered=True: runs at run time, may be
    reordered relative to other unordered effects (redraft runs them in program order)."""


class OrderedDebugEffect(DebugEffect):
    """The effect of debug.print/callback/log with ordered=True: runs in program order."""


def effect_of(ordered: bool) -> type[DebugEffect]:
    """The effect kind a debug call with this `ordered` flag has."""
    return OrderedDebugEffect if ordered else DebugEffect


def _register_rules() -> None:
    """Printing has no derivative (the transforms keep the call and differentiate around
    it); under vmap it prints once per example, as JAX does."""
    from redraft.compiler.transforms.batch.batching import defbatch_loop
    from redraft.compiler.primitives.registry import defnondiff
    defnondiff(print, "prints its arguments; its result is None")
    defnondiff(callback, "calls back into Python for an effect; its result is None")
    defnondiff(log, "logs its arguments; its result is None")
    defbatch_loop(print, "prints each example's values", returns="any")
    defbatch_loop(callback, "calls back once per example", returns="any")
    defbatch_loop(log, "logs each example's values", returns="any")


_register_rules()
