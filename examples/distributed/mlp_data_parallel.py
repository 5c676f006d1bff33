"""Data-parallel training of an MNIST-style MLP (784-128-10) on synthetic data, over MPI ranks.

    mpirun -n 2 python examples/distributed/mlp_data_parallel.py [--steps N] [--check]

Every rank owns one shard of each batch; `pmap` runs the step on the rank's local devices
with the batch axis named 'batch', and `lax.pmean` averages the gradients over every device
of every rank (one MPI_Allreduce per parameter array). All ranks keep identical parameters.
With --check, rank 0 then trains the same model on the whole batch in one process and
reports the largest difference between the two sets of parameters (exit status 1 when it
exceeds float32 tolerance). Without mpirun it runs on this process's devices alone.
"""
import argparse
import sys
import time

import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax

SIZES = (784, 128, 10)


def init_params(seed: int = 0) -> list:
    rng = np.random.RandomState(seed)
    return [(rng.randn(m, n).astype(np.float32) * np.float32(1 / np.sqrt(m)),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def synthetic_batch(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Images whose class is set by which of ten pixel blocks is brightest, plus noise."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    images = rng.rand(n, 784).astype(np.float32) * np.float32(0.5)
    for k, label in enumerate(labels):
        images[k, label * 78:(label + 1) * 78] += 1.0
    return images, np.eye(10, dtype=np.float32)[labels]


def predict(params, x):
    (w1, b1), (w2, b2) = params
    hidden = jnp.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    return logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))


def loss(params, x, onehot):
    return -jnp.mean(jnp.sum(predict(params, x) * onehot, axis=1))


def sgd(params, grads):
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def device_step(params, x, onehot):
    """One device's step: its shard's gradient, averaged over every device of every rank."""
    grads = lax.pmean(redraft.grad(loss)(params, x, onehot), "batch")
    return sgd(params, grads)


def single_step(params, x, onehot):
    return sgd(params, redraft.grad(loss)(params, x, onehot))


parallel_step = redraft.pmap(redraft.jit(device_step), axis_name="batch", in_axes=(None, 0, 0),
                             out_axes=None)


def shard(batch: np.ndarray) -> np.ndarray:
    """This process's slice of `batch`, split over its local devices (leading axis)."""
    ranks, rank = redraft.process_count(), redraft.process_index()
    local = redraft.local_device_count("cpu")
    mine = np.array_split(batch, ranks)[rank]
    return mine.reshape((local, -1) + batch.shape[1:])


def train_parallel(steps: int, batch: int) -> tuple[list, float]:
    """The parameters after `steps` steps, and the seconds per step after the first (which
    compiles the step)."""
    params = init_params()
    batches = [synthetic_batch(batch, seed=step) for step in range(steps)]
    start = time.perf_counter()
    for step, (x, onehot) in enumerate(batches):
        if step == 1:
            start = time.perf_counter()
        params = parallel_step(params, shard(x), shard(onehot))
    return params, (time.perf_counter() - start) / max(steps - 1, 1)


def train_single(steps: int, batch: int) -> list:
    params = init_params()
    for step in range(steps):
        x, onehot = synthetic_batch(batch, seed=step)
        params = single_step(params, x, onehot)
    return params


def max_difference(a: list, b: list) -> float:
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q))))
               for pa, pb in zip(a, b) for p, q in zip(pa, pb))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if "mpi4py" in sys.modules or _under_mpirun():
        redraft.distributed.initialize()
    rank, ranks = redraft.process_index(), redraft.process_count()
    params, per_step = train_parallel(args.steps, args.batch)
    x, onehot = synthetic_batch(args.batch, seed=0)
    if rank == 0:
        print(f"{ranks} process(es) x {redraft.local_device_count('cpu')} device(s): "
              f"{per_step * 1e3:.1f} ms per step, loss {float(loss(params, x, onehot)):.4f}")
    if args.check and rank == 0:
        diff = max_difference(params, train_single(args.steps, args.batch))
        print(f"largest difference from single-process training: {diff:.3g}")
        if diff > 1e-5:
            print("MISMATCH", file=sys.stderr)
            return 1
    return 0


def _under_mpirun() -> bool:
    import os
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


if __name__ == "__main__":
    sys.exit(main())
