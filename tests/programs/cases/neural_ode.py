"""A neural ODE: a small MLP vector field closed over its parameters, integrated with a
hand-written RK4 (a helper taking the field as a function argument) over a static number
of steps, an L2 loss against targets, gradients with respect to the parameters through the
integrator, functools.reduce for the layer stack and vmap over initial conditions."""
import functools

import redraft as jax
import redraft.numpy as jnp
from redraft import random


def mlp(params, x):
    *hidden, (w_out, b_out) = params
    h = functools.reduce(lambda h, wb: jnp.tanh(h @ wb[0] + wb[1]), hidden, x)
    return h @ w_out + b_out


def rk4_step(f, y, t, dt):
    k1 = f(y, t)
    k2 = f(y + 0.5 * dt * k1, t + 0.5 * dt)
    k3 = f(y + 0.5 * dt * k2, t + 0.5 * dt)
    k4 = f(y + dt * k3, t + dt)
    return y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(params, y0, t1=1.0, n_steps=8):
    field = lambda y, t: mlp(params, jnp.concatenate([y, jnp.array([t])]))  # noqa: E731
    dt = t1 / n_steps
    y, t = y0, 0.0
    path = [y0]
    for _ in range(n_steps):
        y = rk4_step(field, y, t, dt)
        t = t + dt
        path.append(y)
    return jnp.stack(path)


def loss(params, y0s, targets):
    finals = jax.vmap(lambda y0: integrate(params, y0)[-1])(y0s)
    return jnp.mean((finals - targets) ** 2)


def init(key, sizes=(3, 8, 2)):
    params = []
    for k, (a, b) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append((random.normal(k, (a, b)) * 0.5, jnp.zeros(b)))
    return params


def run():
    params = init(random.PRNGKey(8))
    y0s = random.normal(random.PRNGKey(9), (4, 2))
    targets = jnp.stack([y0s[:, 1], -y0s[:, 0]], axis=1)
    value, grads = jax.jit(jax.value_and_grad(loss))(params, y0s, targets)
    path = integrate(params, y0s[0])
    return {"loss": value, "g_w0": grads[0][0], "g_b1": grads[1][1], "path": path}
