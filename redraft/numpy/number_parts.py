"""The parts of numbers: frexp (mantissa and exponent), spacing (the gap to the next
float), angle (a complex number's argument), packbits and unpackbits (the bits of uint8s).
"""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["frexp", "spacing", "angle", "packbits", "unpackbits"]


def _inexact(x: Array) -> Array:
    return x if np.issubdtype(x.dtype, np.inexact) else x.astype(jnp.float32)


def _scale_by_power_of_two(x: Array, e: Array) -> Array:
    """x * 2**e in two halves, so that neither factor overflows (e beyond the exponent
    range, for subnormal x)."""
    half = e // 2
    return x * jnp.exp2(half.astype(x.dtype)) * jnp.exp2((e - half).astype(x.dtype))


def frexp(x) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1; zero,
    infinities and NaN give (x, 0)."""
    x = _inexact(jnp.asarray(x))
    special = (x == 0) | ~jnp.isfinite(x)
    safe = jnp.where(special, jnp.ones_like(x), x)
    e = (jnp.floor(jnp.log2(jnp.abs(safe))) + 1).astype(jnp.int32)
    m = _scale_by_power_of_two(safe, -e)
    high = jnp.abs(m) >= 1  # log2 rounded up just below a power of two
    m = jnp.where(high, m * 0.5, m)
    e = jnp.where(high, e + 1, e)
    low = jnp.abs(m) < 0.5
    m = jnp.where(low, m * 2, m)
    e = jnp.where(low, e - 1, e)
    return jnp.where(special, x, m), jnp.where(special, 0, e).astype(jnp.int32)


def spacing(x) -> Array:
    """The distance from x to the next representable number away from zero (negative for
    negative x); NaN for infinities and NaN."""
    x = _inexact(jnp.asarray(x))
    toward = jnp.where(x < 0, -jnp.inf, jnp.inf).astype(x.dtype)
    gap = jnp.nextafter(x, toward) - x
    return jnp.where(jnp.isfinite(x), gap, jnp.nan)


def angle(z, deg: bool = False) -> Array:
    """The counterclockwise angle of z from the positive real axis (radians, or degrees)."""
    z = jnp.asarray(z)
    if z.dtype.kind == "c":
        out = jnp.arctan2(jnp.imag(z), jnp.real(z))
    else:
        re = _inexact(z)
        out = jnp.arctan2(jnp.zeros_like(re), re)
    return jnp.rad2deg(out) if deg else out


def _bit_weights(bitorder: str) -> np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")
    weights = 2 ** np.arange(8, dtype=np.uint8)
    return weights[::-1].copy() if bitorder == "big" else weights


def packbits(a, axis: int | None = None, bitorder: str = "big") -> Array:
    """Groups of 8 elements along `axis` (the flattened array if None) packed into uint8,
    each element's truth one bit; the last group is padded with zeros."""
    a = jnp.asarray(a)
    if not (np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
        raise TypeError(f"packbits needs a bool or integer array, got {a.dtype}")
    weights = jnp.asarray(_bit_weights(bitorder))
    if axis is None:
        a, axis = a.ravel(), 0
    bits = jnp.moveaxis(a != 0, axis, -1).astype(jnp.uint8)
    n = bits.shape[-1]
    pad = [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)]
    bits = jnp.pad(bits, pad)
    groups = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = jnp.sum(groups * weights, axis=-1, dtype=jnp.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Array:
    """The bits of uint8 `a` along `axis` (the flattened array if None), 8 per element;
    `count` keeps that many (a negative one drops that many from the end)."""
    a = jnp.asarray(a)
    if a.dtype != jnp.uint8:
        raise TypeError(f"unpackbits needs a uint8 array, got {a.dtype}")
    weights = jnp.asarray(_bit_weights(bitorder))
    if axis is None:
        a, axis = a.ravel(), 0
    moved = jnp.moveaxis(a, axis, -1)
    bits = (moved[..., None] & weights) != 0
    bits = bits.reshape(moved.shape[:-1] + (moved.shape[-1] * 8,)).astype(jnp.uint8)
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            pad = [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)]
            bits = jnp.pad(bits, pad)
    return jnp.moveaxis(bits, -1, axis)
