"""fft: the discrete Fourier transform over the trailing axes (lax.fft).

fft_type is one of FFT (complex -> complex), IFFT (complex -> complex, scaled by 1/n),
RFFT (real -> half spectrum of n // 2 + 1 complex values on the last axis) and IRFFT (half
spectrum -> real of the given lengths), as XLA's FftType. The impl is numpy.fft (pocketfft);
compiled code calls it through kernels/linalg_host.py. As a family file it also declares
lax.fft's jvp and vjp rules and its batching (compiler/primitives/registry.py).
"""
from __future__ import annotations

import enum

import numpy as np
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import (LeadingAxesBatching, defbatch, defjvp,
                                                  defstatic, defvjp, jnp, lax, names_primitive)

FAMILY = "fft"
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = Primitive("fft", FAMILY, WeakRule.NEVER)


class FftType(enum.IntEnum):
    """lax.FftType: which transform lax.fft applies."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128) if dtype in (np.float64, np.complex128) else np.dtype(
        np.complex64)


def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dtype in (np.float64, np.complex128) else np.dtype(
        np.float32)


_ONE_AXIS = {"FFT": np.fft.fft, "IFFT": np.fft.ifft, "RFFT": np.fft.rfft, "IRFFT": np.fft.irfft}
_N_AXES = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
           "IRFFT": np.fft.irfftn}


def fft_impl(x, *, fft_type: str, fft_lengths: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    if len(fft_lengths) == 1:  # NumPy's one-axis functions: the n-d ones cost ~5 us more
        out = _ONE_AXIS[fft_type](x, n=fft_lengths[0], axis=-1)
    else:
        axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
        out = _N_AXES[fft_type](x, s=fft_lengths, axes=axes)
    result = {"RFFT": _complex_of, "IRFFT": _real_of}.get(fft_type, np.dtype)(x.dtype)
    return out.astype(result, copy=False)


def _fft_abstract(x: ShapedArray, *, fft_type: str, fft_lengths: tuple[int, ...]):
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    k = len(fft_lengths)
    if not 1 <= k <= 3 or k > len(x.shape):
        raise ValueError(f"fft: 1 to 3 fft_lengths, at most the rank of shape "
                         f"{tuple(x.shape)}, got {fft_lengths}")
    dtype = np.dtype(x.dtype)
    lead, tail = tuple(x.shape[:-k]), tuple(x.shape[-k:])
    if fft_type == "RFFT":
        if dtype.kind != "f":
            raise TypeError(f"fft: RFFT takes a real array, got {dtype}")
        if tail != tuple(fft_lengths):
            raise ValueError(f"fft: RFFT lengths {fft_lengths} must equal the trailing axes "
                             f"{tail}")
        return ShapedArray(lead + tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,),
                           _complex_of(dtype))
    if dtype.kind != "c":
        raise TypeError(f"fft: {fft_type} takes a complex array, got {dtype}")
    if fft_type == "IRFFT":
        expect = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
        if tail != expect:
            raise ValueError(f"fft: IRFFT of lengths {fft_lengths} needs trailing axes "
                             f"{expect}, got {tail}")
        return ShapedArray(lead + tuple(fft_lengths), _real_of(dtype))
    if tail != tuple(fft_lengths):
        raise ValueError(f"fft: lengths {fft_lengths} must equal the trailing axes {tail}")
    return ShapedArray(x.shape, dtype)


impl_rules[fft_p] = fft_impl
abstract_eval_rules[fft_p] = _fft_abstract


def fft(x, fft_type, fft_lengths) -> Array:
    """lax.fft: the transform `fft_type` (a name or FftType) over the trailing
    len(fft_lengths) axes."""
    x = as_array(x)
    kind = getattr(fft_type, "name", fft_type)
    kind = str(kind).upper()
    lengths = tuple(int(n) for n in fft_lengths)
    abstract_eval_rules[fft_p](ShapedArray(x.shape, x.dtype), fft_type=kind, fft_lengths=lengths)
    return bind(fft_p, x, fft_type=kind, fft_lengths=lengths)


names_primitive(fft, fft_p)

# ---- derivatives: the fft is linear; its transpose is the inverse kind, unscaled -----------------


def _fft_vjp(g, ans, x, fft_type, fft_lengths):
    g = g.astype(ans.dtype)  # a real cotangent (from jnp.real) of a complex result
    if fft_type == "FFT" or fft_type == "IFFT":
        return lax.fft(g, fft_type, fft_lengths)
    if fft_type == "RFFT":
        n = fft_lengths[-1]
        pad = [(0, 0)] * (g.ndim - 1) + [(0, n - g.shape[-1])]
        full = lax.fft(jnp.pad(g, pad), "FFT", fft_lengths)
        return jnp.real(full).astype(x.dtype)
    n = fft_lengths[-1]
    half = lax.fft(g, "RFFT", fft_lengths)
    odd = n % 2
    k = half.shape[-1]
    weight = jnp.concatenate([jnp.ones((1,)), jnp.full((k - 2 + odd,), 2.0),
                              jnp.ones((1 - odd,))]).astype(half.dtype)
    scale = 1.0
    for length in fft_lengths:
        scale = scale / length
    return jnp.conj(half * weight * scale)


defjvp(fft_p, lambda x_dot, ans, x, fft_type, fft_lengths: lax.fft(x_dot, fft_type,
                                                                    fft_lengths))
defvjp(fft_p, _fft_vjp)
defstatic(fft_p, "fft_type", "fft_lengths")

# ---- batching: the fft maps over its leading axes already ----------------------------------------

defbatch(fft_p, LeadingAxesBatching(("x",)))
