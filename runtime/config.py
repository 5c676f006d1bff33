"""config: redraft's global options, read and set as JAX's `jax.config` is.

    redraft.config.update("jax_enable_x64", True)   # float64/int64 become the defaults
    redraft.config.jax_enable_x64                   # -> True
    with redraft.enable_x64(False): ...             # scoped, restored on exit

The one option with an effect today is `jax_enable_x64` (64-bit types at run time). It starts
from the environment variable JAX_ENABLE_X64 (or REDRAFT_ENABLE_X64) read at import, as
JAX's does. The state lives here, below dtypes, so that the runtime, the compiler's
caches and the public API all read the same flag.
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


class Config:
    """The options object: `update(name, value)`, `read(name)`, or an attribute per option."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "jax_enable_x64": _env_flag("JAX_ENABLE_X64", "REDRAFT_ENABLE_X64"),
        }

    def update(self, name: str, value: Any) -> None:
        """Set option `name`; an unknown name raises AttributeError, as JAX's does."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        if name == "jax_enable_x64":
            value = _as_bool(name, value)
        self._values[name] = value

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
def disable_x64() -> Iterator[None]:
    """Turn x64 mode off inside a `with` block (the old jax.experimental spelling)."""
    with enable_x64(False):
        yield
