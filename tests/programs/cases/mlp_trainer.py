"""A config-driven MLP regression trainer: a frozen dataclass as static configuration, a
dict of hyperparameters read with `try`/`except KeyError`, parameters as a list of dicts
built with enumerate/zip, Adam written by hand with tree_map, jit(value_and_grad)."""
from dataclasses import dataclass

import redraft as jax
import redraft.numpy as jnp
from redraft import random

HYPER = {"lr": 0.05, "b1": 0.9}


@dataclass(frozen=True)
class Config:
    sizes: tuple = (3, 16, 16, 1)
    activation: str = "tanh"
    weight_decay: float = 1e-3


CONFIG = Config()


def init_params(key, sizes):
    params = []
    keys = random.split(key, len(sizes) - 1)
    for i, (k, (n_in, n_out)) in enumerate(zip(keys, zip(sizes[:-1], sizes[1:]))):
        w = random.normal(k, (n_in, n_out)) / jnp.sqrt(n_in)
        params.append({"w": w, "b": jnp.zeros(n_out) + 0.01 * i})
    return params


def forward(params, x):
    act = jnp.tanh if CONFIG.activation == "tanh" else jax.nn.relu
    *hidden, last = params
    for layer in hidden:
        x = act(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def loss_fn(params, x, y):
    pred = forward(params, x)[:, 0]
    mse = jnp.mean((pred - y) ** 2)
    decay = sum(jnp.sum(layer["w"] ** 2) for layer in params)
    return mse + CONFIG.weight_decay * decay


def adam_update(params, grads, state):
    try:
        lr = HYPER["lr"]
    except KeyError:
        lr = 1e-3
    try:
        b2 = HYPER["b2"]
    except KeyError:
        b2 = 0.999
    b1, eps = HYPER["b1"], 1e-8
    step = state["step"] + 1
    m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, state["v"], grads)
    m_hat = jax.tree_util.tree_map(lambda t: t / (1 - b1 ** step), m)
    v_hat = jax.tree_util.tree_map(lambda t: t / (1 - b2 ** step), v)
    new = jax.tree_util.tree_map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps),
                                 params, m_hat, v_hat)
    return new, {"m": m, "v": v, "step": step}


@jax.jit
def train_step(params, state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params, state = adam_update(params, grads, state)
    return params, state, loss


def run():
    key = random.PRNGKey(0)
    k_data, k_init = random.split(key)
    x = random.normal(k_data, (32, 3))
    y = jnp.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2]
    params = init_params(k_init, CONFIG.sizes)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = {"m": zeros, "v": zeros, "step": 0}
    losses = []
    for _ in range(6):
        params, state, loss = train_step(params, state, x, y)
        losses.append(loss)
    grads = jax.grad(loss_fn)(params, x, y)
    per_example = jax.vmap(lambda xi: forward(params, xi[None])[0, 0])(x[:4])
    return {"losses": jnp.stack(losses), "w0": params[0]["w"], "b2": params[2]["b"],
            "grad_w1": grads[1]["w"], "per_example": per_example}
