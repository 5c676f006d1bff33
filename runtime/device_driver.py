"""The one interface the device-side runtime uses to talk to a GPU.

A driver owns one device's memory and kernels. Two implement it: `CudaDriver`
(runtime/cuda.py, pycuda on a real GPU) and `EmulatedDriver` (runtime/emulated_gpu.py,
"device" memory in host buffers and kernels run by the compiler's host emulation). Every
call on a driver is made from that device's dispatch thread (runtime/device_buffer.py), so
drivers need no locking and a CUDA context stays current on the thread that made it.

Handles are opaque to everything but their driver. Kernel images come from the compiler
(compiler/backend/nvvm/device.py) in the form the driver's `target` asks for: "ptx" (PTX
text and kernel names) or "host" (the host-emulation runner of a program).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class PtxImage:
    """PTX of a program's kernels; `names` maps each kernel's name to its name in the PTX."""
    text: str
    names: dict[str, str]


class DeviceDriver(Protocol):
    name: str
    target: str  # "ptx" (with `arch`) or "host"
    arch: str

    def allocate(self, nbytes: int) -> object:
        """Uninitialised device memory of `nbytes` bytes."""

    def copy_to_device(self, value: np.ndarray) -> object:
        """A new device buffer holding `value` (C order)."""

    def copy_to_host(self, handle, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The first elements of `handle` as a new host array, after all launched work."""

    def read_scalar(self, handle, dtype: np.dtype, offset: int) -> object:
        """Element `offset` of `handle` read as `dtype` (for the host's control flow)."""

    def load(self, image) -> object:
        """Make a program's kernels launchable; returns what `launch` takes as `loaded`."""

    def launch(self, loaded, kernel, handles: list) -> None:
        """Launch `kernel` (grid, block, shared memory as it says) on `handles`."""

    def synchronize(self) -> None:
        """Wait until every launch and copy made so far has finished."""


class LaunchTarget:
    """A driver and one loaded program, seen as the launch sequence's device
    (compiler/backend/nvvm/execute.py's protocol)."""

    def __init__(self, driver: DeviceDriver, loaded):
        self.driver = driver
        self.loaded = loaded

    def upload(self, value: np.ndarray):
        return self.driver.copy_to_device(np.ascontiguousarray(value))

    def empty(self, slot):
        return self.driver.allocate(slot.size * np.dtype(slot.dtype).itemsize)

    def download(self, handle, dtype, shape) -> np.ndarray:
        return self.driver.copy_to_host(handle, np.dtype(dtype), tuple(shape))

    def read_scalar(self, handle, view):
        return self.driver.read_scalar(handle, np.dtype(view.dtype), view.offset)

    def launch(self, kernel, handles: list) -> None:
        self.driver.launch(self.loaded, kernel, handles)
