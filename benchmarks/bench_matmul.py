"""float32 matrix products in GFLOP/s: redraft's jit against NumPy (OpenBLAS) and XLA, and
against this machine's FMA peak.

    python -m benchmarks.bench_matmul [--quick] [--cpu] [--site DIR]

Rows are the products of the MNIST MLP step (784-1024-1024-10, batch 128) in the layouts
its forward and backward passes use (N = stored as used, T = the transpose of a stored
array: `x @ w`, `g @ w.T`, `x.T @ g`) and squares from 256 to 2000. Each figure is the best
of rounds timed in alternation (benchmarks/common.py) of a jitted `a @ b` (or `a @ b.T`...).

The FMA peak is measured, not looked up: an LLVM loop of 24 independent `llvm.fma` chains
on the host's widest vectors (no loads or stores) runs on one core; its GFLOP/s = chains x
lanes x 2 flops x iterations / CPU seconds of its thread, and the machine's peak is that
times the cores. (Products are timed by the wall clock, so on a loaded machine the
fraction of peak understates what the code can do; compare the columns of one run.) The
CPU's name and features come from llvmlite (the code is compiled for them).

`--cpu` runs every library on one thread (REDRAFT_NUM_THREADS, OPENBLAS_NUM_THREADS and
XLA's flags set before they load, by re-running this module) and times CPU seconds of the
process: on a machine whose other core is taken by other users the wall clock of a
two-thread product measures the scheduler, this measures each library's code on one core
(against one core's peak).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import site
import sys
import time

# OpenBLAS's threads spin for ~2^28 cycles (0.1 s) after each product before they sleep; in
# rounds timed in alternation they held the second core through the next library's round
# (redraft's 128x1024 @ 1024x1024 after NumPy's: 235 GFLOP/s, after XLA's or alone: 420-450).
# 2^4 cycles makes them sleep at once and costs NumPy ~2% here. Set before NumPy loads it.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

CHAINS = 24
ITERATIONS = 20_000_000

MLP_PRODUCTS = [  # (label, m, k, n, layout)
    ("fwd  x @ W1      ", 128, 784, 1024, "NN"),
    ("fwd  h1 @ W2     ", 128, 1024, 1024, "NN"),
    ("fwd  h2 @ W3     ", 128, 1024, 10, "NN"),
    ("bwd  g3 @ W3.T   ", 128, 10, 1024, "NT"),
    ("bwd  h2.T @ g3   ", 1024, 128, 10, "TN"),
    ("bwd  g2 @ W2.T   ", 128, 1024, 1024, "NT"),
    ("bwd  h1.T @ g2   ", 1024, 128, 1024, "TN"),
    ("bwd  x.T @ g1    ", 784, 128, 1024, "TN"),
]
SQUARES = [256, 512, 1000, 2000]


def fma_peak_kernel():
    """A compiled `void peak(i64 iterations)` running CHAINS independent vector FMAs."""
    from llvmlite import ir

    from redraft.kernels.jit_host import compile_module, host_vector_bits
    lanes = host_vector_bits() // 32
    vec = ir.VectorType(ir.FloatType(), lanes)
    module = ir.Module(name="fma_peak")
    fma = ir.Function(module, ir.FunctionType(vec, [vec] * 3), name=f"llvm.fma.v{lanes}f32")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(64)]), name="peak")
    sink = ir.GlobalVariable(module, vec, name="sink")
    sink.initializer = ir.Constant(vec, None)
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(ir.IntType(64))
    i.add_incoming(ir.Constant(ir.IntType(64), 0), entry)
    accs = [b.phi(vec) for _ in range(CHAINS)]
    x = ir.Constant(vec, [ir.Constant(ir.FloatType(), 0.999999)] * lanes)
    y = ir.Constant(vec, [ir.Constant(ir.FloatType(), 1e-7)] * lanes)
    new = [b.call(fma, [acc, x, y]) for acc in accs]
    for k, (acc, value) in enumerate(zip(accs, new)):
        acc.add_incoming(ir.Constant(vec, [ir.Constant(ir.FloatType(), float(k))] * lanes),
                         entry)
        acc.add_incoming(value, loop)
    i_next = b.add(i, ir.Constant(ir.IntType(64), 1))
    i.add_incoming(i_next, loop)
    b.cbranch(b.icmp_signed("<", i_next, fn.args[0]), loop, done)
    b.position_at_end(done)
    total = new[0]
    for value in new[1:]:
        total = b.fadd(total, value)
    b.store(total, sink)
    b.ret_void()
    compiled = compile_module(module, opt_level=2, vectorise=False)
    return compiled.function("peak", None, [ctypes.c_int64]), lanes


def measure_peak() -> tuple[float, int]:
    """GFLOP/s of one core: the FMA loop's flops over the CPU time of its thread (best of
    5), so time the scheduler gives to other processes on a shared machine does not count."""
    peak, lanes = fma_peak_kernel()
    flops = CHAINS * lanes * 2 * ITERATIONS
    peak(1000)
    best = 0.0
    for _ in range(5):
        start = time.thread_time()
        peak(ITERATIONS)
        best = max(best, flops / (time.thread_time() - start) / 1e9)
    return best, lanes


def operands(m: int, k: int, n: int, layout: str, rng) -> tuple[np.ndarray, np.ndarray, str]:
    """Stored arrays and the expression that multiplies them in `layout`."""
    a = rng.standard_normal((m, k) if layout[0] == "N" else (k, m), dtype=np.float32)
    b = rng.standard_normal((k, n) if layout[1] == "N" else (n, k), dtype=np.float32)
    expr = ("a" if layout[0] == "N" else "a.T") + " @ " + ("b" if layout[1] == "N" else "b.T")
    return a, b, expr


def rd_nn(a, b):
    return a @ b


def rd_nt(a, b):
    return a @ b.T


def rd_tn(a, b):
    return a.T @ b


def rd_tt(a, b):
    return a.T @ b.T


RD_FUNCTIONS = {"NN": rd_nn, "NT": rd_nt, "TN": rd_tn, "TT": rd_tt}


ONE_THREAD = {"REDRAFT_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def settle() -> None:
    """Wait for redraft's background saves to the persistent cache: a first call's save
    (object code and a link, hundreds of ms of CPU) would otherwise run during the timed
    rounds and count in their CPU seconds, whichever library they time."""
    from redraft.compiler.cache import jit_cache
    jit_cache.flush()


def run(rows, repeat: int, jax, clock=None) -> list[dict]:
    import redraft
    import redraft.numpy as rnp
    from benchmarks.common import compare_rounds
    rng = np.random.default_rng(0)
    results = []
    for label, m, k, n, layout in rows:
        a, b, expr = operands(m, k, n, layout, rng)
        ours = redraft.jit(RD_FUNCTIONS[layout])
        ra, rb = rnp.asarray(a), rnp.asarray(b)
        out = np.asarray(ours(ra, rb))
        np.testing.assert_allclose(out, eval(expr), rtol=2e-3, atol=2e-3 * np.sqrt(k))
        settle()
        ns = {"ours": ours, "ra": ra, "rb": rb, "a": a, "b": b}
        stmts = {"ours": "ours(ra, rb)", "numpy": expr}
        if jax is not None:
            ns.update(theirs=jax.jit(RD_FUNCTIONS[layout]), ja=jax.numpy.asarray(a),
                      jb=jax.numpy.asarray(b), jax=jax)
            stmts["jax"] = "jax.block_until_ready(theirs(ja, jb))"
        times = {key: min(t) for key, t in
                 compare_rounds(stmts, ns, repeat, min_seconds=0.02, clock=clock).items()}
        flops = 2.0 * m * n * k
        results.append({"label": label, "shape": f"{m}x{k} @ {k}x{n} {layout}",
                        **{key: flops / t / 1e9 for key, t in times.items()}})
        print(f"  {label.strip()}: done", file=sys.stderr)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--site", default=None, help="add this site-packages directory")
    parser.add_argument("--cpu", action="store_true",
                        help="every library on one thread, timed by the process's CPU seconds")
    args = parser.parse_args(argv)
    if args.cpu and any(os.environ.get(k) != v for k, v in ONE_THREAD.items()):
        os.environ.update(ONE_THREAD)  # before NumPy's BLAS and XLA start their threads
        os.execv(sys.executable, [sys.executable, "-m", "benchmarks.bench_matmul",
                                  *(sys.argv[1:] if argv is None else argv)])
    if args.site:
        site.addsitedir(args.site)
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    cores = len(os.sched_getaffinity(0))
    one, lanes = measure_peak()
    every = one * (1 if args.cpu else cores)
    rows = MLP_PRODUCTS + [(f"square {s:<11}", s, s, s, "NN") for s in SQUARES]
    results = run(rows, 5 if args.quick else 15, jax, time.process_time if args.cpu else None)
    print(f"host CPU (llvmlite): {llvm.get_host_cpu_name()}, {cores} cores; measured FMA "
          f"peak {one:.0f} GFLOP/s a core ({one / 2 / lanes:.2f} {32 * lanes}-bit FMAs a ns), "
          f"{every:.0f} on all {cores}")
    header = (f"{'product':<18} {'shape':<24} {'ours':>7} {'numpy':>7} {'xla':>7} "
              f"{'ours/peak':>9}")
    print(header + ("   (GFLOP/s per CPU second, one thread each; peak = one core)"
                    if args.cpu else "   (GFLOP/s; peak = all cores)"))
    print("-" * len(header))
    for r in results:
        xla = f"{r['jax']:7.0f}" if "jax" in r else f"{'-':>7}"
        print(f"{r['label']:<18} {r['shape']:<24} {r['ours']:7.0f} {r['numpy']:7.0f} {xla} "
              f"{r['ours'] / every:9.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
