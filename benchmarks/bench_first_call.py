"""First calls (compile included) of the training steps in fresh processes: redraft, JAX.

    python -m benchmarks.bench_first_call [--rounds N] [--only NAME] [--site DIR]

A first call measured inside a long benchmark run reuses what earlier steps compiled (the
matmul kernel, the thread pool, transformation rules), and redraft's persistent cache would
answer it from disk; so each figure here is a new Python process that imports its library,
builds the arguments and times one call of the jitted step (benchmarks/bench_steps.py),
with REDRAFT_CACHE=0. Processes for redraft and JAX alternate; the table shows the smallest
wall and CPU time (process time, all threads) over the rounds. On a shared machine the CPU
time is the steadier figure: the wall time also counts the time other users held the cores.
Children may write bytecode (PYTHONDONTWRITEBYTECODE is dropped, and one unmeasured round
writes it), as an installed JAX has its .pyc files: the lazy imports of the first call
otherwise compile redraft's modules from source each time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys, time
try:
    import benchmarks  # from PYTHONPATH under benchmarks/before_after.py
except ImportError:
    sys.path.append({root!r})
import numpy as np
import benchmarks.bench_steps as steps
make, rd_fn, jax_maker, _ = steps.WORKLOADS[{name!r}]
data = make(np.random.default_rng(0))
if {who!r} == "redraft":
    import redraft, redraft.numpy as rnp
    fn, args, block = redraft.jit(rd_fn), steps._tree(rnp.asarray, data), lambda x: x
else:
    import jax
    jax.config.update("jax_platforms", "cpu")
    fn = jax.jit(jax_maker(jax))
    args, block = steps._tree(jax.numpy.asarray, data), jax.block_until_ready
wall, cpu = time.perf_counter(), time.process_time()
block(fn(*args))
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""


def first_call(name: str, who: str, site_dir: str | None) -> tuple[float, float] | None:
    """(wall, cpu) seconds of one first call in a fresh process; None if it failed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, REDRAFT_CACHE="0", OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if site_dir:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (site_dir, env.get("PYTHONPATH")) if p)
    code = CHILD.format(root=root, name=name, who=who)
    # run outside the checkout, so that its redraft/ folder does not shadow the redraft
    # that PYTHONPATH names (benchmarks/before_after.py)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        print(f"  {who} {name}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return wall, cpu


def main(argv=None) -> int:
    from benchmarks.bench_steps import WORKLOADS
    from benchmarks.common import format_seconds as fmt
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--site", default=None, help="a site-packages directory with JAX")
    args = parser.parse_args(argv)
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = bool(args.site)
    who = ["redraft", "jax"] if have_jax else ["redraft"]
    print(f"{'step':<18}" + "".join(f"  {w + ' wall':>12}  {w + ' cpu':>11}" for w in who)
          + ("  cpu ours/jax" if have_jax else ""))
    for name in args.only or list(WORKLOADS):
        best: dict[str, list[float]] = {w: [float("inf"), float("inf")] for w in who}
        for w in who:  # writes bytecode; not measured
            first_call(name, w, args.site)
        for _ in range(args.rounds):
            for w in who:
                got = first_call(name, w, args.site)
                if got is not None:
                    best[w] = [min(a, b) for a, b in zip(best[w], got)]
        line = f"{name:<18}" + "".join(f"  {fmt(best[w][0]):>12}  {fmt(best[w][1]):>11}"
                                       for w in who)
        if have_jax:
            line += f"  {best['redraft'][1] / best['jax'][1]:12.2f}x"
        print(line, flush=True)
    print("smallest of the rounds; each a fresh process with REDRAFT_CACHE=0.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
