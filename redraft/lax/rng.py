"""lax.rng_bit_generator: raw random bits from an explicit uint32[4] state, as XLA's
RngBitGenerator makes them with its ThreeFry algorithm.

The state is (k0, k1, counter_lo, counter_hi): block i hashes the 64-bit counter + i
(low word, high word) under the key (k0, k1) with threefry2x32 (kernels/threefry.py), each
block giving two words. XLA lays the blocks out over the first axis of even size, split in
(half, 2) so that the two words of a block are neighbours along it (with no even axis the
first axis is padded by one and cut after); the new state is the counter moved past the
blocks used. Narrower unsigned dtypes keep each word's low bits. Verified against JAX
0.10.2 on the CPU for many shapes and counters (tests/redraft/lax/test_rng.py).

RNG_DEFAULT leaves the algorithm to the backend (JAX says its bits are not stable across
platforms or versions); redraft's is ThreeFry. XLA's CPU default is Philox, whose bits
redraft does not make: RNG_PHILOX is refused.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from redraft.compiler.primitives.random import SAMPLERS, random_sample
from redraft.compiler.primitives.registry import defbatch_source, defnondiff
from redraft.kernels.threefry import threefry2x32_pair
from redraft.numpy.creation import asarray
from redraft.runtime.array import Array

__all__ = ["RandomAlgorithm", "rng_bit_generator"]


class RandomAlgorithm(enum.IntEnum):
    """The bit generator's algorithm (JAX's names and values)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32))
_PHILOX = int(RandomAlgorithm.RNG_PHILOX)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=None,
                      out_sharding=None) -> tuple[Array, Array]:
    """(new state, random bits of `shape` and unsigned `dtype`) from state `key`,
    a uint32[4]. `algorithm` None is RNG_DEFAULT (an enum default would be written into
    transformed code as its repr, so None stands for it)."""
    dtype = np.dtype(dtype)
    if dtype not in _DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name} (redraft makes "
                        "uint8, uint16 and uint32 bits)")
    if algorithm is not None and int(algorithm) == _PHILOX:
        raise NotImplementedError("rng_bit_generator: RNG_PHILOX bits are not made by "
                                  "redraft; use RNG_THREE_FRY (or RNG_DEFAULT, which is it)")
    state = asarray(key)
    if state.shape != (4,) or state.dtype != np.uint32:
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] for ThreeFry, got "
                        f"{state.dtype.name}{list(state.shape)}")
    shape = tuple(int(s) for s in shape)
    new_state = random_sample("rng_bit_generator_state", (state,), (4,), np.uint32,
                              {"shape": shape})
    bits = random_sample("rng_bit_generator_bits", (state,), shape, dtype,
                         {"shape": shape, "dtype": dtype.name})
    return new_state, bits


def _layout(shape: tuple[int, ...]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(axis split in pairs, padded shape, shape of the blocks) for `shape`."""
    full = shape if shape else (1,)
    even = [d for d, s in enumerate(full) if s % 2 == 0]
    axis = even[0] if even else 0
    padded = full if even else (full[0] + 1,) + full[1:]
    blocks = padded[:axis] + (padded[axis] // 2,) + padded[axis + 1:]
    return axis, padded, blocks


def _counter(state: np.ndarray) -> int:
    return int(state[3]) << 32 | int(state[2])


def _bits(state: np.ndarray, shape: tuple, dtype: str = "uint32") -> np.ndarray:
    state = np.asarray(state, np.uint32)
    axis, padded, blocks = _layout(tuple(shape))
    count = np.uint64(_counter(state)) + np.arange(math.prod(blocks), dtype=np.uint64)
    a, b = threefry2x32_pair(state[:2], (count & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                             (count >> np.uint64(32)).astype(np.uint32))
    words = np.stack([a.reshape(blocks), b.reshape(blocks)], axis=axis + 1).reshape(padded)
    full = tuple(shape) if shape else (1,)
    return words[:full[0]].reshape(shape).astype(dtype)


def _state(state: np.ndarray, shape: tuple) -> np.ndarray:
    state = np.asarray(state, np.uint32)
    _, _, blocks = _layout(tuple(shape))
    moved = (_counter(state) + math.prod(blocks)) % (1 << 64)
    return np.array([state[0], state[1], moved & 0xFFFFFFFF, moved >> 32], np.uint32)


SAMPLERS["rng_bit_generator_state"] = _state
SAMPLERS["rng_bit_generator_bits"] = _bits

defnondiff(rng_bit_generator, "random bits are not a differentiable function of the state")
defbatch_source(rng_bit_generator)
