"""lax's special functions that redraft.scipy.special's compositions compute: igamma,
igammac, igamma_grad_a, polygamma, zeta and betainc, in JAX's argument order and with lax's
dtype rule (floating operands of one dtype; a weakly typed Python scalar takes the other's).

They live here, beside the compositions, and redraft/__init__.py hands them down to
redraft.lax (which sits below redraft.numpy and scipy and cannot import them). Their
derivatives are rules as JAX's (compiler/transforms/ad/rules/lax_special.py): in both
arguments for igamma and igammac, in x only for igamma_grad_a, polygamma and betainc, in q
for zeta.
"""
from __future__ import annotations

import math

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.checks import check_dtype_kind
from redraft.numpy.promotion import promote_inexact
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.scipy import special
from redraft.scipy.special_functions import incomplete_gamma

__all__ = ["igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "betainc"]


def _check_floating(op: str, dtype, weak: bool, other, other_weak: bool) -> None:
    """Refuse a non-floating operand, and two strongly typed operands of different dtypes."""
    check_dtype_kind(dtype, "f", op, "a floating-point operand")
    check_dtype_kind(other, "f", op, "a floating-point operand")
    if not weak and not other_weak and dtype != other:
        raise TypeError(f"{op} requires arguments of the same dtype, got {dtype.name}, "
                        f"{other.name} (redraft.numpy promotes types; redraft.lax does not)")


def igamma(a, x) -> Array:
    """The regularised lower incomplete gamma function P(a, x) (JAX's lax.igamma)."""
    a, x = as_array(a), as_array(x)
    _check_floating("lax.igamma", a.dtype, a.weak_type, x.dtype, x.weak_type)
    a, x = promote_inexact(a, x)
    return special.gammainc(a, x)


def igammac(a, x) -> Array:
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = as_array(a), as_array(x)
    _check_floating("lax.igammac", a.dtype, a.weak_type, x.dtype, x.weak_type)
    a, x = promote_inexact(a, x)
    return special.gammaincc(a, x)


def igamma_grad_a(a, x) -> Array:
    """dP(a, x)/da, the derivative of igamma in its first argument."""
    a, x = as_array(a), as_array(x)
    _check_floating("lax.igamma_grad_a", a.dtype, a.weak_type, x.dtype, x.weak_type)
    a, x = promote_inexact(a, x)
    a, x = a + x * 0.0, x + a * 0.0
    return incomplete_gamma.igamma_grad_a(a, x)


def polygamma(m, x) -> Array:
    """psi^(m)(x), the m-th derivative of digamma, for a whole-number float m >= 0 (nan for
    other m) and x of m's dtype."""
    m, x = as_array(m), as_array(x)
    _check_floating("lax.polygamma", m.dtype, m.weak_type, x.dtype, x.weak_type)
    m, x = promote_inexact(m, x)
    m, x = m + x * 0.0, x + m * 0.0
    whole = (m >= 0) & (m == jnp.floor(m))
    m_pos = jnp.where(m >= 1, m, 1.0)
    sign = jnp.where(jnp.remainder(m_pos, 2.0) == 1.0, 1.0, -1.0)
    higher = sign * jnp.exp(lax.lgamma(m_pos + 1.0)) * special.zeta(m_pos + 1.0, x)
    value = jnp.where(m == 0, incomplete_gamma.digamma(x), higher)
    return jnp.where(whole, value, math.nan)


def zeta(x, q) -> Array:
    """The Hurwitz zeta function sum_k (q + k)^-x (x > 1, q > 0)."""
    x, q = as_array(x), as_array(q)
    _check_floating("lax.zeta", x.dtype, x.weak_type, q.dtype, q.weak_type)
    x, q = promote_inexact(x, q)
    return special.zeta(x, q)


def betainc(a, b, x) -> Array:
    """The regularised incomplete beta function I_x(a, b)."""
    a, b, x = as_array(a), as_array(b), as_array(x)
    _check_floating("lax.betainc", a.dtype, a.weak_type, b.dtype, b.weak_type)
    _check_floating("lax.betainc", a.dtype, a.weak_type, x.dtype, x.weak_type)
    _check_floating("lax.betainc", b.dtype, b.weak_type, x.dtype, x.weak_type)
    return special.betainc(a, b, x)

