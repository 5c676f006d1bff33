"""`for k in d:` over a dict of parameters, the way optimisers and models walk their
parameters: the loop visits the keys, which carry no derivative, while `d[k]` does.

Checked against the same function written key by key (an independent form), in every
transform and in compositions of them."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads


def loop_over_keys(params, x):
    total = 0.0
    for k in params:
        total = total + jnp.sum(jnp.tanh(params[k]) * x)
    return total


def key_by_key(params, x):
    return jnp.sum(jnp.tanh(params["a"]) * x) + jnp.sum(jnp.tanh(params["b"]) * x)


def loop_over_sorted_keys(params, x):
    total = 0.0
    for name in sorted(params.keys()):
        total = total + jnp.sum(params[name] ** 2) * x
    return total


def int_keys_scale_their_values(table, x):
    """Integer keys used as numbers: their tangent is zero, not the key."""
    total = 0.0
    for i in table:
        total = total + i * jnp.sum(table[i] * x)
    return total


PARAMS = {"a": jnp.array([0.5, -1.0, 2.0]), "b": jnp.array([0.1, 0.2, -0.3])}
X = jnp.array([1.0, 2.0, 3.0])


def _close(a, b):
    for u, v in zip(redraft.tree_util.tree_leaves(a), redraft.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transform", [redraft.grad, lambda f: redraft.jit(redraft.grad(f)),
                                       lambda f: redraft.grad(f, argnums=(0, 1))])
def test_gradient_of_a_loop_over_keys_is_the_key_by_key_gradient(transform):
    _close(transform(loop_over_keys)(PARAMS, X), transform(key_by_key)(PARAMS, X))


def test_forward_mode_through_a_loop_over_keys():
    tangent = {"a": jnp.ones(3), "b": jnp.array([1.0, 0.0, -1.0])}
    got = redraft.jvp(loop_over_keys, (PARAMS, X), (tangent, X))
    want = redraft.jvp(key_by_key, (PARAMS, X), (tangent, X))
    _close(got, want)


def test_second_order_and_finite_differences():
    check_grads(lambda a: loop_over_keys({"a": a, "b": PARAMS["b"]}, X), (PARAMS["a"],),
                order=2)
    _close(redraft.hessian(loop_over_keys)(PARAMS, X), redraft.hessian(key_by_key)(PARAMS, X))


def test_sorted_keys_and_integer_keys():
    want = {"a": 2 * PARAMS["a"] * 2.0, "b": 2 * PARAMS["b"] * 2.0}
    _close(redraft.grad(loop_over_sorted_keys)(PARAMS, 2.0), want)
    table = {1: jnp.array([1.0, 2.0]), 3: jnp.array([0.5, 0.5])}
    x = jnp.array([2.0, -1.0])
    _close(redraft.grad(int_keys_scale_their_values, argnums=1)(table, x),
           1 * table[1] + 3 * table[3])
    out, out_dot = redraft.jvp(int_keys_scale_their_values, (table, x), (table, x))
    _close(out_dot, 2 * out)  # linear in (table, x) jointly: degree 2, keys stay constants


def test_vmap_of_a_loop_over_keys_with_mixed_batching():
    batched = {"a": jnp.stack([PARAMS["a"], 2 * PARAMS["a"]]), "b": PARAMS["b"]}
    got = redraft.vmap(loop_over_keys, in_axes=({"a": 0, "b": None}, None))(batched, X)
    want = [key_by_key({"a": batched["a"][i], "b": PARAMS["b"]}, X) for i in range(2)]
    _close(got, jnp.stack(want))


def test_per_example_gradients_through_a_loop_over_keys():
    xs = jnp.stack([X, -X, 0.5 * X])
    got = redraft.vmap(redraft.grad(loop_over_keys), in_axes=(None, 0))(PARAMS, xs)
    want = redraft.vmap(redraft.grad(key_by_key), in_axes=(None, 0))(PARAMS, xs)
    _close(got, want)
