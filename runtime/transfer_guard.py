"""JAX's transfer guards: what to do when a value is copied between the host and a GPU.

redraft's CPU arrays are host memory: wrapping a NumPy array or a Python number in an Array,
passing one to a jitted function or reading one back is no transfer, and no guard applies.
The guards apply to the copies the GPU path makes (REDRAFT_EMULATE_GPU emulates one):
host to device (device_put to a GPU, a host argument of a function running on a GPU),
device to host (reading a GPU array's values: np.asarray, printing, device_get) and device
to device (device_put from one GPU to another).

Each direction's level is its own option (jax_transfer_guard_host_to_device, ...) or else
jax_transfer_guard, else "allow". "log" logs implicit transfers and "disallow" refuses
them; "log_explicit" and "disallow_explicit" do so for explicit ones too (device_put,
device_get, copy_to_host_async), which the other levels let through.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import Iterator

from redraft.runtime.config import config

_STATE = threading.local()
_LOG = logging.getLogger("redraft.transfer_guard")
DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")


class TransferGuardError(RuntimeError):
    """A transfer that a "disallow" transfer guard refuses."""


def level(direction: str) -> tuple[str, str]:
    """(the guard level of `direction` ("host_to_device", ...), the option that sets it)."""
    name = f"jax_transfer_guard_{direction}"
    own = config.read(name)
    if own is not None:
        return own, name
    return config.read("jax_transfer_guard") or "allow", "jax_transfer_guard"


@contextlib.contextmanager
def explicit() -> Iterator[None]:
    """Transfers inside the block are explicit (device_put, device_get)."""
    depth = getattr(_STATE, "explicit", 0)
    _STATE.explicit = depth + 1
    try:
        yield
    finally:
        _STATE.explicit = depth


def check(direction: str, what: str) -> None:
    """Log or refuse a transfer of `what` (e.g. "float32[3] to gpu:0") as the guard says."""
    mode, option = level(direction)
    if mode == "allow":
        return
    is_explicit = getattr(_STATE, "explicit", 0) > 0
    if is_explicit and not mode.endswith("_explicit"):
        return
    kind = "explicit" if is_explicit else "implicit"
    message = f"{kind} {direction.replace('_', '-')} transfer: {what}"
    if mode.startswith("disallow"):
        raise TransferGuardError(f"Disallowed {message} ({option}={mode!r})")
    _LOG.warning("%s", message)
