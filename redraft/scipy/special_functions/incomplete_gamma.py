"""d/da of the regularised incomplete gamma function P(a, x): lax.igamma_grad_a.

P and Q = 1 - P are summed where each converges fast, as redraft.scipy.special does: the
power series of P for x < a + 1 and the continued fraction of Q (modified Lentz) beyond. The
derivative in `a` is carried along each recurrence (forward mode written out: every quantity
with its a-derivative), over a fixed number of steps, so jit, vmap and the transforms see
plain array code. With f = exp(a log x - x - lgamma(a)):

    P = f * S,  dP/da = f * (S (log x - digamma(a)) + dS/da)       (series S)
    Q = f * H,  dP/da = -f * (H (log x - digamma(a)) + dH/da)      (continued fraction H)
"""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.compiler.primitives.control import fori_loop
from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS
from redraft.runtime.array import Array

_LGAMMA, _TAN = LAX_FUNCTIONS["lgamma"], LAX_FUNCTIONS["tan"]

_SERIES_TERMS = 200  # reaches float64 rounding for x < a + 1 up to a of several hundred
_FRACTION_TERMS = 200
_TINY = 1e-30  # Lentz's stand-in for a zero denominator (1 / _TINY stays finite in float32)


_SHIFT = 10  # psi(x) = psi(x + 10) - sum 1/(x + k): the series below is exact to 2e-14 there
# the asymptotic series' coefficients B_2j / 2j of 1/x^2j
_PSI_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760)


def digamma(x: Array) -> Array:
    """psi(x) composed of lax operations (the digamma primitive has no LLVM lowering):
    reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2, the recurrence up to
    x >= 10, then the asymptotic series; nan at the poles (0, -1, -2, ...)."""
    reflect = x < 0.5
    z = jnp.where(reflect, 1.0 - x, x)
    shift = jnp.zeros_like(z)
    for _ in range(_SHIFT):
        small = z < _SHIFT
        shift = shift - jnp.where(small, 1.0 / z, 0.0)
        z = jnp.where(small, z + 1.0, z)
    inv2 = 1.0 / (z * z)
    tail = jnp.zeros_like(z)
    for c in reversed(_PSI_SERIES):
        tail = (tail + c) * inv2
    value = shift + jnp.log(z) - 0.5 / z - tail
    pole = (x <= 0) & (x == jnp.floor(x))
    safe = jnp.where(reflect & ~pole, x, 0.25)
    value = jnp.where(reflect, value - 3.141592653589793 / _TAN(3.141592653589793 * safe),
                      value)
    return jnp.where(pole, jnp.nan, value)


def _away_from_zero(v: Array) -> Array:
    return jnp.where(jnp.abs(v) < _TINY, _TINY, v)


def _series_step(n, carry):
    """term_n = term_{n-1} x / (a + n); d term_n / da = term_n (dlog term_{n-1} - 1/(a+n))."""
    a, x, term, d_log_term, total, d_total = carry
    an = a + (jnp.zeros_like(a) + n)
    term = term * x / an
    d_log_term = d_log_term - 1.0 / an
    return a, x, term, d_log_term, total + term, d_total + term * d_log_term


def _series_grad(a: Array, x: Array, log_front_slope: Array) -> Array:
    """dP/da by the series S = sum_n x^n / (a (a+1) ... (a+n))."""
    first = 1.0 / a
    d_first = -1.0 / a
    carry = (a, x, first, d_first, first, first * d_first)
    _, _, _, _, total, d_total = fori_loop(1, _SERIES_TERMS, _series_step, carry)
    return total * log_front_slope + d_total


def _fraction_step(i, carry):
    """One Lentz step of Q's fraction, a_i = -i (i - a), b_i = x + 1 - a + 2i, with the
    a-derivatives of c, d and h carried beside them."""
    a, x, c, dc, d, dd, h, dh = carry
    fi = jnp.zeros_like(a) + i
    an = -fi * (fi - a)
    dan = fi
    b = x + 1.0 - a + 2.0 * fi
    denominator = an * d + b
    safe = _away_from_zero(denominator)
    d_next = 1.0 / safe
    dd_next = jnp.where(jnp.abs(denominator) < _TINY, 0.0,
                        -d_next * d_next * (dan * d + an * dd - 1.0))
    c_raw = b + an / c
    c_next = _away_from_zero(c_raw)
    dc_next = jnp.where(jnp.abs(c_raw) < _TINY, 0.0, -1.0 + dan / c - (an / c) * (dc / c))
    delta = d_next * c_next
    d_delta = dd_next * c_next + d_next * dc_next
    return a, x, c_next, dc_next, d_next, dd_next, h * delta, dh * delta + h * d_delta


def _fraction_grad(a: Array, x: Array, log_front_slope: Array) -> Array:
    """dP/da = -dQ/da by the continued fraction Q = f / (x + 1 - a + ...)."""
    b0 = x + 1.0 - a
    d0 = 1.0 / _away_from_zero(b0)
    dd0 = d0 * d0  # d/da (1 / b0), with db0/da = -1
    c0 = jnp.zeros_like(a) + 1.0 / _TINY
    carry = (a, x, c0, jnp.zeros_like(a), d0, dd0, d0, dd0)
    out = fori_loop(1, _FRACTION_TERMS, _fraction_step, carry)
    h, dh = out[6], out[7]
    return -(h * log_front_slope + dh)


def igamma_grad_a(a: Array, x: Array) -> Array:
    """dP(a, x)/da for floating a > 0, x >= 0 of one dtype (broadcast together); 0 at x = 0
    and nan outside the domain, as JAX gives."""
    use_series = x < a + 1.0
    valid = (a > 0) & (x > 0)
    safe_a = jnp.where(valid, a, 1.0)
    safe_x = jnp.where(valid, x, 1.0)
    log_x = jnp.log(safe_x)
    front = jnp.exp(safe_a * log_x - safe_x - _LGAMMA(safe_a))
    series_x = jnp.where(use_series, safe_x, 0.5 * safe_a)
    fraction_x = jnp.where(use_series, safe_a + 2.0, safe_x)
    series_slope = jnp.log(series_x) - digamma(safe_a)
    fraction_slope = jnp.log(fraction_x) - digamma(safe_a)
    by_series = _series_grad(safe_a, series_x, series_slope)
    by_fraction = _fraction_grad(safe_a, fraction_x, fraction_slope)
    value = front * jnp.where(use_series, by_series, by_fraction)
    value = jnp.where(x == 0, 0.0, value)
    bad = (a <= 0) | (x < 0) | jnp.isnan(a) | jnp.isnan(x)
    return jnp.where(bad, jnp.nan, value)
