"""First calls (compile included) of the training steps in fresh processes: redraft, JAX.

    python -m benchmarks.bench_first_call [--rounds N] [--only NAME] [--site DIR]
                                          [--no-kernel-library]

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

The thread pool and the matmul kernels come from the kernel library
(compiler/cache/kernel_library.py), which REDRAFT_CACHE=0 leaves on, as JAX's come compiled
with jaxlib; the unmeasured round builds it where it is missing. The table's `kernels`
column says where the measured rounds took them from ("library", or "compiled" with
--no-kernel-library, which sets REDRAFT_KERNEL_LIBRARY=0 as before it existed).
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
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
library = None
if {who!r} == "redraft":
    from redraft.compiler.cache import kernel_library
    library = kernel_library.jit_used_library()
    kernel_library.wait_for_builder()  # (the unmeasured round builds the library)
print(json.dumps([wall, cpu, library]))
"""


def first_call(name: str, who: str, site_dir: str | None, kernel_library: bool = True
               ) -> tuple[float, float, bool | None] | None:
    """(wall, cpu) seconds of one first call in a fresh process, and whether redraft took
    its kernels from the kernel library; None if it failed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, REDRAFT_CACHE="0", OPENBLAS_NUM_THREADS="1")
    if not kernel_library:
        env["REDRAFT_KERNEL_LIBRARY"] = "0"
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
    wall, cpu, library = json.loads(done.stdout.strip().splitlines()[-1])
    return wall, cpu, library


def main(argv=None) -> int:
    from benchmarks.bench_steps import WORKLOADS
    from benchmarks.common import format_seconds as fmt
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--site", default=None, help="a site-packages directory with JAX")
    parser.add_argument("--no-kernel-library", action="store_true",
                        help="compile the pool and kernels in each process "
                             "(REDRAFT_KERNEL_LIBRARY=0)")
    args = parser.parse_args(argv)
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = bool(args.site)
    who = ["redraft", "jax"] if have_jax else ["redraft"]
    library = not args.no_kernel_library
    print(f"{'step':<18}" + "".join(f"  {w + ' wall':>12}  {w + ' cpu':>11}" for w in who)
          + ("  cpu ours/jax" if have_jax else "") + "  kernels")
    for name in args.only or list(WORKLOADS):
        best: dict[str, list[float]] = {w: [float("inf"), float("inf")] for w in who}
        sources = set()
        for w in who:  # writes bytecode (and builds the kernel library); not measured
            first_call(name, w, args.site, library)
        for _ in range(args.rounds):
            for w in who:
                got = first_call(name, w, args.site, library)
                if got is not None:
                    best[w] = [min(a, b) for a, b in zip(best[w], got[:2])]
                    if w == "redraft" and got[2] is not None:
                        sources.add("library" if got[2] else "compiled")
        line = f"{name:<18}" + "".join(f"  {fmt(best[w][0]):>12}  {fmt(best[w][1]):>11}"
                                       for w in who)
        if have_jax:
            line += f"  {best['redraft'][1] / best['jax'][1]:12.2f}x"
        print(line + "  " + ("+".join(sorted(sources)) or "none"), flush=True)
    print("smallest of the rounds; each a fresh process with REDRAFT_CACHE=0; kernels: where "
          "redraft's pool and matmul kernels came from (the kernel library, or compiled).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
