"""redraft.scipy.special: the special functions of jax.scipy.special that models use most.

Each is a lax primitive (erf, lgamma, digamma, erf_inv, logistic) or a short, numerically
careful composition of redraft.numpy functions. Integer inputs become float32.
"""
from __future__ import annotations

import math

from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives.control import fori_loop as _fori_loop
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


def xlogy(x, y) -> Array:
    """x * log(y), with 0 * log(0) = 0 (log sees 1 there, so no inf or nan reaches a
    gradient)."""
    x, y = promote_inexact(x, y)
    x_zero = ufuncs.equal(x, 0)
    safe_y = ufuncs.where(x_zero, 1.0, y)
    return ufuncs.where(x_zero, 0, ufuncs.multiply(x, ufuncs.log(safe_y)))


def xlog1py(x, y) -> Array:
    """x * log1p(y), with 0 * log1p(-1) = 0."""
    x, y = promote_inexact(x, y)
    x_zero = ufuncs.equal(x, 0)
    safe_y = ufuncs.where(x_zero, 0.0, y)
    return ufuncs.where(x_zero, 0, ufuncs.multiply(x, ufuncs.log1p(safe_y)))


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


# ---- incomplete gamma and beta functions -----------------------------------------------------
# Written with redraft.numpy and lax.fori_loop over a fixed number of terms, so jit and the
# transforms see plain array code: a power series where it converges fast and a continued
# fraction (modified Lentz) elsewhere, as in Numerical Recipes sections 6.2 and 6.4.

_SERIES_TERMS = 80
_FRACTION_TERMS = 80
_TINY = 1e-30


def _away_from_zero(v: Array) -> Array:
    return ufuncs.where(ufuncs.less(ufuncs.absolute(v), _TINY), _TINY, v)


def _as_float(i, like: Array) -> Array:
    """The loop counter i as an array of like's dtype."""
    return ufuncs.add(ufuncs.multiply(like, 0.0), i)


def _gamma_series_step(n, carry):
    a, x, term, total = carry
    term = ufuncs.multiply(term, ufuncs.divide(x, ufuncs.add(a, _as_float(n, a))))
    return a, x, term, ufuncs.add(total, term)


def _gamma_series(a: Array, x: Array) -> Array:
    """P(a, x) by its power series; accurate for x < a + 1."""
    first = ufuncs.divide(1.0, a)
    _, _, _, total = _fori_loop(1, _SERIES_TERMS, _gamma_series_step, (a, x, first, first))
    log_front = ufuncs.subtract(ufuncs.subtract(xlogy(a, x), x), gammaln(a))
    return ufuncs.multiply(total, ufuncs.exp(log_front))


def _gamma_fraction_step(i, carry):
    a, x, c, d, h = carry
    fi = _as_float(i, a)
    an = ufuncs.multiply(ufuncs.negative(fi), ufuncs.subtract(fi, a))
    b = ufuncs.add(ufuncs.subtract(ufuncs.add(x, 1.0), a), ufuncs.multiply(fi, 2.0))
    d_next = ufuncs.divide(1.0, _away_from_zero(ufuncs.add(ufuncs.multiply(an, d), b)))
    c_next = _away_from_zero(ufuncs.add(b, ufuncs.divide(an, c)))
    return a, x, c_next, d_next, ufuncs.multiply(h, ufuncs.multiply(d_next, c_next))


def _gamma_fraction(a: Array, x: Array) -> Array:
    """Q(a, x) = 1 - P(a, x) by its continued fraction; accurate for x >= a + 1."""
    b0 = ufuncs.subtract(ufuncs.add(x, 1.0), a)
    c0 = ufuncs.add(ufuncs.multiply(x, 0.0), 1.0 / _TINY)
    d0 = ufuncs.divide(1.0, b0)
    _, _, _, _, h = _fori_loop(1, _FRACTION_TERMS, _gamma_fraction_step,
                                  (a, x, c0, d0, d0))
    log_front = ufuncs.subtract(ufuncs.subtract(xlogy(a, x), x), gammaln(a))
    return ufuncs.multiply(h, ufuncs.exp(log_front))


def _incomplete_gamma(a, x, name: str) -> tuple[Array, Array, Array, Array]:
    """(a, x, P, Q) with P + Q = 1, each from the side where it is accurate."""
    a, x = promote_inexact(a, x)
    a, x = ufuncs.add(a, ufuncs.multiply(x, 0.0)), ufuncs.add(x, ufuncs.multiply(a, 0.0))
    use_series = ufuncs.less(x, ufuncs.add(a, 1.0))
    safe_x = ufuncs.where(ufuncs.greater(x, 0), x, 1.0)
    safe_a = ufuncs.where(ufuncs.greater(a, 0), a, 1.0)
    p_series = _gamma_series(safe_a, ufuncs.where(use_series, safe_x, 0.5 * safe_a))
    q_fraction = _gamma_fraction(safe_a, ufuncs.where(use_series, safe_a + 2.0, safe_x))
    p = ufuncs.where(use_series, p_series, ufuncs.subtract(1.0, q_fraction))
    q = ufuncs.where(use_series, ufuncs.subtract(1.0, p_series), q_fraction)
    return a, x, p, q


def gammainc(a, x) -> Array:
    """The regularised lower incomplete gamma function P(a, x) (a > 0, x >= 0)."""
    a, x, p, _ = _incomplete_gamma(a, x, "gammainc")
    p = ufuncs.where(ufuncs.equal(x, 0), 0.0, p)
    bad = ufuncs.logical_or(ufuncs.less_equal(a, 0), ufuncs.less(x, 0))
    return ufuncs.where(bad, math.nan, p)


def gammaincc(a, x) -> Array:
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x, _, q = _incomplete_gamma(a, x, "gammaincc")
    q = ufuncs.where(ufuncs.equal(x, 0), 1.0, q)
    bad = ufuncs.logical_or(ufuncs.less_equal(a, 0), ufuncs.less(x, 0))
    return ufuncs.where(bad, math.nan, q)


def _beta_fraction_step(m, carry):
    a, b, x, c, d, h = carry
    fm = _as_float(m, a)
    m2 = ufuncs.multiply(fm, 2.0)
    qab, qap, qam = ufuncs.add(a, b), ufuncs.add(a, 1.0), ufuncs.subtract(a, 1.0)
    even = ufuncs.divide(ufuncs.multiply(fm, ufuncs.multiply(ufuncs.subtract(b, fm), x)),
                         ufuncs.multiply(ufuncs.add(qam, m2), ufuncs.add(a, m2)))
    d1 = ufuncs.divide(1.0, _away_from_zero(ufuncs.add(1.0, ufuncs.multiply(even, d))))
    c1 = _away_from_zero(ufuncs.add(1.0, ufuncs.divide(even, c)))
    h1 = ufuncs.multiply(h, ufuncs.multiply(d1, c1))
    odd = ufuncs.negative(ufuncs.divide(
        ufuncs.multiply(ufuncs.multiply(ufuncs.add(a, fm), ufuncs.add(qab, fm)), x),
        ufuncs.multiply(ufuncs.add(a, m2), ufuncs.add(qap, m2))))
    d2 = ufuncs.divide(1.0, _away_from_zero(ufuncs.add(1.0, ufuncs.multiply(odd, d1))))
    c2 = _away_from_zero(ufuncs.add(1.0, ufuncs.divide(odd, c1)))
    return a, b, x, c2, d2, ufuncs.multiply(h1, ufuncs.multiply(d2, c2))


def _beta_fraction(a: Array, b: Array, x: Array) -> Array:
    """The continued fraction of I_x(a, b), converging fast for x < (a + 1) / (a + b + 2)."""
    c0 = ufuncs.add(ufuncs.multiply(x, 0.0), 1.0)
    first = ufuncs.subtract(1.0, ufuncs.divide(ufuncs.multiply(ufuncs.add(a, b), x),
                                               ufuncs.add(a, 1.0)))
    d0 = ufuncs.divide(1.0, _away_from_zero(first))
    out = _fori_loop(1, _FRACTION_TERMS, _beta_fraction_step, (a, b, x, c0, d0, d0))
    return out[5]


def betainc(a, b, x) -> Array:
    """The regularised incomplete beta function I_x(a, b) (a, b > 0, 0 <= x <= 1)."""
    a, b = promote_inexact(a, b)
    a, x = promote_inexact(a, x)
    b, x = promote_inexact(b, x)
    zero = ufuncs.multiply(ufuncs.add(ufuncs.add(a, b), x), 0.0)
    a, b, x = ufuncs.add(a, zero), ufuncs.add(b, zero), ufuncs.add(x, zero)
    safe_x = ufuncs.clip(x, 1e-30, 1 - 1e-7)
    log_front = ufuncs.subtract(ufuncs.add(xlogy(a, safe_x), xlog1py(b, ufuncs.negative(safe_x))),
                                betaln(a, b))
    front = ufuncs.exp(log_front)
    direct = ufuncs.less(safe_x, ufuncs.divide(ufuncs.add(a, 1.0), ufuncs.add(ufuncs.add(a, b),
                                                                              2.0)))
    xa, xb = ufuncs.where(direct, a, b), ufuncs.where(direct, b, a)
    xx = ufuncs.where(direct, safe_x, ufuncs.subtract(1.0, safe_x))
    fraction = _beta_fraction(xa, xb, xx)
    value = ufuncs.where(direct, ufuncs.divide(ufuncs.multiply(front, fraction), a),
                         ufuncs.subtract(1.0, ufuncs.divide(ufuncs.multiply(front, fraction),
                                                            b)))
    value = ufuncs.where(ufuncs.less_equal(x, 0), 0.0, ufuncs.where(ufuncs.greater_equal(x, 1),
                                                                     1.0, value))
    bad = ufuncs.logical_or(ufuncs.logical_or(ufuncs.less_equal(a, 0), ufuncs.less_equal(b, 0)),
                            ufuncs.logical_or(ufuncs.less(x, 0), ufuncs.greater(x, 1)))
    return ufuncs.where(bad, math.nan, value)


# ---- elementary compositions -----------------------------------------------------------------

def beta(a, b) -> Array:
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), for positive arguments."""
    return ufuncs.exp(betaln(a, b))


def factorial(n, exact: bool = False) -> Array:
    """n! = Gamma(n + 1) for n >= 0 (0 for negative n)."""
    if exact:
        raise ValueError("factorial with exact=True is not supported (as in JAX)")
    v = promote_inexact(n)[0]
    return ufuncs.where(ufuncs.less(v, 0), 0.0, ufuncs.exp(gammaln(ufuncs.add(v, 1.0))))


def poch(z, m) -> Array:
    """The rising factorial Gamma(z + m) / Gamma(z), for positive z and z + m."""
    z, m = promote_inexact(z, m)
    return ufuncs.exp(ufuncs.subtract(gammaln(ufuncs.add(z, m)), gammaln(z)))


def gammasgn(x) -> Array:
    """The sign of Gamma(x): +1 for x > 0, alternating between the poles for x < 0, nan at
    the poles."""
    v = _real_float(x, "gammasgn")
    floor = ufuncs.floor(v)
    odd = ufuncs.equal(ufuncs.remainder(floor, 2.0), 1.0)
    negative_sign = ufuncs.where(odd, -1.0, 1.0)
    sign = ufuncs.where(ufuncs.greater(v, 0), 1.0, negative_sign)
    pole = ufuncs.logical_and(ufuncs.less_equal(v, 0), ufuncs.equal(v, floor))
    return ufuncs.where(pole, math.nan, sign)


def loggamma(x) -> Array:
    """The principal branch of log Gamma(x) for real x > 0 (gammaln there); nan for x <= 0,
    where the real result would need complex values."""
    v = _real_float(x, "loggamma")
    return ufuncs.where(ufuncs.greater(v, 0), gammaln(v), math.nan)


def multigammaln(a, d: int) -> Array:
    """The log of the multivariate gamma function of dimension d."""
    v = promote_inexact(a)[0]
    d = int(d)
    total = (d * (d - 1) / 4) * math.log(math.pi)
    out = ufuncs.add(ufuncs.multiply(v, 0.0), total)
    for j in range(d):
        out = ufuncs.add(out, gammaln(ufuncs.subtract(v, j / 2)))
    return out


def rel_entr(x, y) -> Array:
    """x log(x / y) for x, y > 0; 0 at x = 0, y >= 0; inf otherwise."""
    x, y = promote_inexact(x, y)
    both = ufuncs.logical_and(ufuncs.greater(x, 0), ufuncs.greater(y, 0))
    safe_x = ufuncs.where(both, x, 1.0)
    safe_y = ufuncs.where(both, y, 1.0)
    value = ufuncs.multiply(safe_x, ufuncs.log(ufuncs.divide(safe_x, safe_y)))
    zero = ufuncs.logical_and(ufuncs.equal(x, 0), ufuncs.greater_equal(y, 0))
    return ufuncs.where(both, value, ufuncs.where(zero, 0.0, math.inf))


def kl_div(x, y) -> Array:
    """x log(x / y) - x + y for x, y > 0; y at x = 0, y >= 0; inf otherwise."""
    x, y = promote_inexact(x, y)
    base = rel_entr(x, y)
    return ufuncs.where(ufuncs.isinf(base), math.inf, ufuncs.add(ufuncs.subtract(base, x), y))


def boxcox(x, lmbda) -> Array:
    """The Box-Cox transform (x**lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = promote_inexact(x, lmbda)
    zero = ufuncs.equal(lmbda, 0)
    safe = ufuncs.where(zero, 1.0, lmbda)
    power = ufuncs.divide(ufuncs.expm1(ufuncs.multiply(safe, ufuncs.log(x))), safe)
    return ufuncs.where(zero, ufuncs.log(x), power)


def boxcox1p(x, lmbda) -> Array:
    """boxcox(1 + x, lmbda), accurate for small x."""
    x, lmbda = promote_inexact(x, lmbda)
    zero = ufuncs.equal(lmbda, 0)
    safe = ufuncs.where(zero, 1.0, lmbda)
    power = ufuncs.divide(ufuncs.expm1(ufuncs.multiply(safe, ufuncs.log1p(x))), safe)
    return ufuncs.where(zero, ufuncs.log1p(x), power)


def comb(N, k, exact: bool = False, repetition: bool = False) -> Array:
    """The binomial coefficient N choose k (with repetition: N + k - 1 choose k); 0 outside
    0 <= k <= N."""
    if exact:
        raise ValueError("comb with exact=True is not supported (as in JAX)")
    n, k = promote_inexact(N, k)
    if repetition:
        n = ufuncs.subtract(ufuncs.add(n, k), 1.0)
    log_c = ufuncs.subtract(gammaln(ufuncs.add(n, 1.0)),
                            ufuncs.add(gammaln(ufuncs.add(k, 1.0)),
                                       gammaln(ufuncs.add(ufuncs.subtract(n, k), 1.0))))
    valid = ufuncs.logical_and(ufuncs.greater_equal(k, 0), ufuncs.less_equal(k, n))
    return ufuncs.where(valid, ufuncs.exp(log_c), 0.0)


def softmax(x, axis=-1) -> Array:
    """exp(x) / sum(exp(x)) along axis (jax.nn.softmax)."""
    from redraft import nn
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1) -> Array:
    """x - logsumexp(x) along axis (jax.nn.log_softmax)."""
    from redraft import nn
    return nn.log_softmax(x, axis=axis)


__all__ += ["gammainc", "gammaincc", "betainc", "beta", "factorial", "poch", "gammasgn",
            "loggamma", "multigammaln", "rel_entr", "kl_div", "boxcox", "boxcox1p", "comb",
            "softmax", "log_softmax"]


# ---- Bessel, exponential-integral, zeta and hypergeometric families (special_functions/) ------

from redraft.scipy.special_functions.bessel import bessel_jn, i0, i0e, i1, i1e  # noqa: E402
from redraft.scipy.special_functions.error_family import (dawsn, erfcx, fresnel,  # noqa: E402
                                                          owens_t)
from redraft.scipy.special_functions.exponential_integrals import (exp1, expi,  # noqa: E402
                                                                   expn, sici)
from redraft.scipy.special_functions.hypergeometric import hyp1f1, hyp2f1  # noqa: E402
from redraft.scipy.special_functions.zeta import bernoulli, polygamma, spence, zeta  # noqa: E402

__all__ += ["bessel_jn", "i0", "i0e", "i1", "i1e", "dawsn", "erfcx", "fresnel", "owens_t",
            "exp1", "expi", "expn", "sici", "hyp1f1", "hyp2f1", "bernoulli", "polygamma",
            "spence", "zeta"]

from redraft.scipy.special_functions.complex_valued import sph_harm_y, wofz  # noqa: E402

__all__ += ["sph_harm_y", "wofz"]
