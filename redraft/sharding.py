"""The one array layout redraft has: a whole array on one device (SingleDeviceSharding).

redraft does not split arrays across devices (redraft.distributed and pmap run one program
per device instead), so every array's sharding is a SingleDeviceSharding; the sharding
APIs that build and query layouts (make_array_from_callback, debug.inspect_array_sharding)
use it. Meshes (make_mesh, Mesh), PartitionSpec (P) and NamedSharding describe layouts over
meshes of this process's devices; with one device every mesh axis has size 1, so a named
layout holds the whole array on that device, as JAX's does there. A mesh of more devices
than there are is refused when it is made.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.runtime.devices import Device

__all__ = ["SingleDeviceSharding", "PartitionSpec", "P", "Mesh", "NamedSharding", "make_mesh"]


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


class PartitionSpec(tuple):
    """How each array axis is split over mesh axes: a name, a tuple of names, or None
    (not split) per array axis; trailing axes left out are not split."""

    def __new__(cls, *partitions):
        return super().__new__(cls, partitions)

    def __repr__(self) -> str:
        inner = ", ".join(repr(p) for p in self)
        return f"P({inner},)" if len(self) == 1 else f"P({inner})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, tuple):
            return False
        n = max(len(self), len(other))
        return (tuple(self) + (None,) * (n - len(self))
                == tuple(other) + (None,) * (n - len(other)))

    def __hash__(self) -> int:
        trimmed = list(self)
        while trimmed and trimmed[-1] is None:
            trimmed.pop()
        return hash(tuple(trimmed))


P = PartitionSpec


class Mesh:
    """Devices laid out in a grid whose axes have names."""

    def __init__(self, devices, axis_names: Sequence[str], axis_types=None):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh: {self.devices.ndim} device axes, but "
                             f"{len(self.axis_names)} axis names {self.axis_names}")
        self.axis_types = axis_types

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_set(self) -> set[Device]:
        return set(self.devices.flat)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({axes})"


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types=None, *,
              devices: Sequence[Device] | None = None) -> Mesh:
    """A mesh of `axis_shapes` over `devices` (this process's devices by default): their
    number must be the product of the shape."""
    from redraft.runtime.devices import devices as local_devices
    shape = tuple(int(s) for s in axis_shapes)
    if len(shape) != len(tuple(axis_names)):
        raise ValueError(f"make_mesh: {len(shape)} axis sizes but axis names {axis_names}")
    pool = list(devices) if devices is not None else list(local_devices())
    if math.prod(shape) != len(pool):
        raise ValueError(f"Number of devices {len(pool)} must equal the product of mesh_shape "
                         f"{shape}")
    grid = np.empty(len(pool), dtype=object)
    grid[:] = pool
    return Mesh(grid.reshape(shape), axis_names, axis_types)


@dataclass(frozen=True, eq=False)
class NamedSharding:
    """A layout over `mesh`: array axis i split over the mesh axes `spec[i]` names."""
    mesh: Mesh
    spec: PartitionSpec = PartitionSpec()
    memory_kind: str | None = None

    def __post_init__(self) -> None:
        for entry in self.spec:
            for name in entry if isinstance(entry, tuple) else (entry,):
                if name is not None and name not in self.mesh.axis_names:
                    raise ValueError(f"NamedSharding: {name!r} is not an axis of {self.mesh}")

    @property
    def device_set(self) -> set[Device]:
        return self.mesh.device_set

    @property
    def is_fully_replicated(self) -> bool:
        return self.mesh.size == 1 or all(p is None for p in self.spec)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """Each axis divided by the sizes of the mesh axes it is split over."""
        sizes = self.mesh.shape
        out = list(global_shape)
        for i, entry in enumerate(self.spec):
            for name in entry if isinstance(entry, tuple) else (entry,):
                if name is not None:
                    out[i] //= sizes[name]
        return tuple(out)

    def __eq__(self, other) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh is self.mesh
                and other.spec == self.spec)

    def __hash__(self) -> int:
        return hash((id(self.mesh), self.spec))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def with_sharding_constraint(x, shardings):
    """`x` laid out as `shardings` says: on one device every layout holds the whole array,
    so the values are `x`'s, unchanged (a mesh over more devices cannot be made)."""
    return x


defsource_derivative(with_sharding_constraint, "nothing: it is the identity on one device")
defbatch_source(with_sharding_constraint)
