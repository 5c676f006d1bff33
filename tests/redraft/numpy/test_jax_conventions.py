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


def test_integer_division_by_zero_is_jaxs():
    # XLA's quotient by zero is -1 (all ones unsigned); jnp's floor division subtracts one
    # where x is not zero, and its remainders by zero are 0 -- eager and compiled alike
    i = jnp.asarray(np.array([7, -7, 3, -3, 0], np.int32))
    z = jnp.zeros(5, jnp.int32)

    def ops(i, z):
        return i // z, i % z, jnp.fmod(i, z), jnp.divmod(i, z)[0]

    for got in (ops(i, z), redraft.jit(ops)(i, z)):
        np.testing.assert_array_equal(np.asarray(got[0]), [-2, -2, -2, -2, -1])
        np.testing.assert_array_equal(np.asarray(got[1]), [0] * 5)
        np.testing.assert_array_equal(np.asarray(got[2]), [0] * 5)
        np.testing.assert_array_equal(np.asarray(got[3]), [-2, -2, -2, -2, -1])
    u = jnp.asarray(np.array([7, 3, 0], np.uint8))
    np.testing.assert_array_equal(np.asarray(u // jnp.zeros(3, jnp.uint8)), [255] * 3)
    np.testing.assert_array_equal(np.asarray(u % jnp.zeros(3, jnp.uint8)), [0] * 3)
    j = np.array([2, -2, 3, -3, 1], np.int32)  # and by non-zeros, Python's rules
    x = np.asarray(i)
    np.testing.assert_array_equal(np.asarray(i // jnp.asarray(j)), x // j)
    np.testing.assert_array_equal(np.asarray(i % jnp.asarray(j)), x % j)
    np.testing.assert_array_equal(np.asarray(jnp.fmod(i, jnp.asarray(j))), np.fmod(x, j))


def test_the_gradient_of_a_python_scalar_is_weakly_typed():
    g = redraft.grad(lambda v: v ** 2)(3.0)
    assert g.weak_type and float(g) == 6.0
    value, g = redraft.value_and_grad(lambda v: jnp.sin(v))(1.0)
    assert g.weak_type
    g = redraft.grad(lambda a, w: a * jnp.sum(w), argnums=(0, 1))(2.0, jnp.ones(3))
    assert g[0].weak_type and not g[1].weak_type
    assert not redraft.grad(lambda v: v ** 2)(jnp.float32(3.0)).weak_type
    assert (redraft.grad(lambda v: v ** 2)(3.0) * jnp.ones(2, jnp.float16)).dtype == np.float16
    g = redraft.grad(lambda v: v ** 2, has_aux=False)(redraft.jit(lambda: 3.0)())
    assert float(g) == 6.0


def test_hypot_neither_overflows_nor_underflows():
    a = np.array([1e20, 1e-30, 3, 0, -4, np.inf, np.nan, 0, -np.inf], np.float32)
    b = np.array([1e20, 1e-30, 4, 0, 3, np.nan, 1, -0.0, 2], np.float32)
    want = np.hypot(a, b)
    np.testing.assert_allclose(np.asarray(jnp.hypot(jnp.asarray(a), jnp.asarray(b))), want,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(jnp.hypot)(a, b)), want, rtol=1e-6)
    assert float(redraft.grad(lambda v: jnp.hypot(v, 4.0))(3.0)) == pytest.approx(0.6)


def test_quantile_nearest_takes_the_lower_value_halfway():
    v = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32)
    got = [float(jnp.quantile(jnp.asarray(v), q, method="nearest"))
           for q in (0.0, 0.3, 0.5, 0.7, 0.95)]
    # position q * (n - 1) = 3.5 at the median: JAX reads the lower neighbour (NumPy rounds
    # half to even, the upper here)
    assert got == [1.0, 2.0, 3.0, 5.0, 9.0]


def test_like_constructors_of_a_python_scalar_are_weak():
    assert jnp.ones_like(3.0).weak_type and jnp.zeros_like(2).weak_type
    assert jnp.full_like(2.0, 7).weak_type
    assert not jnp.ones_like(3.0, dtype=jnp.float32).weak_type
    assert not jnp.zeros_like(jnp.arange(2)).weak_type


def test_reshape_and_ravel_in_fortran_order_and_their_derivatives():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.reshape(a, (4, -1), order="F")),
                                  np.reshape(a, (4, -1), order="F"))
    np.testing.assert_array_equal(np.asarray(jnp.ravel(a, order="F")), np.ravel(a, order="F"))
    w = np.arange(24.0, dtype=np.float32).reshape(6, 4)
    g = redraft.grad(lambda x: jnp.sum(jnp.reshape(x, (6, 4), order="F") * w))(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(g), np.reshape(w, a.shape, order="F"))
    got = redraft.vmap(lambda x: jnp.ravel(x, order="F"))(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(got), [np.ravel(m, order="F") for m in a])
    with pytest.raises(NotImplementedError):
        jnp.reshape(a, (24,), order="A")


def test_unique_along_an_axis_is_numpys():
    m = np.array([[1, 2], [1, 2], [0, 1], [3, 0], [0, 1]], np.int32)
    got = jnp.unique(jnp.asarray(m), axis=0, return_index=True, return_inverse=True,
                     return_counts=True)
    want = np.unique(m, axis=0, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.reshape(w, np.shape(g)))
    t = np.array([[[1, 2], [0, 0]], [[1, 2], [0, 0]], [[0, 9], [1, 1]]], np.int32)
    for axis in (0, 1, 2, -1):
        np.testing.assert_array_equal(np.asarray(jnp.unique(jnp.asarray(t), axis=axis)),
                                      np.unique(t, axis=axis))
    padded = redraft.jit(lambda m: jnp.unique(m, axis=0, size=5, fill_value=-1))(m)
    np.testing.assert_array_equal(np.asarray(padded), np.concatenate(
        [np.unique(m, axis=0), np.full((2, 2), -1, np.int32)]))
    f = np.array([[1.0, np.nan], [1.0, np.nan], [0.5, 2.0]], np.float32)
    assert jnp.unique(jnp.asarray(f), axis=0).shape == (2, 2)  # NaNs equal, as JAX's default
    assert jnp.unique(jnp.asarray(f), axis=0, equal_nan=False).shape == (3, 2)


def test_hypot_of_python_scalars_is_weak():
    assert jnp.hypot(3, 4).weak_type and float(jnp.hypot(3, 4)) == 5.0
    assert not jnp.hypot(jnp.float32(3), 4.0).weak_type
