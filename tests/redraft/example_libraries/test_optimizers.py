"""redraft.example_libraries.optimizers against NumPy re-derivations of each update rule,
eager and under jit(grad(...)), plus schedules, clipping and state packing."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.example_libraries import optimizers
from redraft.tree_util import tree_leaves

W0 = np.float32([1.0, -2.0, 3.0])
B0 = np.float32([[0.5, 0.1], [-0.3, 0.2]])


def loss(p):
    return jnp.sum(p["w"] ** 2) + jnp.sum(jnp.sin(p["b"]))


def np_grads(w, b):
    return 2 * w, np.cos(b)


def np_run(name, steps, lr=0.1):
    """The update rules written again in float64 NumPy."""
    xs = [W0.astype(np.float64), B0.astype(np.float64)]
    st = [dict(m=np.zeros_like(x), v=np.zeros_like(x)) for x in xs]
    for i in range(steps):
        for x, s, g in zip(xs, st, np_grads(*xs)):
            if name == "sgd":
                x -= lr * g
            elif name == "momentum":
                s["m"] = 0.9 * s["m"] + g
                x -= lr * s["m"]
            elif name == "nesterov":
                s["m"] = 0.9 * s["m"] + g
                x -= lr * (0.9 * s["m"] + g)
            elif name == "adagrad":
                s["v"] = s["v"] + g * g
                s["m"] = 0.1 * g / np.sqrt(s["v"]) + 0.9 * s["m"]
                x -= lr * s["m"]
            elif name == "rmsprop":
                s["v"] = 0.9 * s["v"] + 0.1 * g * g
                x -= lr * g / np.sqrt(s["v"] + 1e-8)
            elif name == "adam":
                s["m"] = 0.1 * g + 0.9 * s["m"]
                s["v"] = 0.001 * g * g + 0.999 * s["v"]
                mhat, vhat = s["m"] / (1 - 0.9 ** (i + 1)), s["v"] / (1 - 0.999 ** (i + 1))
                x -= lr * mhat / (np.sqrt(vhat) + 1e-8)
            elif name == "adamax":
                s["m"] = 0.1 * g + 0.9 * s["m"]
                s["v"] = np.maximum(0.999 * s["v"], np.abs(g))
                x -= lr / (1 - 0.9 ** (i + 1)) * s["m"] / (s["v"] + 1e-8)
    return xs


MAKERS = {"sgd": (0.1,), "momentum": (0.1, 0.9), "nesterov": (0.1, 0.9), "adagrad": (0.1,),
          "rmsprop": (0.1,), "adam": (0.1,), "adamax": (0.1,)}


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("compiled", [False, True])
def test_update_rules_match_numpy(name, compiled):
    init, update, get_params = getattr(optimizers, name)(*MAKERS[name])

    def step(i, state):
        return update(i, redraft.grad(loss)(get_params(state)), state)

    step = redraft.jit(step) if compiled else step
    state = init({"w": jnp.array(W0), "b": jnp.array(B0)})
    for i in range(5):
        state = step(i, state)
    got = get_params(state)
    want_w, want_b = np_run(name, 5)
    np.testing.assert_allclose(np.asarray(got["w"]), want_w, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(got["b"]), want_b, rtol=2e-5, atol=2e-5)
    assert got["w"].dtype == np.float32


def test_sm3_and_rmsprop_momentum_descend():
    for maker in (optimizers.sm3(0.1), optimizers.rmsprop_momentum(0.01)):
        init, update, get_params = maker
        params = {"w": jnp.array(W0), "b": jnp.array(B0)}
        state = init(params)
        before = float(loss(params))
        for i in range(20):
            state = update(i, redraft.grad(loss)(get_params(state)), state)
        after = get_params(state)
        assert after["b"].shape == (2, 2)
        assert float(loss(after)) < before


def test_state_is_a_pytree_and_packs_round_trip():
    init, update, get_params = optimizers.adam(0.1)
    state = init({"w": jnp.array(W0), "b": jnp.array(B0)})
    assert len(tree_leaves(state)) == 6
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    again = optimizers.pack_optimizer_state(unpacked)
    assert again.tree_def == state.tree_def and again.subtree_defs == state.subtree_defs
    for a, b in zip(tree_leaves(again), tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_update_rejects_a_gradient_of_another_structure():
    init, update, _ = optimizers.sgd(0.1)
    state = init({"w": jnp.array(W0)})
    with pytest.raises(TypeError, match="tree structure"):
        update(0, [jnp.array(W0)], state)


def test_schedules():
    assert optimizers.constant(0.3)(7) == 0.3
    assert np.isclose(optimizers.exponential_decay(1.0, 10, 0.5)(20), 0.25)
    assert np.isclose(optimizers.inverse_time_decay(1.0, 2, 1.0)(3), 1 / 2.5)
    assert np.isclose(optimizers.inverse_time_decay(1.0, 2, 1.0, staircase=True)(3), 0.5)
    poly = optimizers.polynomial_decay(1.0, 4, 0.2, power=2.0)
    assert np.isclose(float(poly(2)), 0.25 * 0.8 + 0.2)
    assert np.isclose(float(poly(9)), 0.2)
    pc = optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])
    assert [float(pc(i)) for i in range(6)] == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.1])
    with pytest.raises(ValueError):
        optimizers.piecewise_constant([2, 4], [1.0, 0.5])
    with pytest.raises(TypeError):
        optimizers.make_schedule("fast")


def test_l2_norm_and_clip_grads():
    tree = {"a": jnp.array([3.0, 0.0]), "b": (jnp.array([[4.0]]),)}
    assert np.isclose(float(optimizers.l2_norm(tree)), 5.0)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(np.asarray(clipped["a"]), [0.6, 0.0], rtol=1e-6)
    kept = optimizers.clip_grads(tree, 10.0)
    np.testing.assert_allclose(np.asarray(kept["b"][0]), [[4.0]])
    compiled = redraft.jit(optimizers.clip_grads)(tree, 1.0)
    np.testing.assert_allclose(np.asarray(compiled["b"][0]), [[0.8]], rtol=1e-6)


def test_safe_helpers():
    assert optimizers.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError):
        optimizers.safe_zip([1], [1, 2])
    assert optimizers.unzip2([(1, "a"), (2, "b")]) == ((1, 2), ("a", "b"))
