"""Devices: where buffers live. The host CPU always exists; NVIDIA GPUs when pycuda finds one,
and emulated GPUs (runtime/emulated_gpu.py) after them when REDRAFT_EMULATE_GPU asks.
REDRAFT_NUM_CPU_DEVICES=N splits the host into N CPU devices (as JAX's
--xla_force_host_platform_device_count): they share host memory, and pmap runs one thread
per device."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    platform: str  # "cpu" or "gpu"
    id: int = 0
    emulated: bool = False  # a GPU whose memory and kernels are emulated on the host
    process_index: int = 0  # the MPI rank owning it (redraft.distributed)

    @property
    def device_kind(self) -> str:
        if self.platform == "cpu":
            return "cpu"
        return "emulated NVIDIA GPU (host)" if self.emulated else "NVIDIA GPU"

    def __repr__(self) -> str:
        if self.platform == "cpu":
            return f"CpuDevice(id={self.id})"
        return f"{'EmulatedGpuDevice' if self.emulated else 'CudaDevice'}(id={self.id})"


_HOST = Device("cpu", 0)


def host_device() -> Device:
    return _HOST


def cpu_devices() -> list[Device]:
    """The host, or the N CPU devices REDRAFT_NUM_CPU_DEVICES asks for (the first is the host)."""
    text = os.environ.get("REDRAFT_NUM_CPU_DEVICES", "").strip()
    if not text:
        return [_HOST]
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"REDRAFT_NUM_CPU_DEVICES must be a positive integer, got {text!r}")
    return [_HOST] + [Device("cpu", i) for i in range(1, int(text))]


def gpu_devices() -> list[Device]:
    """The NVIDIA GPUs the CUDA driver sees (none without pycuda or a driver), then the
    emulated ones REDRAFT_EMULATE_GPU asks for."""
    from redraft.runtime import cuda
    from redraft.runtime.emulated_gpu import emulated_count
    real = [Device("gpu", i) for i in range(cuda.gpu_count())]
    return real + [Device("gpu", len(real) + i, emulated=True) for i in range(emulated_count())]


_noticed = False


def _notice_no_gpu() -> None:
    """Say once, in one line, why everything runs on the CPU."""
    global _noticed
    if _noticed:
        return
    _noticed = True
    from redraft.runtime import cuda
    print(f"redraft: no GPU ({cuda.unavailable_reason()}); running on the CPU",
          file=sys.stderr)


def devices(backend: str | None = None) -> list[Device]:
    """The devices of `backend` ('cpu' or 'gpu'); by default the host first, then every
    GPU (arrays are placed on the host unless put on a GPU)."""
    if backend not in (None, "cpu", "gpu", "cuda"):
        raise ValueError(f"unknown backend {backend!r}; expected 'cpu' or 'gpu'")
    if backend == "cpu":
        return cpu_devices()
    gpus = gpu_devices()
    if backend in ("gpu", "cuda"):
        if not gpus:
            from redraft.runtime import cuda
            raise RuntimeError(f"no GPU is available ({cuda.unavailable_reason()}): install "
                               "redraft[gpu] on a machine with an NVIDIA GPU and driver "
                               "(REDRAFT_EMULATE_GPU=1 emulates one on the host)")
        return gpus
    if not gpus:
        _notice_no_gpu()
    return cpu_devices() + gpus


def default_backend() -> str:
    return "cpu"
