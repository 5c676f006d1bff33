"""jnp.convolve and jnp.correlate against NumPy, through lax.conv_general_dilated."""
import numpy as np
import pytest

import redraft.numpy as jnp

RNG = np.random.RandomState(2)
LONG = RNG.randn(9).astype(np.float32)
SHORT = RNG.randn(4).astype(np.float32)
ONE = np.float32([2.5])

PAIRS = [(LONG, SHORT), (SHORT, LONG), (LONG, ONE), (ONE, SHORT), (SHORT, SHORT[::-1])]


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_matches_numpy(op, mode, pair):
    a, v = PAIRS[pair]
    out = getattr(jnp, op)(a, v, mode)
    expected = getattr(np, op)(a, v, mode)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_seed_example_int_signal_float_kernel():
    out = jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(10))
    assert out.dtype == np.float32
    assert out.tolist() == [1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.]


def test_default_modes():
    np.testing.assert_allclose(np.asarray(jnp.convolve(LONG, SHORT)),
                               np.convolve(LONG, SHORT), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.correlate(LONG, SHORT)),
                               np.correlate(LONG, SHORT), rtol=1e-5, atol=1e-5)


def test_integer_inputs_become_float32():
    out = jnp.convolve(np.int32([1, 2, 3]), np.int32([0, 1]))
    assert out.dtype == np.float32 and out.tolist() == [0., 1., 2., 3.]


ERRORS = [
    (lambda: jnp.convolve(LONG, SHORT, "middle"), ValueError, "mode must be one of"),
    (lambda: jnp.convolve(LONG.reshape(3, 3), SHORT), ValueError, "1-dimensional"),
    (lambda: jnp.correlate(LONG, np.float32([])), ValueError, "cannot be empty"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
