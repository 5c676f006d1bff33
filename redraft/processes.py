"""Device and process queries, and waiting for results, as JAX's top level offers them.

On one process the devices are those of redraft.runtime.devices. After
redraft.distributed.initialize() under mpirun, every MPI rank is a process with the same
number of local devices, numbered globally rank-major. Results are computed when a call
returns, so waiting for them returns at once.
"""
from __future__ import annotations

from typing import Any

from redraft.runtime import devices as _devices
from redraft.runtime.devices import Device
from redraft.runtime.pytree import tree_map


def _remote():
    from redraft import distributed
    return distributed.remote()


def process_count(backend: str | None = None) -> int:
    r = _remote()
    return 1 if r is None else r.size


def process_index(backend: str | None = None) -> int:
    r = _remote()
    return 0 if r is None else r.rank


def process_indices(backend: str | None = None) -> list[int]:
    return list(range(process_count()))


def _of_process(local: list[Device], p: int) -> list[Device]:
    """Process p's copies of this process's local devices (ids numbered globally)."""
    n = len(local)
    return [Device(d.platform, p * n + d.id, d.emulated, p) for d in local]


def devices(backend: str | None = None) -> list[Device]:
    """Every device of every process (this process's alone when not distributed)."""
    local = _devices.devices(backend)
    if _remote() is None:
        return local
    return [d for p in range(process_count()) for d in _of_process(local, p)]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of process `process_index` (by default this one)."""
    p = globals()["process_index"]() if process_index is None else process_index
    if not 0 <= p < process_count():
        raise ValueError(f"process {p} does not exist: there are {process_count()} processes")
    local = _devices.devices(backend)
    return local if _remote() is None else _of_process(local, p)


def device_count(backend: str | None = None) -> int:
    """The number of devices of `backend` over every process."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The devices this process can address."""
    return len(_devices.devices(backend))


host_count = process_count
host_id = process_index
host_ids = process_indices


def _ready(x):
    wait = getattr(x, "block_until_ready", None)
    return wait() if callable(wait) else x


def block_until_ready(x: Any) -> Any:
    """Wait until every array in the pytree `x` is computed; returns `x`."""
    return tree_map(_ready, x)
