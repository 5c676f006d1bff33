"""Host emulation: the GPU program's kernels compiled for this CPU and launched as a GPU
would launch them (same grid and block sizes; see kernel.emit_host), with NumPy buffers as
device memory. It checks indexing, bounds, reductions and tiling without a GPU.
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.ir.types as irtypes
import numpy as np
from llvmlite import ir

from redraft.compiler.backend.llvm.codegen import optimise
from redraft.kernels.jit_host import CompiledModule, prepare_module

from .kernel import emit_host
from .program import Program

_PRINT_LOCK = threading.Lock()


def opaque_text(module: ir.Module) -> str:
    """`module` printed with opaque pointers (what the host's LLVM reads)."""
    with _PRINT_LOCK:
        saved = irtypes.ir_layer_typed_pointers_enabled
        irtypes.ir_layer_typed_pointers_enabled = False
        try:
            return str(module)
        finally:
            irtypes.ir_layer_typed_pointers_enabled = saved


def host_module(program: Program) -> ir.Module:
    module = ir.Module(name=f"redraft_emulate_{program.name}")
    for kernel in program.kernels:
        emit_host(kernel, module)
    return module


class Emulator:
    """A device whose memory is NumPy and whose kernels run on this CPU."""

    def __init__(self, program: Program):
        self.compiled = CompiledModule(opaque_text(prepare_module(host_module(program))),
                                       optimiser=optimise)
        self.functions = {}
        for kernel in program.kernels:
            address = self.compiled.address(kernel.name)
            argtypes = [ctypes.c_void_p] * (len(kernel.arg_dtypes) + 1) + [ctypes.c_int64] * 2
            self.functions[kernel.name] = ctypes.CFUNCTYPE(None, *argtypes)(address)
        self.launches = 0

    def upload(self, value: np.ndarray) -> np.ndarray:
        return np.array(value, copy=True).reshape(-1) if value.size else np.zeros(1, value.dtype)

    def empty(self, slot) -> np.ndarray:
        return np.zeros(slot.size, dtype=slot.dtype)

    def download(self, buffer: np.ndarray, dtype, shape) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        return buffer[:n].reshape(shape).copy()

    def read_scalar(self, buffer: np.ndarray, view):
        return buffer[view.offset]

    def launch(self, kernel, buffers: list) -> None:
        shared = np.zeros(max(kernel.shared_bytes, 16), dtype=np.uint8)
        ptrs = [b.ctypes.data for b in buffers]
        self.functions[kernel.name](*ptrs, shared.ctypes.data, kernel.grid, kernel.block)
        self.launches += 1
