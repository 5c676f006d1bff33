"""Device and process queries, and waiting for results, as JAX's top level offers them.

redraft runs in one process; its devices are those of redraft.runtime.devices. Results are
computed when a call returns, so waiting for them returns at once.
"""
from __future__ import annotations

from typing import Any

from redraft.runtime.devices import Device, devices
from redraft.runtime.pytree import tree_map


def device_count(backend: str | None = None) -> int:
    """The number of devices of `backend` (by default the best available kind)."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The devices this process can address: all of them, in one process."""
    return len(devices(backend))


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of this process."""
    if process_index not in (None, 0):
        raise ValueError(f"process {process_index} does not exist: redraft runs in one process")
    return devices(backend)


def process_count(backend: str | None = None) -> int:
    return 1


def process_index(backend: str | None = None) -> int:
    return 0


def process_indices(backend: str | None = None) -> list[int]:
    return [0]


host_count = process_count
host_id = process_index
host_ids = process_indices


def _ready(x):
    wait = getattr(x, "block_until_ready", None)
    return wait() if callable(wait) else x


def block_until_ready(x: Any) -> Any:
    """Wait until every array in the pytree `x` is computed; returns `x`."""
    return tree_map(_ready, x)
