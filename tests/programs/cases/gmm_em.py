"""Expectation-maximisation for a 1-D Gaussian mixture under jit: responsibilities with
logsumexp, M-step statistics gathered in a dict (update, pop, del), a static number of
iterations, the log-likelihood trace, and the gradient of the final log-likelihood with
respect to the data."""
import math

import redraft as jax
import redraft.numpy as jnp
from redraft import random
from redraft.scipy.special import logsumexp


def log_prob(x, means, log_stds, log_weights):
    z = (x[:, None] - means[None, :]) / jnp.exp(log_stds)[None, :]
    comp = -0.5 * z ** 2 - log_stds[None, :] - 0.5 * math.log(2 * math.pi)
    return comp + log_weights[None, :]


def em(x, means, iterations=6):
    state = {"means": means, "log_stds": jnp.zeros_like(means),
             "log_weights": jnp.full(means.shape, -math.log(means.shape[0]))}
    trace = []
    for _ in range(iterations):
        lp = log_prob(x, state["means"], state["log_stds"], state["log_weights"])
        norm = logsumexp(lp, axis=1, keepdims=True)
        trace.append(jnp.sum(norm))
        resp = jnp.exp(lp - norm)
        stats = {"n": jnp.sum(resp, axis=0)}
        stats.update(sx=resp.T @ x, sxx=resp.T @ x ** 2)
        stats.setdefault("eps", 1e-6)
        n = stats.pop("n")
        eps = stats.pop("eps")
        mean = stats["sx"] / n
        var = stats["sxx"] / n - mean ** 2 + eps
        del stats["sxx"]
        state.update({"means": mean, "log_stds": 0.5 * jnp.log(var)})
        state["log_weights"] = jnp.log(n / x.shape[0])
    return state, jnp.stack(trace)


def final_loglik(x, means):
    state, _ = em(x, means)
    lp = log_prob(x, state["means"], state["log_stds"], state["log_weights"])
    return jnp.sum(logsumexp(lp, axis=1))


def run():
    k1, k2 = random.split(random.PRNGKey(13))
    x = jnp.concatenate([random.normal(k1, (20,)) - 2.0, 0.5 * random.normal(k2, (15,)) + 1.5])
    means = jnp.array([-1.0, 0.5])
    state, trace = jax.jit(em)(x, means)
    g = jax.grad(final_loglik)(x, means)
    return {"means": state["means"], "log_stds": state["log_stds"],
            "weights": jnp.exp(state["log_weights"]), "trace": trace, "grad_x": g[:6]}
