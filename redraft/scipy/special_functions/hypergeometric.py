"""The confluent (1F1) and Gauss (2F1) hypergeometric functions by their power series.

1F1(a; b; x) sums sum (a)_k / (b)_k x^k / k! directly for x >= 0 and after Kummer's
transformation e^x 1F1(b - a; b; -x) for x < 0, so the terms never alternate for a < b.
2F1(a, b; c; x) sums its series on 0 <= x < 1 and reaches x < 0 by Pfaff's transformation
(1 - x)^-a 2F1(a, c - b; c; x / (x - 1)); at x = 1 it is Gauss's Gamma-function product.
The series are of fixed length, accurate for |x| up to about 30 (1F1) and x up to about 0.95
(2F1; convergence slows towards 1).
"""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.control import fori_loop
from redraft.runtime.array import Array

from redraft.scipy.special_functions.common import counter, gamma_sign, real_floats3, real_floats4

_HYP1F1_TERMS = 120
_HYP2F1_TERMS = 300


def _hyp1f1_step(k, carry):
    a, b, x, term, total = carry
    kf = counter(k, x) - 1.0
    term = term * (a + kf) / (b + kf) * x / (kf + 1.0)
    return a, b, x, term, total + term


def _hyp1f1_series(a: Array, b: Array, x: Array) -> Array:
    one = jnp.ones_like(x)
    return fori_loop(1, _HYP1F1_TERMS, _hyp1f1_step, (a, b, x, one, one))[4]


def hyp1f1(a, b, x) -> Array:
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = M(a, b, x)."""
    a, b, x = real_floats3("hyp1f1", a, b, x)
    negative = x < 0
    a_eff = jnp.where(negative, b - a, a)
    x_eff = jnp.abs(x)
    series = _hyp1f1_series(a_eff, b, x_eff)
    return jnp.where(negative, jnp.exp(x) * series, series)


def _hyp2f1_step(k, carry):
    a, b, c, x, term, total = carry
    kf = counter(k, x) - 1.0
    term = term * (a + kf) * (b + kf) / ((c + kf) * (kf + 1.0)) * x
    return a, b, c, x, term, total + term


def _hyp2f1_series(a: Array, b: Array, c: Array, x: Array) -> Array:
    one = jnp.ones_like(x)
    return fori_loop(1, _HYP2F1_TERMS, _hyp2f1_step, (a, b, c, x, one, one))[5]


def hyp2f1(a, b, c, x) -> Array:
    """The Gauss hypergeometric function 2F1(a, b; c; x) for x <= 1 (nan for x > 1)."""
    a, b, c, x = real_floats4("hyp2f1", a, b, c, x)
    negative = x < 0
    inside = x < 1
    x_in = jnp.where(inside, x, 0.0)
    z = jnp.where(negative, x_in / (x_in - 1.0), x_in)
    b_eff = jnp.where(negative, c - b, b)
    series = _hyp2f1_series(a, b_eff, c, z)
    value = jnp.where(negative, jnp.exp(-a * jnp.log1p(-x_in)) * series, series)
    excess = c - a - b
    safe_excess = jnp.where(excess > 0, excess, 1.0)
    sign = gamma_sign(c) * gamma_sign(safe_excess) * gamma_sign(c - a) * gamma_sign(c - b)
    gauss = sign * jnp.exp(lax.lgamma(c) + lax.lgamma(safe_excess) - lax.lgamma(c - a)
                           - lax.lgamma(c - b))
    at_one = jnp.where(excess > 0, gauss, math.inf)
    return jnp.where(inside, value, jnp.where(x == 1, at_one, math.nan))
