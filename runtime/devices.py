"""Devices: where buffers live. The host CPU always exists; NVIDIA GPUs when pycuda finds one."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    platform: str  # "cpu" or "gpu"
    id: int = 0

    @property
    def device_kind(self) -> str:
        return "cpu" if self.platform == "cpu" else "NVIDIA GPU"

    def __repr__(self) -> str:
        return f"{'CpuDevice' if self.platform == 'cpu' else 'CudaDevice'}(id={self.id})"


_HOST = Device("cpu", 0)


def host_device() -> Device:
    return _HOST


def devices(backend: str | None = None) -> list[Device]:
    """The devices of `backend` ('cpu' or 'gpu'); by default the best available kind."""
    if backend not in (None, "cpu", "gpu", "cuda"):
        raise ValueError(f"unknown backend {backend!r}; expected 'cpu' or 'gpu'")
    if backend in ("gpu", "cuda"):
        raise RuntimeError("no GPU backend is available: install redraft[gpu] on a machine "
                           "with an NVIDIA GPU and driver")
    return [_HOST]


def default_backend() -> str:
    return "cpu"
