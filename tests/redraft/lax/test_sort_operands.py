"""lax.sort of several operands ordered by their first num_keys, against JAX 0.10.2's
results (stored here): eager, compiled, batched and differentiated."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax

K = np.array([1, 0, 1, 0], np.int32)
V = np.array([3.0, 2.0, 1.0, 0.0], np.float32)
W = np.array([0, 1, 2, 3], np.int32)


def check(got, expected):
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_two_keys_and_one_key():
    two = lambda k, v, w: lax.sort((k, v, w), num_keys=2)  # noqa: E731
    one = lambda k, v, w: lax.sort((k, v, w), num_keys=1)  # noqa: E731
    for fn in (two, redraft.jit(two)):
        check(fn(K, V, W), ([0, 0, 1, 1], [0.0, 2.0, 1.0, 3.0], [3, 1, 2, 0]))
    for fn in (one, redraft.jit(one)):
        check(fn(K, V, W), ([0, 0, 1, 1], [2.0, 0.0, 3.0, 1.0], [1, 3, 0, 2]))


def test_a_list_comes_back_as_a_tuple():
    check(lax.sort([jnp.asarray(V), jnp.asarray(W)]), ([0.0, 1.0, 2.0, 3.0], [3, 2, 1, 0]))


def test_along_a_dimension_and_batched():
    m = jnp.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    check(lax.sort((m, m * 10), dimension=0, num_keys=1),
          ([[0.0, 1.0, 2.0], [3.0, 5.0, 4.0]], [[0.0, 10.0, 20.0], [30.0, 50.0, 40.0]]))
    check(redraft.vmap(lambda a, b: lax.sort((a, b), num_keys=1))(m, -m),
          ([[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]], [[-1.0, -2.0, -3.0], [-0.0, -4.0, -5.0]]))


def test_gradient_flows_to_the_values_permuted():
    def f(v):
        return jnp.sum(lax.sort((jnp.asarray(K), v), num_keys=1)[1] * jnp.arange(4.0))
    np.testing.assert_array_equal(redraft.grad(f)(jnp.asarray(V)), [2.0, 0.0, 3.0, 1.0])


def test_num_keys_out_of_range():
    try:
        lax.sort((K, V), num_keys=3)
    except ValueError as e:
        assert "num_keys=3" in str(e)
    else:
        raise AssertionError("expected a ValueError")
