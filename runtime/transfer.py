"""Moving values between the host and devices."""
from __future__ import annotations

import numpy as np

from redraft.runtime import device_buffer, transfer_guard
from redraft.runtime.array import Array, wrap_device, wrap_host
from redraft.runtime.convert import as_array, new_array
from redraft.runtime.devices import Device, host_device


def _map_leaves(fn, tree):
    from redraft.runtime.pytree import tree_map
    return tree_map(fn, tree)


def device_put(x, device: Device | None = None):
    """Place every leaf of `x` on `device` as an Array (without a device: Arrays stay where
    they are, anything else goes to the host). Copies to a GPU are queued, not waited for."""
    with transfer_guard.explicit():
        return _device_put(x, device)


def _device_put(x, device: Device | None):
    if device is None:
        return _map_leaves(lambda v: v if isinstance(v, Array) else _to_array(v), x)
    if device.platform == "cpu":
        return _map_leaves(_to_host, x)
    device_buffer.stream_of(device)  # fails now, naming the device, if it is not available
    return _map_leaves(lambda v: to_device(v, device), x)


def to_device(v, device: Device) -> Array:
    """`v` (an Array anywhere, a NumPy array or a Python scalar) as an Array on GPU `device`."""
    a = v if isinstance(v, Array) else _to_array(v)
    if a.device == device:
        return a
    direction = "host_to_device" if a.device.platform == "cpu" else "device_to_device"
    transfer_guard.check(direction, f"{a.dtype.name}{list(a.shape)} to {device}")
    return wrap_device(device_buffer.put(np.asarray(a), device), a._weak)


def _to_host(v) -> Array:
    if isinstance(v, Array):
        return v if v.device.platform == "cpu" else wrap_host(np.asarray(v), v._weak)
    return _to_array(v)


def _to_array(v) -> Array:
    return new_array(v) if not isinstance(v, (int, float, complex, bool)) else as_array(v)


def device_get(x):
    """Every Array leaf of `x` as a NumPy array on the host."""
    with transfer_guard.explicit():
        return _map_leaves(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)


def host_device_default() -> Device:
    return host_device()
