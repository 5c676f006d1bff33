"""redraft.scipy.special: the special functions of jax.scipy.special that models use most.

Each is a lax primitive (erf, lgamma, digamma, erf_inv, logistic) or a short, numerically
careful composition of redraft.numpy functions. Integer inputs become float32.
"""
from __future__ import annotations

import math

from redraft.compiler.primitives import elementwise as ew
from redraft.runtime.array import Array
from redraft.runtime.eager import bind

from redraft.numpy import ufuncs
from redraft.numpy.promotion import promote_inexact
from redraft.numpy.reductions import logsumexp  # noqa: F401 - re-exported

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "expit", "logit", "gammaln", "digamma",
           "xlogy", "xlog1py", "ndtr", "ndtri", "log_ndtr", "betaln", "entr", "gamma"]


def _real_float(x, name: str) -> Array:
    out = promote_inexact(x)[0]
    if out.dtype.kind != "f":
        raise TypeError(f"{name} needs a real floating-point argument, got {out.dtype.name}")
    return out


def erf(x) -> Array:
    """The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt."""
    return bind(ew.erf_p, _real_float(x, "erf"))


def erfc(x) -> Array:
    """1 - erf(x), accurate where erf(x) is close to 1."""
    return bind(ew.erfc_p, _real_float(x, "erfc"))


def erfinv(x) -> Array:
    """The inverse of erf on (-1, 1)."""
    return bind(ew.erf_inv_p, _real_float(x, "erfinv"))


def expit(x) -> Array:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return bind(ew.logistic_p, _real_float(x, "expit"))


def logit(x) -> Array:
    """log(p / (1 - p)), the inverse of expit."""
    p = _real_float(x, "logit")
    return ufuncs.log(ufuncs.divide(p, ufuncs.subtract(1, p)))


def gammaln(x) -> Array:
    """log|Gamma(x)|."""
    return bind(ew.lgamma_p, _real_float(x, "gammaln"))


def gamma(x) -> Array:
    """Gamma(x) as sign * exp(gammaln(x)) (the sign alternates on negative intervals)."""
    v = _real_float(x, "gamma")
    negative_odd = ufuncs.logical_and(ufuncs.less(v, 0),
                                      ufuncs.equal(ufuncs.remainder(ufuncs.floor(v), 2), 1))
    sign = ufuncs.where(negative_odd, -1.0, 1.0)
    return ufuncs.multiply(sign, ufuncs.exp(gammaln(v)))


def digamma(x) -> Array:
    """psi(x) = d/dx log Gamma(x)."""
    return bind(ew.digamma_p, _real_float(x, "digamma"))


def betaln(a, b) -> Array:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = promote_inexact(a, b)
    return ufuncs.subtract(ufuncs.add(gammaln(a), gammaln(b)), gammaln(ufuncs.add(a, b)))


def _x_times(x: Array, fn, y: Array, safe_y: float) -> Array:
    """x * fn(y), defined as 0 where x == 0 (there fn sees `safe_y`, so neither the value
    nor a gradient meets inf or nan)."""
    x_zero = ufuncs.equal(x, 0)
    finite_y = ufuncs.where(x_zero, safe_y, y)
    return ufuncs.where(x_zero, 0, ufuncs.multiply(x, fn(finite_y)))


def xlogy(x, y) -> Array:
    """x * log(y), with 0 * log(0) = 0."""
    x, y = promote_inexact(x, y)
    return _x_times(x, ufuncs.log, y, 1.0)


def xlog1py(x, y) -> Array:
    """x * log1p(y), with 0 * log1p(-1) = 0."""
    x, y = promote_inexact(x, y)
    return _x_times(x, ufuncs.log1p, y, 0.0)


def entr(x) -> Array:
    """-x * log(x) for x > 0, 0 at 0, -inf for x < 0."""
    v = _real_float(x, "entr")
    value = ufuncs.negative(xlogy(v, v))
    return ufuncs.where(ufuncs.less(v, 0), -math.inf, value)


def ndtr(x) -> Array:
    """The standard normal CDF: 0.5 * erfc(-x / sqrt(2))."""
    v = _real_float(x, "ndtr")
    return ufuncs.multiply(erfc(ufuncs.multiply(v, -1 / math.sqrt(2))), 0.5)


def log_ndtr(x) -> Array:
    """log of the standard normal CDF, computed as log(ndtr(x)) for x > -5 and through the
    asymptotic series of the Mills ratio below, where ndtr underflows."""
    v = _real_float(x, "log_ndtr")
    tail = ufuncs.less(v, -5.0)
    safe_mid = ufuncs.where(tail, 0.0, v)
    mid = ufuncs.log(ndtr(safe_mid))
    z = ufuncs.where(tail, v, -10.0)
    z2 = ufuncs.multiply(z, z)
    series = ufuncs.add(1.0, ufuncs.divide(-1.0, z2))
    series = ufuncs.add(series, ufuncs.divide(3.0, ufuncs.multiply(z2, z2)))
    low = ufuncs.subtract(ufuncs.subtract(ufuncs.multiply(z2, -0.5),
                                          ufuncs.log(ufuncs.negative(z))),
                          0.5 * math.log(2 * math.pi))
    low = ufuncs.add(low, ufuncs.log(series))
    return ufuncs.where(tail, low, mid)


def ndtri(p) -> Array:
    """The inverse of ndtr: sqrt(2) * erfinv(2p - 1)."""
    v = _real_float(p, "ndtri")
    return ufuncs.multiply(erfinv(ufuncs.subtract(ufuncs.multiply(v, 2), 1)), math.sqrt(2))
