"""Functions of the error-function family: erfcx, Dawson's integral, the Fresnel integrals and
Owen's T.

Each switches between a series (or erfc itself) near zero and an asymptotic expansion or
continued fraction far from it, choosing per element with `where` on arguments made safe for
the branch not taken, so no inf or nan of the unused branch reaches a derivative.
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.control import fori_loop
from redraft.runtime.array import Array

from redraft.scipy.special_functions import complex_pairs as cp
from redraft.scipy.special_functions.common import (TINY, counter, real_float,
                                                    real_floats2)

_ERFCX_LIMIT = 5.0
_DAWSON_LIMIT = 4.0


def _asymptotic_mills(a: Array, terms: int) -> Array:
    """sum_k (-1)^k (2k-1)!! / (2 a^2)^k, the series of sqrt(pi) a erfcx(a) for large a."""
    total = jnp.ones_like(a)
    term = jnp.ones_like(a)
    inv = 1.0 / (2.0 * a * a)
    for k in range(1, terms):
        term = -term * (2 * k - 1) * inv
        total = total + term
    return total


def erfcx(x) -> Array:
    """The scaled complementary error function exp(x^2) erfc(x)."""
    v = real_float("erfcx", x)
    a = jnp.abs(v)
    near = a < _ERFCX_LIMIT
    a_near = jnp.where(near, a, 0.0)
    a_far = jnp.where(near, _ERFCX_LIMIT, a)
    direct = jnp.exp(a_near * a_near) * lax.erfc(a_near)
    far = _asymptotic_mills(a_far, 10) / (a_far * math.sqrt(math.pi))
    positive = jnp.where(near, direct, far)
    return jnp.where(v < 0, 2.0 * jnp.exp(v * v) - positive, positive)


def _dawson_step(n, carry):
    y, term, total = carry
    nf = counter(n, y)
    term = term * y / nf
    return y, term, total + term / (2.0 * nf + 1.0)


def dawsn(x) -> Array:
    """Dawson's integral exp(-x^2) integral_0^x exp(t^2) dt.

    exp(-x^2) sum_n x^(2n+1) / (n! (2n+1)) (positive terms, no cancellation) for |x| < 4;
    (1 / 2x) sum_k (2k-1)!! / (2x^2)^k beyond."""
    v = real_float("dawsn", x)
    a = jnp.abs(v)
    near = a < _DAWSON_LIMIT
    x_near = jnp.where(near, v, 0.0)
    x_far = jnp.where(near, _DAWSON_LIMIT, v)
    y = x_near * x_near
    _, _, total = fori_loop(1, 70, _dawson_step, (y, jnp.ones_like(y), jnp.ones_like(y)))
    series = jnp.exp(-y) * x_near * total
    inv = 1.0 / (2.0 * x_far * x_far)
    far_total = jnp.ones_like(x_far)
    term = jnp.ones_like(x_far)
    for k in range(1, 14):
        term = term * (2 * k - 1) * inv
        far_total = far_total + term
    far = far_total / (2.0 * x_far)
    return jnp.where(near, series, far)


# ---- Fresnel integrals -----------------------------------------------------------------------

_FRESNEL_LIMIT = 1.5


def _fresnel_series(t: Array) -> tuple[Array, Array]:
    """S(t), C(t) by their power series: the k-th term of t (pi t^2 / 2)^k / k! goes to C for
    even k and to S for odd k, with signs + + - - ..., divided by 2k + 1."""
    z = 0.5 * math.pi * t * t
    term = t
    c_sum, s_sum = t, jnp.zeros_like(t)
    for k in range(1, 22):
        term = term * z / k
        signed = term / (2 * k + 1) if (k // 2) % 2 == 0 else -term / (2 * k + 1)
        if k % 2 == 0:
            c_sum = c_sum + signed
        else:
            s_sum = s_sum + signed
    return s_sum, c_sum


def _fresnel_fraction_step(k, carry):
    b, c, d, h = carry
    n = 2.0 * counter(k, b[0]) - 3.0          # n = -1 + 2 (k - 1)
    a = -n * (n + 1.0)
    b = (b[0] + 4.0, b[1])
    d = cp.inverse(cp.guard(cp.add(cp.scale(a, d), b), TINY))
    c = cp.guard(cp.add(b, cp.scale(a, cp.inverse(c))), TINY)
    return b, c, d, cp.mul(h, cp.mul(c, d))


def _fresnel_fraction(t: Array) -> tuple[Array, Array]:
    """S(t), C(t) for t >= 1.5 from the continued fraction of erfc (Numerical Recipes 6.8)."""
    pix2 = math.pi * t * t
    zero = jnp.zeros_like(t)
    b = (jnp.ones_like(t), -pix2)
    c = (zero + 1.0 / TINY, zero)
    d = cp.inverse(b)
    _, _, _, h = fori_loop(2, 60, _fresnel_fraction_step, (b, c, d, d))
    h = cp.mul((t, -t), h)
    phase = (jnp.cos(0.5 * pix2), jnp.sin(0.5 * pix2))
    one_minus = cp.add((jnp.ones_like(t), zero), cp.scale(-1.0, cp.mul(phase, h)))
    cs = cp.mul((zero + 0.5, zero + 0.5), one_minus)
    return cs[1], cs[0]


def fresnel(x) -> tuple[Array, Array]:
    """The Fresnel integrals (S(x), C(x)) = integral_0^x (sin, cos)(pi t^2 / 2) dt."""
    v = real_float("fresnel", x)
    t = jnp.abs(v)
    near = t < _FRESNEL_LIMIT
    s_near, c_near = _fresnel_series(jnp.where(near, t, 0.0))
    s_far, c_far = _fresnel_fraction(jnp.where(near, 2 * _FRESNEL_LIMIT, t))
    sign = jnp.where(v < 0, -1.0, 1.0)
    return (sign * jnp.where(near, s_near, s_far), sign * jnp.where(near, c_near, c_far))


# ---- Owen's T --------------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)
_UNIT_NODES = ((_GL_NODES + 1) / 2).tolist()
_UNIT_WEIGHTS = (_GL_WEIGHTS / 2).tolist()


def _ndtr(x: Array) -> Array:
    return 0.5 * lax.erfc(-x / math.sqrt(2))


def _owens_t_unit(h: Array, a: Array) -> Array:
    """T(h, a) for 0 <= a <= 1: a / 2pi integral_0^1 exp(-h^2 (1 + a^2 u^2) / 2) /
    (1 + a^2 u^2) du by 24-point Gauss-Legendre (the integrand is smooth and bounded)."""
    total = jnp.zeros_like(h)
    for u, w in zip(_UNIT_NODES, _UNIT_WEIGHTS):
        q = 1.0 + (a * u) ** 2
        total = total + w * jnp.exp(-0.5 * h * h * q) / q
    return a * total / (2 * math.pi)


def owens_t(h, a) -> Array:
    """Owen's T function T(h, a) = 1/2pi integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx.

    Even in h and odd in a; for |a| > 1 by T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2
    - T(ah, 1/a) (h, a >= 0; Q = 1 - Phi), which keeps the quadrature on [0, 1]."""
    h, a = real_floats2("owens_t", h, a)
    habs, aabs = jnp.abs(h), jnp.abs(a)
    inside = aabs <= 1.0
    a_in = jnp.where(inside, aabs, 0.0)
    a_out = jnp.where(inside, 2.0, aabs)
    ah = a_out * habs
    reflected = 0.5 * (_ndtr(habs) * _ndtr(-ah) + _ndtr(ah) * _ndtr(-habs)) \
        - _owens_t_unit(ah, 1.0 / a_out)
    value = jnp.where(inside, _owens_t_unit(habs, a_in), reflected)
    return jnp.where(a < 0, -value, value)
