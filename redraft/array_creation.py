"""Building arrays from pieces, as JAX's multi-device constructors do, for redraft's one
layout (a whole array on one device, redraft.sharding.SingleDeviceSharding).

make_array_from_callback asks the callback for the one shard (the whole array's index),
make_array_from_single_device_arrays takes the one device's array, and
make_array_from_process_local_data takes this process's data, which is all of it. Each
checks shapes and dtypes as JAX does. copy_to_host_async starts nothing: a redraft array on
the CPU already lives in host memory, and a GPU array is copied when it is read.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from redraft.runtime.array import Array
from redraft.runtime.pytree import tree_leaves
from redraft.sharding import SingleDeviceSharding

__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data", "copy_to_host_async"]


def _check_sharding(sharding: Any, what: str) -> None:
    if not isinstance(sharding, SingleDeviceSharding):
        raise TypeError(f"{what}: redraft arrays are whole on one device, so the sharding "
                        f"must be a redraft.sharding.SingleDeviceSharding, got "
                        f"{type(sharding).__name__}")


def _as_array(value: Any, shape: tuple[int, ...], dtype, what: str) -> Array:
    data = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    if data.shape != shape:
        raise ValueError(f"{what}: got data of shape {data.shape} for an array of shape "
                         f"{shape}")
    from redraft.numpy import asarray
    return asarray(data)


def make_array_from_callback(shape: Sequence[int], sharding: SingleDeviceSharding,
                             data_callback: Callable, dtype=None) -> Array:
    """The array of `shape` whose one shard is `data_callback(index)`, index being the
    tuple of full slices that selects the whole array."""
    _check_sharding(sharding, "make_array_from_callback")
    shape = tuple(int(d) for d in shape)
    index = sharding.devices_indices_map(shape)[sharding.device]
    return _as_array(data_callback(index), shape, dtype, "make_array_from_callback")


def make_array_from_single_device_arrays(shape: Sequence[int],
                                         sharding: SingleDeviceSharding,
                                         arrays: Sequence[Any], *, dtype=None) -> Array:
    """The array of `shape` from its shards: one array, on the sharding's device."""
    _check_sharding(sharding, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    if len(arrays) != 1:
        raise ValueError(f"make_array_from_single_device_arrays: a SingleDeviceSharding has "
                         f"one shard, got {len(arrays)} arrays")
    return _as_array(arrays[0], tuple(int(d) for d in shape), dtype,
                     "make_array_from_single_device_arrays")


def make_array_from_process_local_data(sharding: SingleDeviceSharding, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Array:
    """The global array from this process's data (with one process, all of it)."""
    _check_sharding(sharding, "make_array_from_process_local_data")
    data = np.asarray(local_data)
    shape = data.shape if global_shape is None else tuple(int(d) for d in global_shape)
    return _as_array(data, shape, None, "make_array_from_process_local_data")


def copy_to_host_async(x: Any) -> None:
    """Start copying the arrays of `x` to host memory. Host arrays are there already and a
    device array is copied when read (np.asarray, device_get), so this checks that `x`
    holds arrays and returns."""
    for leaf in tree_leaves(x):
        if not isinstance(leaf, (Array, np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"copy_to_host_async expects arrays, got {type(leaf).__name__}")


