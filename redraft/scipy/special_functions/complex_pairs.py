"""Complex arithmetic on (real, imaginary) pairs of real arrays, for the complex continued
fractions of sici and fresnel: the results are real, so the pairs keep every operation on
the real dtypes all transforms and backends handle."""
from __future__ import annotations

import redraft.numpy as jnp

Pair = tuple


def add(a: Pair, b: Pair) -> Pair:
    return a[0] + b[0], a[1] + b[1]


def mul(a: Pair, b: Pair) -> Pair:
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def div(a: Pair, b: Pair) -> Pair:
    """a / b by the textbook formula (no overflow at the magnitudes met here)."""
    denominator = b[0] * b[0] + b[1] * b[1]
    return ((a[0] * b[0] + a[1] * b[1]) / denominator,
            (a[1] * b[0] - a[0] * b[1]) / denominator)


def scale(s, a: Pair) -> Pair:
    """The real s times the pair a."""
    return s * a[0], s * a[1]


def inverse(a: Pair) -> Pair:
    denominator = a[0] * a[0] + a[1] * a[1]
    return a[0] / denominator, -a[1] / denominator


def guard(a: Pair, tiny: float) -> Pair:
    """a, or (tiny, 0) where |a| is below tiny (Lentz's guard against division by zero)."""
    small = (jnp.abs(a[0]) + jnp.abs(a[1])) < tiny
    return jnp.where(small, tiny, a[0]), jnp.where(small, 0.0, a[1])
