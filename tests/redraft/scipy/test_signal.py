"""redraft.scipy.signal against scipy.signal (values, dtypes, errors), and under jit, grad
and vmap."""
import numpy as np
import pytest
import scipy.signal as ss

import redraft
import redraft.numpy as jnp
from redraft.scipy import signal
from redraft.test_util import check_grads

RNG = np.random.RandomState(0)
A1, B1 = RNG.randn(13).astype(np.float32), RNG.randn(4).astype(np.float32)
A2, B2 = RNG.randn(7, 6).astype(np.float32), RNG.randn(3, 2).astype(np.float32)
A3, B3 = RNG.randn(5, 4, 3).astype(np.float32), RNG.randn(2, 3, 2).astype(np.float32)
SIG = RNG.randn(300).astype(np.float32)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate", "fftconvolve"])
def test_nd_convolutions_match_scipy(name, mode):
    for a, b in ((A1, B1), (A2, B2), (A3, B3), (B1, A1) if mode != "valid" else (A1, B1)):
        out = getattr(signal, name)(a, b, mode)
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), getattr(ss, name)(a, b, mode), atol=1e-5)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_2d_convolutions_match_scipy(mode):
    for a, b in ((A2, B2), (A2, B2.T), (A2[:5, :5], A2[:4, :4])):
        for name in ("convolve2d", "correlate2d"):
            np.testing.assert_allclose(np.asarray(getattr(signal, name)(a, b, mode)),
                                       getattr(ss, name)(a, b, mode), atol=1e-5)


def test_integer_convolution_stays_integer():
    out = signal.convolve(np.arange(4), np.ones(2, np.int32))
    assert out.dtype == np.int32 and out.tolist() == [0, 1, 3, 5, 3]


def test_convolution_errors():
    with pytest.raises(ValueError, match="mode"):
        signal.convolve(A1, B1, "circular")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(A1, B2)
    with pytest.raises(ValueError, match="at least as large"):
        signal.convolve(np.ones((3, 1)), np.ones((1, 3)), "valid")
    with pytest.raises(NotImplementedError, match="boundary"):
        signal.convolve2d(A2, B2, boundary="wrap")


def test_detrend_matches_scipy():
    x = RNG.randn(3, 50).astype(np.float32)
    for kwargs in ({}, {"type": "constant"}, {"bp": [20]}, {"axis": 0}):
        np.testing.assert_allclose(np.asarray(signal.detrend(x, **kwargs)),
                                   ss.detrend(x, **kwargs), atol=2e-6)


def test_stft_and_istft_match_scipy_and_invert():
    f, t, z = signal.stft(SIG, fs=10.0, nperseg=32)
    ef, et, ez = ss.stft(SIG, fs=10.0, nperseg=32)
    assert z.shape == ez.shape and z.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(z), ez, atol=1e-6)
    np.testing.assert_allclose(np.asarray(t), et, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f), ef, rtol=1e-6)
    _, back = signal.istft(z, fs=10.0, nperseg=32)
    np.testing.assert_allclose(np.asarray(back)[:300], SIG, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"nperseg": 32}, {"nperseg": 33, "fs": 10.0},
                                    {"nperseg": 32, "scaling": "spectrum", "average": "median"},
                                    {"nperseg": 16, "window": "hamming", "noverlap": 4}])
def test_welch_and_csd_match_scipy(kwargs):
    f, p = signal.welch(SIG, **kwargs)
    ef, ep = ss.welch(SIG, **kwargs)
    np.testing.assert_allclose(np.asarray(f), ef, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(p), ep, rtol=1e-5, atol=1e-6 * ep.max())
    other = RNG.randn(300).astype(np.float32)
    _, pxy = signal.csd(SIG, other, **kwargs)
    _, epxy = ss.csd(SIG, other, **kwargs)
    np.testing.assert_allclose(np.asarray(pxy), epxy, atol=1e-5 * np.abs(epxy).max())


def test_welch_along_an_axis():
    x = RNG.randn(100, 2).astype(np.float32)
    _, p = signal.welch(x, nperseg=16, axis=0)
    np.testing.assert_allclose(np.asarray(p), ss.welch(x, nperseg=16, axis=0)[1], rtol=1e-5)


def _smooth(x):
    return signal.convolve(x, jnp.ones(3) / 3, "same")


def _power(x):
    return signal.welch(x, nperseg=8)[1]


def test_jit_grad_vmap():
    x = jnp.asarray(SIG[:40])
    np.testing.assert_allclose(np.asarray(redraft.jit(_smooth)(x)), np.asarray(_smooth(x)),
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(_power)(x)), np.asarray(_power(x)),
                               rtol=1e-5)
    batch = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(redraft.vmap(_power)(batch)[1]),
                               4 * np.asarray(_power(x)), rtol=1e-5)
    check_grads(lambda v: _smooth(v) ** 2, (SIG[:12].astype(np.float64),), order=2)
    check_grads(lambda v: _power(v), (SIG[:24].astype(np.float64),), order=1)
    check_grads(lambda v: signal.fftconvolve(v, jnp.asarray(B1)), (SIG[:10],), order=1)
