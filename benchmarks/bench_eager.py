"""Eager dispatch cost: redraft.numpy against NumPy (and JAX when it is installed).

    python -m benchmarks.bench_eager [--repeat 20] [--min-time 0.01]
    python benchmarks/bench_eager.py

On tiny arrays the figures are Python overhead per operation; on 10^6 elements they are the
NumPy work underneath, which redraft's eager mode should add nothing to. Rows with a target
are the issue's limits on ours / NumPy; the table marks the ones missed. Always exits 0.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import redraft.numpy as jnp
from benchmarks.common import Row, compare, print_table

BIG = 10 ** 6


@dataclass
class Case:
    """One benchmark: the same work written for redraft, NumPy and (optionally) JAX."""
    name: str
    ours: str
    numpy: str
    jax: str | None = None
    target: float | None = None


CASES = [
    Case("a + b          f32[3]", "a + b", "a_np + b_np", "(ja + jb).block_until_ready()", 3),
    Case("jnp.sin(a)     f32[3]", "jnp.sin(a)", "np.sin(a_np)",
         "jjnp.sin(ja).block_until_ready()", 3),
    Case("jnp.sum(a)     f32[3]", "jnp.sum(a)", "np.sum(a_np)",
         "jjnp.sum(ja).block_until_ready()", 3),
    Case("x[3]           f32[8]", "x[3]", "x_np[3]", "jx[3].block_until_ready()", 10),
    Case("jnp.sin(big)   f32[1e6]", "jnp.sin(big)", "np.sin(big_np)",
         "jjnp.sin(jbig).block_until_ready()", 3),
    Case("a * 2.0        f32[3]", "a * 2.0", "a_np * 2.0", "(ja * 2.0).block_until_ready()"),
    Case("2.0 - a        f32[3]", "2.0 - a", "2.0 - a_np", "(2.0 - ja).block_until_ready()"),
    Case("a < b          f32[3]", "a < b", "a_np < b_np", "(ja < jb).block_until_ready()"),
    Case("m.sum(0)       f32[4,4]", "m.sum(0)", "m_np.sum(0)", "jm.sum(0).block_until_ready()"),
    Case("m.T            f32[4,4]", "m.T", "m_np.T", "jm.T.block_until_ready()"),
    Case("x[1:5]         f32[8]", "x[1:5]", "x_np[1:5]", "jx[1:5].block_until_ready()"),
    Case("x.at[1].set(2) f32[8]", "x.at[1].set(2.0)", "set_copy(x_np, 1, 2.0)",
         "jx.at[1].set(2.0).block_until_ready()"),
    Case("big + big      f32[1e6]", "big + big", "big_np + big_np",
         "(jbig + jbig).block_until_ready()"),
    Case("big.sum()      f32[1e6]", "big.sum()", "big_np.sum()",
         "jbig.sum().block_until_ready()"),
    Case("jnp.exp(big)   f32[1e6]", "jnp.exp(big)", "np.exp(big_np)",
         "jjnp.exp(jbig).block_until_ready()", 1),
    Case("jnp.tanh(big)  f32[1e6]", "jnp.tanh(big)", "np.tanh(big_np)",
         "jjnp.tanh(jbig).block_until_ready()", 1),
    Case("jnp.log(pos)   f32[1e6]", "jnp.log(pos)", "np.log(pos_np)",
         "jjnp.log(jpos).block_until_ready()", 1),
    Case("sigmoid(big)   f32[1e6]", "rnn.sigmoid(big)", "sigmoid_np(big_np)",
         "jax.nn.sigmoid(jbig).block_until_ready()", 1),
    Case("where(m, b, p) f32[1e6]", "jnp.where(mask, big, pos)",
         "np.where(mask_np, big_np, pos_np)",
         "jjnp.where(jmask, jbig, jpos).block_until_ready()", 1),
    Case("selu(big)      f32[1e6]", "selu(jnp, big)", "selu(np, big_np)",
         "selu(jjnp, jbig).block_until_ready()", 1),
]


def sigmoid_np(x):
    """NumPy's logistic sigmoid as one would write it (NumPy has none)."""
    return 1 / (1 + np.exp(-x))


def selu(np_, x, alpha=1.67, lmbda=1.05):
    """The quickstart's selu, eagerly, in whichever NumPy it is given."""
    return lmbda * np_.where(x > 0, x, alpha * np_.exp(x) - alpha)

RANDOM_CASE = Case("random.normal  f32[1e6]", "random.normal(key, (BIG,))",
                   "rng.standard_normal(BIG, dtype=np.float32)",
                   "jax.random.normal(jkey, (BIG,)).block_until_ready()")


def set_copy(x: np.ndarray, i: int, value: float) -> np.ndarray:
    """NumPy's equivalent of `x.at[i].set(value)`: a copy with one element changed."""
    out = x.copy()
    out[i] = value
    return out


def host_values() -> dict:
    """The NumPy operands of every case (float32, fixed seed)."""
    rng = np.random.default_rng(0)
    return {
        "a_np": rng.standard_normal(3).astype(np.float32),
        "b_np": rng.standard_normal(3).astype(np.float32),
        "x_np": rng.standard_normal(8).astype(np.float32),
        "m_np": rng.standard_normal((4, 4)).astype(np.float32),
        "big_np": rng.standard_normal(BIG).astype(np.float32),
        "pos_np": rng.uniform(0.01, 100, BIG).astype(np.float32),
        "mask_np": rng.standard_normal(BIG) > 0,
    }


def namespace() -> dict:
    """Globals for the timed statements: NumPy operands, redraft and JAX copies of them."""
    host = host_values()
    import redraft.nn as rnn
    ns = {"np": np, "jnp": jnp, "rnn": rnn, "BIG": BIG, "set_copy": set_copy, "selu": selu,
          "sigmoid_np": sigmoid_np,
          "rng": np.random.default_rng(0), **host}
    ns.update({name[:-3]: jnp.asarray(value) for name, value in host.items()})
    try:
        from redraft import random
        ns.update(random=random, key=random.PRNGKey(0))
    except ImportError:
        pass
    jax = import_jax()
    if jax is not None:
        ns.update(jax=jax, jjnp=jax.numpy, jkey=jax.random.PRNGKey(0))
        ns.update({"j" + name[:-3]: jax.numpy.asarray(value) for name, value in host.items()})
    return ns


def import_jax():
    """JAX if it is installed (for a third column), else None."""
    try:
        import jax
    except ImportError:
        return None
    return jax


def run_case(case: Case, ns: dict, repeat: int, min_seconds: float) -> Row:
    statements = {"ours": case.ours, "numpy": case.numpy}
    if case.jax is not None and "jax" in ns:
        statements["jax"] = case.jax
    best = compare(statements, ns, repeat=repeat, min_seconds=min_seconds)
    return Row(case.name, best["ours"], best["numpy"], best.get("jax"), case.target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="timeit repeats (best is kept)")
    parser.add_argument("--min-time", type=float, default=0.01,
                        help="seconds each repeat loops for, at least")
    args = parser.parse_args(argv)
    ns = namespace()
    cases = CASES + ([RANDOM_CASE] if "random" in ns else [])
    rows = [run_case(case, ns, args.repeat, args.min_time) for case in cases]
    print(f"redraft eager vs NumPy {np.__version__}: best of {args.repeat} per call, "
          "ratio = ours / numpy")
    print_table(rows, with_jax="jax" in ns)
    missed = [row.name.split()[0] for row in rows if not row.meets_target]
    print("targets: " + ("all met" if not missed else "MISSED for " + ", ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
