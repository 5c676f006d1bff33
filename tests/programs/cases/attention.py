"""A transformer block: multi-head self-attention with a causal mask and a padding mask,
layer norm and an MLP; parameters in a dict keyed by f-strings, heads split with reshape,
an `assert` on shapes, vmap over a batch of sequences, grad of a masked loss."""
import math

import redraft as jax
import redraft.numpy as jnp
from redraft import random

N_HEADS = 2
D_MODEL = 8


def init(key, n_layers=2):
    params = {}
    for i in range(n_layers):
        keys = random.split(random.fold_in(key, i), 4)
        for name, k, shape in zip(["qkv", "out", "up", "down"], keys,
                                  [(D_MODEL, 3 * D_MODEL), (D_MODEL, D_MODEL),
                                   (D_MODEL, 2 * D_MODEL), (2 * D_MODEL, D_MODEL)]):
            params[f"layer{i}/{name}"] = random.normal(k, shape) / math.sqrt(shape[0])
        params[f"layer{i}/scale"] = jnp.ones(D_MODEL)
    return params


def layer_norm(x, scale, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * scale


def attention(x, w_qkv, w_out, valid):
    seq, d = x.shape
    assert d % N_HEADS == 0, f"model width {d} is not a multiple of {N_HEADS} heads"
    head = d // N_HEADS
    q, k, v = jnp.split(x @ w_qkv, 3, axis=-1)
    q, k, v = (t.reshape(seq, N_HEADS, head).transpose(1, 0, 2) for t in (q, k, v))
    logits = q @ k.transpose(0, 2, 1) / math.sqrt(head)
    causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
    mask = causal & valid[None, :]
    logits = jnp.where(mask[None], logits, -1e9)
    weights = jax.nn.softmax(logits, axis=-1)
    out = (weights @ v).transpose(1, 0, 2).reshape(seq, d)
    return out @ w_out


def block(params, x, valid, n_layers=2):
    for i in range(n_layers):
        p = {name.split("/")[1]: value for name, value in params.items()
             if name.startswith(f"layer{i}/")}
        h = layer_norm(x, p["scale"])
        x = x + attention(h, p["qkv"], p["out"], valid)
        x = x + jax.nn.gelu(layer_norm(x, p["scale"]) @ p["up"]) @ p["down"]
    return x


def loss(params, xs, lengths):
    valid = jnp.arange(xs.shape[1])[None, :] < lengths[:, None]
    ys = jax.vmap(block, in_axes=(None, 0, 0))(params, xs, valid)
    per_token = jnp.sum(ys ** 2, axis=-1)
    return jnp.sum(jnp.where(valid, per_token, 0.0)) / jnp.sum(valid)


def run():
    key = random.PRNGKey(42)
    params = init(key)
    xs = random.normal(random.PRNGKey(1), (3, 5, D_MODEL))
    lengths = jnp.array([5, 3, 4])
    value, grads = jax.jit(jax.value_and_grad(loss))(params, xs, lengths)
    valid = jnp.arange(5)[None, :] < lengths[:, None]
    out = jax.vmap(block, in_axes=(None, 0, 0))(params, xs, valid)
    return {"loss": value, "out": out, "g_qkv0": grads["layer0/qkv"],
            "g_down1": grads["layer1/down"], "g_scale0": grads["layer0/scale"]}
