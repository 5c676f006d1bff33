"""config: redraft's global options, read and set as JAX's `jax.config` is.

    redraft.config.update("jax_enable_x64", True)   # float64/int64 become the defaults
    redraft.config.jax_enable_x64                   # -> True
    with redraft.enable_x64(False): ...             # scoped, restored on exit

The options and what they do:

- `jax_enable_x64`: 64-bit types at run time (JAX_ENABLE_X64 or REDRAFT_ENABLE_X64 at import).
- `jax_debug_nans` / `jax_debug_infs`: a NaN (an infinity) in the result of an eager
  operation raises FloatingPointError naming the primitive; in a jitted function's result,
  the function runs again op by op to find the operation (runtime/numeric_checks.py).
  JAX_DEBUG_NANS / JAX_DEBUG_INFS at import.
- `jax_numpy_dtype_promotion`: "standard", or "strict" (redraft.numpy refuses implicit
  promotion between different dtypes, redraft/numpy/promotion.py).
- `jax_numpy_rank_promotion`: "allow", "warn" or "raise" on elementwise operations whose
  operands have different ranks (redraft/numpy/ufuncs.py).
- `jax_transfer_guard` and its `_host_to_device`, `_device_to_host`, `_device_to_device`
  variants: "allow", "log", "disallow", "log_explicit", "disallow_explicit" for copies
  between the host and a GPU (runtime/transfer_guard.py).

The state lives here, below dtypes, so that the runtime, the compiler's caches and the
public API all read the same flags.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

_TRUE = ("1", "true", "yes", "on", "t", "y")
_FALSE = ("", "0", "false", "no", "off", "f", "n")


def _env_flag(*names: str) -> bool:
    """The boolean value of the first of `names` that is set, False if none is."""
    for name in names:
        raw = os.environ.get(name)
        if raw is None:
            continue
        if raw.strip().lower() in _TRUE:
            return True
        if raw.strip().lower() in _FALSE:
            return False
        raise ValueError(f"environment variable {name}={raw!r} is not a boolean "
                         f"(use 1/0, true/false)")
    return False


_BOOLEAN = ("jax_enable_x64", "jax_debug_nans", "jax_debug_infs")
TRANSFER_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_CHOICES = {
    "jax_numpy_dtype_promotion": ("standard", "strict"),
    "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
    "jax_transfer_guard": (None,) + TRANSFER_LEVELS,
    "jax_transfer_guard_host_to_device": (None,) + TRANSFER_LEVELS,
    "jax_transfer_guard_device_to_host": (None,) + TRANSFER_LEVELS,
    "jax_transfer_guard_device_to_device": (None,) + TRANSFER_LEVELS,
}

# Read on the eager hot paths (runtime/eager.py): one list lookup when the option is off.
DEBUG_CHECKS = [False]  # jax_debug_nans or jax_debug_infs
RANK_CHECKS = [False]  # jax_numpy_rank_promotion other than "allow"


class Config:
    """The options object: `update(name, value)`, `read(name)`, or an attribute per option."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "jax_enable_x64": _env_flag("JAX_ENABLE_X64", "REDRAFT_ENABLE_X64"),
            "jax_debug_nans": _env_flag("JAX_DEBUG_NANS"),
            "jax_debug_infs": _env_flag("JAX_DEBUG_INFS"),
            "jax_numpy_dtype_promotion": "standard",
            "jax_numpy_rank_promotion": os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"),
            "jax_transfer_guard": None,
            "jax_transfer_guard_host_to_device": None,
            "jax_transfer_guard_device_to_host": None,
            "jax_transfer_guard_device_to_device": None,
        }
        self._flags()

    def _flags(self) -> None:
        DEBUG_CHECKS[0] = self._values["jax_debug_nans"] or self._values["jax_debug_infs"]
        RANK_CHECKS[0] = self._values["jax_numpy_rank_promotion"] != "allow"

    def update(self, name: str, value: Any) -> None:
        """Set option `name`; an unknown name or value raises, as JAX's does."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        if name in _BOOLEAN:
            value = _as_bool(name, value)
        elif value not in _CHOICES[name]:
            choices = ", ".join(repr(c) for c in _CHOICES[name] if c is not None)
            raise ValueError(f"{name} must be one of {choices}; got {value!r}")
        self._values[name] = value
        self._flags()

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")

    def values(self) -> dict[str, Any]:
        """A copy of every option's current value."""
        return dict(self._values)


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise ValueError(f"{name} takes a boolean, not {value!r}")
    return bool(value)


config = Config()


def x64_enabled() -> bool:
    """Whether 64-bit dtypes exist at run time (JAX's jax_enable_x64)."""
    return config._values["jax_enable_x64"]


def strict_dtype_promotion() -> bool:
    """Whether jax_numpy_dtype_promotion is "strict" (redraft.numpy then refuses to promote
    between different dtypes)."""
    return config._values["jax_numpy_dtype_promotion"] == "strict"


def check_rank_promotion(name: str, x_shape: tuple, y_shape: tuple) -> None:
    """jax_numpy_rank_promotion: warn or raise when the two operands of elementwise `name`
    are arrays of different ranks (0-d arrays and scalars broadcast freely)."""
    mode = config._values["jax_numpy_rank_promotion"]
    if mode == "allow" or not x_shape or not y_shape or len(x_shape) == len(y_shape):
        return
    message = (f"Operands could not be broadcast together for {name} on shapes "
               f"{tuple(x_shape)} {tuple(y_shape)} and with the config option "
               f"jax_numpy_rank_promotion='{mode}'.")
    if mode == "raise":
        raise ValueError(message)
    import warnings
    warnings.warn(message, stacklevel=4)


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turn x64 mode on (or off with False) inside a `with` block, restoring it after."""
    old = x64_enabled()
    config.update("jax_enable_x64", new_val)
    try:
        yield
    finally:
        config.update("jax_enable_x64", old)


@contextlib.contextmanager
def option(name: str, value: Any) -> Iterator[None]:
    """Option `name` set to `value` inside a `with` block, restored after (the context
    managers of JAX's top level: debug_nans, numpy_rank_promotion, transfer_guard, ...)."""
    old = config.read(name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, old)


@contextlib.contextmanager
def disable_x64() -> Iterator[None]:
    """Turn x64 mode off inside a `with` block (the old jax.experimental spelling)."""
    with enable_x64(False):
        yield
