"""libNVVM through ctypes: NVVM IR text -> PTX text, and ptxas to check PTX without a GPU.

libNVVM takes LLVM-7-style typed-pointer IR text; libdevice is added as a second module
only when the IR calls a `__nv_` function (verification first, so errors name our IR).
"""
from __future__ import annotations

import ctypes
import functools
import re
import subprocess
import tempfile
from pathlib import Path

from . import toolkit

ARCHES = ("sm_80", "sm_90")
DEFAULT_ARCH = "sm_80"


class NvvmError(RuntimeError):
    """libNVVM or ptxas rejected the code, or is not installed."""


@functools.cache
def _library() -> ctypes.CDLL:
    path = toolkit.find().libnvvm
    if path is None:
        raise NvvmError("libNVVM not found: install the gpu extra (`pip install -e \".[gpu]\"`"
                        " brings nvidia-nvvm) or set CUDA_HOME to a CUDA toolkit")
    lib = ctypes.CDLL(str(path))
    prog = ctypes.c_void_p
    size = ctypes.c_size_t
    lib.nvvmCreateProgram.argtypes = [ctypes.POINTER(prog)]
    lib.nvvmDestroyProgram.argtypes = [ctypes.POINTER(prog)]
    lib.nvvmAddModuleToProgram.argtypes = [prog, ctypes.c_char_p, size, ctypes.c_char_p]
    lib.nvvmLazyAddModuleToProgram.argtypes = [prog, ctypes.c_char_p, size, ctypes.c_char_p]
    lib.nvvmVerifyProgram.argtypes = [prog, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.nvvmCompileProgram.argtypes = [prog, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.nvvmGetCompiledResultSize.argtypes = [prog, ctypes.POINTER(size)]
    lib.nvvmGetCompiledResult.argtypes = [prog, ctypes.c_char_p]
    lib.nvvmGetProgramLogSize.argtypes = [prog, ctypes.POINTER(size)]
    lib.nvvmGetProgramLog.argtypes = [prog, ctypes.c_char_p]
    lib.nvvmGetErrorString.restype = ctypes.c_char_p
    return lib


def available() -> bool:
    """Whether libNVVM and libdevice can be used here."""
    tk = toolkit.find()
    return tk.libnvvm is not None and tk.libdevice is not None


def version() -> tuple[int, int]:
    lib = _library()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvvmVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def ir_version() -> tuple[int, int, int, int]:
    """(IR major, IR minor, debug major, debug minor), for `!nvvmir.version`."""
    lib = _library()
    vals = [ctypes.c_int() for _ in range(4)]
    lib.nvvmIRVersion(*[ctypes.byref(v) for v in vals])
    return tuple(v.value for v in vals)  # type: ignore[return-value]


def _check(lib, prog, status: int, what: str) -> None:
    if status == 0:
        return
    size = ctypes.c_size_t()
    lib.nvvmGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvvmGetProgramLog(prog, log)
    reason = lib.nvvmGetErrorString(status).decode()
    raise NvvmError(f"libNVVM {what} failed ({reason}):\n{log.value.decode(errors='replace')}")


def compile_ptx(nvvm_ir: str, arch: str = DEFAULT_ARCH) -> str:
    """PTX for `nvvm_ir` (a module's text) on `arch` (sm_80, sm_90)."""
    if not re.fullmatch(r"sm_\d{2,3}a?", arch):
        raise NvvmError(f"unsupported architecture {arch!r}; for example one of {ARCHES}")
    lib = _library()
    prog = ctypes.c_void_p()
    _check(lib, prog, lib.nvvmCreateProgram(ctypes.byref(prog)), "create")
    try:
        text = nvvm_ir.encode()
        _check(lib, prog, lib.nvvmAddModuleToProgram(prog, text, len(text), b"redraft"),
               "add module")
        options = (ctypes.c_char_p * 2)(f"-arch=compute_{arch[3:]}".encode(), b"-opt=3")
        _check(lib, prog, lib.nvvmVerifyProgram(prog, 2, options), "verify")
        if "__nv_" in nvvm_ir:
            libdevice = Path(toolkit.find().libdevice or "").read_bytes() if (
                toolkit.find().libdevice) else None
            if libdevice is None:
                raise NvvmError("libdevice.10.bc not found next to libNVVM")
            _check(lib, prog, lib.nvvmLazyAddModuleToProgram(
                prog, libdevice, len(libdevice), b"libdevice"), "add libdevice")
        _check(lib, prog, lib.nvvmCompileProgram(prog, 2, options), "compile")
        size = ctypes.c_size_t()
        _check(lib, prog, lib.nvvmGetCompiledResultSize(prog, ctypes.byref(size)), "size")
        out = ctypes.create_string_buffer(size.value)
        _check(lib, prog, lib.nvvmGetCompiledResult(prog, out), "result")
        return out.value.decode()
    finally:
        lib.nvvmDestroyProgram(ctypes.byref(prog))


def ptxas_available() -> bool:
    return toolkit.find().ptxas is not None


def check_ptx(ptx: str, arch: str = DEFAULT_ARCH) -> str:
    """Assemble `ptx` with ptxas for `arch` (no GPU needed); returns ptxas's -v report."""
    ptxas = toolkit.find().ptxas
    if ptxas is None:
        raise NvvmError("ptxas not found: install nvidia-cuda-nvcc or set CUDA_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        done = subprocess.run([str(ptxas), "--gpu-name", arch, "-v", str(src), "-o",
                               str(Path(tmp) / "kernel.cubin")], capture_output=True, text=True)
    if done.returncode != 0:
        raise NvvmError(f"ptxas rejected the PTX for {arch}:\n{done.stderr}")
    return done.stderr
