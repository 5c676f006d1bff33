"""An emulated GPU: device memory is host memory, kernels run through the host emulation.

Enabled by `REDRAFT_EMULATE_GPU=1` (or `=N` for N devices), it lets the whole device path
(device_put, arrays living on a device, jit compiling the GPU program, asynchronous dispatch,
device_get) run and be tested where there is no GPU. Buffers are flat byte arrays that only
this driver touches; the kernels are the GPU program's, compiled for this CPU and launched
with the GPU's grid and block sizes (compiler/backend/nvvm/emulate.py).
"""
from __future__ import annotations

import os

import numpy as np

_MIN_BYTES = 16  # kernels may read one element past an empty buffer's start


def emulated_count() -> int:
    """How many emulated GPUs `REDRAFT_EMULATE_GPU` asks for (0 when unset)."""
    value = os.environ.get("REDRAFT_EMULATE_GPU", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return 0
    if value in ("true", "yes", "on"):
        return 1
    try:
        return max(int(value), 0)
    except ValueError:
        raise ValueError(f"REDRAFT_EMULATE_GPU={value!r}: expected a number of devices "
                         "(1 for one emulated GPU)") from None


class EmulatedDriver:
    """The device driver interface (runtime/device_driver.py) over host memory."""

    target = "host"
    arch = "host"

    def __init__(self, index: int = 0):
        self.name = f"emulated GPU {index} (host memory, host-emulated kernels)"
        self.launches = 0

    def allocate(self, nbytes: int) -> np.ndarray:
        return np.zeros(max(nbytes, _MIN_BYTES), dtype=np.uint8)

    def copy_to_device(self, value: np.ndarray) -> np.ndarray:
        raw = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        out = self.allocate(raw.size)
        out[:raw.size] = raw
        return out

    def copy_to_host(self, handle: np.ndarray, dtype: np.dtype, shape) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        return handle[:n * dtype.itemsize].view(dtype).reshape(shape).copy()

    def read_scalar(self, handle: np.ndarray, dtype: np.dtype, offset: int):
        start = offset * dtype.itemsize
        return handle[start:start + dtype.itemsize].view(dtype)[0]

    def load(self, image):
        if not hasattr(image, "launch"):
            raise TypeError(f"the emulated GPU runs host-emulated programs, not {image!r}")
        return image

    def launch(self, loaded, kernel, handles: list) -> None:
        loaded.launch(kernel, handles)
        self.launches += 1

    def synchronize(self) -> None:
        return None  # every launch has finished when it returns
