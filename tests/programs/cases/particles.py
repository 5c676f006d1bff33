"""A particle simulation: pairwise softened gravity with broadcasting, velocity Verlet
steps in lax.scan, the total energy, and the gradient of the final kinetic energy with
respect to the initial velocities (back through the whole scan), under jit."""
import redraft as jax
import redraft.numpy as jnp
from redraft import lax, random

SOFTENING = 0.1
DT = 0.05


def accelerations(pos, masses):
    diff = pos[None, :, :] - pos[:, None, :]
    dist2 = jnp.sum(diff ** 2, axis=-1) + SOFTENING ** 2
    inv3 = dist2 ** -1.5 * (1.0 - jnp.eye(pos.shape[0]))
    return jnp.sum(diff * (inv3 * masses[None, :])[:, :, None], axis=1)


def energy(pos, vel, masses):
    kinetic = 0.5 * jnp.sum(masses[:, None] * vel ** 2)
    diff = pos[None, :, :] - pos[:, None, :]
    dist = jnp.sqrt(jnp.sum(diff ** 2, axis=-1) + SOFTENING ** 2)
    pair = masses[:, None] * masses[None, :] / dist
    potential = -0.5 * jnp.sum(jnp.where(jnp.eye(pos.shape[0], dtype=bool), 0.0, pair))
    return kinetic + potential


def simulate(pos, vel, masses, n_steps=12):
    def step(state, _):
        pos, vel = state
        acc = accelerations(pos, masses)
        vel_half = vel + 0.5 * DT * acc
        pos = pos + DT * vel_half
        vel = vel_half + 0.5 * DT * accelerations(pos, masses)
        return (pos, vel), energy(pos, vel, masses)
    (pos, vel), energies = lax.scan(step, (pos, vel), None, length=n_steps)
    return pos, vel, energies


def final_kinetic(vel0, pos0, masses):
    _, vel, _ = simulate(pos0, vel0, masses)
    return 0.5 * jnp.sum(masses[:, None] * vel ** 2)


def run():
    key = random.PRNGKey(11)
    k_pos, k_vel = random.split(key)
    pos0 = random.normal(k_pos, (5, 2))
    vel0 = 0.3 * random.normal(k_vel, (5, 2))
    masses = jnp.linspace(0.5, 1.5, 5)
    pos, vel, energies = jax.jit(simulate)(pos0, vel0, masses)
    g = jax.jit(jax.grad(final_kinetic))(vel0, pos0, masses)
    batched = jax.vmap(lambda p: energy(p, vel0, masses))(jnp.stack([pos0, pos0 * 1.1]))
    return {"pos": pos, "vel": vel, "energies": energies, "grad_vel0": g,
            "batched_energy": batched}
