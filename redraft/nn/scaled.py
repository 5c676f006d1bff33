"""Block-scaled matrix products: scaled_matmul, and the block-scale configurations of the
microscaling formats (get_scaled_dot_general_config), as in jax.nn.

scaled_matmul multiplies operands whose contracting axis is split into blocks, each with one
scale per row and block: result[b, m, n] = sum_k lhs[b, m, k] lhs_scales[b, m, k // s]
rhs[b, n, k] rhs_scales[b, n, k // s], with s = K / K_blocks. redraft has no 8- or 4-bit
float dtypes, so the operands and scales are ordinary arrays (their values may well be ones
such formats hold) and a configuration names its formats by their JAX dtype names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redraft.numpy as jnp
from redraft.runtime.array import Array

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_matmul"]


@dataclass
class BlockScaleConfig:
    """How one operand is block-scaled: the format of its values and of its scales."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Array | None
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
    """The configuration of 'mxfp8' (blocks of 32 float8_e4m3fn values sharing a power of
    two, float8_e8m0fnu) or 'nvfp4' (blocks of 16 float4_e2m1fn values with a float8_e4m3fn
    scale, and a float32 global scale, 1 unless given)."""
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type="float8_e4m3fn",
                                scale_type="float8_e8m0fnu", global_scale=None,
                                infer_only=False)
    if mode == "nvfp4":
        scale = jnp.ones((), jnp.float32) if global_scale is None else jnp.asarray(
            global_scale, jnp.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type="float4_e2m1fn",
                                scale_type="float8_e4m3fn", global_scale=scale,
                                infer_only=False)
    raise ValueError(f"get_scaled_dot_general_config: unknown mode {mode!r}; expected "
                     "'mxfp8' or 'nvfp4'")


def _block_size(shapes: list) -> int:
    if any(len(s) != 3 for s in shapes):
        raise ValueError(f"scaled_matmul needs 3-D operands and scales, got shapes {shapes}")
    (b, m, k), (b2, n, k2), (b3, m3, kb), (b4, n4, kb2) = shapes
    if not (b == b2 == b3 == b4 and k == k2 and m == m3 and n == n4 and kb == kb2):
        raise ValueError(f"scaled_matmul: shapes {shapes} do not match (B, M, K), (B, N, K), "
                         "(B, M, K_blocks), (B, N, K_blocks)")
    if kb == 0 or k % kb:
        raise ValueError(f"scaled_matmul: K={k} is not a multiple of {kb} blocks")
    return k // kb


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=jnp.float32
                  ) -> Array:
    """(B, M, K) x (B, N, K) -> (B, M, N), each operand scaled blockwise along K by its
    (B, ., K_blocks) scales; accumulated and returned in `preferred_element_type`."""
    size = _block_size([jnp.shape(lhs), jnp.shape(rhs), jnp.shape(lhs_scales),
                        jnp.shape(rhs_scales)])
    dtype = preferred_element_type
    a = jnp.asarray(lhs).astype(dtype) * jnp.repeat(jnp.asarray(lhs_scales).astype(dtype),
                                                   size, axis=-1)
    b = jnp.asarray(rhs).astype(dtype) * jnp.repeat(jnp.asarray(rhs_scales).astype(dtype),
                                                   size, axis=-1)
    return jnp.einsum("bmk,bnk->bmn", a, b)
