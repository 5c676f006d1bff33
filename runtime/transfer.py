"""Moving values between the host and devices."""
from __future__ import annotations

import numpy as np

from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.devices import Device, host_device


def _map_leaves(fn, tree):
    from redraft.runtime.pytree import tree_map
    return tree_map(fn, tree)


def device_put(x, device: Device | None = None):
    """Place every leaf of `x` on `device` (the host by default) as an Array."""
    if device is not None and device.platform != "cpu":
        raise RuntimeError(f"device {device} is not available")
    return _map_leaves(lambda v: v if isinstance(v, Array) else _to_array(v), x)


def _to_array(v) -> Array:
    from redraft.numpy.creation import array
    return array(v) if not isinstance(v, (int, float, complex, bool)) else as_array(v)


def device_get(x):
    """Every Array leaf of `x` as a NumPy array on the host."""
    return _map_leaves(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)


def host_device_default() -> Device:
    return host_device()
