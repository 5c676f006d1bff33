"""A variational autoencoder's loss: an encoder giving mean and log-variance, the
reparameterisation trick with random.normal, a Bernoulli decoder (log-sigmoid), KL to the
prior; a NamedTuple of parameters, grad through the sampling under jit, vmap of the
per-example ELBO."""
from typing import NamedTuple

import redraft as jax
import redraft.numpy as jnp
from redraft import random


class Dense(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


class VAEParams(NamedTuple):
    enc: Dense
    mu: Dense
    logvar: Dense
    dec: Dense
    out: Dense


def dense(key, n_in, n_out):
    return Dense(random.normal(key, (n_in, n_out)) * 0.3, jnp.zeros(n_out))


def init(key, n_x=6, n_h=8, n_z=2):
    k = random.split(key, 5)
    return VAEParams(dense(k[0], n_x, n_h), dense(k[1], n_h, n_z), dense(k[2], n_h, n_z),
                     dense(k[3], n_z, n_h), dense(k[4], n_h, n_x))


def apply(layer: Dense, x):
    return x @ layer.w + layer.b


def elbo(params, x, key):
    h = jnp.tanh(apply(params.enc, x))
    mu, logvar = apply(params.mu, h), apply(params.logvar, h)
    eps = random.normal(key, mu.shape)
    z = mu + jnp.exp(0.5 * logvar) * eps
    logits = apply(params.out, jnp.tanh(apply(params.dec, z)))
    log_lik = jnp.sum(x * jax.nn.log_sigmoid(logits) + (1 - x) * jax.nn.log_sigmoid(-logits))
    kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar))
    return log_lik - kl


def loss(params, xs, key):
    keys = random.split(key, xs.shape[0])
    return -jnp.mean(jax.vmap(elbo, in_axes=(None, 0, 0))(params, xs, keys))


def run():
    params = init(random.PRNGKey(3))
    xs = (random.uniform(random.PRNGKey(4), (5, 6)) > 0.5).astype(jnp.float32)
    key = random.PRNGKey(5)
    value, grads = jax.jit(jax.value_and_grad(loss))(params, xs, key)
    for _ in range(3):
        key, sub = random.split(key)
        g = jax.grad(loss)(params, xs, sub)
        params = jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, params, g)
    return {"loss": value, "g_enc_w": grads.enc.w, "g_logvar_b": grads.logvar.b,
            "trained_out_w": params.out.w, "final_loss": loss(params, xs, key)}
