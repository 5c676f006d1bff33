"""The whole pipeline: its order, REDRAFT_DUMP_IR, and that compiled functions (through jit,
on the reference interpreter) and an in-place run that honours the reuse annotations give
the results of eager execution, without touching the caller's arrays."""
import numpy as np
import pytest

import redraft
from redraft.compiler.ir import passes
from redraft.compiler.ir.ssa import fused_p, walk_eqns
from redraft.compiler.ir.verify import verify
import redraft.numpy as jnp
from redraft.runtime.pytree import tree_flatten, tree_leaves

import ir_functions as F
from ir_inplace import run_in_place

RNG = np.random.default_rng(0)


def normal(*shape):
    return jnp.array(RNG.standard_normal(shape).astype(np.float32))


CASES = {
    "selu": (F.selu, lambda: (normal(64),)),
    "decay": (F.decay, lambda: (normal(30, 30),)),
    "norm": (F.norm, lambda: (normal(6, 5),)),
    "sum_logistic_grad": (F.sum_logistic_grad, lambda: (normal(16),)),
    "grow_until_large": (F.grow_until_large, lambda: (jnp.ones(8),)),
    "halve_until_small": (F.halve_until_small, lambda: (jnp.ones(8) * 3.0,)),
    "branch_positive": (F.branch_on_value, lambda: (jnp.ones(5),)),
    "branch_negative": (F.branch_on_value, lambda: (-jnp.ones(5),)),
    "loop_index_used": (F.loop_index_used, lambda: (normal(7),)),
    "loop_over_rows": (F.loop_over_rows, lambda: (normal(4, 3),)),
    "nested_loops": (F.nested_loops, lambda: (normal(9),)),
    "shape_arithmetic": (F.shape_arithmetic, lambda: (normal(3, 4),)),
    "constants": (F.constants, lambda: (normal(4),)),
    "repeated": (F.repeated, lambda: (normal(6),)),
    "calls_inner": (F.calls_inner, lambda: (normal(6),)),
    "mean_and_var": (F.mean_and_var, lambda: (normal(5, 8),)),
    "softmax": (F.softmax, lambda: (normal(3, 7),)),
    "logsumexp": (F.logsumexp, lambda: (normal(10),)),
    "exp_and_sin": (F.exp_and_sin, lambda: (normal(6),)),
    "update_in_loop": (F.update_in_loop, lambda: (normal(6),)),
    "ints_and_bools": (F.ints_and_bools, lambda: (jnp.array(5), normal(8))),
    "mlp": (F.mlp, lambda: ({"w": normal(3, 4), "b": normal(4)}, normal(2, 3))),
    "keeps_param": (F.keeps_param, lambda: (normal(3),)),
    "swap_in_loop": (F.swap_in_loop, lambda: (normal(3), normal(3))),
    "loop_yields_outer": (F.loop_yields_outer, lambda: (normal(3), normal(3))),
    "loop_resets_to_outer": (F.loop_resets_to_outer, lambda: (normal(3), normal(3))),
    "view_outlives_its_base": (F.view_outlives_its_base, lambda: (normal(6),)),
    "view_in_loop": (F.view_in_loop, lambda: (normal(6),)),
}


def assert_same(actual, expected):
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(jnp.asarray(e))  # eager may return Python ints
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_pipeline_order():
    names = [name for name, _ in passes.PIPELINE]
    assert names == ["verify", "fold", "cse", "dce", "carries", "lower_conv", "fusion", "reuse",
                     "verify"]
    assert passes.PIPELINE[0][1] is verify and passes.PIPELINE[-1][1] is verify


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_matches_eager(name):
    fun, make_args = CASES[name]
    args = make_args()
    compiled = redraft.jit(fun).lower(*args).compiled
    assert compiled.backend == "interpret"
    assert_same(redraft.jit(fun)(*args), fun(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_run_matches_eager_and_keeps_arguments(name):
    fun, make_args = CASES[name]
    args = make_args()
    jitted = redraft.jit(fun)
    ir = jitted.lower(*args).compiled.ir
    bound = jitted._positional(args, {})  # default arguments are compiled as parameters too
    leaves = [np.array(v, dtype=p.aval.dtype) for v, p in zip(tree_leaves(bound), ir.params)]
    before = [v.copy() for v in leaves]
    outs = run_in_place(ir, leaves)
    expected = [np.asarray(jnp.asarray(v)) for v in tree_leaves(fun(*args))]
    for a, e in zip(outs, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
    for a, b in zip(leaves, before):
        np.testing.assert_array_equal(a, b)


def test_prints_run_in_order(capsys):
    x = jnp.arange(3.0)
    expected = F.prints(x)
    eager = capsys.readouterr().out
    assert_same(redraft.jit(F.prints)(x), expected)
    assert capsys.readouterr().out == eager


def test_every_elementwise_and_reduction_ends_up_fused():
    ir = redraft.make_ir(F.norm)(normal(4, 3))
    for eqn in ir.body.eqns:
        assert eqn.prim is fused_p or eqn.prim.name == "reshape"


def test_dump_ir_prints_after_every_pass(monkeypatch, capsys):
    monkeypatch.setenv("REDRAFT_DUMP_IR", "1")
    redraft.make_ir(F.decay)(jnp.ones(4))
    err = capsys.readouterr().err
    headers = [line for line in err.splitlines() if line.startswith("--- after")]
    assert headers == [f"--- after {name} ---" for name, _ in passes.PIPELINE]
    assert "fused[" in err.split("--- after fusion ---")[1]
    assert "fused[" not in err.split("--- after fusion ---")[0]


def test_dump_ir_names_one_pass(monkeypatch, capsys):
    monkeypatch.setenv("REDRAFT_DUMP_IR", "dce")
    redraft.make_ir(F.grow_until_large)(jnp.ones(4))
    err = capsys.readouterr().err
    assert err.startswith("--- after dce ---\n{ lambda grow_until_large")
    assert err.count("--- after") == 1


def test_no_dump_without_the_variable(monkeypatch, capsys):
    monkeypatch.delenv("REDRAFT_DUMP_IR", raising=False)
    redraft.make_ir(F.decay)(jnp.ones(4))
    assert capsys.readouterr().err == ""


def test_passes_leave_their_input_unchanged():
    fn, _ = redraft.compiler.driver.stage(F.norm, (normal(4, 3),), set())
    text = str(fn)
    for _, rewrite in passes.PIPELINE:
        rewrite(fn)
        assert str(fn) == text


def test_fused_regions_are_verified():
    ir = redraft.make_ir(F.softmax)(normal(2, 5))
    assert any(e.prim is fused_p for e in walk_eqns(ir.body))
    verify(ir)


@pytest.mark.parametrize("name", ["norm", "decay", "mean_and_var", "halve_until_small"])
def test_the_pipeline_is_stable_on_its_own_output(name):
    fun, make_args = CASES[name]
    ir = redraft.jit(fun).lower(*make_args()).compiled.ir
    again = passes.run_pipeline(ir)
    assert str(again) == str(ir)
    assert [e.params for e in walk_eqns(again.body)] == [e.params for e in walk_eqns(ir.body)]
