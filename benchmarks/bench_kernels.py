"""Time the hand-written kernels against NumPy: vecmath exp/tanh/log and matmul.

    python benchmarks/bench_kernels.py [--n 1000000] [--size 2000] [--repeat 15] [--seconds 2]

Each figure is the best of at least `--repeat` runs lasting at least `--seconds` in all
(outputs preallocated on both sides, first call and compilation excluded): the minimum is
what the kernel costs when nothing else competes for the two cores.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from typing import Callable

import llvmlite.binding as llvm
import numpy as np

from redraft.kernels.matmul import matmul_kernel
from redraft.kernels.vecmath.loops import map_kernel


@dataclass(frozen=True)
class Budget:
    repeat: int = 15      # at least this many timed calls
    seconds: float = 2.0  # and at least this long in all


def best_time(fn: Callable[[], object], budget: Budget) -> float:
    """Minimum wall time of fn() over the budget's calls (after one untimed call)."""
    fn()
    best, calls, deadline = float("inf"), 0, time.perf_counter() + budget.seconds
    while calls < budget.repeat or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        calls += 1
    return best


def bench_vecmath(n: int, budget: Budget) -> None:
    rng = np.random.default_rng(0)
    inputs = {"exp": rng.uniform(-80, 80, n), "tanh": rng.uniform(-10, 10, n),
              "log": np.exp2(rng.uniform(-100, 100, n))}
    print(f"vecmath, {n:.0e} float32 elements (ms, best of >= {budget.repeat} runs)")
    print(f"  {'op':6} {'ours':>9} {'numpy':>9} {'numpy/ours':>11}")
    for op, x in inputs.items():
        x = x.astype(np.float32)
        out = np.empty_like(x)
        kernel = map_kernel(op, "float32")
        ours = best_time(lambda: kernel(x, out=out), budget)
        ref = best_time(lambda: getattr(np, op)(x, out=out), budget)
        print(f"  {op:6} {ours * 1e3:9.3f} {ref * 1e3:9.3f} {ref / ours:10.2f}x")


def bench_matmul(size: int, budget: Budget) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    out = np.empty((size, size), np.float32)
    kernel = matmul_kernel("float32")
    flops = 2.0 * size ** 3
    print(f"matmul {size}x{size} @ {size}x{size} float32 (best of >= {budget.repeat} runs)")
    rows = [(f"ours, {t} thread{'s' if t > 1 else ''}",
             best_time(lambda t=t: kernel(a, b, out=out, threads=t), budget))
            for t in sorted({1, os.cpu_count() or 1})]
    ref = best_time(lambda: np.matmul(a, b, out=out), budget)
    for name, t in rows + [("numpy", ref)]:
        print(f"  {name:18} {t * 1e3:9.1f} ms {flops / t / 1e9:7.1f} GFLOP/s"
              f"   numpy/this {ref / t:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=Budget.repeat)
    parser.add_argument("--seconds", type=float, default=Budget.seconds)
    args = parser.parse_args()
    budget = Budget(args.repeat, args.seconds)
    print(f"host: {llvm.get_host_cpu_name()}, {os.cpu_count()} cpus, numpy {np.__version__}")
    bench_vecmath(args.n, budget)
    bench_matmul(args.size, budget)


if __name__ == "__main__":
    main()
