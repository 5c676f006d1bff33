"""associative_scan, cumlogsumexp (redraft/lax/scans.py), sort_key_val, top_k,
approx_max_k and approx_min_k (redraft/lax/sorting.py) against NumPy, with derivatives to
order 2, jit against eager and vmap against a loop."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

RNG = np.random.default_rng(2)
X = RNG.normal(size=(3, 7)).astype(np.float32)


@pytest.mark.parametrize("fn,np_fn", [(lax.add, np.add), (jnp.multiply, np.multiply),
                                      (lax.max, np.maximum), (jnp.minimum, np.minimum),
                                      (jnp.logaddexp, np.logaddexp)])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_accumulate(fn, np_fn, axis, reverse):
    got = lax.associative_scan(fn, jnp.asarray(X), reverse=reverse, axis=axis)
    src = np.flip(X, axis) if reverse else X
    want = np_fn.accumulate(src, axis=axis)
    want = np.flip(want, axis) if reverse else want
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_associative_scan_integers_and_errors():
    ints = np.arange(1, 11, dtype=np.int32)
    np.testing.assert_array_equal(lax.associative_scan(lax.bitwise_xor, jnp.asarray(ints)),
                                  np.bitwise_xor.accumulate(ints))
    with pytest.raises(TypeError):
        lax.associative_scan(lambda a, b: a + b, jnp.asarray(ints))
    with pytest.raises(ValueError):
        lax.associative_scan(lax.add, jnp.asarray(1.0))


def test_cumlogsumexp_is_stable():
    big = np.array([1000.0, 1000.0, -1000.0, 3.0], np.float32)
    np.testing.assert_allclose(lax.cumlogsumexp(jnp.asarray(big)),
                               np.logaddexp.accumulate(big.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(lax.cumlogsumexp(jnp.asarray(X), axis=1, reverse=True),
                               np.flip(np.logaddexp.accumulate(np.flip(X, 1), 1), 1), rtol=1e-5)
    inf = np.array([-np.inf, -np.inf, 0.0, np.inf], np.float32)
    np.testing.assert_array_equal(lax.cumlogsumexp(jnp.asarray(inf)),
                                  [-np.inf, -np.inf, 0.0, np.inf])


def test_sort_key_val_is_stable():
    keys = np.array([[3, 1, 2, 1], [0, 0, -1, 5]], np.int32)
    vals = np.arange(8, dtype=np.float32).reshape(2, 4)
    k, v = lax.sort_key_val(jnp.asarray(keys), jnp.asarray(vals))
    order = np.argsort(keys, axis=-1, kind="stable")
    np.testing.assert_array_equal(k, np.take_along_axis(keys, order, -1))
    np.testing.assert_array_equal(v, np.take_along_axis(vals, order, -1))
    k, v = lax.sort_key_val(jnp.asarray(keys), jnp.asarray(vals), dimension=0)
    order = np.argsort(keys, axis=0, kind="stable")
    np.testing.assert_array_equal(v, np.take_along_axis(vals, order, 0))
    with pytest.raises(TypeError):
        lax.sort_key_val(jnp.asarray(keys), jnp.asarray(vals[:, :2]))


def test_top_k_and_approx_k():
    values, indices = lax.top_k(jnp.asarray(X), 3)
    order = np.argsort(-X, axis=-1, kind="stable")[:, :3]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(X, order, -1))
    assert indices.dtype == np.int32
    ties = lax.top_k(jnp.array([1.0, 3.0, 3.0, 2.0]), 2)
    np.testing.assert_array_equal(ties[1], [1, 2])
    values, indices = lax.approx_max_k(jnp.asarray(X), 2, reduction_dimension=0)
    order = np.argsort(-X, axis=0, kind="stable")[:2]
    np.testing.assert_array_equal(indices, order)
    values, indices = lax.approx_min_k(jnp.asarray(X), 4)
    order = np.argsort(X, axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(values, np.take_along_axis(X, order, -1))
    with pytest.raises(ValueError):
        lax.top_k(jnp.asarray(X), 8)
    with pytest.raises(TypeError):
        lax.top_k(jnp.asarray(1.0), 1)


def _scans_and_sorts(x):
    a = lax.cumlogsumexp(x, axis=1)
    b = lax.associative_scan(jnp.multiply, x, axis=0)
    c = lax.top_k(x, 3)[0]
    d = lax.sort_key_val(x, jnp.sin(x), 1)[1]
    e = lax.approx_min_k(x, 2, 0)[0]
    return jnp.sum(a * a) + jnp.sum(b * b) + jnp.sum(c * c) + jnp.sum(d ** 3) + jnp.sum(e)


def test_derivatives_to_order_two():
    check_grads(_scans_and_sorts, (X,), 2, atol=3e-2, rtol=3e-2)


def test_jit_matches_eager_and_vmap_matches_loop():
    x = jnp.asarray(X)
    np.testing.assert_allclose(redraft.jit(_scans_and_sorts)(x), _scans_and_sorts(x),
                               rtol=1e-5)
    grad = redraft.grad(_scans_and_sorts)
    stack = np.stack([X, X[::-1]])
    batched = redraft.vmap(grad)(jnp.asarray(stack))
    for i in range(2):
        np.testing.assert_allclose(batched[i], grad(jnp.asarray(stack[i])), rtol=1e-5)
