"""The CPU backend: SSA IR -> LLVM IR (llvmlite) -> machine code for this host.

    compile_ir(fn)      a runner `list[np.ndarray] -> list[np.ndarray]`, or None when the
                        function uses something this backend does not lower (the driver
                        then runs the reference interpreter)
    llvm_ir(fn)         the optimised LLVM IR text of the function's module
    assembly(fn)        its host assembly
    warm_up()           start compiling the thread pool in the background, and the
                        matmul kernel once staging records a product that runs on it (the
                        driver calls it before staging, which then hides most of the cost)

One file per concern: types (dtypes as LLVM types), views (strided views), elementwise
(one rule per primitive), loops (loop nests: vectorised, reductions, threads), parallel (the
thread pool), storage (liveness, workspace), module (one LLVM function per IR function),
nests / shapes / gather / dot / scans / control / special (the lowering of each primitive
family), host_kernels (factorisations, fft, sort: calls into NumPy), callbacks (print),
dispatch (the runner).

What falls back (compile_ir returns None): boolean mask indexing, lax.gather and
lax.scatter with dimension numbers, integer-typed convolutions, real/imag, integer `pow`,
float16, arithmetic on complex values (complex buffers only pass through the host kernels,
host_kernels.py), dot_general into another dtype, max/min/argmax over empty axes.

REDRAFT_LLVM_STRICT=1 makes a lowering bug raise instead of warning and falling back (the
tests set it); REDRAFT_LLVM_STRICT=2 raises for unsupported primitives too.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable

from llvmlite import ir
from redraft.compiler.ir.ssa import Function

from . import (collectives, control, dot, host_calls, host_kernels, nests,  # noqa: F401
               scans, shapes)
from .callbacks import install as _install_callbacks
from .codegen import MachineCode, opt_level, optimise, parse
from .dot import warm_up
from .dispatch import ArgumentError, Runner
from .module import FunctionLowering, LoweredFunction, pyobject_offset_ok
from .parallel import ensure_runtime
from .types import Unsupported

__all__ = [
    "ArgumentError",
    "Unsupported",
    "assembly",
    "compile_ir",
    "llvm_ir",
    "lower_function",
    "warm_up",
]

RunnerFn = Callable[[list], list]


def lower_function(fn: Function, name: str = "redraft_main",
                   standalone: bool = False) -> LoweredFunction:
    """The LLVM module for `fn` (raises Unsupported for what this backend cannot lower).
    `standalone`: every constant is in the module (a build's object file); otherwise large
    ones are external symbols that `MachineCode(lowered.module, lowered.constants)`
    defines."""
    ensure_runtime()
    _install_callbacks()
    module = ir.Module(name=f"redraft_{fn.name}")
    return FunctionLowering(Function(fn.name, fn.body, dict(fn.meta)), module, name,
                            external_constants=not standalone).lower()


def compile_ir(fn: Function) -> RunnerFn | None:
    """A runner for `fn` on host arrays, or None if some primitive cannot be lowered."""
    try:
        lowered = lower_function(fn)
        compiled = MachineCode(lowered.module, lowered.constants)
    except Unsupported:
        if os.environ.get("REDRAFT_LLVM_STRICT") == "2":
            raise
        return None
    except Exception as e:  # a backend bug must not break the user's program
        if os.environ.get("REDRAFT_LLVM_STRICT"):
            raise
        warnings.warn(f"redraft: LLVM backend failed on {fn.name} ({type(e).__name__}: {e});"
                      " running it with the interpreter", RuntimeWarning, stacklevel=2)
        return None
    return Runner(lowered, compiled, raw_pointers=not pyobject_offset_ok())


def llvm_ir(fn: Function, optimised: bool = True) -> str:
    """The LLVM IR text of `fn`'s module (after the optimisation pipeline unless told
    otherwise)."""
    lowered = lower_function(fn, standalone=True)
    if not optimised:
        return str(lowered.module)
    llmod = parse(lowered.module)
    optimise(llmod, opt_level(lowered.module))
    return str(llmod)


def assembly(fn: Function) -> str:
    """Host assembly of `fn`'s compiled module."""
    return MachineCode(lower_function(fn, standalone=True).module).assembly()
