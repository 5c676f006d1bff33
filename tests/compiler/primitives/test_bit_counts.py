"""lax.population_count, lax.clz and jnp.bitwise_count: the primitives added as the worked
example of docs/ARCHITECTURE.md's "adding a primitive" list. Each rule is checked: the eager
implementation against NumPy (or Python's int.bit_length), the LLVM lowering (jit) against
eager, batching against a loop over the examples, and differentiation (they are marked not
differentiable: a function using them on integer data keeps its float derivative)."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import numerical_grad

INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _samples(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    edges = [0, 1, info.max, info.min, info.max // 3, 2]
    return np.concatenate([np.array(edges, dtype),
                           rng.integers(info.min, info.max, 42, dtype=dtype, endpoint=True)])


def _unsigned(values: np.ndarray) -> np.ndarray:
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def _clz_reference(values: np.ndarray) -> np.ndarray:
    width = 8 * values.dtype.itemsize
    lengths = [int(v).bit_length() for v in _unsigned(values).tolist()]
    return np.array([width - n for n in lengths], values.dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_population_count_matches_numpy(dtype):
    x = _samples(dtype)
    expected = np.bitwise_count(_unsigned(x)).astype(dtype)
    got = lax.population_count(jnp.asarray(x))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clz_matches_bit_length(dtype):
    x = _samples(dtype)
    got = lax.clz(jnp.asarray(x))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), _clz_reference(x))


@pytest.mark.parametrize("values", [[0, 1, -1, 7, -128, 255, 1 << 20], [True, False, True]])
def test_bitwise_count_matches_numpy(values):
    x = np.array(values)
    got = jnp.bitwise_count(jnp.asarray(x))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(got), np.bitwise_count(x))


def test_float_operands_are_refused():
    with pytest.raises(TypeError):
        lax.population_count(jnp.ones(3))
    with pytest.raises(TypeError):
        lax.clz(jnp.ones(3))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16])
def test_compiled_matches_eager(dtype):
    x = jnp.asarray(_samples(dtype))

    def f(v):
        return lax.clz(v) + lax.population_count(v)

    np.testing.assert_array_equal(np.asarray(redraft.jit(f)(x)), np.asarray(f(x)))
    np.testing.assert_array_equal(np.asarray(redraft.jit(jnp.bitwise_count)(x)),
                                  np.asarray(jnp.bitwise_count(x)))


def _bit_features(v):
    return lax.clz(v) * 100 + lax.population_count(v) + jnp.bitwise_count(v)


def test_vmap_matches_a_loop_over_examples():
    x = jnp.asarray(_samples(np.int32).reshape(6, 8))
    batched = redraft.vmap(_bit_features)(x)
    looped = np.stack([np.asarray(_bit_features(x[i])) for i in range(x.shape[0])])
    np.testing.assert_array_equal(np.asarray(batched), looped)
    np.testing.assert_array_equal(np.asarray(redraft.jit(redraft.vmap(_bit_features))(x)),
                                  looped)


WEIGHTS = jnp.asarray(np.array([3, 255, 1 << 12, 7], np.int32))


def _weighted(v):
    counts = lax.population_count(WEIGHTS) + lax.clz(WEIGHTS)
    return jnp.sum(jnp.sin(v) * counts.astype(jnp.float32))


def test_derivative_through_the_integer_counts_matches_finite_differences():
    w = np.asarray(WEIGHTS)
    counts = (np.bitwise_count(w) + _clz_reference(w)).astype(np.float64)
    v = np.linspace(-1.0, 1.0, 4).astype(np.float32)
    expected = numerical_grad(lambda a: float(np.sum(np.sin(a) * counts)), v)
    for fn in (redraft.grad(_weighted), redraft.jit(redraft.grad(_weighted))):
        np.testing.assert_allclose(np.asarray(fn(jnp.asarray(v))), expected, rtol=1e-4,
                                   atol=1e-5)
