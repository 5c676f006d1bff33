"""LLVM IR module -> machine code for this host, with the pipeline this backend wants.

Like kernels/jit_host.py (whose target machines, helpers and lock it uses), but with LLVM's
loop vectoriser and unroller off, since every loop this backend writes is vectorised already
(loops.py), and at -O2: on this code O3 only adds compile time (about 1.5x) for no measurable speed.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence

import llvmlite.binding as llvm
from llvmlite import ir
from redraft.kernels.jit_host import (LLVM_LOCK, host_target_machine, new_host_target_machine,
                                     prepare_module)

OPT_LEVEL = 2


def optimise(llmod: llvm.ModuleRef, opt_level: int = OPT_LEVEL) -> None:
    """The module pipeline without the loop vectoriser and the unroller, in place: the
    loops are vectorised by hand, and unrolling their short constant trip counts (the
    10-wide layers of a classifier) only grew the code (MLP update: 0.70 s -> 0.43 s of
    LLVM time, run time unchanged within this machine's noise)."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    tuning.loop_vectorization = False
    tuning.slp_vectorization = True
    tuning.loop_unrolling = False
    builder = llvm.create_pass_builder(host_target_machine(), tuning)
    builder.getModulePassManager().run(llmod, builder)


def parse(module: ir.Module) -> llvm.ModuleRef:
    llmod = llvm.parse_assembly(str(prepare_module(module)))
    llmod.verify()
    return llmod


class MachineCode:
    """A compiled module, alive as long as this object is."""

    def __init__(self, module: ir.Module):
        with LLVM_LOCK:
            llmod = parse(module)
            optimise(llmod)
            self.engine = llvm.create_mcjit_compiler(llmod, new_host_target_machine())
            self.engine.finalize_object()
        self.llvm_module = llmod

    def function(self, name: str, restype, argtypes: Sequence) -> ctypes._CFuncPtr:
        """The compiled function `name` as a ctypes callable (the GIL is released in it)."""
        address = self.engine.get_function_address(name)
        if not address:
            raise KeyError(f"no function {name!r} in the compiled module")
        fn = ctypes.CFUNCTYPE(restype, *argtypes)(address)
        fn._owner = self
        return fn

    def assembly(self) -> str:
        return host_target_machine().emit_assembly(self.llvm_module)
