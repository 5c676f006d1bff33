"""jnp.frexp, spacing, angle, packbits, unpackbits (redraft/numpy/number_parts.py), i0 and
kaiser (bessel.py) against NumPy: values, dtypes, errors; derivatives to order 2 where they
exist; jit against eager and vmap against a loop."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

FLOATS = np.array([0.0, 1.0, -3.5, 0.75, 1e-40, 3e38, np.inf, -np.inf, np.nan, 8.0, 7.9999995,
                   -1e-45, 2.0 ** -126, -0.0], np.float32)


def test_frexp_matches_numpy():
    m, e = jnp.frexp(jnp.asarray(FLOATS))
    want_m, want_e = np.frexp(FLOATS)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(e, want_e)
    assert m.dtype == np.float32 and e.dtype == np.int32
    m, e = jnp.frexp(jnp.asarray([1, 6, -12]))
    np.testing.assert_array_equal(m * 2.0 ** np.asarray(e), [1, 6, -12])


def test_spacing_matches_numpy():
    np.testing.assert_array_equal(jnp.spacing(jnp.asarray(FLOATS)), np.spacing(FLOATS))
    assert jnp.spacing(jnp.asarray([1, 2])).dtype == np.float32


def test_angle_matches_numpy():
    z = np.array([1 + 1j, -1 + 0j, 2j, -3 - 1e-3j, 0j], np.complex64)
    np.testing.assert_allclose(jnp.angle(jnp.asarray(z)), np.angle(z), rtol=1e-6)
    np.testing.assert_allclose(jnp.angle(jnp.asarray([-2.0, 0.0, 3.0]), deg=True),
                               np.angle([-2.0, 0.0, 3.0], deg=True))
    assert jnp.angle(jnp.asarray([1, -1])).dtype == np.float32


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_match_numpy(axis, bitorder):
    bits = np.random.default_rng(0).integers(0, 3, size=(5, 13)).astype(np.int32)
    packed = jnp.packbits(jnp.asarray(bits), axis=axis, bitorder=bitorder)
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    np.testing.assert_array_equal(packed, want)
    assert packed.dtype == np.uint8
    for count in (None, 3, -2, 40):
        got = jnp.unpackbits(jnp.asarray(want), axis=axis, count=count, bitorder=bitorder)
        np.testing.assert_array_equal(got, np.unpackbits(want, axis=axis, count=count,
                                                         bitorder=bitorder))
    with pytest.raises(TypeError):
        jnp.unpackbits(jnp.asarray(bits), axis=axis)
    with pytest.raises(ValueError):
        jnp.packbits(jnp.asarray(bits), bitorder="middle")
    with pytest.raises(TypeError):
        jnp.packbits(jnp.ones(3))


def test_i0_and_kaiser_match_numpy():
    x = np.linspace(-12, 12, 97).astype(np.float32)
    np.testing.assert_allclose(jnp.i0(jnp.asarray(x)), np.i0(x), rtol=2e-6)
    assert jnp.i0(jnp.asarray([1, 2])).dtype == np.float32
    for m, beta in ((0, 1.0), (1, 5.0), (8, 0.0), (9, 4.0), (32, 14.0)):
        got = jnp.kaiser(m, beta)
        np.testing.assert_allclose(got, np.kaiser(m, beta), rtol=1e-5, atol=1e-7)
        assert got.dtype == np.float32
    with pytest.raises(TypeError):
        jnp.i0(jnp.asarray([1j]))


def _parts(x):
    m, _ = jnp.frexp(x)
    return jnp.sum(m * m) + jnp.sum(jnp.i0(x)) + jnp.sum(jnp.angle(x - 0.1))


def test_derivatives_to_order_two():
    x = np.array([-2.5, -0.3, 0.7, 1.2, 3.3], np.float32)
    check_grads(_parts, (x,), 2, atol=2e-2, rtol=2e-2)
    m_bar = redraft.grad(lambda v: jnp.sum(jnp.frexp(v)[0]))(jnp.asarray(x))
    np.testing.assert_allclose(m_bar, 2.0 ** -np.frexp(x)[1])


def test_jit_matches_eager_and_vmap_matches_loop():
    x = jnp.asarray(np.array([-2.5, -0.3, 0.7, 1.2, 3.3], np.float32))
    np.testing.assert_allclose(redraft.jit(_parts)(x), _parts(x), rtol=1e-6)
    rows = jnp.stack([x, 2 * x])
    batched = redraft.vmap(redraft.grad(_parts))(rows)
    for i in range(2):
        np.testing.assert_allclose(batched[i], redraft.grad(_parts)(rows[i]), rtol=1e-6)
    bits = jnp.asarray(np.random.default_rng(1).integers(0, 2, size=(3, 11)).astype(bool))
    packed = redraft.vmap(jnp.packbits)(bits)
    for i in range(3):
        np.testing.assert_array_equal(packed[i], np.packbits(np.asarray(bits[i])))
    np.testing.assert_array_equal(redraft.jit(jnp.packbits)(bits), np.packbits(np.asarray(bits)))
    np.testing.assert_array_equal(redraft.jit(jnp.spacing)(x), np.spacing(np.asarray(x)))
