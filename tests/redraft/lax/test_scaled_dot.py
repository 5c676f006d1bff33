"""lax.scaled_dot against JAX 0.10.2 on the CPU (values stored here): float32 operands and
scales rounded to bfloat16 first, scales repeated over their blocks; compiled and batched;
differentiation and JAX's bfloat16 default refused with clear errors."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax

L = np.arange(2 * 64, dtype=np.float32).reshape(2, 64) / 100
R = np.ones((64, 3), np.float32) * np.arange(3.0, dtype=np.float32)
LS = np.array([[2.01, 3.0], [1.0, 0.5]], np.float32)
RS = np.full((2, 3), 0.5, np.float32) * np.array([[1.03], [4.0]], np.float32)
SCALED = [[0.0, 96.3617, 192.7234], [0.0, 48.797913, 97.595825]]


def scaled(lhs, rhs):
    return lax.scaled_dot(lhs, rhs, lhs_scale=LS, rhs_scale=RS,
                          preferred_element_type=jnp.float32)


def test_values_eager_and_compiled():
    for fn in (scaled, redraft.jit(scaled)):
        np.testing.assert_allclose(fn(L, R), SCALED, rtol=1e-6)
    np.testing.assert_allclose(lax.scaled_dot(L, R, preferred_element_type=jnp.float32),
                               [[0.0, 20.160889, 40.321777], [0.0, 61.121094, 122.24219]],
                               rtol=1e-6)
    out = lax.scaled_dot(L[None], R[None], lhs_scale=LS[None],
                         preferred_element_type=jnp.float32)
    np.testing.assert_allclose(out, [[[0.0, 55.600445, 111.20089], [0.0, 43.28125, 86.5625]]],
                               rtol=1e-6)


def test_batched():
    out = redraft.vmap(scaled)(np.stack([L, 2 * L]), np.stack([R, R]))
    np.testing.assert_allclose(out[1], [[0.0, 192.7234, 385.4468], [0.0, 97.595825, 195.19165]],
                               rtol=1e-6)


def test_refusals():
    with pytest.raises(TypeError, match="preferred_element_type=jnp.float32"):
        lax.scaled_dot(L, R)
    with pytest.raises(TypeError, match="float32 operands"):
        lax.scaled_dot(L.astype(np.float16), R, preferred_element_type=jnp.float32)
    with pytest.raises(Exception, match="no derivative"):
        redraft.grad(lambda lhs: scaled(lhs, R).sum())(L)
