"""The NVIDIA GPU backend: SSA IR -> NVVM IR (typed pointers) -> libNVVM -> PTX.

    program(fn)          the kernels and the host launch sequence (program.py)
    nvvm_ir(fn)          the NVVM IR text of every kernel of `fn`, one module
    ptx(fn, arch)        that module compiled by libNVVM for sm_80 / sm_90
    gpu_runner(fn)       a runner on a real GPU through pycuda (redraft/runtime/cuda.py)
    emulated(fn)         a runner `list[np.ndarray] -> list[np.ndarray]` that runs the same
                         kernels on the CPU (emulate.py), launched as the GPU would
    lowered_primitives() what this backend lowers

File by file: toolkit (finding libNVVM, libdevice, ptxas), libnvvm (ctypes, ptxas), kernel
(a kernel's phases, emitted for the GPU or the host), scalar (one element of each
elementwise primitive), kernels (pointwise, reductions, tiled matmul), program (SSA ->
kernels + launch steps), execute (runs the steps on a device), emulate (the host device),
device (jit and eager operations on arrays living on a GPU, or an emulated one).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from llvmlite import ir

from redraft.compiler.backend.llvm.types import Unsupported
from redraft.compiler.ir.ssa import Function

from . import execute, libnvvm, program as _program
from .kernel import emit_nvvm, nvvm_module
from .libnvvm import ARCHES, DEFAULT_ARCH, NvvmError

__all__ = ["ARCHES", "DEFAULT_ARCH", "NvvmError", "Unsupported", "emulated", "gpu_runner",
           "lowered_primitives", "module_of", "nvvm_ir", "program", "ptx"]


def program(fn: Function) -> _program.Program:
    return _program.build(fn)


def module_of(prog: _program.Program, prefix: str = "",
              module: ir.Module | None = None) -> ir.Module:
    """The NVVM module of `prog`'s kernels (added to `module` if given, each name prefixed
    with `prefix`: many programs can share one module)."""
    module = module or nvvm_module(f"redraft_{prog.name}")
    for kernel in prog.kernels:
        emit_nvvm(replace(kernel, name=prefix + kernel.name) if prefix else kernel, module)
    return module


def nvvm_ir(fn: Function) -> str:
    return str(module_of(program(fn)))


def ptx(fn: Function, arch: str = DEFAULT_ARCH) -> str:
    return libnvvm.compile_ptx(nvvm_ir(fn), arch)


def emulated(fn: Function | _program.Program) -> Callable[[list], list]:
    """Runs `fn` (or its program) by emulating its GPU kernels on the host."""
    from .emulate import Emulator
    prog = fn if isinstance(fn, _program.Program) else program(fn)
    device = Emulator(prog)

    def run(buffers: list) -> list[np.ndarray]:
        return execute.run(prog, device, buffers)
    run.device = device  # type: ignore[attr-defined]
    return run


def gpu_runner(fn: Function, index: int = 0) -> Callable[[list], list]:
    """Runs `fn` on GPU `index` through pycuda (redraft/runtime/cuda.py), PTX for its
    compute capability."""
    from redraft.runtime import cuda
    from redraft.runtime.device_driver import LaunchTarget
    from .device import image_for
    driver = cuda.CudaDriver(index)
    prog = program(fn)
    device = LaunchTarget(driver, driver.load(image_for(prog, driver)))

    def run(buffers: list) -> list[np.ndarray]:
        return execute.run(prog, device, buffers)
    return run


def lowered_primitives() -> list[str]:
    from . import scalar
    from .program import RULES
    from redraft.compiler.backend.llvm.nests import REDUCTIONS
    return sorted({p.name for p in scalar.lowered_primitives()} | set(RULES) | set(REDUCTIONS))
