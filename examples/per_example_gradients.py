"""Per-example gradient norms of a small network, with vmap over grad: the quantity
differentially private training clips. Prints each example's gradient norm and checks the
first against a gradient taken on that example alone.

    python examples/per_example_gradients.py
"""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import random
from redraft.nn import initializers


def init_params(key):
    k1, k2 = random.split(key)
    return ((initializers.glorot_normal()(k1, (3, 16)), jnp.zeros(16)),
            (initializers.glorot_normal()(k2, (16, 1)), jnp.zeros(1)))


def example_loss(params, x, y):
    """Squared error of one example (x of shape (3,), y a scalar)."""
    (w1, b1), (w2, b2) = params
    hidden = jnp.tanh(x @ w1 + b1)
    prediction = (hidden @ w2 + b2)[0]
    return (prediction - y) ** 2


def gradient_norm(params, x, y):
    grads = redraft.grad(example_loss)(params, x, y)
    (w1, b1), (w2, b2) = grads
    return jnp.sqrt(jnp.sum(w1 ** 2) + jnp.sum(b1 ** 2) + jnp.sum(w2 ** 2) + jnp.sum(b2 ** 2))


def main() -> None:
    rng = np.random.RandomState(0)
    xs = jnp.asarray(rng.randn(8, 3).astype(np.float32))
    ys = jnp.asarray(rng.randn(8).astype(np.float32))
    params = init_params(random.PRNGKey(1))
    norms = redraft.vmap(gradient_norm, in_axes=(None, 0, 0))(params, xs, ys)
    for i, n in enumerate(np.asarray(norms)):
        print(f"example {i}: gradient norm {n:.4f}")
    alone = float(gradient_norm(params, xs[0], ys[0]))
    print(f"example 0 alone: {alone:.4f} (matches: {np.isclose(alone, float(norms[0]))})")


if __name__ == "__main__":
    main()
