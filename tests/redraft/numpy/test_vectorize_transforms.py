"""jnp.vectorize with a signature under grad, jit and vmap, against JAX 0.10.2's results
(stored here): the gradient of a broadcast argument sums over the loop axes."""
import numpy as np

import redraft
import redraft.numpy as jnp

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
Y = np.arange(3.0, dtype=np.float32) / 3
Y_BAR = [3.0, 4.724785, 5.5012107]  # JAX: grad of the broadcast argument


def weighted(a, b):
    return jnp.sum(a * jnp.sin(b))


vdot = jnp.vectorize(weighted, signature="(n),(n)->()")


def total(x, y):
    return vdot(x, y).sum()


def test_values_and_gradients():
    np.testing.assert_allclose(vdot(X, Y), [1.5639343, 4.400628], rtol=1e-6)
    x_bar, y_bar = redraft.grad(total, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(x_bar, [[0.0, 0.32719472, 0.6183698]] * 2, rtol=1e-6)
    np.testing.assert_allclose(y_bar, Y_BAR, rtol=1e-6)


def test_compiled_gradient():
    np.testing.assert_allclose(redraft.jit(redraft.grad(total, argnums=1))(X, Y), Y_BAR,
                               rtol=1e-6)


def test_batched_gradient():
    out = redraft.vmap(redraft.grad(total, argnums=1))(np.stack([X, 2 * X]),
                                                         np.stack([Y, Y + 1]))
    np.testing.assert_allclose(out, [Y_BAR, [3.2418137, 2.3523755, -1.3401308]], rtol=1e-5)


def test_matrix_core_and_no_signature():
    matvec = jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    assert redraft.grad(lambda m: matvec(m, Y).sum())(jnp.ones((4, 2, 3))).shape == (4, 2, 3)
    scaled = jnp.vectorize(lambda a, b: a * b ** 2)
    np.testing.assert_allclose(redraft.grad(lambda b: scaled(X, b).sum())(Y),
                               [0.0, 3.3333335, 9.333334], rtol=1e-6)
