"""Modified Bessel functions I0, I1 (plain and exponentially scaled) and the Bessel functions
J_0..J_v of the first kind.

I_nu: the power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 15, where it converges
in 40 terms, and the large-argument expansion e^|x| / sqrt(2 pi |x|) sum_k (-1)^k a_k(nu) / |x|^k
(Abramowitz & Stegun 9.7.1) beyond. J: Miller's backward recurrence, run on the ratios
J_k / J_(k-1) so nothing overflows, normalised by J_0 + 2 sum J_2k = 1.
"""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft.compiler.primitives.control import fori_loop
from redraft.runtime.array import Array

from redraft.scipy.special_functions.common import counter, real_float

_SERIES_LIMIT = 15.0
_SERIES_TERMS = 40
_ASYMPTOTIC_TERMS = 12


def _series_step(k, carry):
    y, order, term, total = carry
    kf = counter(k, y)
    term = term * y / (kf * (kf + order))
    return y, order, term, total + term


def _power_series(x: Array, order: int) -> Array:
    """sum_k (x/2)^(2k+order) / (k! (k+order)!), for order 0 or 1 (odd in x for order 1)."""
    half = x / 2
    first = jnp.ones_like(x) if order == 0 else half
    order_array = jnp.zeros_like(x) + order
    carry = (half * half, order_array, first, first)
    return fori_loop(1, _SERIES_TERMS, _series_step, carry)[3]


def _asymptotic_scaled(a: Array, order: int) -> Array:
    """e^-a I_order(a) for large positive a by A&S 9.7.1."""
    mu = 4.0 * order * order
    total = jnp.ones_like(a)
    coefficient = 1.0
    power = jnp.ones_like(a)
    for k in range(1, _ASYMPTOTIC_TERMS):
        coefficient *= -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        power = power / a
        total = total + coefficient * power
    return total / jnp.sqrt(2 * math.pi * a)


def _scaled(x: Array, order: int) -> Array:
    """e^-|x| I_order(x)."""
    a = jnp.abs(x)
    near = a <= _SERIES_LIMIT
    x_near = jnp.where(near, x, 0.0)
    a_far = jnp.where(near, 2 * _SERIES_LIMIT, a)
    series = jnp.exp(-jnp.abs(x_near)) * _power_series(x_near, order)
    far = _asymptotic_scaled(a_far, order)
    if order == 1:
        far = jnp.where(x < 0, -far, far)
    return jnp.where(near, series, far)


def i0e(x) -> Array:
    """The exponentially scaled modified Bessel function of order 0, e^-|x| I0(x)."""
    return _scaled(real_float("i0e", x), 0)


def i1e(x) -> Array:
    """The exponentially scaled modified Bessel function of order 1, e^-|x| I1(x)."""
    return _scaled(real_float("i1e", x), 1)


def i0(x) -> Array:
    """The modified Bessel function of order 0, I0(x)."""
    v = real_float("i0", x)
    return jnp.exp(jnp.abs(v)) * _scaled(v, 0)


def i1(x) -> Array:
    """The modified Bessel function of order 1, I1(x)."""
    v = real_float("i1", x)
    return jnp.exp(jnp.abs(v)) * _scaled(v, 1)


def bessel_jn(z, v: int = 0, n_iter: int = 50) -> Array:
    """J_0(z) .. J_v(z) stacked on a new leading axis (shape (v + 1,) + z.shape), by Miller's
    backward recurrence from order n_iter (accurate while |z| is well below n_iter)."""
    v, n_iter = int(v), int(n_iter)
    if v < 0:
        raise ValueError(f"bessel_jn needs a non-negative order v, got {v}")
    if n_iter <= v:
        raise ValueError(f"bessel_jn needs n_iter > v, got n_iter={n_iter}, v={v}")
    x = real_float("bessel_jn", z)
    zero = x == 0
    safe = jnp.where(zero, 1.0, x)
    ratio = jnp.zeros_like(x)      # J_(k+1) / J_k, zero beyond the starting order
    even_sum = jnp.zeros_like(x)   # sum over even m > k of J_m / J_k, by Horner's rule
    low_ratios = []               # J_k / J_(k-1) for k = v .. 1
    for k in range(n_iter, 0, -1):
        next_ratio = ratio
        ratio = 1.0 / (2.0 * k / safe - next_ratio)   # J_k / J_(k-1)
        if k % 2 == 1:
            even_sum = ratio * next_ratio * (1.0 + even_sum)
        if k <= v:
            low_ratios.append(ratio)
    j0 = 1.0 / (1.0 + 2.0 * even_sum)
    orders = [jnp.where(zero, 1.0, j0)]
    for k in range(1, v + 1):
        orders.append(jnp.where(zero, 0.0, orders[-1] * low_ratios[v - k]))
    return jnp.stack(orders)
