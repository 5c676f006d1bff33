"""Hamiltonian Monte Carlo on a correlated 2-D Gaussian: the potential's gradient by grad,
a leapfrog integrator with fori_loop, the Metropolis test, a chain driven by lax.scan and a
warm-up counted by while_loop; keys split per step."""
import redraft as jax
import redraft.numpy as jnp
from redraft import lax, random

PRECISION = jnp.array([[2.0, -1.2], [-1.2, 1.5]])


def potential(q):
    return 0.5 * q @ PRECISION @ q


def leapfrog(q, p, step_size, n_steps):
    grad_u = jax.grad(potential)
    p = p - 0.5 * step_size * grad_u(q)

    def body(i, state):
        q, p = state
        q = q + step_size * p
        p = p - step_size * grad_u(q) * jnp.where(i == n_steps - 1, 0.5, 1.0)
        return q, p
    return lax.fori_loop(0, n_steps, body, (q, p))


def hmc_step(q, key, step_size=0.2, n_steps=5):
    k_momentum, k_accept = random.split(key)
    p = random.normal(k_momentum, q.shape)
    q_new, p_new = leapfrog(q, p, step_size, n_steps)
    h_old = potential(q) + 0.5 * p @ p
    h_new = potential(q_new) + 0.5 * p_new @ p_new
    accept = jnp.log(random.uniform(k_accept)) < h_old - h_new
    return jnp.where(accept, q_new, q), accept


def warm_up(q, key):
    def cond(state):
        i, q, key, accepted = state
        return (i < 8) & (accepted < 5)

    def body(state):
        i, q, key, accepted = state
        key, sub = random.split(key)
        q, ok = hmc_step(q, sub)
        return i + 1, q, key, accepted + ok.astype(jnp.int32)
    i, q, key, accepted = lax.while_loop(cond, body, (0, q, key, 0))
    return q, i, accepted


@jax.jit
def chain(q0, key):
    q, n_warm, accepted = warm_up(q0, key)

    def step(q, k):
        q, ok = hmc_step(q, k)
        return q, (q, ok)
    _, (samples, oks) = lax.scan(step, q, random.split(random.fold_in(key, 1), 20))
    return samples, oks, n_warm, accepted


def run():
    samples, oks, n_warm, accepted = chain(jnp.array([1.0, -1.0]), random.PRNGKey(7))
    grad_energy = jax.grad(lambda q: potential(leapfrog(q, jnp.ones(2), 0.1, 3)[0]))(
        jnp.array([0.5, 0.2]))
    return {"samples": samples, "accept": oks, "n_warm": n_warm, "accepted": accepted,
            "grad_energy": grad_energy}
