"""The device runtime's own cost: dispatching a jitted call on GPU arrays, on the emulated
GPU (REDRAFT_EMULATE_GPU, set here), against the same call on host arrays.

    python -m benchmarks.bench_device

"queue" is the call alone (it returns once the launch sequence is queued), "round trip"
waits for the result too (block_until_ready). The emulated kernels run on this CPU, so only
the dispatch figures say anything about a real GPU: they are the Python-side cost per call
that a GPU's launches would overlap with.
"""
from __future__ import annotations

import os
import time

import numpy as np

from benchmarks.common import compare, format_seconds


def scale(x):
    return x * 2.0 + 1.0


def main() -> None:
    os.environ["REDRAFT_EMULATE_GPU"] = "1"
    import redraft
    gpu = redraft.devices("gpu")[0]
    f = redraft.jit(scale)
    ns: dict = {"f": f}
    for n in (3, 100_000):
        host = np.ones(n, np.float32)
        ns["h"], ns["d"] = redraft.jit(lambda x: x)(host), redraft.device_put(host, gpu)
        f(ns["h"]), f(ns["d"]).block_until_ready()
        times = compare({"host": "f(h)", "round trip": "f(d).block_until_ready()"}, ns,
                        repeat=10)
        times["queue"] = queue_time(f, ns["d"])
        print(f"f32[{n}]: " + ", ".join(f"{k} {format_seconds(v)}" for k, v in times.items()))


def queue_time(f, x, calls: int = 50, rounds: int = 5) -> float:
    """Seconds per call to queue `calls` calls, best of `rounds`; the queue is drained
    between rounds (and before the other timings), so it never grows without bound."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            y = f(x)
        best = min(best, (time.perf_counter() - start) / calls)
        y.block_until_ready()
    return best


if __name__ == "__main__":
    main()
