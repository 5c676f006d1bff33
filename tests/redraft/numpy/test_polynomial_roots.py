"""jnp.poly, roots, polydiv and polyfit (redraft/numpy/polynomial_roots.py) against NumPy,
with derivatives to order 2 and jit/vmap checks."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

RNG = np.random.default_rng(3)


def test_poly_matches_numpy():
    np.testing.assert_allclose(jnp.poly(jnp.asarray([1.0, 2.0, -3.0])), np.poly([1, 2, -3]),
                               rtol=1e-6)
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(jnp.poly(jnp.asarray(a)), np.poly(a), rtol=1e-4, atol=1e-4)
    assert jnp.poly(jnp.asarray([1, 2])).dtype == np.float32
    with pytest.raises(ValueError):
        jnp.poly(jnp.ones((2, 3)))


def test_roots_match_numpy():
    p = np.array([0.0, 1.0, -6.0, 11.0, -6.0, 0.0, 0.0], np.float32)
    got = np.sort_complex(np.asarray(jnp.roots(jnp.asarray(p))))
    np.testing.assert_allclose(got, np.sort_complex(np.roots(p)), atol=1e-4)
    assert jnp.roots(jnp.asarray(p)).dtype == np.complex64
    got = np.sort_complex(np.asarray(jnp.roots(jnp.asarray([1.0, 0.0, 1.0]))))
    np.testing.assert_allclose(got, [-1j, 1j], atol=1e-6)
    assert jnp.roots(jnp.asarray([3.0])).shape == (0,)


def test_polydiv_matches_numpy():
    u, v = np.array([1.0, -3.0, 0.0, 5.0], np.float32), np.array([2.0, 1.0], np.float32)
    q, r = jnp.polydiv(jnp.asarray(u), jnp.asarray(v), trim_leading_zeros=True)
    want_q, want_r = np.polydiv(u, v)
    np.testing.assert_allclose(q, want_q, rtol=1e-6)
    np.testing.assert_allclose(r, want_r, rtol=1e-6)
    q, r = jnp.polydiv(jnp.asarray(u), jnp.asarray(v))  # JAX keeps the remainder's length
    assert r.shape == (4,)
    np.testing.assert_allclose(jnp.polyadd(jnp.polymul(q, jnp.asarray(v)), r), u, atol=1e-6)


def test_polyfit_matches_numpy():
    x = np.linspace(0, 1, 20).astype(np.float32)
    y = (3 * x ** 2 - x + 0.5 + 0.01 * RNG.normal(size=20)).astype(np.float32)
    np.testing.assert_allclose(jnp.polyfit(jnp.asarray(x), jnp.asarray(y), 2),
                               np.polyfit(x, y, 2), atol=1e-3)
    c, cov = jnp.polyfit(jnp.asarray(x), jnp.asarray(y), 2, cov=True)
    np.testing.assert_allclose(cov, np.polyfit(x, y, 2, cov=True)[1], rtol=1e-2, atol=1e-7)
    ys = np.stack([y, 2 * y], 1)
    np.testing.assert_allclose(jnp.polyfit(jnp.asarray(x), jnp.asarray(ys), 1,
                                           w=jnp.asarray(x + 1)),
                               np.polyfit(x, ys, 1, w=x + 1), atol=1e-3)
    full = jnp.polyfit(jnp.asarray(x), jnp.asarray(y), 2, full=True)
    for got, want in zip(full, np.polyfit(x, y, 2, full=True)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3, atol=1e-6)
    with pytest.raises(ValueError):
        jnp.polyfit(jnp.asarray(x), jnp.asarray(y), -1)
    with pytest.raises(TypeError):
        jnp.polyfit(jnp.asarray(x), jnp.asarray(y[:5]), 1)


def _fit(y):
    x = jnp.linspace(0.0, 1.0, 6)
    c = jnp.polyfit(x, y, 2)
    q, r = jnp.polydiv(jnp.poly(y[:3]), c)
    return jnp.sum(c * c) + jnp.sum(q * q) + jnp.sum(r)


def test_derivatives_to_order_two():
    y = np.array([0.3, 0.1, 0.7, 1.5, 1.1, 2.0], np.float32)
    check_grads(_fit, (y,), 2, atol=5e-2, rtol=5e-2)


def test_jit_matches_eager_and_vmap_matches_loop():
    y = jnp.asarray(np.array([0.3, 0.1, 0.7, 1.5, 1.1, 2.0], np.float32))
    np.testing.assert_allclose(redraft.jit(_fit)(y), _fit(y), rtol=1e-4)
    rows = jnp.stack([y, y[::-1]])
    batched = redraft.vmap(_fit)(rows)
    for i in range(2):
        np.testing.assert_allclose(batched[i], _fit(rows[i]), rtol=1e-4)
