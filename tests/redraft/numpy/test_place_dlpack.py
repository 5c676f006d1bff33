"""jnp.place and jnp.from_dlpack (redraft/numpy/array_misc.py) against NumPy."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads


def test_place_matches_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = a % 3 == 0
    for vals in (np.float32([-1.0, -2.0]), np.float32([7.0]), np.arange(10, dtype=np.float32)):
        want = a.copy()
        np.place(want, mask, vals)
        got = jnp.place(jnp.asarray(a), jnp.asarray(mask), jnp.asarray(vals), inplace=False)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float32
    with pytest.raises(ValueError):
        jnp.place(jnp.asarray(a), jnp.asarray(mask), jnp.asarray([1.0]))
    with pytest.raises(ValueError):
        jnp.place(jnp.asarray(a), jnp.asarray(mask[:2]), jnp.asarray([1.0]), inplace=False)


def _placed(a, v):
    mask = jnp.arange(6) % 2 == 0
    return jnp.sum(jnp.place(a, mask, v, inplace=False) ** 2)


def test_place_derivatives_jit_and_vmap():
    a = np.linspace(-1, 1, 6).astype(np.float32)
    v = np.array([0.5, -1.5], np.float32)
    check_grads(_placed, (a, v), 2, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(redraft.jit(_placed)(a, v), _placed(jnp.asarray(a), v),
                               rtol=1e-6)
    rows = jnp.asarray(np.stack([a, 2 * a]))
    batched = redraft.vmap(_placed, in_axes=(0, None))(rows, jnp.asarray(v))
    for i in range(2):
        np.testing.assert_allclose(batched[i], _placed(rows[i], jnp.asarray(v)), rtol=1e-6)


def test_from_dlpack_copies_numpy_arrays():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = jnp.from_dlpack(x)
    np.testing.assert_array_equal(y, x)
    assert y.dtype == np.int32
    with pytest.raises(TypeError):
        jnp.from_dlpack([1, 2, 3])
