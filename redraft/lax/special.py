"""Exponentially scaled modified Bessel functions: bessel_i0e and bessel_i1e.

i0e(x) = exp(-|x|) I0(x) and i1e(x) = exp(-|x|) I1(x), composed of lax operations: the
power series of I0 and I1 (all terms positive, so it sums without cancellation) for
|x| <= 15, times exp(-|x|), and Hankel's asymptotic expansion beyond, which needs no
exponential at all. Each branch sees only the inputs it is meant for (a safe stand-in
elsewhere), so neither overflows where the other is chosen. The derivatives are rules
(compiler/transforms/ad/rules/lax_composed.py): i0e' = i1e - sign(x) i0e and
i1e' = i0e - i1e (sign(x) + 1/x).
"""
from __future__ import annotations

from redraft.compiler.primitives.checks import check_dtype_kind
from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS, convert_element_type, select
from redraft.compiler.primitives.shape import broadcast_in_dim
from redraft.numpy.creation import asarray
from redraft.runtime.array import Array

__all__ = ["bessel_i0e", "bessel_i1e"]

_ABS, _EXP, _SQRT, _LE, _SIGN, _NEG = (LAX_FUNCTIONS[n] for n in (
    "abs", "exp", "sqrt", "le", "sign", "neg"))

_SWITCH = 15.0  # series below, asymptotic expansion above
_SERIES_TERMS = 48  # the series' terms are below float64 rounding by then at |x| = 15
_ASYMPTOTIC_TERMS = 12


def _check(dtype, op: str) -> None:
    check_dtype_kind(dtype, "f", op, "a floating-point operand")


def _series(x: Array, order: int) -> Array:
    """I_order(x) for order 0 or 1 by its power series in (x/2)^2."""
    quarter = x * x * 0.25
    term = x * 0.5 if order == 1 else quarter * 0.0 + 1.0
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * quarter / float(k * (k + order))
        total = total + term
    return total


def _asymptotic(ax: Array, order: int) -> Array:
    """exp(-x) I_order(x) for large x > 0: (2 pi x)^(-1/2) sum_k a_k, with
    a_k = -a_{k-1} (4 order^2 - (2k - 1)^2) / (8 k x)."""
    mu = 4.0 * order * order
    term = broadcast_in_dim(convert_element_type(1.0, ax.dtype), ax.shape, ())
    total = term
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = _NEG(term) * (mu - float((2 * k - 1) ** 2)) / (8.0 * k * ax)
        total = total + term
    return total / _SQRT(ax * 6.283185307179586)


def _scaled(x: Array, order: int) -> Array:
    ax = _ABS(x)
    small = _LE(ax, convert_element_type(_SWITCH, x.dtype))
    zero = convert_element_type(0.0, x.dtype)
    far = convert_element_type(2 * _SWITCH, x.dtype)
    near = _series(select(small, x, zero), order) * _EXP(_NEG(select(small, ax, zero)))
    away = _asymptotic(select(small, far, ax), order)
    if order == 1:
        away = away * _SIGN(x)
    return select(small, near, away)


def bessel_i0e(x) -> Array:
    """exp(-|x|) I0(x), elementwise, for floating-point x."""
    x = asarray(x)
    _check(x.dtype, "lax.bessel_i0e")
    return _scaled(x, 0)


def bessel_i1e(x) -> Array:
    """exp(-|x|) I1(x), elementwise, for floating-point x."""
    x = asarray(x)
    _check(x.dtype, "lax.bessel_i1e")
    return _scaled(x, 1)
