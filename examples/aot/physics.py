"""A module to build ahead of time: a damped spring chain stepped with velocity Verlet, its
energy, the gradient of a trajectory loss, and a batched step.

    redraft build examples/aot/physics.py --out build/physics
    python examples/aot/use_physics.py build/physics      # plain Python: numpy only
    examples/aot/run_c.sh build/physics                    # the same from C
"""
import redraft
import redraft.numpy as jnp

STIFFNESS = 4.0
DAMPING = 0.1


def forces(x, v):
    """Springs between neighbours (fixed walls at both ends), and damping."""
    left = jnp.concatenate([jnp.zeros(1, x.dtype), x[:-1]])
    right = jnp.concatenate([x[1:], jnp.zeros(1, x.dtype)])
    return STIFFNESS * (left + right - 2.0 * x) - DAMPING * v


@redraft.export("f32[64],f32[64],f32[]", "f32[256],f32[256],f32[]")
def step(x, v, dt):
    """One velocity-Verlet step: positions and velocities after `dt`."""
    a = forces(x, v)
    x_new = x + dt * v + 0.5 * dt * dt * a
    v_new = v + 0.5 * dt * (a + forces(x_new, v))
    return x_new, v_new


@redraft.export("{'x': f32[64], 'v': f32[64]}")
def energy(state):
    """Kinetic plus spring energy of a state given as a dict."""
    x, v = state["x"], state["v"]
    stretch = jnp.diff(jnp.concatenate([jnp.zeros(1, x.dtype), x, jnp.zeros(1, x.dtype)]))
    return 0.5 * jnp.sum(v * v) + 0.5 * STIFFNESS * jnp.sum(stretch * stretch)


def trajectory_loss(x0, v0, target):
    """Squared distance from `target` after 10 steps of 0.05 from (x0, v0)."""
    x, v = x0, v0
    for _ in range(10):
        x, v = step(x, v, 0.05)
    return jnp.sum((x - target) ** 2)


loss_grad = redraft.export("f32[64],f32[64],f32[64]", name="loss_grad")(
    redraft.grad(trajectory_loss, argnums=(0, 1)))

batched_step = redraft.export("f32[16,64],f32[16,64],f32[]", name="batched_step")(
    redraft.vmap(step, in_axes=(0, 0, None)))
