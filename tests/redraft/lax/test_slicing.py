"""lax's one-axis and whole-shape conveniences (redraft/lax/slicing.py) against NumPy:
values, dtypes and errors; derivatives to order 2 in both modes; jit against eager and vmap
against a loop."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 7)).astype(np.float32)


def test_slice_and_index_in_dim_match_numpy():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, None, 2, axis=1), X[:, 1::2])
    np.testing.assert_array_equal(lax.slice_in_dim(x, -2, None), X[-2:])
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, 1), X[:, -1:])
    np.testing.assert_array_equal(lax.index_in_dim(x, 2, 0, keepdims=False), X[2])
    with pytest.raises(IndexError):
        lax.index_in_dim(x, 3, 0)


def test_dynamic_in_dim_clamps_as_jax():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 2, 3, axis=1), X[:, 2:5])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 6, 3, axis=1), X[:, 4:7])
    row = jnp.arange(7.0, dtype=jnp.float32)
    want = X.copy()
    want[1] = np.arange(7.0)
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, row, 1, 0), want)
    block = jnp.zeros((3, 2), jnp.float32)
    want = X.copy()
    want[:, 5:7] = 0
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(x, block, 9, axis=1), want)


def test_shape_helpers_match_numpy():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(lax.collapse(jnp.zeros((2, 3, 4)), 1).shape, (2, 12))
    np.testing.assert_array_equal(lax.collapse(jnp.zeros((2, 3, 4)), 0, 2).shape, (6, 4))
    assert lax.broadcast_to_rank(x, 4).shape == (1, 1, 3, 7)
    assert lax.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    with pytest.raises((TypeError, ValueError)):
        lax.broadcast_shapes((3,), (4,))
    np.testing.assert_array_equal(lax.tile(x, (2, 3)), np.tile(X, (2, 3)))
    pieces = lax.split(x, (2, 0, 5), axis=1)
    for got, want in zip(pieces, np.split(X, [2, 2], axis=1)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        lax.split(x, (2, 2), axis=1)


def test_full_square_reciprocal_dtype():
    f = lax.full((2, 3), 1.5)
    assert f.dtype == np.float32 and f.shape == (2, 3)
    assert lax.full((2,), 3, jnp.int32).dtype == np.int32
    assert lax.full_like(jnp.asarray(X), 2).dtype == np.float32
    assert lax.full_like(jnp.asarray(X), 2, jnp.int32, (4,)).shape == (4,)
    np.testing.assert_allclose(lax.square(jnp.asarray(X)), X * X, rtol=1e-6)
    np.testing.assert_allclose(lax.reciprocal(jnp.asarray(X)), 1 / X, rtol=1e-6)
    assert lax.dtype(jnp.asarray(X)) == np.float32
    assert lax.dtype(np.int32) == np.int32


def test_batch_matmul_matches_numpy():
    a = RNG.normal(size=(4, 2, 3)).astype(np.float32)
    b = RNG.normal(size=(4, 3, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(jnp.asarray(a), jnp.asarray(b)), a @ b,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        lax.batch_matmul(jnp.asarray(a), jnp.asarray(b[0]))


def _uses_all(x):
    a = lax.slice_in_dim(x, 1, None, 2, axis=1)
    b = lax.index_in_dim(x, -1, 0, keepdims=False)
    c = lax.dynamic_slice_in_dim(x, 1, 2, 0)
    d = lax.dynamic_update_index_in_dim(x, b * 2.0, 0, 0)
    e = lax.tile(lax.collapse(c, 0), (2,))
    return (jnp.sum(a * a) + jnp.sum(jnp.sin(d)) + jnp.sum(e * e) + jnp.sum(lax.square(x))
            + jnp.sum(lax.reciprocal(x + 5.0)))


def _second_piece(x):
    return jnp.sum(lax.split(x, (3, 4), 1)[1] ** 3)


def test_derivatives_to_order_two():
    check_grads(_uses_all, (X,), 2, atol=3e-2, rtol=3e-2)
    check_grads(_second_piece, (X,), 2, atol=3e-2, rtol=3e-2)


def test_jit_matches_eager_and_vmap_matches_loop():
    x = jnp.asarray(X)
    np.testing.assert_allclose(redraft.jit(_uses_all)(x), _uses_all(x), rtol=1e-5)
    grad = redraft.grad(_uses_all)
    stack = np.stack([X, X + 1.0])
    batched = redraft.vmap(grad)(jnp.asarray(stack))
    for i in range(2):
        np.testing.assert_allclose(batched[i], grad(jnp.asarray(stack[i])), rtol=1e-5)
    # (vmap of grad through a split is refused for jnp.split too: a known vmap gap)
    pieces = redraft.vmap(lambda v: lax.split(v, (3, 4), 1)[1])(jnp.asarray(stack))
    np.testing.assert_array_equal(pieces, stack[:, :, 3:])
