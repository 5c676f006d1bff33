"""compiler/backend: from optimised IR to something that runs.

`host_runner` picks the host backend; llvm/ (machine code) and nvvm/ (GPU) lower the IR,
interpret.py runs it as the reference semantics."""
from __future__ import annotations

import os
from typing import Callable


def host_runner(ir_fn) -> tuple[Callable, str]:
    """The fastest backend that can run `ir_fn` on the host, and its name
    (REDRAFT_BACKEND=interpret forces the reference interpreter)."""
    choice = os.environ.get("REDRAFT_BACKEND", "auto")
    if choice != "interpret":
        try:
            from redraft.compiler.backend.llvm import compile_ir
        except ImportError:
            compile_ir = None
        if compile_ir is not None:
            runner = compile_ir(ir_fn)
            if runner is not None:
                return runner, "llvm"
    from redraft.compiler.backend import interpret
    return (lambda bufs: interpret.run(ir_fn, bufs)), "interpret"
