"""Threefry over many keys at once: one key per element, as JAX's samplers that loop per element
(gamma's rejection loop runs under vmap over one key per sample) use them.

kernels/threefry.py hashes many counters under one key; here every row of a (n, 2) key array
hashes its own counters, so a rejection loop advances all elements' keys in one NumPy step.
"""
from __future__ import annotations

import numpy as np

from redraft.kernels import threefry

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def hash_pairs(keys: np.ndarray, x0: np.ndarray, x1: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 (20 rounds) of (x0[i], x1[i]) under keys[i]; keys has shape (n, 2)."""
    k0, k1 = keys[:, 0], keys[:, 1]
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 = np.asarray(x0, np.uint32) + ks[0]
    x1 = np.asarray(x1, np.uint32) + ks[1]
    for group in range(5):
        for rot in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, rot) ^ x0
        x0 = x0 + ks[(group + 1) % 3]
        x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x0, x1


def split(keys: np.ndarray, num: int) -> np.ndarray:
    """split(key, num) for every key: shape (n, num, 2)."""
    n = keys.shape[0]
    rows = np.repeat(keys, num, axis=0)
    counters = np.tile(np.arange(num, dtype=np.uint32), n)
    y0, y1 = hash_pairs(rows, np.zeros_like(counters), counters)
    return np.stack([y0, y1], axis=-1).reshape(n, num, 2)


def bits(keys: np.ndarray, width: int = 32) -> np.ndarray:
    """random_bits(key, width, ()) for every key (width 16, 32 or 64): shape (n,). 64-bit
    values are y0 << 32 | y1, narrower ones y0 ^ y1 truncated."""
    zeros = np.zeros(keys.shape[0], np.uint32)
    y0, y1 = hash_pairs(keys, zeros, zeros)
    if width == 64:
        return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
    return (y0 ^ y1).astype(f"uint{width}")


def uniform(keys: np.ndarray, minval=0., maxval=1., dtype=np.float32) -> np.ndarray:
    """uniform(key, (), dtype, minval, maxval) for every key (float16, 32 or 64)."""
    dtype = np.dtype(dtype)
    unit = threefry.unit_floats(bits(keys, dtype.itemsize * 8), dtype)
    return threefry.scale_to_range(unit, dtype.type(minval), dtype.type(maxval))


def normal(keys: np.ndarray, dtype=np.float32) -> np.ndarray:
    """normal(key, (), dtype) for every key: sqrt(2) erfinv(u), u uniform in (-1, 1)."""
    dtype = np.dtype(dtype)
    low = np.nextafter(dtype.type(-1), dtype.type(0))
    u = uniform(keys, low, 1., dtype)
    if dtype == np.float64:
        return np.sqrt(2.0) * threefry.erfinv_float64(u)
    erfinv = threefry.erfinv_float32(u).astype(dtype)
    return dtype.type(np.sqrt(2)) * erfinv
