"""An LSTM language-model-style regressor written as a class: parameters in the object,
the cell a @staticmethod, a @property, __call__ running lax.scan over a NamedTuple state,
and the method `self.loss` differentiated (jax.grad(self.loss)); training steps update the
object's parameters."""
from typing import NamedTuple

import redraft as jax
import redraft.numpy as jnp
from redraft import lax, random


class State(NamedTuple):
    h: jnp.ndarray
    c: jnp.ndarray


class LSTM:
    def __init__(self, key, n_in=2, n_hidden=4):
        k1, k2, k3 = random.split(key, 3)
        self.params = {"wx": random.normal(k1, (n_in, 4 * n_hidden)) * 0.4,
                       "wh": random.normal(k2, (n_hidden, 4 * n_hidden)) * 0.4,
                       "b": jnp.zeros(4 * n_hidden),
                       "out": random.normal(k3, (n_hidden,)) * 0.5}
        self.n_hidden = n_hidden

    @property
    def zero_state(self):
        return State(jnp.zeros(self.n_hidden), jnp.zeros(self.n_hidden))

    @staticmethod
    def cell(params, state, x):
        gates = x @ params["wx"] + state.h @ params["wh"] + params["b"]
        i, f, g, o = jnp.split(gates, 4)
        c = jax.nn.sigmoid(f) * state.c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return State(h, c), h @ params["out"]

    def apply(self, params, xs):
        def step(state, x):
            return self.cell(params, state, x)
        _, ys = lax.scan(step, self.zero_state, xs)
        return ys

    def loss(self, params, xs, targets):
        return jnp.mean((self.apply(params, xs) - targets) ** 2)

    def __call__(self, xs):
        return self.apply(self.params, xs)

    def train(self, xs, targets, steps=4, lr=0.2):
        step = jax.jit(jax.value_and_grad(self.loss))
        losses = []
        for _ in range(steps):
            value, grads = step(self.params, xs, targets)
            self.params = {k: v - lr * grads[k] for k, v in self.params.items()}
            losses.append(value)
        return jnp.stack(losses)


def run():
    model = LSTM(random.PRNGKey(21))
    xs = random.normal(random.PRNGKey(22), (7, 2))
    targets = jnp.cumsum(xs[:, 0]) * 0.3
    grads = jax.grad(model.loss)(model.params, xs, targets)
    losses = model.train(xs, targets)
    batch = jnp.stack([xs, -xs])
    return {"g_wh": grads["wh"], "g_out": grads["out"], "losses": losses,
            "predictions": model(xs), "batched": jax.vmap(model)(batch)}
