"""Buffers that live on a GPU, and the dispatch thread that owns each GPU.

An Array whose `_buf` is a `DeviceBuffer` lives on a device. Like a host buffer it is never
written after it is made, so its host copy, once read, is kept. Work for a device (copies,
launch sequences) is queued on that device's one dispatch thread, in order: a call returns
as soon as its work is queued, and a buffer's handle is ready when its work has run
(`wait()`, `Array.block_until_ready()`). An error raised by queued work is raised again by
whatever reads its results.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

import numpy as np

from redraft.runtime import transfer_guard
from redraft.runtime.devices import Device


class DeviceStream:
    """One device's driver and the thread that makes every call on it, in order."""

    def __init__(self, device: Device):
        self.device = device
        self._executor = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix=f"redraft-gpu{device.id}")
        self.driver = self._executor.submit(_make_driver, device).result()

    def submit(self, work: Callable, *args) -> Future:
        """Queue `work(driver, *args)`; its Future holds what it returns."""
        return self._executor.submit(work, self.driver, *args)

    def run(self, work: Callable, *args):
        """`work(driver, *args)` after everything queued before it, waited for."""
        return self.submit(work, *args).result()


def _make_driver(device: Device):
    if device.emulated:
        from redraft.runtime.emulated_gpu import EmulatedDriver
        return EmulatedDriver(device.id)
    from redraft.runtime.cuda import CudaDriver
    return CudaDriver(device.id)


_STREAMS: dict[Device, DeviceStream] = {}
_STREAMS_LOCK = threading.Lock()


def stream_of(device: Device) -> DeviceStream:
    """The dispatch stream of `device`, started on first use."""
    stream = _STREAMS.get(device)
    if stream is None:
        with _STREAMS_LOCK:
            stream = _STREAMS.get(device)
            if stream is None:
                if device not in _gpus():
                    raise RuntimeError(f"device {device} is not available (redraft.devices() "
                                       "lists the devices there are)")
                stream = _STREAMS[device] = DeviceStream(device)
    return stream


def _gpus() -> list[Device]:
    from redraft.runtime.devices import gpu_devices
    return gpu_devices()


class DeviceBuffer:
    """An immutable buffer of `shape` and `dtype` on `device`, made by queued work: the
    handle is `pending.result()[index]` (many results share one launch sequence). Once that
    work is done each buffer keeps its own handle only, so that the device memory of a
    result nobody holds is freed even while its siblings live."""

    __slots__ = ("device", "shape", "dtype", "_pending", "_index", "_handle", "_host",
                 "_host_pending")

    def __init__(self, device: Device, shape: tuple[int, ...], dtype: np.dtype,
                 pending: Future, index: int = 0):
        self.device = device
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._pending: Future | None = pending
        self._index = index
        self._handle = None
        self._host: np.ndarray | None = None
        self._host_pending: Future | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def handle(self):
        """The driver's handle, once the work that makes it has run (call on the device's
        dispatch thread, or accept waiting)."""
        pending = self._pending
        if pending is None:
            return self._handle
        return pending.result()[self._index]

    def _resolve(self, handles: list) -> None:
        self._handle = handles[self._index]
        self._pending = None

    def wait(self) -> "DeviceBuffer":
        """Block until the value is computed (raising what computing it raised)."""
        self.handle()
        stream_of(self.device).run(lambda driver: driver.synchronize())
        return self

    def copy_to_host_async(self) -> None:
        """Queue the copy back to the host; `to_host` then only waits for it."""
        if self._host is None and self._host_pending is None:
            transfer_guard.check("device_to_host",
                                 f"{self.dtype.name}{list(self.shape)} from {self.device}")
            self._host_pending = stream_of(self.device).submit(_download, self)

    def to_host(self) -> np.ndarray:
        """The value as a read-only host array (copied once, then kept)."""
        if self._host is None:
            self.copy_to_host_async()
            host = self._host_pending.result()
            host.flags.writeable = False
            self._host = host
        return self._host

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.dtype.name}{list(self.shape)} on {self.device})"


def _download(driver, buf: DeviceBuffer) -> np.ndarray:
    return driver.copy_to_host(buf.handle(), buf.dtype, buf.shape)


def put(value: np.ndarray, device: Device) -> DeviceBuffer:
    """A device buffer holding `value`, copied now if the caller could still write it."""
    value = np.asarray(value)
    if value.flags.writeable:
        value = value.copy()
    stream = stream_of(device)
    pending = stream.submit(lambda driver: [driver.copy_to_device(value)])
    return _resolved_when_done(pending, [DeviceBuffer(device, value.shape, value.dtype,
                                                      pending)])[0]


def buffers_of(pending: Future, device: Device, avals) -> list[DeviceBuffer]:
    """One DeviceBuffer per result of queued work whose Future holds a list of handles."""
    return _resolved_when_done(
        pending, [DeviceBuffer(device, a.shape, a.dtype, pending, i) for i, a in enumerate(avals)])


def _resolved_when_done(pending: Future, bufs: list[DeviceBuffer]) -> list[DeviceBuffer]:
    """Hand each buffer its own handle when `pending` succeeds (on the dispatch thread,
    before the next queued work starts); after a failure they keep it, to raise its error."""
    def resolve(done: Future) -> None:
        if done.exception() is None:
            handles = done.result()
            for buf in bufs:
                buf._resolve(handles)
    pending.add_done_callback(resolve)
    return bufs
