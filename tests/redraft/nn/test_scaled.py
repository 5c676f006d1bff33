"""jax.nn's block-scaled matmul and its configurations (redraft/nn/scaled.py)."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import nn
from redraft.test_util import check_grads

RNG = np.random.default_rng(4)
LHS = RNG.normal(size=(2, 3, 8)).astype(np.float32)
RHS = RNG.normal(size=(2, 4, 8)).astype(np.float32)
LS = RNG.uniform(0.5, 2.0, size=(2, 3, 2)).astype(np.float32)
RS = RNG.uniform(0.5, 2.0, size=(2, 4, 2)).astype(np.float32)


def _reference(lhs, rhs, ls, rs):
    size = lhs.shape[-1] // ls.shape[-1]
    return np.einsum("bmk,bnk->bmn", lhs * np.repeat(ls, size, -1), rhs * np.repeat(rs, size, -1))


def test_scaled_matmul_matches_numpy():
    got = nn.scaled_matmul(jnp.asarray(LHS), jnp.asarray(RHS), jnp.asarray(LS), jnp.asarray(RS))
    np.testing.assert_allclose(got, _reference(LHS, RHS, LS, RS), rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32 and got.shape == (2, 3, 4)
    with pytest.raises(ValueError):
        nn.scaled_matmul(LHS, RHS, LS[:, :, :1].repeat(3, -1), RS)
    with pytest.raises(ValueError):
        nn.scaled_matmul(LHS[0], RHS, LS, RS)


def test_configs():
    mx = nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.data_type, mx.scale_type) == (
        "mxfp8", 32, "float8_e4m3fn", "float8_e8m0fnu")
    nv = nn.get_scaled_dot_general_config("nvfp4", global_scale=jnp.asarray(2.0))
    assert (nv.block_size, nv.data_type, float(nv.global_scale)) == (16, "float4_e2m1fn", 2.0)
    with pytest.raises(ValueError):
        nn.get_scaled_dot_general_config("fp16")


def _product(lhs, rhs):
    return jnp.sum(jnp.sin(nn.scaled_matmul(lhs, rhs, jnp.asarray(LS), jnp.asarray(RS))))


def test_derivatives_jit_and_vmap():
    check_grads(_product, (LHS, RHS), 2, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(redraft.jit(_product)(LHS, RHS), _product(LHS, RHS), rtol=1e-5)
    stack = jnp.asarray(np.stack([LHS, -LHS]))
    batched = redraft.vmap(redraft.grad(_product), in_axes=(0, None))(stack, jnp.asarray(RHS))
    for i in range(2):
        np.testing.assert_allclose(batched[i], redraft.grad(_product)(stack[i], RHS), rtol=1e-5)
