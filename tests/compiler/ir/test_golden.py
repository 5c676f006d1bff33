"""Golden files of the IR a few functions compile to (after the whole pipeline), so that a
change to what the passes make (folding, fusion groups, order) is seen and reviewed.

Run with REDRAFT_UPDATE_GOLDEN=1 to rewrite the files in golden/ from the current output;
otherwise the output is compared with them.
"""
import os
import pathlib

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp

import ir_functions as F

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

CASES = {
    "selu": (F.selu, (jnp.ones(8),)),                          # one elementwise loop
    "decay": (F.decay, (jnp.ones((300, 300)),)),               # a for loop around one loop
    "norm": (F.norm, (jnp.arange(15.0).reshape(5, 3),)),      # reductions over axis 0
    "sum_logistic_grad": (F.sum_logistic_grad, (jnp.ones(8),)),  # jit(grad(f))
    "grow_until_large": (F.grow_until_large, (jnp.ones(8),)),  # a while loop
    "mean_and_var": (F.mean_and_var, (jnp.ones((4, 6)),)),     # two reductions, one pass
}


def compiled_ir(name: str) -> str:
    fun, args = CASES[name]
    return str(redraft.jit(fun).lower(*args).compiled.ir) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_ir_matches_golden_file(name):
    text = compiled_ir(name)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("REDRAFT_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no golden file {path.name}: run with REDRAFT_UPDATE_GOLDEN=1"
    assert text == path.read_text(), (
        f"the IR of {name} changed; if the change is intended, run with "
        "REDRAFT_UPDATE_GOLDEN=1 and review the diff of the golden file")


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_functions_still_compute_what_eager_does(name):
    fun, args = CASES[name]
    np.testing.assert_allclose(np.asarray(redraft.jit(fun)(*args)), np.asarray(fun(*args)),
                               rtol=1e-5, atol=1e-6)
