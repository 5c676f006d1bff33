"""Automatic differentiation costs, in one run (issue #3's figures):

- eager grad(sum_logistic) on 3 floats, against JAX and autograd when they are installed;
- the time to produce the gradient source of a 50-line function (first use in a process,
  when the rules it needs are lowered too, and again with the rules cached).

    python -m benchmarks.bench_ad
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import time
import timeit

import redraft
import redraft.numpy as jnp
from redraft.compiler.transforms.cache import TRANSFORM_CACHE

HERE = pathlib.Path(__file__).parent


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def best(fn, number: int = 2000, repeat: int = 7) -> float:
    """Best seconds per call over `repeat` rounds of `number` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def grad_rows() -> list[tuple[str, float]]:
    x = jnp.arange(3.0)
    g = redraft.grad(sum_logistic)
    g(x)
    rows = [("redraft", best(lambda: g(x)))]
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jjnp
        jg = jax.grad(lambda v: jjnp.sum(1.0 / (1.0 + jjnp.exp(-v))))
        jx = jjnp.arange(3.0)
        jg(jx)  # un-jitted jax.grad: JAX's eager, op-by-op mode
        rows.append(("jax (eager)", best(lambda: jg(jx).block_until_ready(), number=200)))
    if importlib.util.find_spec("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(lambda v: anp.sum(1.0 / (1.0 + anp.exp(-v))))
        ax = anp.arange(3.0)
        ag(ax)
        rows.append(("autograd", best(lambda: ag(ax))))
    return rows


def emit_times() -> tuple[float, float]:
    spec = importlib.util.spec_from_file_location("fifty_lines", HERE / "fifty_lines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    start = time.perf_counter()
    redraft.emit(module.mlp_loss)
    cold = time.perf_counter() - start
    warm = []
    for _ in range(5):
        TRANSFORM_CACHE.forget(module.mlp_loss)  # its Core and gradient; rules stay cached
        start = time.perf_counter()
        redraft.emit(module.mlp_loss)
        warm.append(time.perf_counter() - start)
    return cold, min(warm)


def main() -> None:
    cold, warm = emit_times()  # first, so the rules are lowered here and nowhere before
    print("eager grad(sum_logistic), f32[3]")
    for name, seconds in grad_rows():
        print(f"  {name:<14}{seconds * 1e6:9.1f} us")
    print("grad source of a 50-line function (target < 50 ms)")
    print(f"  first use     {cold * 1e3:9.1f} ms   (includes lowering the rules it uses)")
    print(f"  rules cached  {warm * 1e3:9.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
