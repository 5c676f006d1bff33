"""Gaussian-process regression: an RBF kernel with log-parameters in a dict, Cholesky
factorisation, triangular solves, the log marginal likelihood and its gradient, a few
steps of gradient ascent, and the predictive mean and variance."""
import math

import redraft as jax
import redraft.numpy as jnp
from redraft import random
from redraft.scipy.linalg import cho_solve, solve_triangular


def kernel(params, a, b):
    sq = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    return jnp.exp(2 * params["log_amp"]) * jnp.exp(-0.5 * sq / jnp.exp(2 * params["log_len"]))


def log_marginal(params, x, y):
    n = x.shape[0]
    k = kernel(params, x, x) + (jnp.exp(2 * params["log_noise"]) + 1e-6) * jnp.eye(n)
    chol = jnp.linalg.cholesky(k)
    alpha = cho_solve((chol, True), y)
    return (-0.5 * y @ alpha - jnp.sum(jnp.log(jnp.diag(chol)))
            - 0.5 * n * math.log(2 * math.pi))


def predict(params, x, y, x_new):
    n = x.shape[0]
    k = kernel(params, x, x) + (jnp.exp(2 * params["log_noise"]) + 1e-6) * jnp.eye(n)
    chol = jnp.linalg.cholesky(k)
    k_star = kernel(params, x, x_new)
    mean = k_star.T @ cho_solve((chol, True), y)
    v = solve_triangular(chol, k_star, lower=True)
    var = jnp.exp(2 * params["log_amp"]) - jnp.sum(v ** 2, axis=0)
    return mean, var


def run():
    x = jnp.linspace(-2.0, 2.0, 9)[:, None]
    y = jnp.sin(2 * x[:, 0]) + 0.1 * random.normal(random.PRNGKey(0), (9,))
    params = {"log_amp": jnp.array(0.0), "log_len": jnp.array(-0.3),
              "log_noise": jnp.array(-1.5)}
    lml = jax.jit(log_marginal)(params, x, y)
    grads = jax.grad(log_marginal)(params, x, y)
    step = jax.jit(jax.grad(log_marginal))
    for _ in range(4):
        g = step(params, x, y)
        params = {k: params[k] + 0.05 * g[k] for k in sorted(params)}
    mean, var = predict(params, x, y, jnp.array([[-1.5], [0.25], [1.0]]))
    return {"lml": lml, "g_amp": grads["log_amp"], "g_len": grads["log_len"],
            "g_noise": grads["log_noise"], "trained_len": params["log_len"],
            "mean": mean, "var": var}
