"""Discrete families: geometric (one uniform draw), poisson (Knuth's product of uniforms for
small rates, Hormann's transformed rejection for large ones), binomial (inversion for small
means, Hormann's BTRS rejection for large ones) and multinomial (binomials in turn).

The rejection samplers loop until every element is accepted, drawing all elements' candidates
from one key per round, exactly as JAX's while loops do, so the samples are JAX's bits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from redraft.kernels import threefry
from redraft.random import xla_math
from redraft.random.basic import (KeyLike, Shape, _dtype, _result_shape,
                                  _sample, _sampler, _shape, _single_key, _uniform)
from redraft.random.continuous import float_dtype, is_constant
from redraft.runtime import dtypes
from redraft.runtime.dtypes import canonicalize

F32 = np.float32

# Rounds after which a rejection loop gives up on elements it cannot accept (an infinite rate
# or count makes every candidate NaN; JAX's loops run 2**31 rounds there). A valid element is
# still unaccepted after r rounds with probability below 0.3**r.
_MAX_ROUNDS = 10_000

__all__ = ["binomial", "geometric", "multinomial", "poisson"]


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    """The integer dtype of a discrete sampler: the default int (int64 with x64 on) unless
    `dtype` says otherwise."""
    return _dtype(name, dtype, dtypes.DEFAULT_INT, "iu", "an int dtype")


def _inexact_dtype(*values: Any) -> np.dtype:
    """The float dtype JAX computes in for these parameters (promote_dtypes_inexact): the
    widest float among the arrays, else the default float (Python numbers and integer arrays
    take any float), canonical (float32 unless x64 is on)."""
    floats = [np.asarray(v).dtype for v in values
              if not isinstance(v, (bool, int, float)) and np.asarray(v).dtype.kind == "f"]
    widest = max(floats, key=lambda d: d.itemsize) if floats else dtypes.DEFAULT_FLOAT
    return canonicalize(np.dtype(widest))


def _probabilities(name: str, p: Any) -> Any:
    """p as an inexact array (integers become float32, as JAX promotes them)."""
    dtype = p.dtype if hasattr(p, "dtype") else np.asarray(p).dtype
    if dtype.kind not in "biuf":
        raise TypeError(f"{name}: p must be a real number or array, got dtype {dtype}")
    return p


def geometric(key: KeyLike, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Geometric samples (trials until the first success, >= 1) of success probability p:
    floor(log(u) / log(1 - p)) + 1."""
    words = _single_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    p = _probabilities("geometric", p)
    shape = _result_shape("geometric", shape, p)
    return _sample("geometric", shape, dtype, words, p=p, shape=shape, dtype=dtype.name)


@_sampler("geometric")
def _geometric_host(words: np.ndarray, p: Any, shape: tuple[int, ...], dtype: str
                    ) -> np.ndarray:
    p_arr = np.asarray(p)
    real = _inexact_dtype(p)
    math = xla_math.FloatMath(real)
    u = _uniform(words, shape, real, 0., 1.)
    u = np.where(u == 0, real.type(1), u)
    log_u = math.log(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        if is_constant(p):  # XLA folds log1p(-p) (by the C library) and divides by multiplying
            log_q = (np.log1p(-real.type(p)) if math.double
                     else xla_math.log1p_folded(-real.type(p)).astype(real))
            ratio = log_u * (real.type(1) / log_q)
        else:
            log_q = math.log1p(-p_arr.astype(real))
            ratio = log_u / np.broadcast_to(log_q, shape)
        g = np.floor(ratio) + real.type(1)
        return xla_math.to_int(g, np.dtype(dtype))


# ---- poisson ----------------------------------------------------------------------------------

def poisson(key: KeyLike, lam: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Poisson samples of rate lam (int32 unless dtype says otherwise): Knuth's method for
    lam < 10, Hormann's transformed rejection (PTRS) above."""
    words = _single_key("poisson", key)
    dtype = _int_dtype("poisson", dtype)
    _probabilities("poisson", lam)
    shape = tuple(np.shape(lam)) if shape is None else _result_shape("poisson", shape, lam)
    return _sample("poisson", shape, dtype, words, lam=lam, shape=shape, dtype=dtype.name)


def _knuth(words: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Count uniforms until their product falls below exp(-lam), all elements per round."""
    k = np.zeros(lam.shape, np.int32)
    log_prod = np.zeros(lam.shape, F32)
    key = words
    while np.any(log_prod > -lam):
        key, subkey = threefry.split(key, (2,))
        k = np.where(log_prod > -lam, k + 1, k)
        log_prod = log_prod + xla_math.log(_uniform(subkey, lam.shape, np.dtype(F32), 0., 1.))
    return k - 1


def _ptrs(words: np.ndarray, lam: np.ndarray, constant: bool) -> np.ndarray:
    """Hormann's PTRS: every round draws (u, v) for all elements; accepted candidates
    overwrite an element's result in every round (as JAX's loop does) until all accepted."""
    fma = xla_math.fma
    log_lam = xla_math.log_folded(lam) if constant else xla_math.log(lam)
    b = fma(F32(2.53), np.sqrt(lam), F32(0.931))
    a = fma(F32(0.02483), b, F32(-0.059))
    inv_alpha = F32(1.1239) + F32(1.1328) / (b - F32(3.4))
    v_r = F32(0.9277) - F32(3.6224) / (b - F32(2))
    k_out = np.full(lam.shape, F32(-1))
    accepted = np.zeros(lam.shape, bool)
    key = words
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(_MAX_ROUNDS):
            if accepted.all():
                break
            key, key_u, key_v = threefry.split(key, (3,))
            u = _uniform(key_u, lam.shape, np.dtype(F32), 0., 1.) - F32(0.5)
            v = _uniform(key_v, lam.shape, np.dtype(F32), 0., 1.)
            us = F32(0.5) - np.abs(u)
            k = np.floor(fma((F32(2) * a) / us + b, u, lam) + F32(0.43))
            s = xla_math.log((v * inv_alpha) / (a / (us * us) + b))
            t = fma(k, log_lam, -lam) - xla_math.lgamma_positive(k + F32(1))
            accept1 = (us >= F32(0.07)) & (v <= v_r)
            reject = (k < 0) | ((us < F32(0.013)) & (v > us))
            accept = accept1 | (~reject & (s <= t))
            k_out = np.where(accept, k, k_out)
            accepted |= accept
    return k_out


@_sampler("poisson")
def _poisson_host(words: np.ndarray, lam: Any, shape: tuple[int, ...], dtype: str
                  ) -> np.ndarray:
    constant = is_constant(lam)
    lam = np.broadcast_to(np.asarray(lam).astype(F32), shape)
    use_knuth = np.isnan(lam) | (lam < F32(10))
    knuth = _knuth(words, np.where(use_knuth, lam, F32(0)))
    rejection = _ptrs(words, np.where(use_knuth, F32(1e5), lam), constant)
    out_dtype = np.dtype(dtype)
    result = np.where(use_knuth, xla_math.to_int(knuth, out_dtype),
                      xla_math.to_int(rejection, out_dtype))
    return np.where(lam == 0, out_dtype.type(0), result).astype(out_dtype)


# ---- binomial and multinomial -----------------------------------------------------------------

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k: np.ndarray, math: xla_math.FloatMath) -> np.ndarray:
    """log(k!) minus its Stirling approximation: a table for k <= 9, a series above."""
    T = math.type
    small = k <= T(9)
    clamped = np.clip(k, T(0), T(9))
    k1 = clamped + T(1)
    kp1sq = k1 * k1
    series = (T(1.0 / 12) - (T(1.0 / 360) - T(1.0 / 1260) / kp1sq) / kp1sq) / k1
    table = _STIRLING_TAIL.astype(math.dtype)[np.nan_to_num(np.floor(clamped)).astype(np.int32)]
    return np.where(small, table, series)


def _inversion(words: np.ndarray, count: np.ndarray, prob: np.ndarray,
               math: xla_math.FloatMath) -> np.ndarray:
    """Binomial by counting geometric gaps until their sum passes count (small means)."""
    T = math.type
    log_q = math.log1p(-prob)
    num_geom = np.zeros(prob.shape, math.dtype)
    geom_sum = np.zeros(prob.shape, math.dtype)
    key = words
    with np.errstate(divide="ignore", invalid="ignore"):
        while np.any(geom_sum <= count):
            subkey, key = threefry.split(key, (2,))
            num_geom = np.where(geom_sum <= count, num_geom + T(1), num_geom)
            u = _uniform(subkey, prob.shape, math.dtype, 0., 1.)
            geom_sum = geom_sum + np.ceil(math.log(u) / log_q)
    return num_geom - T(1)


def _btrs(words: np.ndarray, count: np.ndarray, prob: np.ndarray, math: xla_math.FloatMath
          ) -> np.ndarray:
    """Hormann's BTRS transformed rejection for binomials of large mean, all elements per
    round; accepted candidates overwrite an element's result every round, as in JAX."""
    log, fma, T = math.log, math.fma, math.type
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        stddev = np.sqrt((count * prob) * (T(1) - prob))
        b = fma(T(2.53), stddev, T(1.15))
        a = fma(T(0.01), prob, fma(T(0.0248), b, T(-0.0873)))
        c = fma(count, prob, T(0.5))
        v_r = T(0.92) - T(4.2) / b
        r = prob / (T(1) - prob)
        alpha = (T(2.83) + T(5.1) / b) * stddev
        m = np.floor((count + T(1)) * prob)
        k_out = np.full(prob.shape, T(-1))
        accepted = np.zeros(prob.shape, bool)
        key = words
        for _ in range(_MAX_ROUNDS):
            if accepted.all():
                break
            key, key_u, key_v = threefry.split(key, (3,))
            u = _uniform(key_u, prob.shape, math.dtype, 0., 1.) - T(0.5)
            v = _uniform(key_v, prob.shape, math.dtype, 0., 1.)
            us = T(0.5) - np.abs(u)
            accept1 = (us >= T(0.07)) & (v <= v_r)
            k = np.floor(fma((T(2) * a) / us + b, u, c))
            reject = (k < 0) | (k > count)
            v = log((v * alpha) / (a / (us * us) + b))
            ub = fma(m + T(0.5), log((m + T(1)) / (r * ((count - m) + T(1)))),
                     (count + T(1)) * log(((count - m) + T(1)) / ((count - k) + T(1))))
            ub = fma(k + T(0.5), log((r * ((count - k) + T(1))) / (k + T(1))), ub)
            ub = ub + _stirling_tail(m, math) + _stirling_tail(count - m, math)
            ub = ub - _stirling_tail(k, math) - _stirling_tail(count - k, math)
            accept = accept1 | (~reject & (v <= ub))
            k_out = np.where(accept, k, k_out)
            accepted |= accept
    return k_out


def _binomial(words: np.ndarray, count: Any, prob: Any, shape: tuple[int, ...],
              real: np.dtype) -> np.ndarray:
    """JAX's _binomial in the float dtype `real` (p's, promoted to inexact): inversion where
    count * q <= 10, else BTRS, q = min(p, 1 - p); nan for a nan or negative count or a bad
    p, inf for an infinite count."""
    math = xla_math.FloatMath(real)
    T = math.type
    prob = np.broadcast_to(np.asarray(prob).astype(real), shape)
    count = np.broadcast_to(np.asarray(count).astype(real), shape)
    with np.errstate(invalid="ignore", over="ignore"):
        p_lt_half = prob < T(0.5)
        q = np.where(p_lt_half, prob, T(1) - prob)
        count_bad = np.isnan(count) | (count < T(0))
        count_inf = np.isinf(count)
        q_nan = np.isnan(q)
        q_neg = q < T(0)
        q = np.where(q_nan | q_neg, T(0.01), q)
        use_inversion = count_bad | (count * q <= T(10))
        count = np.floor(count)
        samples = np.where(
            use_inversion,
            _inversion(words, np.where(use_inversion, count, T(0)), q, math),
            _btrs(words, np.where(use_inversion, T(1e4), count),
                  np.where(use_inversion, T(0.5), q), math))
        invalid = q_neg | q_nan | count_bad
        samples = np.where(invalid, T(np.nan), samples)
        samples = np.where(count_inf & ~invalid, T(np.inf), samples)
        keep = p_lt_half | count_bad | q_nan | count_inf
        return np.where(keep, samples, count - samples)


def binomial(key: KeyLike, n: Any, p: Any, shape: Shape | None = None,
             dtype: Any = None) -> Any:
    """Binomial samples (as floats, float32 by default) of n trials with success chance p."""
    words = _single_key("binomial", key)
    dtype = float_dtype("binomial", dtype)
    _probabilities("binomial", n)
    _probabilities("binomial", p)
    shape = _result_shape("binomial", shape, n, p)
    return _sample("binomial", shape, dtype, words, n=n, p=p, shape=shape, dtype=dtype.name)


@_sampler("binomial")
def _binomial_host(words: np.ndarray, n: Any, p: Any, shape: tuple[int, ...], dtype: str
                   ) -> np.ndarray:
    return _binomial(words, n, p, shape, _inexact_dtype(p)).astype(np.dtype(dtype))


def multinomial(key: KeyLike, n: Any, p: Any, *, shape: Shape | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Multinomial counts of n trials over the categories of p's last axis: a binomial per
    category of the trials left, with probability p_i / (p_i + ... + p_last). `unroll` is
    accepted for JAX's signature; it does not change the samples."""
    words = _single_key("multinomial", key)
    _probabilities("multinomial", n)
    _probabilities("multinomial", p)
    shape = tuple(np.shape(p)) if shape is None else _shape("multinomial", shape)
    if not shape:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    dtype = float_dtype("multinomial", dtype)
    return _sample("multinomial", shape, dtype, words, n=n, p=p, shape=shape,
                   dtype=dtype.name)


@_sampler("multinomial")
def _multinomial_host(words: np.ndarray, n: Any, p: Any, shape: tuple[int, ...], dtype: str
                      ) -> np.ndarray:
    real = _inexact_dtype(n, p)
    remainder = np.broadcast_to(np.asarray(n).astype(real), shape[:-1])
    p = np.moveaxis(np.broadcast_to(np.asarray(p).astype(real), shape), -1, 0)
    remaining = np.flip(np.cumsum(np.flip(p, 0), axis=0, dtype=real), 0)
    ratios = p / np.where(remaining == 0, real.type(1), remaining)
    keys = threefry.split(words, (p.shape[0],))
    counts = []
    for ratio, key in zip(ratios, keys):
        count = _binomial(key, remainder, np.clip(ratio, real.type(0), real.type(1)),
                          shape[:-1], real)
        remainder = remainder - count
        counts.append(count)
    return np.moveaxis(np.stack(counts), 0, -1).astype(np.dtype(dtype))
