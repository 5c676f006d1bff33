"""Train a small MLP classifier with redraft.example_libraries (stax + optimizers.adam) on a
dataset made here: three Gaussian blobs in 2-D. Prints the loss and accuracy per epoch.

    python examples/mlp_optimizers.py [--epochs N]
"""
import argparse

import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import random
from redraft.example_libraries import optimizers, stax


def make_blobs(n_per_class: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    centres = np.float32([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    xs = np.concatenate([c + 0.8 * rng.randn(n_per_class, 2) for c in centres])
    ys = np.repeat(np.arange(3), n_per_class)
    order = rng.permutation(len(ys))
    return xs[order].astype(np.float32), ys[order].astype(np.int32)


init_net, apply_net = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(32), stax.Relu,
                                  stax.Dense(3), stax.LogSoftmax)
opt_init, opt_update, get_params = optimizers.adam(1e-2)


def loss(params, x, onehot):
    return -jnp.mean(jnp.sum(apply_net(params, x) * onehot, axis=1))


@redraft.jit
def step(i, opt_state, x, onehot):
    params = get_params(opt_state)
    return opt_update(i, redraft.grad(loss)(params, x, onehot), opt_state)


def accuracy(params, x, y) -> float:
    return float(np.mean(np.argmax(np.asarray(apply_net(params, x)), axis=1) == y))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    xs, ys = make_blobs(200)
    onehot = np.eye(3, dtype=np.float32)[ys]
    _, params = init_net(random.PRNGKey(0), (-1, 2))
    opt_state = opt_init(params)
    batch, count = 50, 0
    for epoch in range(args.epochs):
        for start in range(0, len(ys), batch):
            sl = slice(start, start + batch)
            opt_state = step(count, opt_state, jnp.asarray(xs[sl]), jnp.asarray(onehot[sl]))
            count += 1
        params = get_params(opt_state)
        print(f"epoch {epoch + 1:2d}  loss {float(loss(params, xs, onehot)):.4f}  "
              f"accuracy {accuracy(params, xs, ys):.3f}")


if __name__ == "__main__":
    main()
