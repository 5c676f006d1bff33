"""Every pycuda call redraft makes: the driver, device buffers, transfers, module loading
and kernel launches. Another CUDA binding can replace this one module.

`gpu_count()` is 0 (and `unavailable_reason()` says why) where pycuda is not installed, no
driver library is found, or the driver sees no GPU. `CudaDevice` runs a compiled GPU
program (compiler/backend/nvvm/execute.py's device protocol): buffers are
`pycuda.driver.DeviceAllocation`s, PTX is loaded with `module_from_buffer`, launches are
asynchronous on one stream and a transfer back to the host waits for them.
"""
from __future__ import annotations

import functools

import numpy as np


@functools.cache
def _driver():
    """pycuda.driver, initialised, or an exception saying why not."""
    try:
        import pycuda.driver as drv
    except ImportError as e:
        return RuntimeError(f"pycuda is not installed ({e})")
    except OSError as e:
        return RuntimeError(f"the CUDA driver library could not be loaded ({e})")
    try:
        drv.init()
    except Exception as e:  # pycuda raises its own error types  # noqa: BLE001
        return RuntimeError(f"the CUDA driver did not initialise ({e})")
    return drv


def unavailable_reason() -> str | None:
    """Why no GPU can be used, or None when one can."""
    drv = _driver()
    if isinstance(drv, Exception):
        return str(drv)
    if drv.Device.count() == 0:
        return "the CUDA driver sees no GPU"
    return None


def gpu_count() -> int:
    drv = _driver()
    return 0 if isinstance(drv, Exception) else drv.Device.count()


def compute_capability(index: int = 0) -> str:
    """`sm_XY` of GPU `index`."""
    major, minor = _driver().Device(index).compute_capability()
    return f"sm_{major}{minor}"


class CudaDevice:
    """A GPU as the launch sequence's device: buffers, transfers, launches."""

    def __init__(self, index: int = 0):
        drv = _driver()
        if isinstance(drv, Exception):
            raise drv
        self.drv = drv
        self.context = drv.Device(index).retain_primary_context()
        self.context.push()
        self.stream = drv.Stream()
        self.functions: dict[str, object] = {}
        self.modules: list = []

    def load(self, ptx: str, kernel_names: list[str]) -> None:
        module = self.drv.module_from_buffer(ptx.encode())
        self.modules.append(module)
        for name in kernel_names:
            self.functions[name] = module.get_function(name)

    def upload(self, value: np.ndarray):
        buf = self.drv.mem_alloc(max(value.nbytes, 1))
        if value.nbytes:
            self.drv.memcpy_htod_async(buf, np.ascontiguousarray(value), self.stream)
        return buf

    def empty(self, slot):
        return self.drv.mem_alloc(max(slot.size * slot.dtype.itemsize, 1))

    def download(self, buffer, dtype, shape) -> np.ndarray:
        out = np.empty(shape, dtype)
        if out.nbytes:
            self.drv.memcpy_dtoh_async(out, buffer, self.stream)
        self.stream.synchronize()
        return out

    def read_scalar(self, buffer, view):
        out = np.empty(1, view.dtype)
        self.drv.memcpy_dtoh_async(out, int(buffer) + view.offset * view.dtype.itemsize,
                                   self.stream)
        self.stream.synchronize()
        return out[0]

    def launch(self, kernel, buffers: list) -> None:
        self.functions[kernel.name](*buffers, block=(kernel.block, 1, 1),
                                    grid=(kernel.grid, 1), stream=self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()
