"""Regenerate x64_random.json: JAX 0.10.2's samples with x64 on, as bit patterns, for
test_random_x64.py. Run with JAX installed (not a test dependency; the JSON is the data):

    python tests/redraft/make_x64_random.py
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).with_name("x64_random.json")

# name -> expression over `random`, `jnp` and `key` (PRNGKey(seed)).
CASES = {
    "uniform": "random.uniform(key, (64,))",
    "uniform_range": "random.uniform(key, (64,), minval=-3.0, maxval=7.5)",
    "normal": "random.normal(key, (64,))",
    "normal_f32": "random.normal(key, (8,), dtype=jnp.float32)",
    "randint": "random.randint(key, (32,), 0, 10 ** 12)",
    "randint_neg": "random.randint(key, (32,), -5, 5)",
    "bits": "random.bits(key, (16,))",
    "choice": "random.choice(key, 50, (20,))",
    "choice_p": "random.choice(key, 5, (20,), p=jnp.arange(5.0) / 10)",
    "permutation": "random.permutation(key, 30)",
    "truncated_normal": "random.truncated_normal(key, -1.0, 2.0, (64,))",
    "exponential": "random.exponential(key, (64,))",
    "laplace": "random.laplace(key, (32,))",
    "logistic": "random.logistic(key, (32,))",
    "gumbel": "random.gumbel(key, (32,))",
    "rayleigh": "random.rayleigh(key, 2.5, (32,))",
    "triangular": "random.triangular(key, -1.0, 0.3, 2.0, (32,))",
    "rademacher": "random.rademacher(key, (32,))",
    "bernoulli": "random.bernoulli(key, 0.3, (32,))",
    "categorical": "random.categorical(key, jnp.zeros(5), shape=(32,))",
    "orthogonal": "random.orthogonal(key, 3)",
    "uniform_f16": "random.uniform(key, (8,), dtype=jnp.float16)",
    "normal_c128": "random.normal(key, (8,), dtype=jnp.complex128)",
    "permutation_array": "random.permutation(key, jnp.arange(10))",
    "randint_u8": "random.randint(key, (16,), 0, 200, dtype=jnp.uint8)",
}
SEEDS = (0, 42)


def bit_pattern(value) -> tuple[str, list[int]]:
    """(dtype name, the values as unsigned integers of their width: exact in JSON)."""
    a = np.asarray(value)
    name = a.dtype.name
    if a.dtype.kind == "c":  # (real, imaginary) pairs
        a = np.stack([a.real, a.imag], axis=-1)
    unsigned = np.dtype(f"uint{a.dtype.itemsize * 8}") if a.dtype.kind != "b" else a.dtype
    return name, a.view(unsigned).ravel().tolist()


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import random
    jax.config.update("jax_enable_x64", True)
    table = {}
    for seed in SEEDS:
        env = {"random": random, "jnp": jnp, "key": random.PRNGKey(seed)}
        for name, text in CASES.items():
            table[f"{name}/{seed}"] = bit_pattern(eval(text, env))  # noqa: S307 (CASES)
    DATA.write_text(json.dumps({"cases": CASES, "samples": table}) + "\n")
    print(f"wrote {DATA} ({len(table)} samples)")


if __name__ == "__main__":
    main()
