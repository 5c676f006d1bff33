"""Timing helpers for the benchmarks: best-of-N or median timings and a comparison table.

Timings are the best (or the median) of several `timeit` repeats, each looping long enough
to be measured well; the implementations compared in one row are timed in alternation, round
by round, so that a burst of load on the machine hurts them alike instead of one of them
only.
"""
from __future__ import annotations

import os
import statistics
import time
import timeit
from dataclasses import dataclass

# REDRAFT_BENCH_SETTLE=seconds: a pause before each round, in which the threads of the library
# timed last go to sleep (XLA's workers spin a while after their work and, on two cores, take
# a core from whichever library is timed next). Default 0: back to back. A pause changes both
# sides: on this machine 5 ms raised redraft's two-thread products from ~300 to ~440 GFLOP/s
# and lowered most of XLA's, but raised every step's CPU time (a core woken from idle is slow).
SETTLE_SECONDS = float(os.environ.get("REDRAFT_BENCH_SETTLE", "0"))


@dataclass
class Row:
    """One line of a comparison table: seconds per call of each implementation."""
    name: str
    ours: float
    numpy: float
    jax: float | None = None
    target: float | None = None  # the largest acceptable ours / numpy ratio

    @property
    def ratio(self) -> float:
        return self.ours / self.numpy

    @property
    def meets_target(self) -> bool:
        return self.target is None or self.ratio <= self.target


def loops_for(timer: timeit.Timer, min_seconds: float) -> int:
    """How many loops make one `timer` repeat last at least `min_seconds` (1, 2, 5, 10...)."""
    number = 1
    while True:
        for factor in (1, 2, 5):
            loops = number * factor
            if timer.timeit(loops) >= min_seconds:
                return loops
        number *= 10


def compare(statements: dict[str, str], namespace: dict, repeat: int = 20,
            min_seconds: float = 0.01) -> dict[str, float]:
    """Seconds per run of each statement: best of `repeat` rounds, timed in alternation.
    Calibrating the loop counts first also warms up caches and lazy imports."""
    return {key: min(times) for key, times in
            compare_rounds(statements, namespace, repeat, min_seconds).items()}


def compare_rounds(statements: dict[str, str], namespace: dict, repeat: int = 20,
                   min_seconds: float = 0.01, clock=None) -> dict[str, list[float]]:
    """Seconds per run of each statement in each of `repeat` rounds, timed in alternation
    (for medians: on a shared machine the best round measures luck as much as code).
    `clock` replaces the wall clock (time.process_time: CPU seconds of all threads)."""
    timers = {key: timeit.Timer(stmt, globals=namespace, **({"timer": clock} if clock else {}))
              for key, stmt in statements.items()}
    loops = {key: loops_for(timer, min_seconds) for key, timer in timers.items()}
    rounds: dict[str, list[float]] = {key: [] for key in timers}
    for _ in range(repeat):
        for key, timer in timers.items():
            if SETTLE_SECONDS:
                time.sleep(SETTLE_SECONDS)
            rounds[key].append(timer.timeit(loops[key]) / loops[key])
    return rounds


def median(times: list[float]) -> float:
    """The median of per-round times."""
    return statistics.median(times)


def format_seconds(seconds: float | None) -> str:
    """A time with a unit that keeps 3-4 significant digits: ns, µs, ms or s."""
    if seconds is None:
        return "-"
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if seconds < 1000 * scale:
            return f"{seconds / scale:.1f} {unit}"
    return f"{seconds:.2f} s"


def print_table(rows: list[Row], with_jax: bool) -> None:
    """Print name, ours, numpy, (jax), ours/numpy and the target ratio of every row."""
    name_width = max(len(row.name) for row in rows)
    header = f"{'benchmark':<{name_width}}  {'ours':>10}  {'numpy':>10}"
    if with_jax:
        header += f"  {'jax':>10}"
    header += f"  {'ratio':>7}  {'target':>7}"
    print(header)
    print("-" * len(header))
    for row in rows:
        line = (f"{row.name:<{name_width}}  {format_seconds(row.ours):>10}  "
                f"{format_seconds(row.numpy):>10}")
        if with_jax:
            line += f"  {format_seconds(row.jax):>10}"
        target = "-" if row.target is None else f"<= {row.target:g}x"
        status = "" if row.target is None else ("  ok" if row.meets_target else "  MISSED")
        line += f"  {row.ratio:6.2f}x  {target:>7}{status}"
        print(line)
