"""Context managers of JAX's top level that change how redraft runs code in their block.

disable_jit runs jitted functions op by op (eagerly), for debugging with print and pdb.
ensure_compile_time_eval computes in its block with concrete values even while a function
is being compiled. named_scope names a block (the names are kept on a stack that
`current_name_stack` reads; JAX shows them in profiles). default_device and
default_matmul_precision accept JAX's values: redraft computes matmuls at full precision
always, and on one default device. log_compiles and explain_cache_misses report each
compilation and why it happened (a first call, a new signature) on stderr; no_tracing makes
any compilation in its block an error (to check that a loop reuses compiled code).
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

from redraft import switches

__all__ = ["disable_jit", "ensure_compile_time_eval", "named_scope", "current_name_stack",
           "default_device", "default_matmul_precision", "log_compiles",
           "explain_cache_misses", "no_tracing"]


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """In the block, jitted functions run their Python op by op instead of compiling."""
    previous = switches.set_jit_disabled(disable)
    try:
        yield
    finally:
        switches.set_jit_disabled(previous)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """In the block, array operations on concrete values run at once even inside a function
    being compiled (creation functions such as jnp.arange make concrete arrays, not staged
    ones), so their values can steer Python control flow."""
    from redraft.runtime import staging_context
    stack = getattr(staging_context._local, "stack", None)
    saved = list(stack) if stack else []
    if stack:
        stack.clear()
    try:
        yield
    finally:
        if saved:
            staging_context._local.stack[:] = saved


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Name the block (nested scopes join with '/'); values and derivatives are unchanged."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope needs a string name, got {type(name).__name__}")
    previous = switches.set_name_stack(switches.name_stack() + (name,))
    try:
        yield
    finally:
        switches.set_name_stack(previous)


def current_name_stack() -> str:
    """The enclosing named_scope names joined by '/' ('' outside any)."""
    return "/".join(switches.name_stack())


_DEVICE_STACK: list = []


@contextlib.contextmanager
def default_device(device) -> Iterator[None]:
    """Make `device` the default for arrays created in the block. redraft places new arrays
    on the host and runs each call where its arguments are, so only its own devices (or
    None) are accepted: anything else raises."""
    from redraft.runtime.devices import Device, devices
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"default_device needs a redraft Device or None, got "
                        f"{type(device).__name__}")
    if device is not None and device.platform == "cpu" and device not in devices("cpu"):
        raise ValueError(f"default_device: {device} is not one of this process's devices")
    _DEVICE_STACK.append(device)
    try:
        yield
    finally:
        _DEVICE_STACK.pop()


_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "bfloat16_3x", "fastest", "DEFAULT", "HIGH", "HIGHEST")


@contextlib.contextmanager
def default_matmul_precision(precision: str | None) -> Iterator[None]:
    """Accept a JAX matmul precision for the block. redraft computes every float32 matmul
    in float32 on all its backends (the most precise JAX setting), so each value gives the
    same results; an unknown name raises, as in JAX."""
    if precision not in _PRECISIONS:
        raise ValueError(f"default_matmul_precision: unknown precision {precision!r}; use "
                         f"one of {[p for p in _PRECISIONS if p]}")
    yield


@contextlib.contextmanager
def log_compiles(enable: bool = True) -> Iterator[None]:
    """In the block, each compilation is reported on stderr with its function, signature and
    reason (redraft's REDRAFT_LOG_COMPILES switch)."""
    previous = os.environ.get("REDRAFT_LOG_COMPILES")
    if enable:
        os.environ["REDRAFT_LOG_COMPILES"] = "1"
    else:
        os.environ.pop("REDRAFT_LOG_COMPILES", None)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("REDRAFT_LOG_COMPILES", None)
        else:
            os.environ["REDRAFT_LOG_COMPILES"] = previous


def explain_cache_misses(enable: bool = True):
    """As log_compiles: each compilation's report says why the cache missed (the first call,
    or a signature not compiled before, with how many were)."""
    return log_compiles(enable)


@contextlib.contextmanager
def no_tracing(forbid: bool = True) -> Iterator[None]:
    """In the block, a jitted function that would have to compile (a first call, a new
    signature) raises RuntimeError instead; calls of compiled code run as usual."""
    previous = switches.set_tracing_forbidden(forbid)
    try:
        yield
    finally:
        switches.set_tracing_forbidden(previous)


def _register_transparent() -> None:
    """Inside transformed functions these blocks are their bodies (they change no value)."""
    from redraft.compiler.frontend.transparent_contexts import deftransparent_context
    for fn in (named_scope, default_matmul_precision, ensure_compile_time_eval):
        deftransparent_context(fn)


_register_transparent()
