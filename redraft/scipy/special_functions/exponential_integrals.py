"""Exponential and trigonometric integrals: expn, exp1, expi and sici.

E_n(x) as in Numerical Recipes 6.3: its power series for x <= 1 and its continued fraction
(modified Lentz) beyond. Ei(x): its power series for 0 < x < 40, the asymptotic series
e^x / x sum k! / x^k beyond and -E1(-x) for x < 0. Si and Ci: power series for x < 2 and the
complex continued fraction of E1(ix) beyond (Numerical Recipes 6.9), carried as real pairs.
"""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.control import fori_loop
from redraft.runtime.array import Array

from redraft.scipy.special_functions import complex_pairs as cp
from redraft.scipy.special_functions.common import (EULER_GAMMA, TINY, away_from_zero, counter,
                                                    real_float, real_floats2)

_EXPN_TERMS = 60


def _expn_series_step(i, carry):
    n, x, psi, fact, total = carry
    fi = counter(i, x)
    nm1 = n - 1.0
    fact = -fact * x / fi
    at_pole = fi == nm1
    regular = -fact / jnp.where(at_pole, 1.0, fi - nm1)
    total = total + jnp.where(at_pole, fact * (psi - jnp.log(x)), regular)
    return n, x, psi, fact, total


def _expn_series(n: Array, x: Array) -> Array:
    """E_n(x) for 0 < x <= 1 (the series has a log term at the index i = n - 1)."""
    nm1 = n - 1.0
    start = jnp.where(nm1 == 0, -jnp.log(x) - EULER_GAMMA, 1.0 / jnp.where(nm1 == 0, 1.0, nm1))
    psi = lax.digamma(jnp.maximum(n, 1.0))
    out = fori_loop(1, _EXPN_TERMS, _expn_series_step,
               (n, x, psi, jnp.ones_like(x), start))
    return out[4]


def _expn_fraction_step(i, carry):
    n, b, c, d, h = carry
    fi = counter(i, b)
    a = -fi * (n - 1.0 + fi)
    b = b + 2.0
    d = 1.0 / away_from_zero(a * d + b)
    c = away_from_zero(b + a / c)
    return n, b, c, d, h * c * d


def _expn_fraction(n: Array, x: Array) -> Array:
    """E_n(x) for x > 1 by its continued fraction."""
    b = x + n
    d = 1.0 / b
    c = jnp.zeros_like(x) + 1.0 / TINY
    out = fori_loop(1, _EXPN_TERMS, _expn_fraction_step, (n, b, c, d, d))
    return out[4] * jnp.exp(-x)


def expn(n, x) -> Array:
    """The generalised exponential integral E_n(x) = integral_1^inf exp(-x t) / t^n dt, for
    integer n >= 0 and x >= 0 (nan elsewhere)."""
    n, x = real_floats2("expn", n, x)
    bad = (n < 0) | (x < 0) | (n != jnp.floor(n))
    positive = x > 0
    small = x <= 1.0
    n_safe = jnp.where(bad, 1.0, n)
    x_small = jnp.where(positive & small, x, 0.5)
    x_large = jnp.where(small, 2.0, x)
    value = jnp.where(small, _expn_series(n_safe, x_small), _expn_fraction(n_safe, x_large))
    x_pos = jnp.where(positive, x, 1.0)
    value = jnp.where(n == 0, jnp.exp(-x_pos) / x_pos, value)
    at_zero = jnp.where(n > 1, 1.0 / jnp.where(n > 1, n - 1.0, 1.0), math.inf)
    value = jnp.where(positive, value, at_zero)
    return jnp.where(bad, math.nan, value)


def exp1(x) -> Array:
    """The exponential integral E1(x) = integral_x^inf exp(-t) / t dt, for x >= 0."""
    v = real_float("exp1", x)
    return expn(jnp.ones_like(v), v)


_EI_LIMIT = 40.0


def _ei_series_step(k, carry):
    x, term, total = carry
    kf = counter(k, x)
    term = term * x / kf
    return x, term, total + term / kf


def expi(x) -> Array:
    """The exponential integral Ei(x) = -PV integral_-x^inf exp(-t) / t dt."""
    v = real_float("expi", x)
    positive = v > 0
    near = v < _EI_LIMIT
    x_near = jnp.where(positive & near, v, 1.0)
    _, _, total = fori_loop(1, 110, _ei_series_step, (x_near, jnp.ones_like(v), jnp.zeros_like(v)))
    series = EULER_GAMMA + jnp.log(x_near) + total
    x_far = jnp.where(near, 2 * _EI_LIMIT, v)
    far_total = jnp.ones_like(v)
    term = jnp.ones_like(v)
    for k in range(1, 12):
        term = term * k / x_far
        far_total = far_total + term
    far = jnp.exp(x_far) / x_far * far_total
    negative = -exp1(jnp.where(positive, 1.0, -v))
    return jnp.where(positive, jnp.where(near, series, far), negative)


# ---- sine and cosine integrals ---------------------------------------------------------------

_SICI_LIMIT = 2.0


def _sici_series(t: Array) -> tuple[Array, Array]:
    """Si(t) and Ci(t) - gamma - log t by their power series: the term (-1)^(k//2) t^k / k!
    goes, divided by k, to Si for odd k and to Ci for even k."""
    si, ci = t, jnp.zeros_like(t)
    term = t
    for k in range(2, 26):
        term = term * t / k
        signed = term / k if (k // 2) % 2 == 0 else -term / k
        if k % 2 == 1:
            si = si + signed
        else:
            ci = ci + signed
    return si, ci


def _sici_fraction_step(i, carry):
    b, c, d, h = carry
    fi = counter(i, b[0])
    a = -(fi - 1.0) * (fi - 1.0)
    b = (b[0] + 2.0, b[1])
    d = cp.inverse(cp.guard(cp.add(cp.scale(a, d), b), TINY))
    c = cp.guard(cp.add(b, cp.scale(a, cp.inverse(c))), TINY)
    return b, c, d, cp.mul(h, cp.mul(c, d))


def _sici_fraction(t: Array) -> tuple[Array, Array]:
    """Si(t), Ci(t) for t >= 2 from the continued fraction of E1(i t)."""
    zero = jnp.zeros_like(t)
    b = (jnp.ones_like(t), t)
    c = (zero + 1.0 / TINY, zero)
    d = cp.inverse(b)
    _, _, _, h = fori_loop(2, 60, _sici_fraction_step, (b, c, d, d))
    h = cp.mul((jnp.cos(t), -jnp.sin(t)), h)
    return 0.5 * math.pi + h[1], -h[0]


def sici(x) -> tuple[Array, Array]:
    """The sine and cosine integrals (Si(x), Ci(x)): integral_0^x sin(t) / t dt and
    gamma + log|x| + integral_0^|x| (cos t - 1) / t dt (Ci(0) = -inf)."""
    v = real_float("sici", x)
    t = jnp.abs(v)
    near = t < _SICI_LIMIT
    positive = t > 0
    t_near = jnp.where(near & positive, t, 1.0)
    si_near, ci_near = _sici_series(t_near)
    ci_near = ci_near + EULER_GAMMA + jnp.log(t_near)
    si_far, ci_far = _sici_fraction(jnp.where(near, 2 * _SICI_LIMIT, t))
    si = jnp.where(near, si_near, si_far)
    ci = jnp.where(near, ci_near, ci_far)
    si = jnp.where(positive, jnp.where(v < 0, -si, si), 0.0)
    return si, jnp.where(positive, ci, -math.inf)
