"""Every pycuda call redraft makes: the driver, device buffers, transfers, module loading
and kernel launches. Another CUDA binding can replace this one module.

`gpu_count()` is 0 (and `unavailable_reason()` says why) where pycuda is not installed, no
driver library is found, or the driver sees no GPU. `CudaDriver` is the device driver
interface (runtime/device_driver.py) on a GPU: buffers are `pycuda.driver.DeviceAllocation`s,
PTX is loaded with `module_from_buffer`, launches are asynchronous on one stream and a
transfer back to the host waits for them.
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


class CudaDriver:
    """The device driver interface (runtime/device_driver.py) on GPU `index`. It is made,
    and called, on the device's dispatch thread only, where its context stays current.
    Launches and copies are asynchronous on one stream; reads back wait for them."""

    target = "ptx"

    def __init__(self, index: int = 0):
        drv = _driver()
        if isinstance(drv, Exception):
            raise drv
        self.drv = drv
        self.context = drv.Device(index).retain_primary_context()
        self.context.push()
        self.stream = drv.Stream()
        self.arch = compute_capability(index)
        self.name = f"{drv.Device(index).name()} ({self.arch})"
        self.modules: list = []  # loaded modules live as long as the driver

    def allocate(self, nbytes: int):
        return self.drv.mem_alloc(max(nbytes, 1))

    def copy_to_device(self, value: np.ndarray):
        value = np.ascontiguousarray(value)
        buf = self.allocate(value.nbytes)
        if value.nbytes:
            # the host array must outlive the asynchronous copy: wait for this one
            self.drv.memcpy_htod_async(buf, value, self.stream)
            self.stream.synchronize()
        return buf

    def copy_to_host(self, handle, dtype: np.dtype, shape) -> np.ndarray:
        out = np.empty(shape, dtype)
        if out.nbytes:
            self.drv.memcpy_dtoh_async(out, handle, self.stream)
        self.stream.synchronize()
        return out

    def read_scalar(self, handle, dtype: np.dtype, offset: int):
        out = np.empty(1, dtype)
        self.drv.memcpy_dtoh_async(out, int(handle) + offset * dtype.itemsize, self.stream)
        self.stream.synchronize()
        return out[0]

    def load(self, image) -> dict:
        """The kernels of a PtxImage (runtime/device_driver.py), by their program names."""
        module = self.drv.module_from_buffer(image.text.encode())
        self.modules.append(module)
        return {name: module.get_function(ptx_name) for name, ptx_name in image.names.items()}

    def launch(self, loaded: dict, kernel, handles: list) -> None:
        loaded[kernel.name](*handles, block=(kernel.block, 1, 1), grid=(kernel.grid, 1),
                            stream=self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()
