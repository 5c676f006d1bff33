"""redraft.ops (jax.ops): reductions over segments, as in a graph network's message passing.

    segment_sum(data, segment_ids, num_segments)   # out[s] = sum of data[i] with ids[i] == s

Each is an indexed update of a filled array (`.at[segment_ids].add(data)`), so jit, grad
and vmap treat it as they treat `.at`: ids outside [0, num_segments) are dropped and get no
cotangent, and an empty segment holds the reduction's identity (0, 1, -inf, +inf).
"""
from __future__ import annotations

import numpy as np

import redraft.numpy as jnp
from redraft.runtime.array import Array

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _segments(data, segment_ids, num_segments, fill, op: str, mode) -> Array:
    data = jnp.asarray(data)
    ids = jnp.asarray(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise TypeError(f"segment_{op}: segment_ids must be integers, got {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or data.shape[0] != ids.shape[0]:
        raise ValueError(f"segment_{op}: segment_ids of shape {ids.shape} must label the "
                         f"leading axis of data, of shape {data.shape}")
    if num_segments is None:  # as JAX: known only from the ids' values, so not under jit
        num_segments = int(np.max(np.asarray(ids))) + 1 if ids.shape[0] else 0
    if mode not in (None, "drop", "fill", "promise_in_bounds", "clip"):
        raise ValueError(f"segment_{op}: mode must be None, 'drop' or 'clip', got {mode!r}")
    start = jnp.full((int(num_segments),) + data.shape[1:], fill, data.dtype)
    if mode == "clip":  # ids clamped into range rather than dropped
        ids = jnp.clip(ids, 0, int(num_segments) - 1)
    if op == "add":
        return start.at[ids].add(data)
    if op == "multiply":
        return start.at[ids].multiply(data)
    if op == "max":
        return start.at[ids].max(data)
    return start.at[ids].min(data)


def segment_sum(data, segment_ids, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode=None) -> Array:
    """The sum of data's rows in each segment (0 for an empty one)."""
    return _segments(data, segment_ids, num_segments, 0, "add", mode)


def segment_prod(data, segment_ids, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode=None) -> Array:
    """The product of data's rows in each segment (1 for an empty one)."""
    return _segments(data, segment_ids, num_segments, 1, "multiply", mode)


def _lowest(dtype):
    return -np.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


def _highest(dtype):
    return np.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).max


def segment_max(data, segment_ids, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode=None) -> Array:
    """The elementwise maximum of data's rows in each segment (-inf for an empty one)."""
    data = jnp.asarray(data)
    return _segments(data, segment_ids, num_segments, _lowest(data.dtype), "max", mode)


def segment_min(data, segment_ids, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode=None) -> Array:
    """The elementwise minimum of data's rows in each segment (+inf for an empty one)."""
    data = jnp.asarray(data)
    return _segments(data, segment_ids, num_segments, _highest(data.dtype), "min", mode)
