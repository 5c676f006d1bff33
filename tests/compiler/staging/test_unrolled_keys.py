"""A loop whose counter names a dict key (`params[f"linear_{i}"]`) needs the counter as a
Python value: staging runs it unrolled, as JAX's tracing runs every Python loop."""
import numpy as np

import redraft
import redraft.numpy as jnp


def _apply(params, x, n):
    for i in range(n):
        x = jnp.tanh(x @ params[f"linear_{i}"]["w"])
    return jnp.sum(x)


def test_a_key_formatted_from_a_loop_counter_unrolls_the_loop():
    rng = np.random.default_rng(0)
    params = {f"linear_{i}": {"w": rng.normal(size=(3, 3)).astype(np.float32)}
              for i in range(3)}
    x = rng.normal(size=(2, 3)).astype(np.float32)
    want = x
    for i in range(3):
        want = np.tanh(want @ params[f"linear_{i}"]["w"])
    got = redraft.jit(_apply, static_argnums=2)(params, x, 3)
    np.testing.assert_allclose(float(got), float(np.sum(want)), rtol=1e-5)
    g = redraft.jit(redraft.grad(_apply), static_argnums=2)(params, x, 3)
    g_eager = redraft.grad(_apply)(params, x, 3)
    for name in params:
        np.testing.assert_allclose(np.asarray(g[name]["w"]), np.asarray(g_eager[name]["w"]),
                                   rtol=1e-5, atol=1e-6)
