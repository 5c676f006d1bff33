"""Ahead-of-time builds and the persistent compile cache, measured.

    python -m benchmarks.bench_aot

1. Per-call cost of a built function (the generated package, NumPy arrays in and out)
   against the jitted one (redraft Arrays, jit's hot path), on a tiny and a 10^5 call.
2. Compile time of a new process's first call with a cold and with a warm persistent
   cache, for the MLP training step of bench_compile and the quickstart's functions:
   each measured in a fresh interpreter as (first call) - (a later call).
3. Wall time of `redraft build` on examples/aot/physics.py from scratch.
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.common import compare, format_seconds

ROOT = pathlib.Path(__file__).resolve().parent.parent

CALLS = '''
import redraft
import redraft.numpy as jnp


@redraft.export("f32[3],f32[3]")
def add(a, b):
    return a + b


@redraft.export("f32[100000]")
def selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
'''

FIRST_CALL = '''
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import redraft
import redraft.numpy as jnp
imported = time.perf_counter() - t0
which = sys.argv[1]
if which == "mlp step":
    from benchmarks.bench_compile import rd_mlp_step as fn
    rng = np.random.default_rng(0)
    f32 = lambda *s: jnp.asarray(rng.standard_normal(s).astype(np.float32))
    args = ([(f32(784, 512), f32(512)), (f32(512, 10), f32(10))], f32(128, 784), f32(128, 10))
else:
    sys.path.insert(0, {examples!r})
    import quickstart
    fn = quickstart.selu if which == "quickstart selu" else redraft.grad(
        quickstart.sum_logistic)
    args = (jnp.arange(1000.0),)
f = redraft.jit(fn)
t = time.perf_counter(); f(*args); first = time.perf_counter() - t
runs = []
for _ in range(5):
    t = time.perf_counter(); f(*args); runs.append(time.perf_counter() - t)
print(json.dumps({{"first": first, "call": min(runs), "import": imported}}))
'''


def per_call() -> None:
    os.environ["REDRAFT_CACHE"] = "0"  # the jit as compiled in-process, no background saves
    import redraft
    import redraft.numpy as jnp
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "benchcalls.py"
        src.write_text(CALLS)
        from redraft.compiler.aot.build import build
        build(src, pathlib.Path(tmp) / "out", log=lambda _: None)
        spec = importlib.util.spec_from_file_location(
            "benchcalls_built", pathlib.Path(tmp) / "out" / "benchcalls" / "__init__.py")
        built = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(built)
        module = sys.modules["benchcalls"]
        a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
        x = np.linspace(-3, 3, 100_000, dtype=np.float32)
        ns = {"built": built, "jadd": redraft.jit(module.add), "jselu": redraft.jit(module.selu),
              "a": a, "b": b, "x": x, "ra": jnp.asarray(a), "rb": jnp.asarray(b),
              "rx": jnp.asarray(x)}
        times = compare({"built add": "built.add(a, b)", "jit add": "jadd(ra, rb)",
                         "built selu": "built.selu(x)", "jit selu": "jselu(rx)"}, ns,
                        repeat=50)
    print("per call (best of 50 rounds, timed in alternation):")
    for name in ("add f32[3]", "selu f32[100000]"):
        key = name.split()[0]
        print(f"  {name:<18} built {format_seconds(times['built ' + key]):>10}   "
              f"jit {format_seconds(times['jit ' + key]):>10}")


def first_calls() -> None:
    script = FIRST_CALL.format(root=str(ROOT), examples=str(ROOT / "examples"))
    print("new process, first call (compile = first - later call):")
    for which in ("mlp step", "quickstart selu", "quickstart grad(sum_logistic)"):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, REDRAFT_CACHE="1", REDRAFT_CACHE_DIR=cache)
            rows = []
            for label in ("cold", "warm"):
                out = subprocess.run([sys.executable, "-c", script, which], env=env,
                                     capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append(f"{label} {format_seconds(r['first'] - r['call'])}")
            print(f"  {which:<30} " + ", ".join(rows)
                  + f"   (import redraft {format_seconds(r['import'])})")


def build_time() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, REDRAFT_CACHE_DIR=tmp)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "redraft.cli", "build",
                        str(ROOT / "examples" / "aot" / "physics.py"), "--out",
                        str(pathlib.Path(tmp) / "out")], env=env, check=True,
                       capture_output=True)
        print(f"redraft build examples/aot/physics.py from scratch: "
              f"{time.perf_counter() - start:.1f} s (wall, including the interpreter)")


def main() -> None:
    first_calls()
    per_call()
    build_time()


if __name__ == "__main__":
    main()
