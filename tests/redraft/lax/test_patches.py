"""lax.conv_general_dilated_patches (redraft/lax/patches.py): JAX 0.10.2's values (stored
below) in three layouts, derivatives to order 2 against finite differences, jit and vmap."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

X = jnp.arange(2 * 3 * 5 * 4, dtype=jnp.float32).reshape(2, 3, 5, 4)


def test_values_match_jax():
    p = lax.conv_general_dilated_patches(X, (2, 3), (1, 2), "VALID")
    assert p.shape == (2, 18, 4, 1)
    assert np.asarray(p)[1, :, 2, 0].tolist() == [
        68.0, 69.0, 70.0, 72.0, 73.0, 74.0, 88.0, 89.0, 90.0, 92.0, 93.0, 94.0, 108.0, 109.0,
        110.0, 112.0, 113.0, 114.0]
    q = lax.conv_general_dilated_patches(X.transpose(0, 2, 3, 1), (2, 2), (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert q.shape == (2, 5, 4, 12)
    assert np.asarray(q)[0, 1, 2, :].tolist() == [6.0, 7.0, 10.0, 11.0, 26.0, 27.0, 30.0,
                                                  31.0, 46.0, 47.0, 50.0, 51.0]
    r = lax.conv_general_dilated_patches(X[:, :, :, 0], (3,), (2,), [(1, 1)],
                                         rhs_dilation=(2,))
    assert r.shape == (2, 9, 2)
    assert np.asarray(r)[1].tolist() == [[0.0, 64.0], [64.0, 72.0], [72.0, 0.0], [0.0, 84.0],
                                         [84.0, 92.0], [92.0, 0.0], [0.0, 104.0],
                                         [104.0, 112.0], [112.0, 0.0]]


def _loss(x):
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME")
    return jnp.sum(jnp.sin(p))


def _loss_nhwc(x):
    p = lax.conv_general_dilated_patches(x.transpose(0, 2, 3, 1), (2, 2), (1, 1), "VALID",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.sum(p * p)


def test_derivatives_jit_and_vmap():
    x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype(np.float32))
    check_grads(_loss, (x,), 2, atol=2e-2, rtol=2e-2)
    check_grads(_loss_nhwc, (x,), 2, atol=2e-2, rtol=2e-2)
    eager = redraft.grad(_loss)(x)
    np.testing.assert_allclose(redraft.jit(redraft.grad(_loss))(x), eager, rtol=1e-5,
                               atol=1e-6)
    per = redraft.vmap(redraft.grad(_loss))(jnp.stack([x, 2.0 * x]))
    np.testing.assert_allclose(per[1], redraft.grad(_loss)(2.0 * x), rtol=1e-5, atol=1e-6)
