"""Regenerate x64_dtypes.json: the dtype JAX gives each expression of EXPRESSIONS, with x64
off and on. Run with JAX installed (it is not a test dependency; the JSON is the data):

    python tests/runtime/make_x64_dtypes.py --backend jax

With `--backend redraft` it prints the expressions whose dtype differs from the stored data.
"""
from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import warnings

import numpy as np

DATA = pathlib.Path(__file__).with_name("x64_dtypes.json")

# Each expression sees jnp, lax, random, np, and x32/x64 (float32/float64 NumPy arrays).
EXPRESSIONS = [
    # creation
    "jnp.array(1.0)", "jnp.array(1)", "jnp.array(True)", "jnp.array(1j)",
    "jnp.array([1, 2])", "jnp.array([1.0, 2])", "jnp.array([1, 2.5j])",
    "jnp.array(np.float64(1))", "jnp.array(np.int64(1))", "jnp.array(x64)",
    "jnp.array(x32)", "jnp.asarray(x64)", "jnp.asarray(np.arange(3))",
    "jnp.array(1.0, dtype=jnp.float64)", "jnp.array(1, dtype=jnp.int64)",
    "jnp.array(1, dtype=jnp.uint64)", "jnp.array(1, dtype=jnp.complex128)",
    "jnp.array(1.0, dtype=float)", "jnp.array(1, dtype=int)",
    "jnp.float64(1.0)", "jnp.int64(1)", "jnp.float32(1.0)", "jnp.int32(1)",
    "jnp.zeros(3)", "jnp.ones(3)", "jnp.empty(2)", "jnp.zeros(3, dtype=jnp.float64)",
    "jnp.zeros(3, dtype='float64')", "jnp.ones(3, dtype=jnp.int64)",
    "jnp.zeros(3, dtype=int)", "jnp.full(3, 2.0)", "jnp.full(3, 2)", "jnp.full(3, True)",
    "jnp.full(3, 2.0, dtype=jnp.float64)", "jnp.zeros_like(x64)", "jnp.ones_like(x32)",
    "jnp.arange(5)", "jnp.arange(5.0)", "jnp.arange(0, 1, 0.25)",
    "jnp.arange(5, dtype=jnp.int64)", "jnp.arange(5, dtype=jnp.float64)",
    "jnp.linspace(0, 1, 5)", "jnp.linspace(0, 1, 5, dtype=jnp.float64)",
    "jnp.logspace(0, 1, 5)", "jnp.eye(3)", "jnp.eye(3, dtype=jnp.float64)",
    "jnp.identity(2)", "jnp.tri(3)",
    # astype
    "jnp.ones(3).astype(jnp.float64)", "jnp.ones(3).astype(float)",
    "jnp.ones(3).astype(int)", "jnp.ones(3).astype(jnp.int64)",
    "jnp.ones(3).astype('complex128')", "jnp.arange(3).astype(jnp.float32)",
    # Python scalars: weak types
    "jnp.ones(3, jnp.float32) * 2.0", "jnp.ones(3, jnp.float16) + 1.0",
    "jnp.arange(3) * 2", "jnp.arange(3) * 2.0", "jnp.arange(3) / 2", "jnp.arange(3) // 2",
    "jnp.arange(3, dtype=jnp.int8) + 1", "jnp.arange(3, dtype=jnp.uint8) * 1.5",
    "jnp.ones(3, jnp.float32) + 1j", "jnp.array(2.0) + 1", "jnp.array(2) ** 2",
    "jnp.ones(3, jnp.float32) ** 2", "jnp.array(2) ** 0.5",
    "lax.add(jnp.float32(1), 1.0)", "jnp.sin(1.0)", "jnp.exp(2)", "jnp.sqrt(jnp.arange(3))",
    "jnp.asarray(2.0) * jnp.asarray(3)", "jnp.add(1, 2)", "jnp.multiply(1.0, 2)",
    # promotion of arrays
    "jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.float64)",
    "jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.float32)",
    "jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.int64)",
    "jnp.ones(2, jnp.uint32) + jnp.ones(2, jnp.int32)",
    "jnp.ones(2, jnp.uint32) + jnp.ones(2, jnp.int8)",
    "jnp.ones(2, jnp.uint64) + jnp.ones(2, jnp.int64)",
    "jnp.ones(2, jnp.int64) + jnp.ones(2, jnp.float16)",
    "jnp.ones(2) + x32",
    "jnp.ones(2, jnp.complex64) + jnp.ones(2, jnp.float64)",
    "jnp.ones(2, jnp.float32) + x64", "jnp.arange(2) + np.int64(1)",
    "jnp.result_type(jnp.float32, jnp.int64)", "jnp.result_type(float, int)",
    "jnp.result_type(1.0)", "jnp.result_type(jnp.int8, jnp.uint64)",
    "jnp.promote_types(jnp.int32, jnp.uint32)", "jnp.promote_types(jnp.float32, jnp.int64)",
    # reductions and index results
    "jnp.sum(jnp.arange(3))", "jnp.sum(jnp.ones(3, jnp.int8))", "jnp.sum(jnp.ones(3, bool))",
    "jnp.mean(jnp.arange(3))", "jnp.mean(jnp.ones(3, jnp.float32))", "jnp.var(jnp.arange(4))",
    "jnp.prod(jnp.arange(1, 4))", "jnp.argmax(jnp.ones(3))", "jnp.argmin(jnp.ones(3))",
    "jnp.argsort(jnp.ones(3))", "jnp.cumsum(jnp.arange(3))", "jnp.max(jnp.arange(3))",
    "jnp.count_nonzero(jnp.ones(3))", "jnp.nonzero(jnp.ones(3))[0]",
    "jnp.where(jnp.ones(3) > 0)[0]", "jnp.searchsorted(jnp.arange(3.0), 1.5)",
    "jnp.dot(jnp.ones(3), jnp.ones(3))", "jnp.dot(jnp.arange(3), jnp.arange(3))",
    "jnp.ones((2, 3)).shape[0] * jnp.ones(1)", "jnp.linalg.norm(jnp.ones(3))",
    "jnp.floor(2.5)", "jnp.round(jnp.arange(3.0))", "jnp.abs(1j * jnp.ones(2))",
    "jnp.real(jnp.ones(2, jnp.complex64))", "jnp.isnan(jnp.ones(2))",
    "jnp.ones(3)[jnp.array(1)]", "jnp.arange(4)[1:3]",
    # library functions that turn integers into floats or make indices
    "jnp.hanning(5)", "jnp.hamming(5)", "jnp.blackman(5)", "jnp.bartlett(5)",
    "jnp.fft.fftfreq(4)", "jnp.fft.rfftfreq(4)", "jnp.fft.fft(jnp.arange(4))",
    "jnp.fft.rfft(jnp.arange(4))", "jnp.fft.fft(jnp.ones(4, jnp.float32))",
    "jnp.polyval(jnp.arange(3), 2)", "jnp.cov(jnp.arange(4))",
    "jnp.corrcoef(jnp.arange(4), jnp.arange(4)[::-1])", "jnp.median(jnp.arange(4))",
    "jnp.percentile(jnp.arange(4), 50)", "jnp.histogram(jnp.arange(4))[0]",
    "jnp.histogram(jnp.arange(4))[1]", "jnp.interp(1.5, jnp.arange(3), jnp.arange(3))",
    "jnp.diag_indices(3)[0]", "jnp.tril_indices(3)[0]", "jnp.indices((2, 2))",
    "jnp.unique(jnp.arange(3))", "jnp.bincount(jnp.arange(3))",
    "jnp.digitize(jnp.arange(3), jnp.arange(2))", "jnp.trapezoid(jnp.arange(4))",
    "jnp.gradient(jnp.arange(4))", "jnp.vander(jnp.arange(3))", "jnp.nanmean(jnp.arange(3))",
    "jnp.average(jnp.arange(3))", "jnp.std(jnp.arange(3))", "jnp.deg2rad(jnp.arange(3))",
    "jnp.sinc(jnp.arange(3))", "jnp.unwrap(jnp.arange(3))", "jnp.cumprod(jnp.arange(3))",
    "jnp.argwhere(jnp.arange(3))", "jnp.flatnonzero(jnp.arange(3))",
    "jnp.nonzero(jnp.arange(3), size=2)[0]",
    "jnp.ravel_multi_index((jnp.arange(2), jnp.arange(2)), (2, 2))",
    "jnp.unravel_index(jnp.arange(2), (2, 2))[0]", "jnp.lexsort((jnp.arange(3),))",
    "jnp.histogram_bin_edges(jnp.arange(4))", "jnp.geomspace(1, 4, 3)", "jnp.ldexp(1.0, 2)",
    "jnp.heaviside(jnp.arange(3), 0.5)", "jnp.convolve(jnp.arange(3), jnp.arange(2))",
    "jnp.isin(jnp.arange(3), jnp.arange(2))", "jnp.logaddexp(1, 2)",
    "jnp.floor_divide(jnp.arange(3), 2)", "jnp.fromfunction(lambda i: i, (3,))",
    # random: default dtypes
    "random.PRNGKey(0)", "random.key_data(random.key(0))", "random.split(random.PRNGKey(0))",
    "random.uniform(random.PRNGKey(0), (3,))", "random.normal(random.PRNGKey(0), (3,))",
    "random.uniform(random.PRNGKey(0), (3,), dtype=jnp.float64)",
    "random.normal(random.PRNGKey(0), (3,), dtype=jnp.float64)",
    "random.randint(random.PRNGKey(0), (3,), 0, 10)",
    "random.randint(random.PRNGKey(0), (3,), 0, 10, dtype=jnp.int64)",
    "random.bits(random.PRNGKey(0), (3,))", "random.bernoulli(random.PRNGKey(0), 0.5, (3,))",
    "random.choice(random.PRNGKey(0), 5, (3,))", "random.permutation(random.PRNGKey(0), 5)",
    "random.exponential(random.PRNGKey(0), (3,))",
    "random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (3,))",
    # lax
    "lax.iota(jnp.int32, 3)", "lax.convert_element_type(jnp.ones(2), jnp.float64)",
    "lax.convert_element_type(jnp.ones(2), int)", "lax.full((2,), 1.0)",
    "lax.broadcasted_iota(jnp.int64, (2, 2), 0)",
]


def evaluate(backend: str, x64: bool) -> dict[str, list]:
    """{expression: [dtype name, weak]} under `backend` with x64 set as given."""
    jx = importlib.import_module(backend)
    jx.config.update("jax_enable_x64", x64)
    env = {name: importlib.import_module(f"{backend}.{name}") for name in ("numpy", "lax",
                                                                           "random")}
    env = {"jnp": env["numpy"], "lax": env["lax"], "random": env["random"], "np": np,
           "x32": np.ones(2, np.float32), "x64": np.ones(2, np.float64)}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in EXPRESSIONS:
            try:
                value = eval(text, env)  # noqa: S307 (the table above, nothing else)
            except Exception as exc:  # noqa: BLE001 (reported as a difference)
                out[text] = [f"error {type(exc).__name__}: {exc}"[:120], False]
                continue
            if isinstance(value, (np.dtype, type)):
                out[text] = [np.dtype(value).name, False]
                continue
            if backend == "jax" and jx.dtypes.issubdtype(value.dtype, jx.dtypes.prng_key):
                value = jx.random.key_data(value)
            out[text] = [np.dtype(value.dtype).name, bool(getattr(value, "weak_type", False))]
    jx.config.update("jax_enable_x64", False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="redraft")
    backend = parser.parse_args().backend
    table = {"x32": evaluate(backend, False), "x64": evaluate(backend, True)}
    if backend == "jax":
        DATA.write_text(json.dumps(table, indent=1) + "\n")
        print(f"wrote {DATA} ({len(EXPRESSIONS)} expressions)")
        return
    stored = json.loads(DATA.read_text())
    for mode in table:
        for text, got in table[mode].items():
            if stored[mode][text] != got:
                print(f"{mode} {text}: redraft {got}, jax {stored[mode][text]}")


if __name__ == "__main__":
    main()
