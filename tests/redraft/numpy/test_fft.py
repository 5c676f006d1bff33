"""redraft.numpy.fft against numpy.fft: every function and norm, dtypes, errors; derivatives
(linear maps: jvp is the transform, vjp its transpose) to order 2; vmap; jit."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

RNG = np.random.default_rng(2)
X = RNG.standard_normal((3, 8)).astype(np.float32)
X3 = RNG.standard_normal((2, 4, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 8)) + 1j * RNG.standard_normal((3, 8))).astype(np.complex64)
Z3 = (X3 + 1j * X3[::-1]).astype(np.complex64)
NORMS = [None, "backward", "ortho", "forward"]


def close(got, want, tol=1e-4):
    want = np.asarray(want)
    got_np = np.asarray(got)
    assert got_np.shape == want.shape
    np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("norm", NORMS)
def test_one_axis_transforms_match_numpy(norm):
    for name, arg in (("fft", Z), ("ifft", Z), ("rfft", X), ("irfft", Z), ("hfft", Z),
                      ("ihfft", X)):
        for n in (None, 5, 12):
            got = getattr(jnp.fft, name)(arg, n=n, norm=norm)
            want = getattr(np.fft, name)(arg, n=n, norm=norm)
            close(got, want)
            real = name in ("irfft", "hfft")
            assert got.dtype == (np.float32 if real else np.complex64)
        close(getattr(jnp.fft, name)(arg, axis=0, norm=norm),
              getattr(np.fft, name)(arg, axis=0, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
def test_multi_axis_transforms_match_numpy(norm):
    for name, arg in (("fft2", Z3), ("ifft2", Z3), ("rfft2", X3), ("irfft2", Z3),
                      ("fftn", Z3), ("ifftn", Z3), ("rfftn", X3), ("irfftn", Z3)):
        close(getattr(jnp.fft, name)(arg, norm=norm), getattr(np.fft, name)(arg, norm=norm))
        close(getattr(jnp.fft, name)(arg, s=(3, 4), axes=(0, 2), norm=norm),
              getattr(np.fft, name)(arg, s=(3, 4), axes=(0, 2), norm=norm))


def test_real_and_integer_inputs_take_jax_dtypes():
    assert jnp.fft.fft(X).dtype == np.complex64
    assert jnp.fft.rfft(np.arange(8)).dtype == np.complex64
    close(jnp.fft.fft(np.arange(8)), np.fft.fft(np.arange(8)))


def test_frequencies_and_shifts_match_numpy():
    for n in (1, 4, 7):
        close(jnp.fft.fftfreq(n, 0.5), np.fft.fftfreq(n, 0.5))
        close(jnp.fft.rfftfreq(n), np.fft.rfftfreq(n))
    assert jnp.fft.fftfreq(4).dtype == np.float32
    for axes in (None, 0, 1, (0, 1)):
        close(jnp.fft.fftshift(X, axes), np.fft.fftshift(X, axes))
        close(jnp.fft.ifftshift(X, axes), np.fft.ifftshift(X, axes))


def test_errors():
    with pytest.raises(ValueError, match="norm"):
        jnp.fft.fft(Z, norm="bad")
    with pytest.raises(TypeError, match="real"):
        jnp.fft.rfft(Z)
    with pytest.raises(ValueError, match="3D"):
        jnp.fft.fftn(np.zeros((2, 2, 2, 2), np.complex64))


def _power(x):
    y = jnp.fft.rfft(x, norm="ortho")
    return jnp.real(y * jnp.conj(y))


def _roundtrip(x):
    return jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(x[::-1]), n=x.shape[-1])


def _complex(x):
    z = jnp.fft.fft2(x.astype(jnp.complex64))
    return jnp.imag(jnp.fft.ifft(z * z, axis=0)) + jnp.real(jnp.fft.hfft(z[:, :3]))[:, :4]


def _odd(x):
    return jnp.fft.irfft(jnp.fft.rfft(x) ** 2, n=7)


@pytest.mark.parametrize("fn,arg", [(_power, X), (_roundtrip, X[0]), (_complex, X[:, :4]),
                                    (_odd, X[:, :7])], ids=lambda v: getattr(v, "__name__", ""))
def test_derivatives_to_order_two(fn, arg):
    check_grads(fn, (arg.astype(np.float64),), order=2, atol=3e-2, rtol=3e-2)


def _spectrum(x):
    return jnp.abs(jnp.fft.fft(x))


def test_vmap_and_jit():
    got = redraft.vmap(_spectrum)(X)
    close(got, np.abs(np.fft.fft(X)))
    close(redraft.vmap(_roundtrip)(X), np.stack([np.asarray(_roundtrip(x)) for x in X]))
    close(redraft.jit(_roundtrip)(X[0]), _roundtrip(X[0]))
    close(redraft.jit(_spectrum)(X), np.abs(np.fft.fft(X)))
