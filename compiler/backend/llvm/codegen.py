"""LLVM IR module -> machine code for this host, with the pipeline this backend wants.

Like kernels/jit_host.py (whose target machines, helpers and lock it uses). The IR that
loops.py writes is vectorised and blocked already, so a large module gets a short pipeline:
inline the vecmath functions (always_inline), promote stack slots to registers, combine
instructions and simplify branches; the code generator does the rest. There LLVM's O2 ran
the training steps no faster (benchmarks/bench_steps.py: MLP, CNN, RNN and per-example
gradients within 2-3% on one thread) and cost 0.06 s of the MLP update's first call and
0.5 s of the RNN step's (its scan is unrolled into one function). A small module still gets
O2 (a few ms), which made a column reduction and a scalar while loop 12% faster.
REDRAFT_LLVM_OPT=0..3 forces a level (0: the short pipeline).
"""
from __future__ import annotations

import os

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from redraft.kernels.jit_host import (CompiledModule, define_symbol, host_target_machine,
                                      prepare_module)

SHORT_PIPELINE = ("always_inliner", "sroa", "instruction_combine", "simplify_cfg")
SMALL_MODULE = 800   # instructions up to which O2 is worth its compile time


def opt_level(module: ir.Module | None = None) -> int:
    """REDRAFT_LLVM_OPT if set; else 2 for a small `module` (or none given), 0 (the short
    pipeline) for a large one."""
    forced = os.environ.get("REDRAFT_LLVM_OPT", "")
    if forced:
        return int(forced)
    if module is None:
        return 2
    size = sum(len(block.instructions) for fn in module.functions for block in fn.blocks)
    return 2 if size <= SMALL_MODULE else 0


def optimise(llmod: llvm.ModuleRef, level: int | None = None) -> None:
    """Optimise in place: the short pipeline (level 0), or LLVM's at `level` without the
    loop vectoriser and unroller (unrolling the short constant trip counts of a classifier's
    10-wide layers only grew the code). No level: REDRAFT_LLVM_OPT, else 2."""
    level = opt_level() if level is None else level
    tuning = llvm.create_pipeline_tuning_options(speed_level=max(level, 1))
    tuning.loop_vectorization = False
    tuning.slp_vectorization = True
    tuning.loop_unrolling = False
    builder = llvm.create_pass_builder(host_target_machine(), tuning)
    if level > 0:
        builder.getModulePassManager().run(llmod, builder)
        return
    passes = llvm.create_new_module_pass_manager()
    for name in SHORT_PIPELINE:
        getattr(passes, f"add_{name}_pass")()
    passes.run(llmod, builder)


def parse(module: ir.Module) -> llvm.ModuleRef:
    llmod = llvm.parse_assembly(str(prepare_module(module)))
    llmod.verify()
    return llmod


# Code generation options for a large module: its loops are written with their address
# arithmetic already in place, and LLVM's loop strength reduction cost 10-25% of the code
# generator's time (the CNN step's first call: 0.38 -> 0.29 s of CPU) with the training steps
# as fast without it (benchmarks/bench_steps.py). The matmul kernel keeps it.
LARGE_MODULE_CODEGEN = {"disable-lsr": ("true", "false")}


class MachineCode(CompiledModule):
    """A lowered function's module compiled with this backend's pipeline, alive as long as
    this object is."""

    def __init__(self, module: ir.Module, constants: dict[str, np.ndarray] | None = None):
        level = opt_level(module)
        self.constants = dict(constants or {})  # the data its external constants name
        for name, data in self.constants.items():
            define_symbol(name, data.ctypes.data)
        super().__init__(module, optimiser=lambda llmod: optimise(llmod, level),
                         codegen_options=LARGE_MODULE_CODEGEN if level == 0 else None)
