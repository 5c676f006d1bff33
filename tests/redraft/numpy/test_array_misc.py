"""The array_misc functions (choose, compress, put, fill_diagonal, block, lexsort, geomspace,
gradient, unwrap, gcd, ...) against NumPy's own results."""
import numpy as np

import redraft.numpy as jnp


def c(x, y):
    x = np.asarray(x)
    assert x.shape == np.shape(y)
    np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_against_numpy():
    a = np.array([[3, 1, 2], [0, 5, 4]])
    choices = [np.arange(4), np.arange(4) * 10, np.arange(4) * 100]
    c(jnp.choose(np.array([0, 1, 2, 1]), choices), np.choose([0, 1, 2, 1], choices))
    c(jnp.compress([True, False, True], a, axis=1), np.compress([True, False, True], a, axis=1))
    c(jnp.extract(a > 2, a), np.extract(a > 2, a))
    b = a.copy().ravel()
    np.put(b, [0, 4], [-1, -2])
    c(jnp.put(a, jnp.array([0, 4]), jnp.array([-1, -2]), inplace=False), b.reshape(a.shape))
    b = a.copy()
    np.put_along_axis(b, np.array([[0], [2]]), 99, axis=1)
    c(jnp.put_along_axis(a, jnp.array([[0], [2]]), 99, 1, inplace=False), b)
    b = np.zeros((5, 3))
    np.fill_diagonal(b, [1, 2, 3], wrap=True)
    c(jnp.fill_diagonal(jnp.zeros((5, 3)), jnp.array([1., 2., 3.]), wrap=True, inplace=False), b)
    b = np.zeros((3, 4))
    np.fill_diagonal(b, 7)
    c(jnp.fill_diagonal(jnp.zeros((3, 4)), 7.0, inplace=False), b)
    c(jnp.resize(np.arange(3), (2, 4)), np.resize(np.arange(3), (2, 4)))
    blocks = [[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]]
    c(jnp.block(blocks), np.block(blocks))
    c(jnp.block([np.ones(2), np.zeros(3)]), np.block([np.ones(2), np.zeros(3)]))
    keys = (np.array([1, 5, 1, 4, 3]), np.array([9, 4, 0, 4, 0]))
    c(jnp.lexsort(keys), np.lexsort(keys))
    c(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    c(jnp.geomspace(-1, -100, 3, endpoint=False), np.geomspace(-1, -100, 3, endpoint=False))
    f = np.array([1., 2, 4, 7, 11, 16])
    c(jnp.gradient(f), np.gradient(f))
    c(jnp.gradient(f, 2.0), np.gradient(f, 2.0))
    x = np.array([0., 1, 1.5, 3.5, 4, 6])
    c(jnp.gradient(f, x), np.gradient(f, x))
    g = np.random.RandomState(0).randn(3, 4)
    r = jnp.gradient(g)
    c(r[0], np.gradient(g)[0])
    c(r[1], np.gradient(g)[1])
    ph = np.cumsum(np.random.RandomState(1).rand(10) * 2) % (2 * np.pi)
    c(jnp.unwrap(ph), np.unwrap(ph))
    c(jnp.gcd(np.array([12, 0, -18, 7]), np.array([8, 5, 24, 0])),
      np.gcd([12, 0, -18, 7], [8, 5, 24, 0]))
    c(jnp.lcm(np.array([4, 0, -6]), np.array([6, 5, 4])), np.lcm([4, 0, -6], [6, 5, 4]))
    ints = np.array([0, 1, 7, -8, 255])
    c(jnp.bitwise_count(ints), np.bitwise_count(ints))
    c(jnp.partition(np.array([3, 1, 2]), 1)[1], 2)


def test_put_needs_inplace_false():
    import pytest
    with pytest.raises(ValueError, match="immutable"):
        jnp.put(jnp.zeros(3), jnp.array([0]), 1.0)
    with pytest.raises(ValueError):
        jnp.choose(jnp.array([3]), [jnp.zeros(1), jnp.ones(1)])
