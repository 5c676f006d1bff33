"""Logistic regression fitted by Newton's method: the loss written with log-sigmoid, its
gradient and Hessian (jax.hessian), solves with jnp.linalg.solve, a static number of
iterations with an early `break` on a static flag, functools.partial for the data, and
per-example gradients with vmap(grad)."""
import functools

import redraft as jax
import redraft.numpy as jnp
from redraft import random

L2 = 0.1


def nll(w, x, y):
    logits = x @ w
    return -jnp.mean(y * jax.nn.log_sigmoid(logits) + (1 - y) * jax.nn.log_sigmoid(-logits)) \
        + 0.5 * L2 * jnp.sum(w ** 2)


def newton(x, y, iterations=5, damping=1.0):
    loss = functools.partial(nll, x=x, y=y)
    w = jnp.zeros(x.shape[1])
    history = []
    for it in range(iterations):
        g = jax.grad(loss)(w)
        h = jax.hessian(loss)(w)
        w = w - damping * jnp.linalg.solve(h, g)
        history.append(loss(w))
        if it >= 3:
            break
    return w, jnp.stack(history)


def run():
    key = random.PRNGKey(2)
    kx, kw, ky = random.split(key, 3)
    x = jnp.concatenate([random.normal(kx, (40, 3)), jnp.ones((40, 1))], axis=1)
    true_w = jnp.array([1.5, -2.0, 0.5, 0.3])
    y = (random.uniform(ky, (40,)) < jax.nn.sigmoid(x @ true_w)).astype(jnp.float32)
    w, history = jax.jit(newton, static_argnames=("iterations",))(x, y)
    per_example = jax.vmap(jax.grad(nll), in_axes=(None, 0, 0))(w, x[:5, None], y[:5, None])
    hess = jax.jit(jax.hessian(nll))(w, x, y)
    return {"w": w, "history": history, "per_example": per_example, "hessian": hess}
