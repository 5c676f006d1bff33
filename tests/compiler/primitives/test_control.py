"""Eager lax control flow: results, pytrees, JAX's type rules and the errors that name leaves."""
from collections import namedtuple

import numpy as np
import pytest

import redraft
import redraft.lax as lax
import redraft.numpy as jnp
from redraft.compiler.primitives import control


class Calls:
    """Counts the calls of a function it wraps."""

    def __init__(self, fn):
        self.fn, self.count = fn, 0

    def __call__(self, *args):
        self.count += 1
        return self.fn(*args)


# ---- fori_loop -----------------------------------------------------------------------------

def test_fori_loop_sums_its_index():
    out = lax.fori_loop(0, 10, lambda i, total: total + i, 0)
    assert int(out) == 45 and out.dtype == np.int32


def test_fori_loop_index_is_an_int32_array():
    seen = []
    lax.fori_loop(2, 4, lambda i, x: seen.append(i) or x, 0.0)
    assert [int(i) for i in seen] == [2, 3]
    assert all(i.dtype == np.int32 and i.shape == () for i in seen)


def test_fori_loop_carries_a_pytree():
    def body(i, carry):
        total, history = carry
        return total + i, history.at[i].set(total)

    total, history = lax.fori_loop(0, 4, body, (0, jnp.zeros(4, jnp.int32)))
    assert int(total) == 6 and np.asarray(history).tolist() == [0, 0, 1, 3]


def test_fori_loop_widens_a_python_scalar_carry_as_jax_does():
    out = lax.fori_loop(0, 3, lambda i, x: x + jnp.float32(0.5), 0)
    assert out.dtype == np.float32 and float(out) == 1.5 and not out.weak_type


def test_fori_loop_that_never_runs_returns_init_but_checks_its_body():
    body = Calls(lambda i, x: x + 1)
    assert int(lax.fori_loop(5, 2, body, 7)) == 7
    assert body.count == 1
    with pytest.raises(TypeError, match="shapes do not match"):
        lax.fori_loop(0, 0, lambda i, x: jnp.stack([x, x]), 1.0)


def test_fori_loop_names_the_leaf_whose_shape_changed():
    def body(i, c):
        return c[0], jnp.concatenate([c[1], c[1]])

    with pytest.raises(TypeError) as info:
        lax.fori_loop(0, 3, body, (0., jnp.ones(2)))
    message = str(info.value)
    assert "fori_loop body function carry input and carry output must have equal types" in (
        message)
    assert "c[1] has type f32[2]" in message and "f32[4], so the shapes do not match" in message


@pytest.mark.parametrize("lower,upper,words", [
    (0.0, 3, "integer scalars"), (np.int32(0), np.int8(3), "equal types"),
    (0, np.arange(3), "integer scalars")])
def test_fori_loop_bounds(lower, upper, words):
    with pytest.raises(TypeError, match=words):
        lax.fori_loop(lower, upper, lambda i, x: x, 0)


# ---- while_loop ---------------------------------------------------------------------------

def test_while_loop_runs_until_cond_fails():
    out = lax.while_loop(lambda v: v < 10, lambda v: v + 3, 0)
    assert int(out) == 12


def test_while_loop_with_pytree_carry():
    def body(state):
        return {"n": state["n"] + 1, "x": state["x"] * 2.0}

    out = lax.while_loop(lambda s: s["x"] < 100.0, body, {"n": 0, "x": jnp.float32(1)})
    assert int(out["n"]) == 7 and float(out["x"]) == 128.0


def test_while_loop_that_never_runs_still_evaluates_its_body_once():
    body = Calls(lambda v: v + 1)
    assert int(lax.while_loop(lambda v: v > 100, body, 3)) == 3
    assert body.count == 1


@pytest.mark.parametrize("cond_fun,words", [
    (lambda v: v, "boolean scalar, but got output type i32"),
    (lambda v: jnp.array([True, False]), r"bool\[2\]"),
    (lambda v: (v < 3, v < 4), "pytree"),
])
def test_while_loop_cond_must_return_a_boolean_scalar(cond_fun, words):
    with pytest.raises(TypeError, match=words):
        lax.while_loop(cond_fun, lambda v: v + 1, 1)


def test_while_loop_names_a_structure_change():
    with pytest.raises(TypeError, match=r"(?s)same pytree structure.*the input carry state is a "
                                        r"tuple of length 2 but .* a list of length 2"):
        lax.while_loop(lambda state: state[0] < 3, lambda state: [state[0] + 1, state[1]],
                       (0, 1.0))


# ---- scan and map ---------------------------------------------------------------------------

def test_scan_is_a_cumulative_sum():
    xs = np.arange(1., 6., dtype=np.float32)
    total, partial = lax.scan(lambda c, x: (c + x, c + x), 0., xs)
    assert float(total) == 15
    np.testing.assert_array_equal(np.asarray(partial), np.cumsum(xs))


def test_scan_pytrees_in_and_out():
    Point = namedtuple("Point", "x y")
    xs = {"a": np.arange(3, dtype=np.float32), "b": Point(np.ones((3, 2), np.float32),
                                                           np.zeros(3, np.int32))}

    def step(carry, x):
        return carry + x["a"], {"sum": x["b"].x.sum() + x["a"], "pair": (x["b"].y, carry)}

    carry, ys = lax.scan(step, 1.0, xs)
    assert float(carry) == 4
    assert np.asarray(ys["sum"]).tolist() == [2, 3, 4]
    assert ys["pair"][0].dtype == np.int32 and ys["pair"][0].shape == (3,)
    assert np.asarray(ys["pair"][1]).tolist() == [1, 1, 2]


def test_scan_reverse_keeps_ys_aligned_with_xs():
    carry, ys = lax.scan(lambda c, x: (c + x, c), 0, np.arange(5, dtype=np.int32),
                         reverse=True)
    assert int(carry) == 10 and np.asarray(ys).tolist() == [10, 9, 7, 4, 0]


def test_scan_with_length_and_no_xs():
    carry, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=4)
    assert int(carry) == 16 and np.asarray(ys).tolist() == [1, 2, 4, 8]


def test_zero_length_scan_gives_empty_ys_of_the_right_type():
    body = Calls(lambda c, x: (c + x.sum(), x * 2))
    carry, ys = lax.scan(body, 0., np.zeros((0, 3), np.float32))
    assert float(carry) == 0 and ys.shape == (0, 3) and ys.dtype == np.float32
    assert body.count == 1


def test_scan_ys_are_weak_only_if_every_row_is():
    _, ys = lax.scan(lambda c, x: (c, 2.0), 0, None, length=3)
    assert ys.weak_type and ys.dtype == np.float32


def test_scan_names_the_carry_leaf_whose_dtype_changed():
    def step(state, x):
        return {"count": state["count"] + 0.5, "sum": state["sum"] + x}, x

    with pytest.raises(TypeError) as info:
        lax.scan(step, {"count": jnp.int32(0), "sum": 0.}, np.ones(3, np.float32))
    message = str(info.value)
    assert "scan body function carry input and carry output must have equal types" in message
    assert "state['count'] has type i32[]" in message
    assert "f32[], so the dtypes do not match" in message


def test_scan_reports_every_changed_leaf():
    with pytest.raises(TypeError, match=r"(?s)  \* the input carry component c\[0\].*;\n"
                                        r"  \* the input carry component c\[1\].*\.$"):
        lax.scan(lambda c, x: ((c[0][None], c[1][None]), x), (0., 1.), np.ones(2, np.float32))


def test_scan_ys_must_keep_their_type():
    def step(c, x):
        return c + 1, jnp.zeros(c)  # the y shape depends on the carry's value

    with pytest.raises(TypeError, match=r"y changed type at iteration 1: it was f32\[1\], now "
                                        r"f32\[2\], so the shapes do not match"):
        lax.scan(step, 1, None, length=3)


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(xs=np.ones(3), length=4), ValueError, "disagrees with leading axis sizes"),
    (dict(xs=(np.ones(3), np.ones(4))), ValueError, "different leading axis sizes: 3, 4"),
    (dict(xs=np.float32(1)), ValueError, "no leading axis"),
    (dict(xs=None), ValueError, "`length` not provided"),
    (dict(xs=np.ones(3), unroll=-1), ValueError, "unroll"),
])
def test_scan_argument_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        lax.scan(lambda c, x: (c, x), 0., **kwargs)


def test_scan_body_must_return_a_pair():
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c + x, 0., np.ones(3, np.float32))


def test_map_applies_along_the_leading_axis():
    out = lax.map(lambda row: row.sum(), np.arange(6, dtype=np.float32).reshape(3, 2))
    assert np.asarray(out).tolist() == [1, 5, 9]
    pairs = lax.map(lambda p: (p[0] * 2, p[1]), (np.arange(3), np.ones(3, np.float32)),
                    batch_size=2)
    assert np.asarray(pairs[0]).tolist() == [0, 2, 4] and pairs[1].shape == (3,)


# ---- cond and switch -------------------------------------------------------------------------

def test_cond_returns_the_chosen_branch_and_evaluates_both():
    true_fun, false_fun = Calls(lambda x: x + 1), Calls(lambda x: x - 1)
    assert int(lax.cond(True, true_fun, false_fun, 3)) == 4
    assert int(lax.cond(jnp.array(False), true_fun, false_fun, 3)) == 2
    assert int(lax.cond(0.0, true_fun, false_fun, 3)) == 2
    assert true_fun.count == false_fun.count == 3


def test_cond_with_pytree_operands_and_results():
    out = lax.cond(jnp.int32(2), lambda a, b: {"s": a + b[0]}, lambda a, b: {"s": a * b[1]},
                   1.0, (2.0, 3.0))
    assert float(out["s"]) == 3.0


def test_cond_result_is_weak_only_if_both_branches_are():
    assert lax.cond(True, lambda: 1.0, lambda: 2.0).weak_type
    out = lax.cond(True, lambda: 1.0, lambda: jnp.float32(2))
    assert not out.weak_type and float(out) == 1.0


def test_cond_branches_must_agree_on_types():
    with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                                        r"output of true_fun\[1\] has type f32\[2\] but the "
                                        r"corresponding output of false_fun has type f32\[3\]"):
        lax.cond(True, lambda: (1.0, jnp.ones(2)), lambda: (1.0, jnp.ones(3)))


def test_cond_branches_must_agree_on_structure():
    with pytest.raises(TypeError, match=r"(?s)same pytree structure.*true_fun output is a tuple "
                                        r"of length 2 but false_fun output is a tuple of "
                                        r"length 3"):
        lax.cond(False, lambda: (1.0, 2.0), lambda: (1.0, 2.0, 3.0))


@pytest.mark.parametrize("pred,words", [
    (np.array([True, False]), r"Pred must be a scalar, got .* of shape \(2,\)"),
    ([True], "type <class 'list'>"),
    (None, "Pred is None"),
    (np.complex64(1), "boolean or number"),
])
def test_cond_predicate(pred, words):
    with pytest.raises(TypeError, match=words):
        lax.cond(pred, lambda: 1, lambda: 2)


def test_switch_clamps_its_index():
    branches = [lambda x: x, lambda x: 2 * x, lambda x: 3 * x]
    assert [int(lax.switch(i, branches, 5)) for i in (-4, 0, 1, 2, 9)] == [5, 5, 10, 15, 15]


def test_switch_checks_every_branch():
    with pytest.raises(TypeError, match=r"(?s)switch branches must have equal output types.*"
                                        r"branch 0 has type i32\[\] but .* of branch2 has type "
                                        r"f32\[\], so the dtypes do not match"):
        lax.switch(0, [lambda: 1, lambda: 2, lambda: jnp.float32(3)])


@pytest.mark.parametrize("index,branches,error,words", [
    (1.0, [lambda: 1, lambda: 2], TypeError, "Index type must be an integer"),
    (np.arange(2), [lambda: 1, lambda: 2], TypeError, "Branch index must be a scalar"),
    (0, [], ValueError, "Empty branch sequence"),
    (0, [lambda: 1, 2], TypeError, "sequence of callables"),
])
def test_switch_arguments(index, branches, error, words):
    with pytest.raises(error, match=words):
        lax.switch(index, branches)


def _switched(x, i):
    return lax.switch(i, [lambda x: x, lambda x: x * 2.0, jnp.sin], x)


def test_switch_on_an_index_known_only_at_run_time():
    """Under jit, vmap and grad the index is an array: the branch is chosen where it is
    known (when the code runs, or per example), clamped as eagerly."""
    x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
    eager = {i: np.asarray(_switched(x, i)) for i in range(-2, 5)}
    compiled = redraft.jit(_switched)
    for i in range(-2, 5):
        np.testing.assert_allclose(compiled(x, jnp.int32(i)), eager[i], rtol=1e-6)
    indices = jnp.asarray(np.array([0, 1, 2, 7, -3], np.int32))
    batched = redraft.vmap(_switched, in_axes=(None, 0))(x, indices)
    looped = [np.asarray(_switched(x, int(i))) for i in np.asarray(indices)]
    np.testing.assert_allclose(batched, looped, rtol=1e-6)
    slope = redraft.jit(redraft.grad(lambda x, i: jnp.sum(_switched(x, i))))
    np.testing.assert_allclose(slope(x, jnp.int32(2)), np.cos(np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(slope(x, jnp.int32(1)), [2.0, 2.0, 2.0])


def test_switch_with_one_branch_just_calls_it():
    assert lax.switch(3, [lambda x: x + 1], 1) == 2


# ---- the contract with the frontend, which lowers these calls to Core ----------------------

def test_functions_are_found_by_module_and_name():
    for name in ("fori_loop", "while_loop", "cond", "switch", "scan", "map"):
        fn = getattr(lax, name)
        assert fn.__module__ == control.__name__ and fn.__name__ == name
