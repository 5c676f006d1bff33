"""The pass pipeline: a list of named IR -> IR rewrites, run top to bottom.

REDRAFT_DUMP_IR=1 prints the IR after every pass (to stderr); REDRAFT_DUMP_IR=name prints
it after the passes whose names contain `name`.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

from redraft.compiler.ir.passes.carries import drop_dead_carries
from redraft.compiler.ir.passes.conv import lower_conv
from redraft.compiler.ir.passes.cse import cse
from redraft.compiler.ir.passes.dce import dce
from redraft.compiler.ir.passes.fold import fold
from redraft.compiler.ir.passes.fusion import fusion
from redraft.compiler.ir.passes.reuse import reuse
from redraft.compiler.ir.ssa import Function
from redraft.compiler.ir.verify import verify

Pass = Callable[[Function], Function]

PIPELINE: list[tuple[str, Pass]] = [
    ("verify", verify),   # what staging made is well formed
    ("fold", fold),       # literals computed now; x*1 and same-type casts dropped
    ("cse", cse),         # each pure expression computed once
    ("dce", dce),         # what nothing reads is gone (staging leaves probes behind)
    ("carries", drop_dead_carries),  # loops stop carrying what only feeds itself
    ("lower_conv", lower_conv),  # convolutions as one matrix product (im2col)
    ("fusion", fusion),   # elementwise work and its reductions as `fused` loop nests
    ("reuse", reuse),     # which dead operand buffers each result may be written into
    ("verify", verify),   # and the result is still well formed
]


def run_pipeline(fn: Function, pipeline: list[tuple[str, Pass]] | None = None) -> Function:
    dump = os.environ.get("REDRAFT_DUMP_IR", "")
    for name, rewrite in pipeline or PIPELINE:
        fn = rewrite(fn)
        if dump and (dump == "1" or dump in name):
            print(f"--- after {name} ---\n{fn}", file=sys.stderr)
    return fn
