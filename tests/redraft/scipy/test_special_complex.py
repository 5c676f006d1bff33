"""redraft.scipy.special's complex-valued functions, wofz and sph_harm_y, against scipy."""
import numpy as np
import pytest
import scipy.special as sp

import redraft
import redraft.numpy as jnp
from redraft.scipy import special

RNG = np.random.RandomState(1)
Z = np.concatenate([(RNG.randn(20) * 3 + 1j * RNG.randn(20) * 2),
                    [0, 1 + 1j, 5, -5j, 10 + 0.1j, 0.5 - 0.5j]]).astype(np.complex64)


def test_wofz_matches_scipy():
    out = special.wofz(Z)
    assert out.dtype == np.complex64
    want = sp.wofz(Z.astype(np.complex128))
    np.testing.assert_allclose(np.asarray(out), want, rtol=3e-6)
    real = special.wofz(np.float32([0.5, 2.0]))
    assert real.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(real), sp.wofz([0.5, 2.0]), rtol=3e-6)


def test_wofz_under_jit_and_vmap():
    z = jnp.asarray(Z[:6])
    np.testing.assert_allclose(np.asarray(redraft.jit(special.wofz)(z)),
                               np.asarray(special.wofz(z)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.vmap(special.wofz)(z)),
                               np.asarray(special.wofz(z)), rtol=1e-6)


def test_sph_harm_y_matches_scipy():
    n = np.int32([0, 1, 1, 2, 3, 3, 4, 5, 2])
    m = np.int32([0, 0, -1, 2, -2, 3, 1, -5, -1])
    theta = RNG.uniform(0, np.pi, 9).astype(np.float32)
    phi = RNG.uniform(0, 2 * np.pi, 9).astype(np.float32)
    out = special.sph_harm_y(n, m, theta, phi)
    assert out.dtype == np.complex64 and out.shape == (9,)
    np.testing.assert_allclose(np.asarray(out), sp.sph_harm_y(n, m, theta.astype(float),
                                                              phi.astype(float)), atol=1e-6)
    clipped = special.sph_harm_y(np.int32([6]), np.int32([2]), theta[:1], phi[:1], n_max=4)
    np.testing.assert_allclose(np.asarray(clipped), sp.sph_harm_y(4, 2, theta[:1], phi[:1]),
                               atol=1e-6)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
