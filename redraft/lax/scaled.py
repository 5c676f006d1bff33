"""lax.scaled_dot: a dot_general of block-scaled operands, (lhs * lhs_scale) @ (rhs *
rhs_scale), each scale holding one factor per block of consecutive elements along the
contracting dimension (the subchannel).

JAX on the CPU rounds float32 operands and scales to bfloat16 first (the op is meant for
narrow types), so redraft does too: each is rounded to the nearest bfloat16 value (ties to
even, by bit arithmetic), kept in float32. Each scale is then repeated over its blocks of
the contracting dimension, multiplied in, and the products go to dot_general; vmap reads
this source. Differentiating it is refused, as in JAX (no transpose rule). JAX's default
result type is bfloat16, which redraft's arrays do not have (runtime/dtypes.py): pass
preferred_element_type=jnp.float32. Operands of other dtypes are refused (JAX's rounding
of those was not measured).
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.primitives.linalg import dot_general
from redraft.compiler.primitives.registry import defbatch_source, defrefuse
from redraft.lax.bits import bitcast_convert_type
from redraft.numpy.creation import asarray
from redraft.numpy.arrays import repeat
from redraft.runtime.array import Array

__all__ = ["scaled_dot"]


def scaled_dot(lhs, rhs, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None) -> Array:
    """(lhs * lhs_scale) @ (rhs * rhs_scale) as dot_general with `dimension_numbers`
    (default: the last axis of lhs with the one before the last of rhs, leading axes
    batched), each scale repeated over its blocks of the contracting dimension."""
    x, y = asarray(lhs), asarray(rhs)
    if x.ndim < 2:
        raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    if dimension_numbers is None:
        n = x.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    if preferred_element_type is None:
        raise TypeError("lax.scaled_dot: JAX's default result type is bfloat16, which redraft "
                        "has no arrays of; pass preferred_element_type=jnp.float32")
    (lhs_contracting, rhs_contracting), _ = dimension_numbers
    if x.dtype != np.float32 or y.dtype != np.float32:
        raise TypeError(f"lax.scaled_dot: redraft takes float32 operands (got {x.dtype.name} "
                        f"and {y.dtype.name}); JAX's rounding of others was not measured")
    x = _scaled(x, lhs_scale, int(lhs_contracting[0]), "lhs")
    y = _scaled(y, rhs_scale, int(rhs_contracting[0]), "rhs")
    out_type = np.dtype(preferred_element_type)
    return dot_general(x.astype(out_type), y.astype(out_type), dimension_numbers,
                       preferred_element_type=out_type)


def _scaled(x: Array, scale, axis: int, side: str) -> Array:
    """`x` times `scale` repeated over its blocks along `axis` (no scale: x itself)."""
    if scale is None:
        return _bfloat16_rounded(x)
    s = asarray(scale).astype(np.float32)
    if s.ndim != x.ndim or any(a != b for d, (a, b) in enumerate(zip(s.shape, x.shape))
                               if d != axis):
        raise TypeError(f"scaled_dot: {side}_scale of shape {s.shape} must match {side} "
                        f"{x.shape} outside the contracting dimension {axis}")
    if s.shape[axis] == 0 or x.shape[axis] % s.shape[axis]:
        raise TypeError(f"scaled_dot: {side}'s contracting size {x.shape[axis]} must be a "
                        f"multiple of {side}_scale's {s.shape[axis]}")
    block = x.shape[axis] // s.shape[axis]
    return _bfloat16_rounded(x) * repeat(_bfloat16_rounded(s), block, axis=axis)


def _bfloat16_rounded(x: Array) -> Array:
    """float32 `x` rounded to the nearest bfloat16 value, ties to even (NaN stays NaN)."""
    bits = bitcast_convert_type(x, np.uint32)
    half = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = (bits + half) & np.uint32(0xFFFF0000)
    out = bitcast_convert_type(rounded, np.float32)
    return _keep_nan(x, out)


def _keep_nan(x: Array, rounded: Array) -> Array:
    from redraft.numpy.ufuncs import where
    return where(x != x, x, rounded)


defrefuse(scaled_dot, "lax.scaled_dot has no derivative (JAX has no transpose rule for it; "
          "its operands are rounded to bfloat16, which is piecewise constant)")
defbatch_source(scaled_dot)
