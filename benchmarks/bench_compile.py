"""Compiled redraft (the LLVM backend) against NumPy, and JAX when it is importable, on the
seed workloads: selu, grad and hessian of sum_logistic, vmap of apply_matrix, norm, the
decay loop, a 2000^2 dot, an MLP training step, dispatch of a tiny call, compile time.

    python -m benchmarks.bench_compile [--quick] [--site DIR]

--site adds a site-packages directory first (so an interpreter that has JAX, such as
/tmp/jaxenv/bin/python, can import redraft from this checkout's .venv). Each figure is the
best of several rounds timed in alternation (benchmarks/common.py). The `jax ref` column
holds the JAX CPU figures measured on this kind of machine that the backend is meant to
beat; `jax` is measured here when JAX imports.
"""
from __future__ import annotations

import argparse
import site
import sys
import time
import timeit
from dataclasses import dataclass

import numpy as np

JAX_REFERENCE = {"selu": 204e-6, "decay loop": 387e-6, "norm": 149e-6, "dot 2000^2": 40e-3,
                 "mlp step": 548e-6, "dispatch a+b f32[3]": 4.1e-6, "compile selu": 25e-3}


@dataclass
class Result:
    name: str
    ours: float | None
    numpy: float | None
    jax: float | None = None
    note: str = ""


# ---- the workloads, written once for each library ----------------------------------------------

def selu(np_, x, alpha=1.67, lmbda=1.05):
    return lmbda * np_.where(x > 0, x, alpha * np_.exp(x) - alpha)


def sum_logistic(np_, x):
    return np_.sum(1.0 / (1.0 + np_.exp(-x)))


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def decay(x):
    for i in range(10):
        x -= 0.1 * x
    return x


def mlp_loss(np_, params, x, y):
    (w1, b1), (w2, b2) = params
    h = np_.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return np_.mean((logits - y) ** 2)


def numpy_mlp_step(params, x, y, lr=0.01):
    """The same step with the gradient written out by hand."""
    (w1, b1), (w2, b2) = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    g_logits = 2.0 * (logits - y) / logits.size
    g_w2, g_b2 = h.T @ g_logits, g_logits.sum(0)
    g_pre = (g_logits @ w2.T) * (1.0 - h * h)
    g_w1, g_b1 = x.T @ g_pre, g_pre.sum(0)
    return [(w1 - lr * g_w1, b1 - lr * g_b1), (w2 - lr * g_w2, b2 - lr * g_b2)]


def numpy_grad_sum_logistic(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1 - s)


def numpy_hessian_sum_logistic(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return np.diag(s * (1 - s) * (1 - 2 * s))


# ---- redraft versions (module-level functions: redraft reads their source) ----------------------

def rd_selu(x, alpha=1.67, lmbda=1.05):
    import redraft.numpy as jnp
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def rd_sum_logistic(x):
    import redraft.numpy as jnp
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def rd_mlp_loss(params, x, y):
    import redraft.numpy as jnp
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return jnp.mean((logits - y) ** 2)


def rd_mlp_step(params, x, y):
    import redraft
    grads = redraft.grad(rd_mlp_loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def rd_add(a, b):
    return a + b


def rd_axpy(a, s):
    return a * s + 1.0


def rd_lsq(w, x, y):
    import redraft.numpy as jnp
    return jnp.sum((x @ w - y) ** 2)


def rd_sin_cube(x):
    import redraft.numpy as jnp
    return jnp.sin(x) * x ** 3


def rd_matmul(a, b):
    return a @ b


# ---- timing ------------------------------------------------------------------------------------

def timed(statements: dict, namespace: dict, repeat: int) -> dict:
    """Best seconds per call of each statement (None where the statement is None)."""
    from benchmarks.common import compare
    live = {k: v for k, v in statements.items() if v is not None}
    times = compare(live, namespace, repeat=repeat) if live else {}
    return {k: times.get(k) for k in statements}


def backend_of(jitted) -> str:
    compiled = next(iter(jitted._cache.values()), None)
    return compiled.backend if compiled is not None else "?"


def run(repeat: int, have_redraft: bool, jax) -> list[Result]:
    rng = np.random.default_rng(0)
    ns: dict = {"np": np}
    data = {
        "x": rng.standard_normal(1_000_000, dtype=np.float32),
        "x3": np.arange(3.0, dtype=np.float32),
        "mat": rng.standard_normal((150, 100), dtype=np.float32),
        "bx": rng.standard_normal((10, 100), dtype=np.float32),
        "X": rng.standard_normal((10_000, 10), dtype=np.float32),
        "D": rng.standard_normal((2000, 2000), dtype=np.float32),
        "A": rng.standard_normal((2000, 2000), dtype=np.float32),
        "B": rng.standard_normal((2000, 2000), dtype=np.float32),
        "params": [(rng.standard_normal((784, 512), dtype=np.float32) * 0.05,
                    np.zeros(512, np.float32)),
                   (rng.standard_normal((512, 10), dtype=np.float32) * 0.05,
                    np.zeros(10, np.float32))],
        "xb": rng.standard_normal((128, 784), dtype=np.float32),
        "yb": rng.standard_normal((128, 10), dtype=np.float32),
        "a3": np.ones(3, np.float32), "b3": np.ones(3, np.float32),
        "lw": rng.standard_normal(10, dtype=np.float32),
        "lx": rng.standard_normal((32, 10), dtype=np.float32),
        "ly": rng.standard_normal(32, dtype=np.float32),
    }
    ns.update({f"n_{k}": v for k, v in data.items()})
    ns.update(n_selu=lambda x: selu(np, x), n_norm=norm, n_decay=decay,
              n_mlp=numpy_mlp_step, n_hess=numpy_hessian_sum_logistic,
              n_grad=numpy_grad_sum_logistic)
    stmts: dict[str, dict] = {
        "selu": {"numpy": "n_selu(n_x)"},
        "grad sum_logistic": {"numpy": "n_grad(n_x)"},
        "hessian sum_logistic f32[3]": {"numpy": "n_hess(n_x3)"},
        "vmap apply_matrix": {"numpy": "n_bx @ n_mat.T"},
        "norm": {"numpy": "n_norm(n_X)"},
        "decay loop": {"numpy": "n_decay(n_D)"},
        "dot 2000^2": {"numpy": "n_A @ n_B"},
        "mlp step": {"numpy": "n_mlp(n_params, n_xb, n_yb)"},
        "dispatch a+b f32[3]": {"numpy": "n_a3 + n_b3"},
        "dispatch a*2.0+1 (Python float)": {"numpy": "n_a3 * 2.0 + 1.0"},
        "jit grad lsq 32x10, NumPy args": {"numpy": "2 * n_lx.T @ (n_lx @ n_lw - n_ly)"},
        "grad(jit(grad(jit(grad(f)))))": {},
        "jit(grad(grad(grad(f))))": {},
    }
    notes: dict[str, str] = {}
    if have_redraft:
        _add_redraft(ns, data, stmts, notes)
    if jax is not None:
        _add_jax(jax, ns, data, stmts)
    results = []
    for name, row in stmts.items():
        t = timed({k: row.get(k) for k in ("ours", "numpy", "jax")}, ns, repeat)
        results.append(Result(name, t["ours"], t["numpy"], t["jax"], notes.get(name, "")))
        print(f"  {name}: done", file=sys.stderr)
    results.append(_compile_times(have_redraft, jax, data))
    if have_redraft:
        results.append(_runner_dispatch(ns, repeat))
    return results


def _add_redraft(ns: dict, data: dict, stmts: dict, notes: dict) -> None:
    import redraft
    import redraft.numpy as jnp
    from redraft.jit import Jitted
    arrays = {k: jnp.asarray(v) for k, v in data.items() if isinstance(v, np.ndarray)}
    arrays["params"] = [(jnp.asarray(w), jnp.asarray(b)) for w, b in data["params"]]
    ns.update({f"r_{k}": v for k, v in arrays.items()})
    mat = arrays["mat"]

    def apply_matrix(v):
        return jnp.dot(mat, v)

    def vmapped(bx):
        return redraft.vmap(apply_matrix)(bx)

    jitted = {
        "selu": (redraft.jit(rd_selu), "r_x"),
        "grad sum_logistic": (redraft.jit(redraft.grad(rd_sum_logistic)), "r_x"),
        "hessian sum_logistic f32[3]": (
            redraft.jit(redraft.jacfwd(redraft.jacrev(rd_sum_logistic))), "r_x3"),
        "vmap apply_matrix": (redraft.jit(vmapped), "r_bx"),
        "norm": (redraft.jit(norm), "r_X"),
        "decay loop": (redraft.jit(decay), "r_D"),
        "dot 2000^2": (redraft.jit(rd_matmul), "r_A, r_B"),
        "mlp step": (redraft.jit(rd_mlp_step), "r_params, r_xb, r_yb"),
        "dispatch a+b f32[3]": (redraft.jit(rd_add), "r_a3, r_b3"),
        "dispatch a*2.0+1 (Python float)": (redraft.jit(rd_axpy), "r_a3, 2.0"),
        "jit grad lsq 32x10, NumPy args": (redraft.jit(redraft.grad(rd_lsq)),
                                           "n_lw, n_lx, n_ly"),
        "grad(jit(grad(jit(grad(f)))))": (redraft.grad(redraft.jit(redraft.grad(redraft.jit(
            redraft.grad(rd_sin_cube))))), "0.7"),
        "jit(grad(grad(grad(f))))": (redraft.jit(redraft.grad(redraft.grad(redraft.grad(
            rd_sin_cube)))), "0.7"),
    }
    for k, (fn, args) in enumerate(jitted.values()):
        ns[f"f{k}"] = fn
    for k, (name, (fn, args)) in enumerate(jitted.items()):
        eval(f"f{k}({args})", ns)  # compile now
        stmts[name]["ours"] = f"f{k}({args})"
        backend = backend_of(fn) if isinstance(fn, Jitted) else "llvm"
        if backend != "llvm":
            notes[name] = f"ran on the {backend} backend"


def _add_jax(jax, ns: dict, data: dict, stmts: dict) -> None:
    import jax.numpy as jjnp
    arrays = {k: jjnp.asarray(v) for k, v in data.items() if isinstance(v, np.ndarray)}
    arrays["params"] = [(jjnp.asarray(w), jjnp.asarray(b)) for w, b in data["params"]]
    ns.update({f"j_{k}": v for k, v in arrays.items()})
    mat = arrays["mat"]

    def step(params, x, y):
        grads = jax.grad(lambda p: mlp_loss(jjnp, p, x, y))(params)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]

    fns = {
        "selu": (jax.jit(lambda x: selu(jjnp, x)), "j_x"),
        "grad sum_logistic": (jax.jit(jax.grad(lambda x: sum_logistic(jjnp, x))), "j_x"),
        "hessian sum_logistic f32[3]": (
            jax.jit(jax.jacfwd(jax.jacrev(lambda x: sum_logistic(jjnp, x)))), "j_x3"),
        "vmap apply_matrix": (jax.jit(jax.vmap(lambda v: jjnp.dot(mat, v))), "j_bx"),
        "norm": (jax.jit(norm), "j_X"),
        "decay loop": (jax.jit(decay), "j_D"),
        "dot 2000^2": (jax.jit(lambda a, b: a @ b), "j_A, j_B"),
        "mlp step": (jax.jit(step), "j_params, j_xb, j_yb"),
        "dispatch a+b f32[3]": (jax.jit(lambda a, b: a + b), "j_a3, j_b3"),
        "dispatch a*2.0+1 (Python float)": (jax.jit(lambda a, s: a * s + 1.0), "j_a3, 2.0"),
        "jit grad lsq 32x10, NumPy args": (
            jax.jit(jax.grad(lambda w, x, y: jjnp.sum((x @ w - y) ** 2))), "n_lw, n_lx, n_ly"),
        "grad(jit(grad(jit(grad(f)))))": (jax.grad(jax.jit(jax.grad(jax.jit(jax.grad(
            lambda x: jjnp.sin(x) * x ** 3))))), "0.7"),
        "jit(grad(grad(grad(f))))": (jax.jit(jax.grad(jax.grad(jax.grad(
            lambda x: jjnp.sin(x) * x ** 3)))), "0.7"),
    }
    for k, (name, (fn, args)) in enumerate(fns.items()):
        ns[f"g{k}"] = fn
        eval(f"g{k}({args})", ns)
        stmts[name]["jax"] = f"jax.block_until_ready(g{k}({args}))"
    ns["jax"] = jax


def _compile_times(have_redraft: bool, jax, data: dict) -> Result:
    """First call of a fresh jit(selu): staging, passes and code generation (best of 5)."""
    x = data["x"]
    ours = theirs = None
    if have_redraft:
        import redraft
        import redraft.numpy as jnp
        xr = jnp.asarray(x)
        ours = min(_first_call(lambda: redraft.jit(rd_selu), xr) for _ in range(5))
    if jax is not None:
        import jax.numpy as jjnp
        xj = jjnp.asarray(x)
        theirs = min(_first_call(lambda: jax.jit(lambda v: selu(jjnp, v)), xj, jax)
                     for _ in range(5))
    return Result("compile selu", ours, None, theirs, "first call of a fresh jit")


def _first_call(make, x, jax=None) -> float:
    start = time.perf_counter()
    out = make()(x)
    if jax is not None:
        jax.block_until_ready(out)
    return time.perf_counter() - start


def _runner_dispatch(ns: dict, repeat: int) -> Result:
    """The backend's own share of a tiny call: the runner on host buffers."""
    fn = ns["f8"]
    compiled = next(iter(fn._cache.values()))
    bufs = [ns["r_a3"]._buf, ns["r_b3"]._buf]
    runner = compiled.runner
    loops = 200_000
    best = min(timeit.repeat(lambda: runner(bufs), number=loops, repeat=max(3, repeat // 4)))
    return Result("dispatch (runner only)", best / loops, None, None,
                  "checks, np.empty, ctypes call")


# ---- report ------------------------------------------------------------------------------------

def print_results(results: list[Result]) -> None:
    from benchmarks.common import format_seconds
    width = max(len(r.name) for r in results)
    header = (f"{'workload':<{width}}  {'ours':>10}  {'numpy':>10}  {'jax':>10}  "
              f"{'jax ref':>10}  {'numpy/ours':>10}  {'jax ref/ours':>12}")
    print(header)
    print("-" * len(header))
    for r in results:
        ref = JAX_REFERENCE.get(r.name)
        vs_np = f"{r.numpy / r.ours:9.2f}x" if r.ours and r.numpy else "-"
        vs_jax = f"{ref / r.ours:11.2f}x" if r.ours and ref else "-"
        print(f"{r.name:<{width}}  {format_seconds(r.ours):>10}  {format_seconds(r.numpy):>10}"
              f"  {format_seconds(r.jax):>10}  {format_seconds(ref):>10}  {vs_np:>10}  "
              f"{vs_jax:>12}  {r.note}")
    print("numpy/ours and jax ref/ours above 1 mean redraft is faster.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--site", default=None, help="add this site-packages directory")
    parser.add_argument("--no-redraft", action="store_true", help="time NumPy and JAX only")
    args = parser.parse_args(argv)
    if args.site:
        site.addsitedir(args.site)
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
    have_redraft = not args.no_redraft
    if have_redraft:
        try:
            import redraft  # noqa: F401
        except ImportError as e:
            print(f"redraft is not importable here ({e}); timing NumPy/JAX only",
                  file=sys.stderr)
            have_redraft = False
    results = run(5 if args.quick else 15, have_redraft, jax)
    print_results(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
