"""redraft.scipy.signal: convolution, correlation, detrending and spectral estimation, as
jax.scipy.signal offers them (scipy.signal's semantics).

Direct convolution is lax.conv_general_dilated with the kernel reversed (any rank, integer
and float dtypes); fftconvolve multiplies real FFTs. The spectral functions cut the signal
into overlapping windowed segments (a gather with a static index grid), FFT each and scale
as scipy does: stft by the window's sum, csd/welch to a density (1 / (fs sum w^2)) or a
spectrum (1 / (sum w)^2), doubling the one-sided bins that stand for two.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.runtime.array import Array

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "csd", "welch"]

_MODES = ("full", "same", "valid")


def _check_mode(mode: str, what: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{what}: mode must be one of {_MODES}, got {mode!r}")


def _centered(full: Array, shape: Sequence[int], round_up: bool = False) -> Array:
    """The central `shape` part of `full`: from (n - m) // 2, as scipy centres, or from
    (n - m + 1) // 2, as scipy's correlate2d does."""
    starts = [(n - m + int(round_up)) // 2 for n, m in zip(full.shape, shape)]
    return full[tuple(slice(s, s + m) for s, m in zip(starts, shape))]


def _valid_shape(s1: Sequence[int], s2: Sequence[int], what: str) -> tuple[int, ...]:
    if all(a >= b for a, b in zip(s1, s2)) or all(b >= a for a, b in zip(s1, s2)):
        return tuple(max(a, b) - min(a, b) + 1 for a, b in zip(s1, s2))
    raise ValueError(f"{what}: in 'valid' mode one input must be at least as large as the "
                     f"other in every dimension, got shapes {tuple(s1)} and {tuple(s2)}")


def _full_convolution(a: Array, b: Array) -> Array:
    """The full N-d convolution of a and b (shapes add, less one) by lax's convolution."""
    flipped = jnp.flip(b)
    pads = [(n - 1, n - 1) for n in b.shape]
    out = lax.conv_general_dilated(a[None, None], flipped[None, None], (1,) * a.ndim, pads)
    return out[0, 0]


def _operands(in1, in2, what: str) -> tuple[Array, Array]:
    a, b = jnp.asarray(in1), jnp.asarray(in2)
    if a.ndim != b.ndim:
        raise ValueError(f"{what}: in1 and in2 must have the same number of dimensions, got "
                         f"{a.ndim} and {b.ndim}")
    if a.size == 0 or b.size == 0:
        raise ValueError(f"{what}: in1 and in2 must not be empty")
    dtype = jnp.result_type(a, b)
    return a.astype(dtype), b.astype(dtype)


def _convolve(a: Array, b: Array, mode: str, what: str, round_up: bool = False) -> Array:
    if a.ndim == 0:
        return a * b
    full = _full_convolution(a, b)
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, a.shape, round_up)
    return _centered(full, _valid_shape(a.shape, b.shape, what))


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None) -> Array:
    """The N-dimensional convolution of in1 and in2 ('full', 'same' or 'valid')."""
    _check_mode(mode, "convolve")
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}")
    a, b = _operands(in1, in2, "convolve")
    if method == "fft":
        return fftconvolve(a, b, mode=mode)
    return _convolve(a, b, mode, "convolve")


def _reverse_conj(x: Array) -> Array:
    return jnp.conj(jnp.flip(x)) if jnp.iscomplexobj(x) else jnp.flip(x)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None) -> Array:
    """The N-dimensional cross-correlation of in1 and in2: convolve(in1, reverse(conj(in2)))."""
    _check_mode(mode, "correlate")
    a, b = _operands(in1, in2, "correlate")
    return convolve(a, _reverse_conj(b), mode=mode, method=method)


def _check_2d(a: Array, b: Array, boundary: str, fillvalue, what: str) -> None:
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{what}: inputs must be 2-dimensional, got shapes {a.shape} and "
                         f"{b.shape}")
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{what}: only boundary='fill' with fillvalue=0 is "
                                  "supported (as in JAX)")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None) -> Array:
    """The 2-D convolution of in1 and in2 (zero boundary)."""
    _check_mode(mode, "convolve2d")
    a, b = _operands(in1, in2, "convolve2d")
    _check_2d(a, b, boundary, fillvalue, "convolve2d")
    return _convolve(a, b, mode, "convolve2d")


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None) -> Array:
    """The 2-D cross-correlation of in1 and in2 (zero boundary)."""
    _check_mode(mode, "correlate2d")
    a, b = _operands(in1, in2, "correlate2d")
    _check_2d(a, b, boundary, fillvalue, "correlate2d")
    return _convolve(a, _reverse_conj(b), mode, "correlate2d", round_up=True)


def fftconvolve(in1, in2, mode: str = "full", axes: Sequence[int] | None = None) -> Array:
    """Convolution by FFT along `axes` (all by default; the other axes broadcast)."""
    _check_mode(mode, "fftconvolve")
    a, b = _operands(in1, in2, "fftconvolve")
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a, b = a.astype(jnp.float32), b.astype(jnp.float32)
    axes = tuple(range(a.ndim)) if axes is None else tuple(int(ax) % a.ndim for ax in axes)
    for ax in range(a.ndim):
        if ax not in axes and a.shape[ax] != b.shape[ax] and 1 not in (a.shape[ax],
                                                                        b.shape[ax]):
            raise ValueError(f"fftconvolve: incompatible shapes {a.shape} and {b.shape} on "
                             f"axis {ax}, which is not convolved")
    full_sizes = [a.shape[ax] + b.shape[ax] - 1 for ax in axes]
    if jnp.iscomplexobj(a):
        spectrum = jnp.fft.fftn(a, full_sizes, axes) * jnp.fft.fftn(b, full_sizes, axes)
        full = jnp.fft.ifftn(spectrum, full_sizes, axes)
    else:
        spectrum = jnp.fft.rfftn(a, full_sizes, axes) * jnp.fft.rfftn(b, full_sizes, axes)
        full = jnp.fft.irfftn(spectrum, full_sizes, axes).astype(a.dtype)
    if mode == "full":
        return full
    kept = a.shape if mode == "same" else _valid_shape(a.shape, b.shape, "fftconvolve")
    shape = ()
    for ax in range(full.ndim):   # tuples built up: transformed code assigns no items
        shape = shape + ((kept[ax] if ax in axes else full.shape[ax]),)
    return _centered(full, shape)


def detrend(data, axis: int = -1, type: str = "linear", bp=0,  # noqa: A002
            overwrite_data=None) -> Array:
    """data less its mean ('constant') or its least-squares line ('linear', fitted
    separately between the breakpoints bp) along `axis`."""
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    x = jnp.asarray(data)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.float32)
    if type in ("constant", "c"):
        return x - jnp.mean(x, axis=axis, keepdims=True)
    moved = jnp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    points = sorted(set([0] + [int(b) for b in np.atleast_1d(bp)] + [n]))
    if points[0] < 0 or points[-1] > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}], got {bp}")
    pieces = []
    for lo, hi in zip(points[:-1], points[1:]):
        if hi <= lo:
            continue
        seg = moved[..., lo:hi]
        t = jnp.arange(hi - lo, dtype=seg.dtype)
        t = t - jnp.mean(t)
        centred = seg - jnp.mean(seg, axis=-1, keepdims=True)
        denominator = jnp.sum(t * t)
        slope = jnp.sum(centred * t, axis=-1, keepdims=True) / jnp.where(
            denominator > 0, denominator, 1.0)
        pieces.append(centred - slope * t)
    return jnp.moveaxis(jnp.concatenate(pieces, axis=-1), -1, axis)


# ---- spectral estimation ---------------------------------------------------------------------

def _window(window, nperseg: int, dtype) -> Array:
    """scipy.signal.get_window(window, nperseg) for the common names (periodic forms, as
    scipy uses for spectral analysis), or an explicit window array of length nperseg."""
    if isinstance(window, str) or (isinstance(window, tuple) and isinstance(window[0], str)):
        name = window if isinstance(window, str) else window[0]
        n = np.arange(nperseg)
        phase = 2 * np.pi * n / nperseg
        if name in ("hann", "hanning"):
            w = 0.5 - 0.5 * np.cos(phase)
        elif name == "hamming":
            w = 0.54 - 0.46 * np.cos(phase)
        elif name == "blackman":
            w = 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase)
        elif name in ("boxcar", "rectangular", "ones"):
            w = np.ones(nperseg)
        elif name == "bartlett":
            w = 1 - np.abs(2 * n / nperseg - 1)
        else:
            raise ValueError(f"window {name!r} is not supported: use 'hann', 'hamming', "
                             "'blackman', 'boxcar', 'bartlett' or an array")
        return jnp.asarray(w.astype(dtype))
    w = jnp.asarray(window).astype(dtype)
    if w.ndim != 1 or w.shape[0] != nperseg:
        raise ValueError(f"the window must be 1-D of length nperseg={nperseg}, got shape "
                         f"{w.shape}")
    return w


def _segment_params(n: int, window, nperseg, noverlap, nfft, default_nperseg: int):
    if nperseg is None:
        nperseg = len(window) if not isinstance(window, (str, tuple)) else default_nperseg
        nperseg = min(nperseg, n)
    nperseg = int(nperseg)
    if nperseg < 1:
        raise ValueError(f"nperseg must be a positive integer, got {nperseg}")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"noverlap must be in [0, nperseg={nperseg}), got {noverlap}")
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"nfft must be at least nperseg={nperseg}, got {nfft}")
    return nperseg, noverlap, nfft


def _segments(x: Array, nperseg: int, step: int) -> Array:
    """x (signal on the last axis) cut into overlapping segments: (..., nseg, nperseg)."""
    count = (x.shape[-1] - nperseg) // step + 1
    grid = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    return x[..., jnp.asarray(grid.astype(np.int32))]


def _float_dtype(x: Array):
    return x.dtype if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.float32


def _spectral(x: Array, y: Array | None, fs, window, nperseg, noverlap, nfft, detrend_type,
              return_onesided: bool, scaling: str, axis: int, mode: str, boundary,
              padded: bool, default_nperseg: int):
    """(freqs, times, per-segment spectra) shared by stft and csd: segments on the last axis
    of the result's leading dims, frequencies on the last."""
    x = jnp.moveaxis(x, axis, -1)
    real_dtype = jnp.real(jnp.zeros((), _float_dtype(x))).dtype
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
    n = x.shape[-1]
    nperseg, noverlap, nfft = _segment_params(n, window, nperseg, noverlap, nfft,
                                              default_nperseg)
    win = _window(window, nperseg, real_dtype)
    step = nperseg - noverlap
    if boundary is not None:
        if boundary != "zeros":
            raise ValueError(f"boundary must be 'zeros' or None, got {boundary!r}")
        half = nperseg // 2
        pad = [(0, 0)] * (x.ndim - 1) + [(half, half)]
        x = jnp.pad(x, pad)
        y = None if y is None else jnp.pad(y, pad)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        if extra:
            pad = [(0, 0)] * (x.ndim - 1) + [(0, extra)]
            x = jnp.pad(x, pad)
            y = None if y is None else jnp.pad(y, pad)
    complex_input = jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y))
    onesided = return_onesided and not complex_input

    def spectrum(signal: Array) -> Array:
        seg = _segments(signal, nperseg, step)
        if detrend_type:
            seg = detrend(seg, axis=-1, type=detrend_type)
        seg = seg * win
        if onesided:
            return jnp.fft.rfft(seg, n=nfft, axis=-1)
        return jnp.fft.fft(seg, n=nfft, axis=-1)

    sx = spectrum(x)
    if mode == "stft":
        scale = 1.0 / jnp.sum(win)
        result = sx * scale
    else:
        sy = sx if y is None else spectrum(y)
        if scaling == "density":
            scale = 1.0 / (fs * jnp.sum(win * win))
        elif scaling == "spectrum":
            scale = 1.0 / jnp.sum(win) ** 2
        else:
            raise ValueError(f"scaling must be 'density' or 'spectrum', got {scaling!r}")
        result = jnp.conj(sx) * sy * scale
        if onesided:  # bins standing for a positive and a negative frequency count twice
            bins = np.arange(result.shape[-1])
            single = (bins == 0) | ((bins == nfft // 2) & (nfft % 2 == 0))  # DC, Nyquist
            result = result * jnp.asarray(np.where(single, 1.0, 2.0).astype(real_dtype))
    freqs = (np.fft.rfftfreq(nfft, 1.0 / fs) if onesided
             else np.fft.fftfreq(nfft, 1.0 / fs)).astype(real_dtype)
    count = result.shape[-2]
    times = np.arange(count) * step + nperseg / 2
    if boundary is not None:
        times = times - nperseg / 2
    times = (times / fs).astype(real_dtype)
    return jnp.asarray(freqs), jnp.asarray(times), result


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: bool = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):
    """The short-time Fourier transform: (f, t, Zxx) with Zxx[..., freq, time]."""
    data = jnp.asarray(x)
    if not jnp.issubdtype(data.dtype, jnp.inexact):
        data = data.astype(jnp.float32)
    freqs, times, spectra = _spectral(data, None, fs, window, nperseg, noverlap, nfft,
                                      "constant" if detrend else None, return_onesided,
                                      "spectrum", axis, "stft", boundary, padded, 256)
    return freqs, times, jnp.moveaxis(spectra, -1, -2)


def csd(x, y, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
        nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean"):
    """The cross power spectral density of x and y by Welch's method: (f, Pxy)."""
    a = jnp.asarray(x)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.float32)
    b = None
    if y is not None:
        b = jnp.asarray(y).astype(jnp.result_type(a, jnp.asarray(y)))
        if b.shape != a.shape:
            raise ValueError(f"csd: x and y must have one shape, got {a.shape} and {b.shape}")
    freqs, _, spectra = _spectral(a, b, fs, window, nperseg, noverlap, nfft,
                                  detrend or None, return_onesided, scaling, axis, "psd",
                                  None, False, 256)
    if average == "mean":
        p = jnp.mean(spectra, axis=-2)
    elif average == "median":
        bias = _median_bias(spectra.shape[-2])
        p = jnp.median(jnp.real(spectra), axis=-2) / bias
        if jnp.iscomplexobj(spectra):
            p = p + 1j * jnp.median(jnp.imag(spectra), axis=-2) / bias
    else:
        raise ValueError(f"average must be 'mean' or 'median', got {average!r}")
    if y is None and not jnp.iscomplexobj(a):
        p = jnp.real(p)
    return freqs, jnp.moveaxis(p, -1, axis)


def _median_bias(n: int) -> float:
    """The bias of the median of n periodogram values (scipy's correction)."""
    ii = np.arange(1, (n - 1) // 2 + 1)
    return float(1 + np.sum(1.0 / (2 * ii + 1) - 1.0 / (2 * ii)))


def welch(x, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean"):
    """The power spectral density of x by Welch's method: (f, Pxx)."""
    return csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
               scaling, axis, average)


def istft(Zxx, fs=1.0, window="hann", nperseg: int | None = None,  # noqa: N803
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2):
    """The inverse short-time Fourier transform by windowed overlap-add: (t, x)."""
    z = jnp.asarray(Zxx)
    z = jnp.moveaxis(z, (freq_axis % z.ndim, time_axis % z.ndim), (-2, -1))
    n_freq, n_seg = z.shape[-2], z.shape[-1]
    n_default = 2 * (n_freq - 1) if input_onesided else n_freq
    nperseg = n_default if nperseg is None else int(nperseg)
    nfft = n_default if nfft is None else int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"noverlap must be in [0, nperseg={nperseg}), got {noverlap}")
    real_dtype = jnp.real(z).dtype
    win = _window(window, nperseg, real_dtype)
    step = nperseg - noverlap
    spectra = jnp.moveaxis(z, -1, -2)          # (..., seg, freq)
    if input_onesided:
        frames = jnp.fft.irfft(spectra, n=nfft, axis=-1)[..., :nperseg]
    else:
        frames = jnp.fft.ifft(spectra, n=nfft, axis=-1)[..., :nperseg]
    frames = frames * jnp.sum(win) * win
    length = nperseg + (n_seg - 1) * step
    grid = (np.arange(n_seg)[:, None] * step + np.arange(nperseg)[None, :]).reshape(-1)
    flat = frames.reshape(frames.shape[:-2] + (n_seg * nperseg,))
    out = jnp.zeros(frames.shape[:-2] + (length,), frames.dtype).at[
        ..., jnp.asarray(grid.astype(np.int32))].add(flat)
    norm = np.zeros(length)
    np.add.at(norm, grid, np.tile(np.asarray(win) ** 2, n_seg))
    if boundary:
        out = out[..., nperseg // 2: length - nperseg // 2]
        norm = norm[nperseg // 2: length - nperseg // 2]
    out = out / jnp.asarray(np.where(norm > 1e-10, norm, 1.0).astype(real_dtype))
    times = jnp.asarray((np.arange(out.shape[-1]) / fs).astype(real_dtype))
    return times, out


