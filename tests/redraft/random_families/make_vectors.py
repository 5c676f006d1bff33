"""Regenerate jax_vectors.json: JAX's samples for the redraft.random families tested here.

Needs JAX (0.10.2 wrote the stored file; CPU, 32-bit mode), which is never a dependency of
redraft or its tests:

    python tests/redraft/random_families/make_vectors.py

Every case is a Python expression over `R` (the random module), `key` (a PRNG key made from
the case's seed), `np`, `jit` and `grad`; the tests evaluate the same text with redraft's
modules. Floats are stored as their bit patterns, so equality is exact. `ulp` is the largest
distance in units in the last place a case allows (0: bit-identical) and `rtol` a relative
tolerance for cases that are not bitwise reproducible, each with the reason in `note`.
"""
import json
import pathlib

import jax
import numpy as np
from jax import random as R

OUT = pathlib.Path(__file__).with_name("jax_vectors.json")

RSQRT = ("the parameter is traced, so XLA computes Marsaglia-Tsang's c = 1/(3 sqrt(d)) with "
         "the processor's approximate rsqrt refined by Newton steps (bits differ between "
         "Intel and AMD); redraft uses the correctly rounded value")
SUM = "XLA's order of summing the |g|**p terms and its power fusion are not repeated exactly"
LAPACK = ("the Cholesky factor comes from NumPy's LAPACK, JAX's from its own build: they "
          "differ in the last bit")
GRAD = "random_gamma_grad is summed in float64 here, by XLA's float32 algorithm in JAX"

ARR8 = "np.array([0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 20.0], np.float32)"
LIN64 = "np.linspace(0.1, 6.0, 64).astype(np.float32)"

CASES = [
    # continuous.py
    ("cauchy", "R.cauchy(key, (64,))"),
    ("lognormal", "R.lognormal(key, 0.7, (64,))"),
    ("lognormal_default", "R.lognormal(key, shape=(16,))"),
    ("lognormal_array", f"R.lognormal(key, {ARR8})"),
    ("pareto", "R.pareto(key, 2.5, (64,))"),
    ("pareto_array", f"R.pareto(key, {ARR8})"),
    ("maxwell", "R.maxwell(key, (64,))"),
    ("double_sided_maxwell", "R.double_sided_maxwell(key, 0.5, 2.0, (64,))"),
    ("double_sided_maxwell_params",
     "R.double_sided_maxwell(key, np.zeros(3, np.float32), np.ones((2, 1), np.float32), (4,))"),
    ("weibull_min", "R.weibull_min(key, 2.0, 1.5, (64,))"),
    ("weibull_min_array", f"R.weibull_min(key, 1.5, {ARR8}, (8,))"),
    ("wald", "R.wald(key, 1.5, (64,))"),
    ("wald_array", f"R.wald(key, {ARR8})"),
    # discrete.py
    ("geometric", "R.geometric(key, 0.3, (64,))"),
    ("geometric_array", "R.geometric(key, np.linspace(0.05, 0.95, 64).astype(np.float32))"),
    ("geometric_int16", "R.geometric(key, 0.1, (16,), dtype=np.int16)"),
    ("poisson_knuth", "R.poisson(key, 3.5, (64,))"),
    ("poisson_rejection", "R.poisson(key, 25.0, (64,))"),
    ("poisson_array", "R.poisson(key, np.linspace(0.0, 60.0, 64).astype(np.float32))"),
    ("binomial_inversion", "R.binomial(key, 5.0, 0.3, (64,))"),
    ("binomial_btrs", "R.binomial(key, 100.0, 0.4, (64,))"),
    ("binomial_arrays", "R.binomial(key, np.linspace(0.0, 300.0, 64).astype(np.float32), "
                        "np.linspace(0.0, 1.0, 64).astype(np.float32))"),
    ("multinomial", "R.multinomial(key, 20.0, np.array([0.2, 0.3, 0.5], np.float32), "
                    "shape=(8, 3))"),
    ("multinomial_large", "R.multinomial(key, 500.0, np.array([0.1, 0.2, 0.3, 0.4], "
                          "np.float32))"),
    # gamma.py
    ("gamma", "R.gamma(key, 2.5, (64,))"),
    ("gamma_small_a", "R.gamma(key, 0.3, (64,))"),
    ("gamma_array", f"R.gamma(key, {ARR8})"),
    ("gamma_traced", f"jit(lambda k, a: R.gamma(k, a))(key, {LIN64})", 16, 0, RSQRT),
    ("loggamma", "R.loggamma(key, 0.05, (64,))"),
    ("loggamma_traced", f"jit(lambda k, a: R.loggamma(k, a))(key, {LIN64})", 0, 1e-5, RSQRT),
    ("beta", "R.beta(key, 2.0, 3.0, (64,))"),
    ("dirichlet", "R.dirichlet(key, np.array([0.5, 1.0, 2.0], np.float32), (16,))"),
    ("chisquare", "R.chisquare(key, 3.0, (64,))"),
    ("f", "R.f(key, 3.0, 5.0, (64,))"),
    ("t", "R.t(key, 4.0, (64,))"),
    ("generalized_normal", "R.generalized_normal(key, 1.5, (64,))"),
    ("ball", "R.ball(key, 3, 2, (16,))", 4, 0, SUM),
    ("multivariate_normal",
     "R.multivariate_normal(key, np.array([1.0, 2.0, 3.0], np.float32), np.array("
     "[[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]], np.float32), (32,))",
     0, 1e-5, LAPACK),
    # float16: JAX draws 16-bit uniforms and rounds every step to float16
    ("gamma_f16", "R.gamma(key, 2.5, (32,), np.float16)"),
    ("loggamma_f16", "R.loggamma(key, 0.3, (32,), np.float16)"),
    ("beta_f16", "R.beta(key, 2.0, 3.0, (32,), np.float16)"),
    ("t_f16", "R.t(key, 3.0, (32,), np.float16)"),
    ("dirichlet_f16", "R.dirichlet(key, np.array([0.5, 1.0, 2.0], np.float32), (8,), "
                      "np.float16)"),
    ("maxwell_f16", "R.maxwell(key, (32,), np.float16)"),
    ("cauchy_f16", "R.cauchy(key, (32,), np.float16)"),
    ("gamma_grad", "grad(lambda a: R.gamma(key, a, (8,)).sum())(np.float32(2.5))",
     0, 1e-5, GRAD),
    ("gamma_grad_small", "grad(lambda a: R.gamma(key, a, (8,)).sum())(np.float32(0.4))",
     0, 1e-5, GRAD),
    ("loggamma_grad", "grad(lambda a: R.loggamma(key, a, (8,)).sum())(np.float32(0.7))",
     0, 1e-5, GRAD),
]
SEEDS = (0, 7)


def _bits(values: np.ndarray) -> list:
    if values.dtype.kind == "f":
        return values.view(f"uint{values.dtype.itemsize * 8}").ravel().tolist()
    return values.ravel().tolist()


def main() -> None:
    env = {"R": R, "np": np, "jit": jax.jit, "grad": jax.grad}
    cases = []
    for entry in CASES:
        name, expr = entry[:2]
        ulp, rtol, note = entry[2:] if len(entry) > 2 else (0, 0, "")
        for seed in SEEDS:
            env["key"] = R.PRNGKey(seed)
            values = np.asarray(eval(expr, env))
            cases.append({"name": f"{name}/{seed}", "seed": seed, "expr": expr,
                          "dtype": values.dtype.name, "shape": list(values.shape),
                          "bits": _bits(values), "ulp": ulp, "rtol": rtol, "note": note})
    OUT.write_text(json.dumps({"jax_version": jax.__version__,
                               "jax_threefry_partitionable": True, "cases": cases}) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
