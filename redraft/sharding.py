"""The one array layout redraft has: a whole array on one device (SingleDeviceSharding).

redraft does not split arrays across devices (redraft.distributed and pmap run one program
per device instead), so every array's sharding is a SingleDeviceSharding; the sharding
APIs that build and query layouts (make_array_from_callback, debug.inspect_array_sharding)
use it.
"""
from __future__ import annotations

from dataclasses import dataclass

from redraft.runtime.devices import Device

__all__ = ["SingleDeviceSharding"]


@dataclass(frozen=True)
class SingleDeviceSharding:
    """The layout of an array held whole on `device`."""
    device: Device

    @property
    def device_set(self) -> set[Device]:
        return {self.device}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the one shard: the whole array."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict:
        """Each device's index into the global array: the full slice on the one device."""
        return {self.device: tuple(slice(None) for _ in global_shape)}
