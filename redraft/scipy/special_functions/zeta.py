"""The Hurwitz zeta function, polygamma, Bernoulli numbers and Spence's function.

zeta(s, q) by Euler-Maclaurin summation: the first 9 terms of sum_k (q + k)^-s exactly, the
tail as an integral plus 12 Bernoulli corrections. Spence's function Li2(1 - z) by the series
sum y^k / k^2 on |y| <= 1/2, reached through the reflection and Landen identities.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.control import fori_loop
from redraft.runtime.array import Array

from redraft.scipy.special_functions.common import counter, real_float, real_floats2

_DIRECT_TERMS = 9
_CORRECTIONS = 12


def bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0 .. B_n exactly, with B_1 = -1/2 (the convention of scipy.special.bernoulli), by
    the recurrence sum_{k<=m} C(m + 1, k) B_k = 0."""
    numbers: list[Fraction] = []
    for m in range(n + 1):
        if m == 0:
            numbers.append(Fraction(1))
            continue
        acc = sum(math.comb(m + 1, k) * numbers[k] for k in range(m))
        numbers.append(-acc / (m + 1))
    return numbers


_EVEN_B_OVER_FACTORIAL = [float(b / math.factorial(2 * j)) for j, b in
                          enumerate(bernoulli_numbers(2 * _CORRECTIONS)[::2])][1:]


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers B_0 .. B_n as a float array of length n + 1."""
    n = int(n)
    if n < 0:
        raise ValueError(f"bernoulli needs a non-negative integer n, got {n}")
    return jnp.asarray(np.array([float(b) for b in bernoulli_numbers(n)], np.float32))


def _hurwitz(s: Array, q: Array) -> Array:
    """zeta(s, q) for s > 1, q > 0 by Euler-Maclaurin."""
    total = jnp.zeros_like(q)
    for k in range(_DIRECT_TERMS):
        total = total + jnp.exp(-s * jnp.log(q + k))
    a = q + _DIRECT_TERMS
    log_a = jnp.log(a)
    a_to_minus_s = jnp.exp(-s * log_a)
    total = total + a * a_to_minus_s / (s - 1.0) + 0.5 * a_to_minus_s
    rising = s                      # s (s + 1) ... (s + 2j - 2)
    power = a_to_minus_s / a        # a^(-s - 2j + 1)
    inv_a2 = 1.0 / (a * a)
    for j, coefficient in enumerate(_EVEN_B_OVER_FACTORIAL, start=1):
        total = total + coefficient * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power * inv_a2
    return total


def zeta(x, q=None) -> Array:
    """The Hurwitz zeta function sum_k (q + k)^-x for x > 1 and q > 0 (the Riemann zeta
    function when q is None); inf at x = 1 and at non-positive integer q, nan elsewhere."""
    if q is None:
        s = real_float("zeta", x)
        q = jnp.ones_like(s)
    else:
        s, q = real_floats2("zeta", x, q)
    valid = (s > 1) & (q > 0)
    value = _hurwitz(jnp.where(valid, s, 2.0), jnp.where(valid, q, 1.0))
    pole = (s == 1) | ((q <= 0) & (q == jnp.floor(q)))
    return jnp.where(valid, value, jnp.where(pole, math.inf, math.nan))


def polygamma(n, x) -> Array:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1,
    digamma(x) for n = 0 (x > 0; nan for x <= 0 when n >= 1)."""
    n_arr = jnp.asarray(n)
    if n_arr.dtype.kind not in "iu":
        raise ValueError(f"polygamma needs an integer n, got dtype {n_arr.dtype.name}")
    nf, v = real_floats2("polygamma", n_arr, x)
    n_pos = jnp.where(nf >= 1, nf, 1.0)
    sign = jnp.where(jnp.remainder(n_pos, 2.0) == 1.0, 1.0, -1.0)
    higher = sign * jnp.exp(lax.lgamma(n_pos + 1.0)) * zeta(n_pos + 1.0, v)
    return jnp.where(nf == 0, lax.digamma(v), jnp.where(nf < 0, math.nan, higher))


# ---- Spence's function -----------------------------------------------------------------------

_PI2_6 = math.pi ** 2 / 6


def _dilog_step(k, carry):
    y, power, total = carry
    kf = counter(k, y)
    power = power * y
    return y, power, total + power / (kf * kf)


def _dilog_small(y: Array) -> Array:
    """Li2(y) = sum_k y^k / k^2 for |y| <= 1/2 (40 terms reach float64 accuracy)."""
    _, _, total = fori_loop(1, 40, _dilog_step, (y, jnp.ones_like(y), jnp.zeros_like(y)))
    return total


def spence(x) -> Array:
    """Spence's function integral_1^x log(t) / (1 - t) dt = Li2(1 - x), for x >= 0."""
    z = real_float("spence", x)
    middle = (z >= 0.5) & (z <= 1.5)
    low = z < 0.5
    mid_high = (z > 1.5) & (z <= 2.0)
    z_pos = jnp.where(z > 0, z, 1.0)
    u = jnp.where(middle, 1.0 - z, jnp.where(low, z, jnp.where(mid_high, 1.0 - 1.0 / z_pos,
                                                                 1.0 / z_pos)))
    u = jnp.where(z > 0, u, 0.0)
    series = _dilog_small(u)
    log_z = jnp.log(z_pos)
    u_pos = jnp.where(u > 0, u, 1.0)
    from_low = _PI2_6 - jnp.log(z_pos) * jnp.log1p(-jnp.where(low, z_pos, 0.0)) - series
    from_mid_high = -series - 0.5 * log_z * log_z
    w_log = jnp.log1p(-u_pos)             # log(1 - 1/z) with u = 1/z
    from_high = -(_PI2_6 + w_log * log_z - series) - 0.5 * log_z * log_z
    value = jnp.where(middle, series, jnp.where(low, from_low, jnp.where(mid_high,
                                                                         from_mid_high,
                                                                         from_high)))
    value = jnp.where(z == 0, _PI2_6, value)
    return jnp.where(z < 0, math.nan, value)
