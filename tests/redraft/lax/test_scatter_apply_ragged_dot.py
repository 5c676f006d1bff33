"""lax.scatter_apply and lax.ragged_dot against JAX 0.10.2's results (stored here),
eager, compiled, batched and differentiated (JAX has no derivative of scatter_apply;
redraft's is checked against the closed form)."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax

DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
REPEATED = np.array([[1], [3], [1]], np.int32)


def ten_x_plus_one(x):
    return lax.scatter_apply(x, REPEATED, lambda v: v * 10 + 1, DN, update_shape=(3,))


def test_scatter_apply_once_per_update():
    x = jnp.arange(5.0)
    for fn in (ten_x_plus_one, redraft.jit(ten_x_plus_one)):
        np.testing.assert_allclose(fn(x), [0.0, 111.0, 2.0, 31.0, 4.0])
    np.testing.assert_allclose(redraft.vmap(ten_x_plus_one)(jnp.stack([x, x + 1])),
                               [[0, 111, 2, 31, 4], [1, 211, 3, 41, 5]])


def test_scatter_apply_windows_and_dropped_indices():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    m = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(lax.scatter_apply(m, jnp.array([[1]]), jnp.negative, dn,
                                                 update_shape=(1, 3)), [[0, 1, 2], [-3, -4, -5]])
    np.testing.assert_allclose(lax.scatter_apply(jnp.arange(5.0), jnp.array([[7], [2]]),
                                                 jnp.negative, DN, update_shape=(2,)),
                               [0, 1, -2, 3, 4])


def test_scatter_apply_gradient():
    def f(x):
        return lax.scatter_apply(x, REPEATED, jnp.sin, DN, update_shape=(3,)).sum()
    expected = [1.0, np.cos(np.sin(1.0)) * np.cos(1.0), 1.0, np.cos(3.0), 1.0]
    for fn in (redraft.grad(f), redraft.jit(redraft.grad(f))):
        np.testing.assert_allclose(fn(jnp.arange(5.0)), expected, rtol=1e-6)


L = np.arange(12.0, dtype=np.float32).reshape(4, 3)
R = np.arange(18.0, dtype=np.float32).reshape(2, 3, 3) / 10


def test_ragged_dot_values():
    np.testing.assert_allclose(lax.ragged_dot(L, R, jnp.array([1, 2])),
                               [[1.5, 1.8, 2.1], [15.0, 16.2, 17.4], [25.8, 27.9, 30.0],
                                [0.0, 0.0, 0.0]], rtol=1e-6)
    out = redraft.jit(lambda l, r: lax.ragged_dot(l, r, jnp.array([3, 1])))(L, R)
    np.testing.assert_allclose(out, [[1.5, 1.8, 2.1], [4.2, 5.4, 6.6], [6.9, 9.0, 11.1],
                                     [36.6, 39.6, 42.6]], rtol=1e-6)
    ints = lax.ragged_dot(L.astype(np.int32), R.astype(np.int32), jnp.array([2, 2]))
    assert ints.dtype == np.int32


def test_ragged_dot_gradients_and_batching():
    def f(lhs, rhs):
        return (lax.ragged_dot(lhs, rhs, jnp.array([1, 2])) ** 2).sum()
    l_bar, r_bar = redraft.grad(f, argnums=(0, 1))(L, R)
    np.testing.assert_allclose(l_bar, [[1.2, 4.44, 7.68], [97.68, 126.84, 156.0],
                                       [168.24, 218.46, 268.68], [0.0, 0.0, 0.0]], rtol=1e-5)
    np.testing.assert_allclose(r_bar[1], [[399.6, 432.0, 464.4], [481.2, 520.2, 559.2],
                                          [562.8, 608.4, 654.0]], rtol=1e-5)
    batched = redraft.vmap(lambda l: lax.ragged_dot(l, R, jnp.array([1, 2])))(np.stack([L, -L]))
    single = lax.ragged_dot(L, R, jnp.array([1, 2]))
    np.testing.assert_allclose(batched, np.stack([single, -np.asarray(single)]), rtol=1e-6)
