"""redraft.numpy.fft: discrete Fourier transforms, as numpy.fft / jax.numpy.fft.

Every transform is lax.fft over the chosen axes (moved to the end, cropped or zero-padded
to the lengths asked for), scaled for JAX's `norm=` ("backward", "ortho" or "forward").
Like JAX, at most three axes at once. The AD transforms and vmap read these functions'
source and meet only lax.fft (linear, with its transposes as rules) and array operations.
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy.base as jnp
from redraft import lax
from redraft.compiler.primitives.fft import fft as _lax_fft

_NORMS = (None, "backward", "ortho", "forward")


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f"jnp.fft: norm must be 'backward', 'ortho' or 'forward', got "
                         f"{norm!r}")


def _swap_norm(norm):
    """hfft / ihfft are irfft / rfft with the forward and backward scalings exchanged."""
    _check_norm(norm)
    if norm is None or norm == "backward":
        return "forward"
    if norm == "forward":
        return "backward"
    return "ortho"


def _axes_and_sizes(ndim, s, axes, name):
    """The canonical axes and the transform length along each."""
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    axes = tuple(int(ax) % ndim for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jnp.fft.{name}: repeated axes {axes}")
    if len(axes) > 3 or len(axes) == 0:
        raise ValueError(f"jnp.fft.{name}: only 1D, 2D and 3D transforms are supported, got "
                         f"axes {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"jnp.fft.{name}: s {s} and axes {axes} differ in length")
    return axes, s


def _fit_plan(shape, lengths, fft_type):
    """(limits, pad widths) that crop or zero-pad the trailing axes of `shape` to the
    transform's input lengths (IRFFT reads n // 2 + 1 values on the last axis)."""
    k = len(lengths)
    want = list(lengths)
    if fft_type == "IRFFT":
        want[-1] = lengths[-1] // 2 + 1
    lead = list(shape[:len(shape) - k])
    tail = list(shape[len(shape) - k:])
    limits = tuple(lead + [min(h, w) for h, w in zip(tail, want)])
    widths = tuple([(0, 0)] * len(lead) + [(0, max(0, w - h)) for h, w in zip(tail, want)])
    return limits, widths


def _scale(x, fft_type, lengths, norm):
    """Apply `norm` on top of lax.fft's own scaling (1/n for the inverse transforms)."""
    _check_norm(norm)
    if norm is None or norm == "backward":
        return x
    n = math.prod(lengths)
    inverse = fft_type == "IFFT" or fft_type == "IRFFT"
    if norm == "ortho":
        factor = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:
        factor = n if inverse else 1 / n
    return x * factor


def _transform(a, fft_type, s, axes, norm, name):
    a = jnp.asarray(a)
    if fft_type == "RFFT":
        if a.dtype.kind == "c":
            raise TypeError(f"jnp.fft.{name}: takes a real array, got {a.dtype}")
        a = a if a.dtype.kind == "f" else a.astype(float)
    else:
        a = a if a.dtype.kind in "fc" else a.astype(float)  # the default float: x64 aware
        a = a.astype(np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64)
    ndim = jnp.ndim(a)  # shapes and axes are static: jnp.ndim / jnp.shape carry no tangent
    axes, s = _axes_and_sizes(ndim, s, axes, name)
    k = len(axes)
    ends = tuple(range(ndim - k, ndim))
    x = jnp.moveaxis(a, axes, ends)
    if s is None:
        lengths = tuple(jnp.shape(x)[-k:])
        if fft_type == "IRFFT":
            lengths = lengths[:-1] + (2 * (lengths[-1] - 1),)
    else:
        lengths = tuple(int(n) for n in s)
    limits, widths = _fit_plan(jnp.shape(x), lengths, fft_type)
    if limits != jnp.shape(x):
        x = lax.slice(x, (0,) * ndim, limits)
    if any(w != (0, 0) for w in widths):
        x = jnp.pad(x, widths)
    if fft_type == "RFFT":  # scale on the real side: the same (the map is linear), and
        out = _lax_fft(_scale(x, fft_type, lengths, norm), fft_type, lengths)  # compiled
    else:
        out = _scale(_lax_fft(x, fft_type, lengths), fft_type, lengths, norm)
    return jnp.moveaxis(out, ends, axes)


def _one(n, axis):
    return None if n is None else (n,), (axis,)


# ---- one axis ---------------------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None):
    """The discrete Fourier transform along `axis`."""
    s, axes = _one(n, axis)
    return _transform(a, "FFT", s, axes, norm, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse discrete Fourier transform along `axis`."""
    s, axes = _one(n, axis)
    return _transform(a, "IFFT", s, axes, norm, "ifft")


def rfft(a, n=None, axis=-1, norm=None):
    """The transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    s, axes = _one(n, axis)
    return _transform(a, "RFFT", s, axes, norm, "rfft")


def irfft(a, n=None, axis=-1, norm=None):
    """The real signal of a half spectrum (length n, default 2 * (m - 1))."""
    s, axes = _one(n, axis)
    return _transform(a, "IRFFT", s, axes, norm, "irfft")


def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real."""
    return irfft(jnp.conj(jnp.asarray(a)), n, axis, _swap_norm(norm))


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: the half spectrum of a real signal, conjugated."""
    return jnp.conj(rfft(a, n, axis, _swap_norm(norm)))


# ---- two and n axes ------------------------------------------------------------------------------

def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D discrete Fourier transform."""
    return _transform(a, "FFT", s, axes, norm, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D inverse discrete Fourier transform."""
    return _transform(a, "IFFT", s, axes, norm, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D transform of a real signal."""
    return _transform(a, "RFFT", s, axes, norm, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of rfft2."""
    return _transform(a, "IRFFT", s, axes, norm, "irfft2")


def fftn(a, s=None, axes=None, norm=None):
    """The n-D discrete Fourier transform (up to three axes)."""
    return _transform(a, "FFT", s, axes, norm, "fftn")


def ifftn(a, s=None, axes=None, norm=None):
    """The n-D inverse discrete Fourier transform (up to three axes)."""
    return _transform(a, "IFFT", s, axes, norm, "ifftn")


def rfftn(a, s=None, axes=None, norm=None):
    """The n-D transform of a real signal (up to three axes)."""
    return _transform(a, "RFFT", s, axes, norm, "rfftn")


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn (up to three axes)."""
    return _transform(a, "IRFFT", s, axes, norm, "irfftn")


# ---- frequencies and shifts ----------------------------------------------------------------------

def fftfreq(n, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point transform: [0, 1, ..., -1] / (d * n)."""
    n = int(n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return jnp.asarray(k / (d * n), dtype=dtype or float)


def rfftfreq(n, d=1.0, dtype=None, device=None):
    """The non-negative sample frequencies of an n-point real transform."""
    n = int(n)
    return jnp.asarray(np.arange(0, n // 2 + 1) / (d * n), dtype=dtype or float)


def _shift_axes(x, axes):
    if axes is None:
        return tuple(range(jnp.ndim(x)))
    if isinstance(axes, (int, np.integer)):
        return (int(axes),)
    return tuple(axes)


def fftshift(x, axes=None):
    """The zero frequency moved to the centre."""
    x = jnp.asarray(x)
    axes = _shift_axes(x, axes)
    return jnp.roll(x, tuple(jnp.shape(x)[ax] // 2 for ax in axes), axes)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    x = jnp.asarray(x)
    axes = _shift_axes(x, axes)
    return jnp.roll(x, tuple(-(jnp.shape(x)[ax] // 2) for ax in axes), axes)
