"""The LLVM pipeline a module gets (compiler/backend/llvm/codegen.py): O2 for a small module,
the short pipeline for a large one, and the same results either way."""
import numpy as np
import pytest
from backend_util import check, sample
from llvmlite import ir

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.backend.llvm import codegen


def _module(instructions: int) -> ir.Module:
    module = ir.Module(name="probe")
    fn = ir.Function(module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), name="f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    x = fn.args[0]
    for _ in range(instructions - 1):
        x = b.add(x, ir.Constant(ir.IntType(64), 1))
    b.ret(x)
    return module


def test_small_modules_get_o2_and_large_ones_the_short_pipeline(monkeypatch):
    monkeypatch.delenv("REDRAFT_LLVM_OPT", raising=False)
    assert codegen.opt_level(_module(10)) == 2
    assert codegen.opt_level(_module(codegen.SMALL_MODULE + 10)) == 0
    monkeypatch.setenv("REDRAFT_LLVM_OPT", "3")
    assert codegen.opt_level(_module(codegen.SMALL_MODULE + 10)) == 3


def _nests(x, y):
    # whole vectors (128 lanes' worth per row) and a masked tail (37), a column reduction
    # and a run-time while loop
    a = jnp.tanh(x @ y + 1.0)
    b = jnp.exp(x[:, :37]) * 2.0 - x[:, :37]
    c = (a - a.mean(0)) / (a.std(0) + 1.0)
    n, s = lax.while_loop(lambda c: c[0] < 5.0, lambda c: (c[0] + 1.0, c[1] * 0.5 + 1.0),
                          (0.0, b.sum()))
    return a, b, c, s


@pytest.mark.parametrize("level", ["0", "2"])
def test_both_pipelines_compute_the_same(monkeypatch, level):
    monkeypatch.setenv("REDRAFT_LLVM_OPT", level)
    x, y = sample((32, 128), np.float32, seed=1), sample((128, 128), np.float32, seed=2)
    check(_nests, x * 0.1, y * 0.1, rtol=2e-5, atol=2e-5)
