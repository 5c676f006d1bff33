"""Collectives across MPI ranks (issue #15's figures):

- the all-reduce of a 10 MB float32 gradient across 2 ranks, as `pmap(lambda g: psum(g))`
  on each rank's one device, against mpi4py's own `Allreduce` of the same buffer into a
  fresh one (the target is ours / mpi4py <= 1.2);
- the data-parallel MLP step of examples/distributed/mlp_data_parallel.py (jit-compiled
  per-device body) with a fixed global batch on 1 and on 2 ranks (ms per step after the
  first, and the speed-up), beside what mpi4py alone takes to all-reduce its gradients.

    python -m benchmarks.bench_collectives [--repeat 20]      # launches mpirun itself

Needs mpi4py and mpirun (pip install 'redraft[mpi]'). Under mpirun the script measures;
run plainly, it starts the runs and prints their reports.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "distributed" / "mlp_data_parallel.py"
N_FLOATS = 10 * 1024 * 1024 // 4   # 10 MB of float32


def _under_mpirun() -> bool:
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))


def _psum(g):
    from redraft import lax
    return lax.psum(g, "ranks")


def measure_all_reduce(repeat: int) -> None:
    """Both all-reduces, alternating round by round; rank 0 prints the best times."""
    from mpi4py import MPI

    import redraft
    redraft.distributed.initialize()
    comm = MPI.COMM_WORLD
    host = np.random.RandomState(comm.Get_rank()).rand(N_FLOATS).astype(np.float32)
    grads = redraft.numpy.asarray(host[None])        # this rank's one device
    reduce = redraft.pmap(_psum, axis_name="ranks")
    expected = np.empty_like(host)
    comm.Allreduce(host, expected)
    np.testing.assert_allclose(np.asarray(reduce(grads))[0], expected, rtol=1e-6)

    def ours():
        reduce(grads)

    def theirs():
        comm.Allreduce(host, np.empty_like(host))

    best, median = _alternate(comm, MPI, repeat, {"redraft": ours, "mpi4py": theirs})
    if comm.Get_rank() == 0:
        ratio = best["redraft"] / best["mpi4py"]
        print(f"all-reduce of 10 MB float32 over {comm.Get_size()} ranks (best of {repeat}):")
        for name, label in (("redraft", "redraft pmap(psum)"), ("mpi4py", "mpi4py Allreduce")):
            print(f"  {label:20s} {best[name] * 1e3:8.2f} ms  (median "
                  f"{median[name] * 1e3:.2f} ms)")
        print(f"  ratio {ratio:.2f}  (target <= 1.2: {'met' if ratio <= 1.2 else 'NOT met'})")
    measure_gradient_all_reduce(comm, MPI, repeat)


def measure_gradient_all_reduce(comm, MPI, repeat: int) -> None:
    """The MLP's four gradient arrays all-reduced by mpi4py alone: the communication part
    of a 2-rank data-parallel step on this machine, for reading the scaling figures."""
    sys.path.insert(0, str(EXAMPLE.parent))
    from mlp_data_parallel import init_params
    arrays = [np.asarray(a) for layer in init_params() for a in layer]

    def exchange():
        for a in arrays:
            comm.Allreduce(a, np.empty_like(a))

    best, median = _alternate(comm, MPI, repeat, {"mpi4py": exchange})
    if comm.Get_rank() == 0:
        print(f"  the MLP's gradients (4 arrays, 407 KB) by mpi4py: best "
              f"{best['mpi4py'] * 1e3:.2f} ms, median {median['mpi4py'] * 1e3:.2f} ms")


def _alternate(comm, MPI, repeat: int, fns: dict) -> tuple[dict, dict]:
    """Best and median seconds of each of `fns` (the slowest rank's time), timed in
    alternation round by round, who goes first alternating too."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns.items())
    for k in range(repeat):
        for name, fn in (order if k % 2 == 0 else order[::-1]):
            comm.Barrier()
            start = time.perf_counter()
            fn()
            times[name].append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
    return ({name: min(ts) for name, ts in times.items()},
            {name: float(np.median(ts)) for name, ts in times.items()})


def _mpirun() -> str:
    beside = pathlib.Path(sys.executable).parent / "mpirun"
    found = str(beside) if beside.exists() else shutil.which("mpirun")
    if found is None:
        sys.exit("bench_collectives needs mpirun: pip install 'redraft[mpi]'")
    return found


def _launch(n: int, args: list[str]) -> str:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("REDRAFT_NUM_CPU_DEVICES", None)
    run = subprocess.run([_mpirun(), "-n", str(n), "--oversubscribe", sys.executable] + args,
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=900,
                         check=False)
    if run.returncode != 0:
        sys.exit(f"mpirun -n {n} failed:\n{run.stdout}\n{run.stderr}")
    return run.stdout


def _step_ms(report: str) -> float:
    line = next(line for line in report.splitlines() if "ms per step" in line)
    return float(line.split(":")[1].split("ms")[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure or _under_mpirun():
        measure_all_reduce(args.repeat)
        return
    print(_launch(2, [str(pathlib.Path(__file__).resolve()), "--measure",
                      "--repeat", str(args.repeat)]), end="")
    step = [str(EXAMPLE), "--steps", str(args.steps), "--batch", str(args.batch)]
    one, two = _step_ms(_launch(1, step)), _step_ms(_launch(2, step))
    threads = _step_ms(_threads(step, 2))
    print(f"data-parallel MLP step, global batch {args.batch} ({args.steps} steps):")
    print(f"  1 rank                 {one:8.1f} ms per step")
    print(f"  2 ranks                {two:8.1f} ms per step   speed-up {one / two:.2f}x "
          f"({os.cpu_count()} cores on this machine)")
    print(f"  1 process, 2 devices   {threads:8.1f} ms per step   speed-up {one / threads:.2f}x")


def _threads(args: list[str], devices: int) -> str:
    """The example in one process over `devices` CPU devices (one thread each)."""
    env = dict(os.environ, REDRAFT_NUM_CPU_DEVICES=str(devices))
    run = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=900, check=False)
    if run.returncode != 0:
        sys.exit(f"the example failed on {devices} devices:\n{run.stdout}\n{run.stderr}")
    return run.stdout


if __name__ == "__main__":
    main()
