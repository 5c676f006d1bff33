"""LLVM modules -> object code, and the runtime pieces generated code links against.

Generated code calls out of its module for three things: the thread pool
(`redraft_parallel_for`, compiler/backend/llvm/parallel.py), the matmul kernels
(kernels/matmul.py) and the C math library. The first two are LLVM modules of their own,
added here to the object; libm comes from `cc -lm`. Anything else it calls lives in Python
(the `print` callback), which a standalone library cannot reach: `check_standalone` says so.
"""
from __future__ import annotations

import contextlib
import functools

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from redraft.kernels.jit_host import optimise as optimise_kernel
from redraft.kernels.jit_host import prepare_module

POOL_ENTRY = "redraft_parallel_for"
POOL_START = "redraft_pool_start"
POOL_WORKERS = "rd_workers"
PYTHON_CALLBACKS = {"redraft_print_callback": "print (jax.debug.print / print on traced "
                                              "values) calls back into Python",
                    "redraft_host_kernel": "a factorisation, fft or sort, or an operation "
                                           "the backend does not compile (complex "
                                           "arithmetic), calls its host kernel in Python "
                                           "(kernels/host_calls.py)",
                    "redraft_collective_callback": "collectives (lax.psum, all_gather, ...) "
                                                   "call back into the pmap runtime",
                    "redraft_host_call_callback": "redraft.random's samplers on keys known "
                                                  "at run time call back into Python"}


class NotStandalone(RuntimeError):
    """The code calls back into Python, so it cannot run from a shared library."""


@contextlib.contextmanager
def llvm_lock():
    """Hold the locks the LLVM backend and the kernels compile under: LLVM's global context
    must not be used from two threads at once (the cache saves in a background thread).
    Never call lower_function or compile a kernel while holding it (they take the locks)."""
    from redraft.kernels import jit_host
    with jit_host.LLVM_LOCK:
        yield


def undefined_functions(llmod: llvm.ModuleRef) -> set[str]:
    """Functions `llmod` calls but does not define (LLVM intrinsics left out)."""
    return {f.name for f in llmod.functions
            if f.is_declaration and not f.name.startswith("llvm.")}


def check_standalone(llmod: llvm.ModuleRef) -> None:
    """Raise NotStandalone if `llmod` calls back into Python."""
    for name in sorted(undefined_functions(llmod)):
        if name in PYTHON_CALLBACKS:
            raise NotStandalone(PYTHON_CALLBACKS[name])


def internalise(module: ir.Module, keep: set[str]) -> None:
    """Give every definition of `module` but those in `keep` internal linkage, so that
    several entry modules link into one object without clashing names."""
    for value in module.globals.values():
        defined = (isinstance(value, ir.Function) and value.blocks) or (
            isinstance(value, ir.GlobalVariable) and value.initializer is not None)
        if not defined:
            continue
        if value.name in keep:
            value.linkage = ""
        elif value.linkage in ("", "external"):
            value.linkage = "internal"


def parse(module: ir.Module | str) -> llvm.ModuleRef:
    llmod = llvm.parse_assembly(str(prepare_module(module) if isinstance(module, ir.Module)
                                    else module))
    llmod.verify()
    return llmod


def runtime_symbols() -> set[str]:
    """Every function the runtime modules define for generated code."""
    return {POOL_ENTRY} | _kernel_names("float32") | _kernel_names("float64")


def runtime_modules(needed: set[str]) -> list[llvm.ModuleRef]:
    """Optimised modules defining the pool and the matmul kernels that `needed` names."""
    out = []
    if POOL_ENTRY in needed:
        out.append(parse(_pool_text()))
    for dtype in ("float32", "float64"):
        names = _kernel_names(dtype)
        if names & needed:
            out.append(parse(_kernel_text(dtype)))
    return out


@functools.cache
def _pool_text() -> str:
    from redraft.compiler.backend.llvm import parallel
    llmod = parse(parallel._build_module())
    optimise_kernel(llmod)
    return str(llmod)


@functools.cache
def _kernel_names(dtype: str) -> frozenset[str]:
    from redraft.kernels.matmul import default_config, gemm_rows_name, pack_b_name
    cfg = default_config(np.dtype(dtype))
    return frozenset({pack_b_name(cfg), gemm_rows_name(cfg)})


@functools.cache
def _kernel_text(dtype: str) -> str:
    from redraft.kernels.matmul import build_matmul_module, default_config
    llmod = parse(build_matmul_module(default_config(np.dtype(dtype))))
    optimise_kernel(llmod)
    return str(llmod)


def link_modules(modules: list[llvm.ModuleRef]) -> llvm.ModuleRef:
    """One module holding all of `modules` (consumed)."""
    main = modules[0]
    for other in modules[1:]:
        main.link_in(other)
    return main


def emit_object(llmod: llvm.ModuleRef, machine: llvm.TargetMachine) -> bytes:
    return machine.emit_object(llmod)
