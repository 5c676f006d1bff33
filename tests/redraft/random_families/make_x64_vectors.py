"""Regenerate jax_x64_vectors.json: JAX's samples of the redraft.random families with x64 on.

Needs JAX (0.10.2 wrote the stored file; CPU), which is never a dependency of redraft or its
tests:

    python tests/redraft/random_families/make_x64_vectors.py

The format is jax_vectors.json's (make_vectors.py): a Python expression per case over `R`,
`key`, `np`, `jit`, `grad` and `vmap`, floats stored as their bit patterns. JAX runs with
`jax_enable_x64=True`, so defaults are float64/int64 and the samplers' float steps run in
float64. Every case is stored exactly; the ulp a case may differ by, and why, are kept in
test_random_x64_families.py (TOLERANCES).
"""
import json
import pathlib

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from jax import random as R  # noqa: E402

OUT = pathlib.Path(__file__).with_name("jax_x64_vectors.json")

ARR8 = "np.array([0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 20.0])"
LIN64 = "np.linspace(0.1, 6.0, 64)"

CASES = [
    # continuous.py
    ("cauchy", "R.cauchy(key, (64,))"),
    ("cauchy_f32", "R.cauchy(key, (16,), np.float32)"),
    ("lognormal", "R.lognormal(key, 0.7, (64,))"),
    ("lognormal_default", "R.lognormal(key, shape=(16,))"),
    ("lognormal_array", f"R.lognormal(key, {ARR8})"),
    ("pareto", "R.pareto(key, 2.5, (64,))"),
    ("pareto_array", f"R.pareto(key, {ARR8})"),
    ("maxwell", "R.maxwell(key, (64,))"),
    ("double_sided_maxwell", "R.double_sided_maxwell(key, 0.5, 2.0, (64,))"),
    ("weibull_min", "R.weibull_min(key, 2.0, 1.5, (64,))"),
    ("weibull_min_array", f"R.weibull_min(key, 1.5, {ARR8}, (8,))"),
    ("wald", "R.wald(key, 1.5, (64,))"),
    ("wald_array", f"R.wald(key, {ARR8})"),
    # discrete.py
    ("geometric", "R.geometric(key, 0.3, (64,))"),
    ("geometric_array", "R.geometric(key, np.linspace(0.05, 0.95, 64))"),
    ("geometric_int16", "R.geometric(key, 0.1, (16,), dtype=np.int16)"),
    ("poisson_knuth", "R.poisson(key, 3.5, (64,))"),
    ("poisson_rejection", "R.poisson(key, 25.0, (64,))"),
    ("poisson_array", "R.poisson(key, np.linspace(0.0, 60.0, 64))"),
    ("poisson_int32", "R.poisson(key, 25.0, (16,), dtype=np.int32)"),
    ("binomial_inversion", "R.binomial(key, 5.0, 0.3, (64,))"),
    ("binomial_btrs", "R.binomial(key, 100.0, 0.4, (64,))"),
    ("binomial_arrays", "R.binomial(key, np.linspace(0.0, 300.0, 64), "
                        "np.linspace(0.0, 1.0, 64))"),
    ("multinomial", "R.multinomial(key, 20.0, np.array([0.2, 0.3, 0.5]), shape=(8, 3))"),
    ("multinomial_large", "R.multinomial(key, 500.0, np.array([0.1, 0.2, 0.3, 0.4]))"),
    # gamma.py
    ("gamma", "R.gamma(key, 2.5, (64,))"),
    ("gamma_small_a", "R.gamma(key, 0.3, (64,))"),
    ("gamma_array", f"R.gamma(key, {ARR8})"),
    ("gamma_traced", f"jit(lambda k, a: R.gamma(k, a))(key, {LIN64})"),
    ("gamma_f32", "R.gamma(key, 2.5, (16,), np.float32)"),
    ("loggamma", "R.loggamma(key, 0.05, (64,))"),
    ("beta", "R.beta(key, 2.0, 3.0, (64,))"),
    ("dirichlet", "R.dirichlet(key, np.array([0.5, 1.0, 2.0]), (16,))"),
    ("chisquare", "R.chisquare(key, 3.0, (64,))"),
    ("f", "R.f(key, 3.0, 5.0, (64,))"),
    ("t", "R.t(key, 4.0, (64,))"),
    ("generalized_normal", "R.generalized_normal(key, 1.5, (64,))"),
    ("ball", "R.ball(key, 3, 2, (16,))"),
    # parameters of other dtypes, traced parameters and float16/float32 samples under x64
    ("lognormal_traced", f"jit(lambda k, s: R.lognormal(k, s))(key, {ARR8})"),
    ("pareto_traced", f"jit(lambda k, b: R.pareto(k, b))(key, {ARR8})"),
    ("double_sided_maxwell_params",
     "R.double_sided_maxwell(key, np.zeros(3), np.ones((2, 1)), (4,))"),
    ("wald_traced", f"jit(lambda k, m: R.wald(k, m))(key, {ARR8})"),
    ("geometric_f32", "R.geometric(key, np.linspace(0.05, 0.95, 16).astype(np.float32))"),
    ("binomial_f32", "R.binomial(key, 100.0, np.full(16, 0.4, np.float32))"),
    ("multinomial_f32", "R.multinomial(key, 20.0, np.array([0.2, 0.3, 0.5], np.float32))"),
    ("poisson_f32", "R.poisson(key, np.linspace(0.0, 60.0, 16).astype(np.float32))"),
    ("loggamma_array", f"R.loggamma(key, {ARR8})"),
    ("t_array", f"R.t(key, {ARR8})"),
    ("chisquare_array", f"R.chisquare(key, {ARR8})"),
    ("beta_arrays", f"R.beta(key, {ARR8}, {ARR8}[::-1])"),
    ("gamma_f16", "R.gamma(key, 2.5, (16,), np.float16)"),
    ("maxwell_f32", "R.maxwell(key, (16,), np.float32)"),
    ("generalized_normal_p1", "R.generalized_normal(key, 1.0, (32,))"),
    ("ball_p1", "R.ball(key, 4, 1, (8,))"),
    ("gamma_vmap", "vmap(lambda k: R.gamma(k, 2.0, (4,)))(R.split(key, 3))"),
    ("gamma_grad", "grad(lambda a: R.gamma(key, a, (8,)).sum())(2.5)"),
    ("gamma_grad_small", "grad(lambda a: R.gamma(key, a, (8,)).sum())(0.4)"),
    ("loggamma_grad", "grad(lambda a: R.loggamma(key, a, (8,)).sum())(0.7)"),
    # multivariate.py
    ("multivariate_normal",
     "R.multivariate_normal(key, np.array([1.0, 2.0, 3.0]), np.array("
     "[[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]]), (32,))"),
]
SEEDS = (0, 7)


def _bits(values: np.ndarray) -> list:
    if values.dtype.kind == "f":
        return values.view(f"uint{values.dtype.itemsize * 8}").ravel().tolist()
    return values.ravel().tolist()


def main() -> None:
    env = {"R": R, "np": np, "jit": jax.jit, "grad": jax.grad, "vmap": jax.vmap}
    cases = []
    for name, expr in CASES:
        for seed in SEEDS:
            env["key"] = R.PRNGKey(seed)
            values = np.asarray(eval(expr, env))
            cases.append({"name": f"{name}/{seed}", "seed": seed, "expr": expr,
                          "dtype": values.dtype.name, "shape": list(values.shape),
                          "bits": _bits(values)})
    OUT.write_text(json.dumps({"jax_version": jax.__version__, "jax_enable_x64": True,
                               "jax_threefry_partitionable": True, "cases": cases}) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
