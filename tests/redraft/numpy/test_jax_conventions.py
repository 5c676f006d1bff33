"""Corners where JAX's numpy differs from NumPy's and redraft follows JAX: one-argument
where with a static size, running sums that keep small integer dtypes, integer histogram
counts, `.at[].divide` over repeated indices and `.at[].apply`. Values are checked against
NumPy (np.divide.at, np.histogram2d) and finite differences."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def test_one_argument_where_takes_a_static_size_and_fill_value():
    m = np.array([0, 3, 0, 1, 2])
    (got,) = jnp.where(jnp.asarray(m) > 0, size=4)
    np.testing.assert_array_equal(np.asarray(got), [1, 3, 4, 0])
    (got,) = jnp.where(jnp.asarray(m), size=2, fill_value=-1)
    np.testing.assert_array_equal(np.asarray(got), [1, 3])
    (got,) = redraft.jit(lambda m: jnp.where(m > 1, size=3, fill_value=-1))(jnp.asarray(m))
    np.testing.assert_array_equal(np.asarray(got), [1, 4, -1])
    with pytest.raises(ValueError, match="three-term"):
        jnp.where(jnp.asarray(m) > 0, 1.0, 0.0, size=3)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_running_sums_and_products_keep_a_small_integer_dtype(dtype):
    x = np.arange(1, 5, dtype=dtype)
    for fn, ref in ((jnp.cumsum, np.cumsum), (jnp.cumprod, np.cumprod),
                    (jnp.nancumsum, np.nancumsum)):
        got = fn(jnp.asarray(x))
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), ref(x).astype(dtype))
    assert jnp.cumsum(jnp.asarray(x), dtype=jnp.int32).dtype == np.int32
    assert jnp.sum(jnp.asarray(x)).dtype != dtype  # a full sum still widens
    assert jnp.cumsum(jnp.asarray([True, False, True])).dtype == np.int32


def test_histogram2d_counts_are_integers_unless_weighted_or_a_density():
    rng = np.random.RandomState(0)
    x, y, w = rng.rand(3, 20).astype(np.float32)
    counts, ex, ey = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=3)
    want, wx, wy = np.histogram2d(x, y, bins=3)
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(counts), want)
    np.testing.assert_allclose(np.asarray(ex), wx, rtol=1e-6)
    weighted = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=3, weights=jnp.asarray(w))[0]
    assert weighted.dtype == np.float32
    np.testing.assert_allclose(np.asarray(weighted), np.histogram2d(x, y, 3, weights=w)[0],
                               rtol=1e-5)
    density = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=3, density=True)[0]
    assert density.dtype == np.float32
    np.testing.assert_allclose(np.asarray(density), np.histogram2d(x, y, 3, density=True)[0],
                               rtol=1e-5)


IDX = np.array([0, 0, 2, -1])
V = np.array([2.0, 4.0, 0.5, 3.0], np.float32)


def test_at_divide_divides_a_repeated_index_by_each_of_its_values():
    want = np.ones(5, np.float32)
    np.divide.at(want, IDX, V)
    np.testing.assert_allclose(np.asarray(jnp.ones(5).at[IDX].divide(V)), want)
    np.testing.assert_allclose(np.asarray(jnp.ones(5).at[IDX].divide(V, mode="drop")), want)
    got = jnp.arange(5).at[IDX].divide(2)  # true division: a float result, as JAX's
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), [0.0 / 4, 1, 1, 3, 2])
    np.testing.assert_allclose(np.asarray(redraft.jit(lambda x, v: x.at[IDX].divide(v))(
        jnp.ones(5), jnp.asarray(V))), want)


def test_at_divide_derivatives_over_repeated_indices_agree_with_finite_differences():
    def f(x, v):
        return jnp.sum(jnp.sin(x.at[IDX].divide(v)))

    x0 = np.arange(1.0, 6.0)
    gx, gv = redraft.grad(f, argnums=(0, 1))(jnp.asarray(x0, jnp.float32), jnp.asarray(V))

    def ref(x, v):
        d = np.ones(5)
        np.multiply.at(d, IDX, v)
        return np.sum(np.sin(x / d))
    eps = 1e-6
    fx = [(ref(x0 + eps * e, V) - ref(x0 - eps * e, V)) / (2 * eps) for e in np.eye(5)]
    fv = [(ref(x0, V + eps * e) - ref(x0, V - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(np.asarray(gx), fx, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gv), fv, rtol=1e-4, atol=1e-6)
    _, tangent = redraft.jvp(lambda v: jnp.ones(5).at[IDX].divide(v), (jnp.asarray(V),),
                             (jnp.ones(4),))
    d = np.ones(5)
    np.multiply.at(d, IDX, V)
    # d(1/prod v)/dv along ones: -(1/prod v) * sum over the place's values of 1/v
    inv = np.zeros(5)
    np.add.at(inv, IDX, 1 / V)
    np.testing.assert_allclose(np.asarray(tangent), -inv / d, rtol=1e-5)


def test_at_apply_maps_the_indexed_elements():
    x = np.arange(4.0, dtype=np.float32)
    got = jnp.asarray(x).at[np.array([1, 2])].apply(jnp.sin)
    np.testing.assert_allclose(np.asarray(got), [0.0, np.sin(1.0), np.sin(2.0), 3.0],
                               rtol=1e-6)
    got = redraft.jit(lambda x: x.at[1:].apply(jnp.exp))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.concatenate([x[:1], np.exp(x[1:])]),
                               rtol=1e-6)
