"""Window functions for signal processing (Bartlett, Blackman, Hamming, Hanning)."""
from __future__ import annotations

import math

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["bartlett", "blackman", "hamming", "hanning"]


def _positions(M: int) -> Array:
    """The sample positions 0, 1, ..., M - 1 in the default float (float64 with x64)."""
    return jnp.arange(M, dtype=float)


def bartlett(M: int) -> Array:
    """The triangular window of M points."""
    if M < 1:
        return jnp.zeros((0,), float)
    if M == 1:
        return jnp.ones((1,), float)
    n = _positions(M)
    return 1 - jnp.abs(2 * n / (M - 1) - 1)


def blackman(M: int) -> Array:
    """The Blackman window of M points."""
    if M < 1:
        return jnp.zeros((0,), float)
    if M == 1:
        return jnp.ones((1,), float)
    n = _positions(M)
    phase = 2 * math.pi * n / (M - 1)
    return 0.42 - 0.5 * jnp.cos(phase) + 0.08 * jnp.cos(2 * phase)


def hamming(M: int) -> Array:
    """The Hamming window of M points."""
    if M < 1:
        return jnp.zeros((0,), float)
    if M == 1:
        return jnp.ones((1,), float)
    return 0.54 - 0.46 * jnp.cos(2 * math.pi * _positions(M) / (M - 1))


def hanning(M: int) -> Array:
    """The Hann window of M points."""
    if M < 1:
        return jnp.zeros((0,), float)
    if M == 1:
        return jnp.ones((1,), float)
    return 0.5 - 0.5 * jnp.cos(2 * math.pi * _positions(M) / (M - 1))
