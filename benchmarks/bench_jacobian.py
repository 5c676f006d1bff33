"""Compile time and steady run time of jitted Jacobians: jit(jacfwd(f)), jit(jacrev(f)) and
jit(hessian(g)) for 40, 480 and 1920 inputs.

    python -m benchmarks.bench_jacobian [--sizes 40 480 1920] [--timeout 300]

f(b) = tanh(a[:4] @ b).sum(0) with b of shape (n, 1) (four outputs before the sum, one
after), g(b) = sum(tanh(a[:4] @ b) ** 2) with b of shape (n,). A Jacobian is one batched jvp
or backward pass over the standard basis (compiler/transforms/ad/jacobian.py); the loop over
basis vectors it replaced staged one jvp (backward pass) per basis vector, so its compile
time grew with n. Each figure comes from a fresh interpreter with the compile cache off
(REDRAFT_CACHE=0), so that no transform or compiled code is reused: compile is the first
call (transform, staging, LLVM), run the best of 20 later calls.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

FORMS = ("jacfwd", "jacrev", "hessian")


def measure(form: str, n: int) -> dict:
    """One measurement, in this interpreter (run by `main` in a fresh one)."""
    import numpy as np

    import redraft
    import redraft.numpy as jnp

    a = jnp.asarray(np.random.default_rng(0).standard_normal((8, n)).astype(np.float32))

    def f(b):
        return jnp.tanh(a[:4] @ b).sum(0)

    def g(b):
        return jnp.sum(jnp.tanh(a[:4] @ b) ** 2)

    rng = np.random.default_rng(1)
    if form == "hessian":
        fn, b = redraft.hessian(g), rng.standard_normal(n).astype(np.float32)
    else:
        fn, b = getattr(redraft, form)(f), rng.standard_normal((n, 1)).astype(np.float32)
    b = jnp.asarray(b)
    jitted = redraft.jit(fn)
    start = time.perf_counter()
    np.asarray(jitted(b))
    compile_s = time.perf_counter() - start
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        np.asarray(jitted(b))
        runs.append(time.perf_counter() - start)
    return {"compile_s": compile_s, "run_s": min(runs)}


def fresh(form: str, n: int, timeout: float) -> dict | None:
    """measure() in a fresh interpreter with the compile cache off; None past `timeout`."""
    env = dict(os.environ, REDRAFT_CACHE="0")
    cmd = [sys.executable, "-m", "benchmarks.bench_jacobian", "--one", form, str(n)]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[40, 480, 1920])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--one", nargs=2, metavar=("FORM", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return
    print(f"{'form':<10}{'n':>6}{'compile':>12}{'run':>12}")
    for form in FORMS:
        for n in args.sizes:
            found = fresh(form, n, args.timeout)
            if found is None:
                print(f"{form:<10}{n:>6}{'> ' + str(int(args.timeout)) + ' s':>12}{'':>12}")
                continue
            print(f"{form:<10}{n:>6}{found['compile_s']:>11.2f}s"
                  f"{found['run_s'] * 1e3:>10.3f}ms", flush=True)


if __name__ == "__main__":
    main()
