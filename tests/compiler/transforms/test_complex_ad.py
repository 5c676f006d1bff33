"""Derivatives through complex intermediates, in JAX's convention: a real input promoted to
complex gets the real part of its cotangent back (the transpose of the promotion), |z|'s
tangent is real, and transposes do not conjugate. Expected values are JAX 0.10.2's."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp

FUNCTIONS = {
    "abs_exp": lambda z: jnp.abs(jnp.exp(1j * z)),
    "abs_c": lambda z: jnp.abs(z + 1j),
    "real_mul": lambda z: jnp.real((z + 2j) * (z - 1j)),
    "angle": lambda z: jnp.angle(z + 1j),
    "real_log": lambda z: jnp.real(jnp.log(z + 1j)),
    "abs_sqrt": lambda z: jnp.abs(jnp.sqrt(z + 1j)),
    "abs2": lambda z: jnp.abs(z) ** 2,
    "real_div": lambda z: jnp.real(1.0 / (z + 1j)),
    "real_sum": lambda z: jnp.real(jnp.sum(jnp.array([z, 2 * z]) * (1 + 1j))),
}

# name: (grad at 1.5, jvp at 1.5+0.5j with tangent 1, grad at 1.5+0.5j)
JAX = {
    "abs_exp": (0.0, 0.0, 0.60653j),
    "abs_c": (0.8320503, 0.70711, 0.70711 - 0.70711j),
    "real_mul": (3.0, 3.0, 3 + 2j),
    "angle": (-0.3076923, -0.33333, -0.33333 - 0.33333j),
    "real_log": (0.4615384, 0.33333, 0.33333 - 0.33333j),
    "abs_sqrt": (0.3098480, 0.24275, 0.24275 - 0.24275j),
    "abs2": (3.0, 3.0, 3 - 1j),
    "real_div": (-0.1183432, None, None),
    "real_sum": (3.0, None, None),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_real_input_through_complex_values(name):
    f, (want, _, _) = FUNCTIONS[name], JAX[name]
    for g in (redraft.grad(f), redraft.jit(redraft.grad(f))):
        got = g(1.5)
        assert not np.iscomplexobj(np.asarray(got)), "a real input's gradient is real"
        np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("name", [n for n in sorted(JAX) if JAX[n][1] is not None])
def test_complex_input_jvp_and_grad(name):
    f, (_, tangent, cotangent) = FUNCTIONS[name], JAX[name]
    z = np.complex64(1.5 + 0.5j)
    np.testing.assert_allclose(redraft.jvp(f, (z,), (np.complex64(1.0),))[1], tangent,
                               atol=1e-4)
    np.testing.assert_allclose(redraft.grad(f)(z), cotangent, atol=1e-4)
