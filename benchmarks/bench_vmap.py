"""vmap's cost, in one run (issue #4's figures):

- eager `vmap(apply_matrix)(batched_x)` on the quickstart's shapes (mat f32[150,100],
  batched_x f32[10,100]) against the hand-batched `jnp.dot(batched_x, mat.T)`: the target
  is ours / hand-batched <= 1.5 (JAX's eager vmap is 2.7x its own batched dot here);
- the same with the vmap object made on every call (as the quickstart's jitted function
  does), and a naive loop over the rows plus a stack, for scale;
- eager per-example gradients `vmap(grad(loss), in_axes=(None, 0, 0))` against a loop of
  grad calls.

    python -m benchmarks.bench_vmap [--repeat 20]
"""
from __future__ import annotations

import argparse
import os
import sys

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import redraft
import redraft.numpy as jnp
from benchmarks.common import compare, format_seconds
from redraft import random

TARGET = 1.5


def make_apply_matrix():
    key = random.key(1701)
    key1, key2 = random.split(key)
    mat = random.normal(key1, (150, 100))
    batched_x = random.normal(key2, (10, 100))

    def apply_matrix(x):
        return jnp.dot(mat, x)

    return mat, batched_x, apply_matrix


def loss(w, x, y):
    return (jnp.tanh(jnp.dot(x, w)) - y) ** 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--min-time", type=float, default=0.02)
    args = parser.parse_args(argv)

    mat, batched_x, apply_matrix = make_apply_matrix()
    batched = redraft.vmap(apply_matrix)
    key = random.key(0)
    w = random.normal(key, (100,))
    ys = random.normal(random.fold_in(key, 1), (10,))
    per_example = redraft.vmap(redraft.grad(loss), in_axes=(None, 0, 0))
    grad_loss = redraft.grad(loss)
    namespace = dict(jnp=jnp, redraft=redraft, mat=mat, batched_x=batched_x,
                     apply_matrix=apply_matrix, batched=batched, w=w, ys=ys,
                     per_example=per_example, grad_loss=grad_loss)
    statements = {
        "hand-batched jnp.dot(batched_x, mat.T)": "jnp.dot(batched_x, mat.T)",
        "vmap(apply_matrix)(batched_x), made once": "batched(batched_x)",
        "vmap(apply_matrix)(batched_x), made per call":
            "redraft.vmap(apply_matrix)(batched_x)",
        "naive: jnp.stack([apply_matrix(v) for v in batched_x])":
            "jnp.stack([apply_matrix(v) for v in batched_x])",
        "per-example grads: vmap(grad(loss))": "per_example(w, batched_x, ys)",
        "per-example grads: loop of grad(loss)":
            "jnp.stack([grad_loss(w, batched_x[i], ys[i]) for i in range(10)])",
    }
    for stmt in statements.values():  # first calls generate and load the batched source
        eval(stmt, namespace)
    times = compare(statements, namespace, repeat=args.repeat, min_seconds=args.min_time)
    base = times["hand-batched jnp.dot(batched_x, mat.T)"]
    width = max(len(k) for k in times)
    print(f"{'benchmark':<{width}}  {'time':>10}  {'/ hand-batched':>14}")
    print("-" * (width + 28))
    for name, seconds in times.items():
        print(f"{name:<{width}}  {format_seconds(seconds):>10}  {seconds / base:>13.2f}x")
    ratio = times["vmap(apply_matrix)(batched_x), made once"] / base
    status = "ok" if ratio <= TARGET else "MISSED"
    print(f"\nvmap(apply_matrix) / hand-batched dot: {ratio:.2f}x (target <= {TARGET}x) "
          f"{status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
