"""The gamma family: gamma and loggamma (Marsaglia and Tsang's rejection method, one key per
element), and what JAX builds on them: beta, dirichlet, chisquare, f, t, generalized_normal
and ball.

JAX splits the key into one key per element and runs Marsaglia-Tsang's loop for each element
under vmap: every round splits the element's key in three, draws normals until 1 + c x > 0,
then a uniform, and accepts when the squeeze or the log test passes. Here all elements run
that loop in one NumPy step per round (many_keys hashes each element's own key), finished
elements keeping their value, so each sample is the one JAX's loop gives for its key.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from redraft.kernels import threefry
from redraft.random import many_keys, xla_math
from redraft.random.basic import (KeyLike, Shape, _exponential, _result_shape,
                                  _sample, _sampler, _shape, _single_key)
from redraft.random.continuous import _check_param, _param, _signs, float_dtype

__all__ = ["ball", "beta", "chisquare", "dirichlet", "f", "gamma", "generalized_normal",
           "loggamma", "random_gamma_grad", "random_gamma_p", "t"]

F32 = np.float32
_THIRD = 1.0 / 3.0  # rounded to the samples' dtype where used, as JAX's constants are
_SQUEEZE = 0.0331


def _marsaglia_tsang(keys: np.ndarray, alpha: np.ndarray, ops: xla_math.FloatMath
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(d, V) of Marsaglia-Tsang's accepted draw for each (key, alpha >= 1) pair."""
    one, dtype = ops.type(1), ops.dtype
    d = alpha - ops.type(_THIRD)
    c = ops.type(_THIRD) * ops.rsqrt(d)  # XLA rewrites 1/3 / sqrt(d) so
    n = alpha.shape[0]
    X, V, U = np.zeros(n, dtype), np.ones(n, dtype), np.full(n, ops.type(2))
    active = np.ones(n, bool)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        while True:
            squeeze = U >= ops.fma(-ops.type(_SQUEEZE), X * X, one)
            log_test = ops.log(U) >= ops.fma(X, ops.type(0.5),
                                             d * ((one - V) + ops.log(V)))
            active &= squeeze & log_test
            if not active.any():
                return d, V
            idx = np.nonzero(active)[0]
            three = many_keys.split(keys[idx], 3)
            keys[idx] = three[:, 0]
            x_keys, u_keys = three[:, 1], three[:, 2]
            x = np.zeros(idx.size, dtype)
            v = np.full(idx.size, -one)
            redraw = v <= 0
            while redraw.any():
                j = np.nonzero(redraw)[0]
                pair = many_keys.split(x_keys[j], 2)
                x_keys[j] = pair[:, 0]
                x[j] = many_keys.normal(pair[:, 1], dtype)
                v[j] = ops.fma(x[j], c[idx[j]], one)
                redraw = v <= 0
            X[idx] = x * x
            V[idx] = (v * v) * v
            U[idx] = many_keys.uniform(u_keys, 0., 1., dtype)


def _gamma_one(keys: np.ndarray, alpha: np.ndarray, log_space: bool) -> np.ndarray:
    """JAX's _gamma_one for every (key, alpha) pair: keys (n, 2), alpha (n,) of the
    samples' dtype (float32 or float16)."""
    ops = xla_math.FloatMath(alpha.dtype)  # the loop's steps in the samples' dtype
    one = ops.type(1)
    boost_mask = alpha >= one
    boosted = np.where(boost_mask, alpha, alpha + one)
    halves = many_keys.split(keys, 2)
    d, V = _marsaglia_tsang(halves[:, 0].copy(), boosted, ops)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = many_keys.uniform(halves[:, 1], 0., 1., ops.dtype)
        inverse = one / alpha
        if log_space:
            log_samples = ops.log1p(-u)  # -exponential(subkey)
            log_boost = np.where(boost_mask | (log_samples == 0), ops.type(0),
                                 log_samples * inverse)
            return (ops.log(d) + ops.log(V)) + log_boost
        samples = one - u
        boost = np.where(boost_mask, one, ops.pow(samples, inverse))
        return (d * V) * boost


def _gamma(words: np.ndarray, a: np.ndarray, log_space: bool, dtype=F32) -> np.ndarray:
    """Standard gamma (or log-gamma) samples of shape a.shape in `dtype`."""
    alpha = np.ascontiguousarray(a, dtype).reshape(-1)
    if alpha.size == 0:
        return np.zeros(a.shape, dtype)
    keys = threefry.split(words, (alpha.size,)).reshape(-1, 2)
    return _gamma_one(keys, alpha, log_space).reshape(a.shape)


def _gamma_in(words: np.ndarray, a: Any, shape: tuple[int, ...], dtype: np.dtype,
              log_space: bool) -> np.ndarray:
    a = _param("gamma", a, dtype, shape)
    return _gamma(words, a, log_space, dtype)


def _gamma_sampler(name: str, log_space: bool):
    def sampler(key: KeyLike, a: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
        words = _single_key(name, key)
        dtype = float_dtype(name, dtype)
        _check_param(name, a)
        shape = _result_shape(name, shape, a)
        return _sample(name, shape, dtype, words, a=a, shape=shape, dtype=dtype.name)

    @_sampler(name)
    def host(words: np.ndarray, a: Any, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        return _gamma_in(words, a, shape, np.dtype(dtype), log_space)

    return sampler


gamma = _gamma_sampler("gamma", log_space=False)
gamma.__name__ = gamma.__qualname__ = "gamma"
gamma.__doc__ = """Standard gamma samples of shape parameter a (density x**(a-1) e**-x): JAX's
Marsaglia-Tsang sampler, with Gamma(a) = Gamma(a + 1) * u**(1/a) for a < 1."""

loggamma = _gamma_sampler("loggamma", log_space=True)
loggamma.__name__ = loggamma.__qualname__ = "loggamma"
loggamma.__doc__ = """log of standard gamma samples, computed in log space (exact for tiny a,
where gamma samples underflow to 0)."""


class _RandomGammaPrimitive:
    """JAX's random_gamma_p, for code that binds it directly: `bind(key, a, log_space=False)`
    gives one gamma (or log-gamma) sample per element of `a`, from one key (the operation
    gamma and loggamma run once they have broadcast `a` to the output shape)."""

    name = "random_gamma"

    def bind(self, key: KeyLike, a: Any, *, log_space: bool = False) -> Any:
        sampler = loggamma if log_space else gamma
        dtype = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
        return sampler(key, a, tuple(np.shape(a)), dtype if dtype.kind == "f" else None)

    def __repr__(self) -> str:
        return self.name


random_gamma_p = _RandomGammaPrimitive()


# ---- families made of gamma draws -------------------------------------------------------------

def beta(key: KeyLike, a: Any, b: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Beta(a, b) samples: Ga / (Ga + Gb) from two log-gamma draws, scaled by their maximum."""
    words = _single_key("beta", key)
    dtype = float_dtype("beta", dtype)
    _check_param("beta", a)
    _check_param("beta", b)
    shape = _result_shape("beta", shape, a, b)
    return _sample("beta", shape, dtype, words, a=a, b=b, shape=shape, dtype=dtype.name)


@_sampler("beta")
def _beta_host(words: np.ndarray, a: Any, b: Any, shape: tuple[int, ...], dtype: str
               ) -> np.ndarray:
    dtype = np.dtype(dtype)
    key_a, key_b = threefry.split(words, (2,))
    log_a = _gamma_in(key_a, a, shape, dtype, True)
    log_b = _gamma_in(key_b, b, shape, dtype, True)
    log_max = np.maximum(log_a, log_b)
    with np.errstate(invalid="ignore"):
        scaled_a = xla_math.FloatMath(dtype).exp(log_a - log_max)
        scaled_b = xla_math.FloatMath(dtype).exp(log_b - log_max)
        return (scaled_a / (scaled_a + scaled_b)).astype(dtype)


def dirichlet(key: KeyLike, alpha: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Dirichlet samples of concentration alpha (last axis): softmax of log-gamma draws."""
    words = _single_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    _check_param("dirichlet", alpha)
    alpha_shape = tuple(np.shape(alpha))
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _result_shape("dirichlet", shape, np.empty(alpha_shape[:-1]))
    out_shape = shape + alpha_shape[-1:]
    return _sample("dirichlet", out_shape, dtype, words, alpha=alpha, shape=out_shape,
                   dtype=dtype.name)


@_sampler("dirichlet")
def _dirichlet_host(words: np.ndarray, alpha: Any, shape: tuple[int, ...], dtype: str
                    ) -> np.ndarray:
    dtype = np.dtype(dtype)
    log_g = _gamma_in(words, alpha, shape, dtype, True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # jax.nn.softmax, exp(x - max) / sum, where XLA divides by multiplying with 1 / sum
        unnormalized = xla_math.FloatMath(dtype).exp(log_g - np.max(log_g, axis=-1,
                                                                    keepdims=True))
        return (unnormalized * (dtype.type(1) / _sum_last(unnormalized))).astype(dtype)


def _sum_last(x: np.ndarray) -> np.ndarray:
    """Sum over the last axis in index order, keeping it (as XLA's CPU code sums a row whose
    terms it computes in the same loop)."""
    wide = x if x.dtype == np.float64 else x.astype(np.float32)  # float16: in float32
    total = wide[..., 0:1]
    for i in range(1, x.shape[-1]):
        total = total + wide[..., i:i + 1]
    return total.astype(x.dtype)


def chisquare(key: KeyLike, df: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Chi-square samples of df degrees of freedom: 2 * Gamma(df / 2)."""
    words = _single_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    _check_param("chisquare", df)
    shape = _result_shape("chisquare", shape, df)
    return _sample("chisquare", shape, dtype, words, df=df, shape=shape, dtype=dtype.name)


def _chisquare(words: np.ndarray, df: Any, shape: tuple[int, ...], dtype: np.dtype
               ) -> np.ndarray:
    half = _param("chisquare", df, dtype, shape) / dtype.type(2)
    log_g = _gamma(words, np.asarray(half), True, dtype)
    return (xla_math.FloatMath(dtype).exp(log_g).astype(dtype) * dtype.type(2))


@_sampler("chisquare")
def _chisquare_host(words: np.ndarray, df: Any, shape: tuple[int, ...], dtype: str
                    ) -> np.ndarray:
    return _chisquare(words, df, shape, np.dtype(dtype))


def f(key: KeyLike, dfnum: Any, dfden: Any, shape: Shape | None = None,
      dtype: Any = None) -> Any:
    """F samples: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    words = _single_key("f", key)
    dtype = float_dtype("f", dtype)
    _check_param("f", dfnum)
    _check_param("f", dfden)
    shape = _result_shape("f", shape, dfnum, dfden)
    return _sample("f", shape, dtype, words, dfnum=dfnum, dfden=dfden, shape=shape,
                   dtype=dtype.name)


@_sampler("f")
def _f_host(words: np.ndarray, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: str
            ) -> np.ndarray:
    dtype = np.dtype(dtype)
    key_den, key_num = threefry.split(words, (2,))
    chi_num = _chisquare(key_num, dfnum, shape, dtype)
    chi_den = _chisquare(key_den, dfden, shape, dtype)
    dfnum = _param("f", dfnum, dtype, shape)
    dfden = _param("f", dfden, dtype, shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # (chi_num / dfnum) / (chi_den / dfden), as XLA's simplifier rewrites the divisions
        return ((chi_num * dfden) / (chi_den * dfnum)).astype(dtype)


def t(key: KeyLike, df: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Student's t samples of df degrees of freedom: z * sqrt((df / 2) / Gamma(df / 2))."""
    words = _single_key("t", key)
    dtype = float_dtype("t", dtype)
    _check_param("t", df)
    shape = _result_shape("t", shape, df)
    return _sample("t", shape, dtype, words, df=df, shape=shape, dtype=dtype.name)


@_sampler("t")
def _t_host(words: np.ndarray, df: Any, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    from redraft.random.basic import _normal
    dtype = np.dtype(dtype)
    key_n, key_g = threefry.split(words, (2,))
    n = _normal(key_n, shape, dtype)
    half = _param("t", df, dtype, shape) / dtype.type(2)
    g = _gamma(key_g, np.asarray(half), False, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (n * np.sqrt(half / g)).astype(dtype)


def generalized_normal(key: KeyLike, p: float, shape: Shape = (), dtype: Any = None) -> Any:
    """Generalized normal samples of power p (density proportional to exp(-|x|**p)):
    sign * Gamma(1/p) ** (1/p)."""
    words = _single_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    _check_param("generalized_normal", p)
    shape = _shape("generalized_normal", shape)
    return _sample("generalized_normal", shape, dtype, words, p=p, shape=shape,
                   dtype=dtype.name)


def _generalized_normal(words: np.ndarray, p: Any, shape: tuple[int, ...], dtype: np.dtype
                        ) -> np.ndarray:
    key_g, key_r = threefry.split(words, (2,))
    inverse = _inverse(p, dtype)
    g = _gamma(key_g, np.broadcast_to(inverse, shape), False, dtype)
    r = _signs(key_r, shape, dtype)
    return (r * xla_math.FloatMath(dtype).pow(g, inverse)).astype(dtype)


def _inverse(p: Any, dtype: np.dtype) -> np.ndarray:
    """1 / p as JAX computes it: in double for a Python number, else in dtype."""
    if isinstance(p, (int, float)):
        return np.asarray(1 / p, dtype)
    with np.errstate(divide="ignore"):
        return dtype.type(1) / np.asarray(p).astype(dtype)


@_sampler("generalized_normal")
def _generalized_normal_host(words: np.ndarray, p: Any, shape: tuple[int, ...], dtype: str
                             ) -> np.ndarray:
    return _generalized_normal(words, p, shape, np.dtype(dtype))


def ball(key: KeyLike, d: int, p: float = 2, shape: Shape = (), dtype: Any = None) -> Any:
    """Points uniform in the d-dimensional unit p-norm ball: shape (*shape, d)."""
    words = _single_key("ball", key)
    dtype = float_dtype("ball", dtype)
    _check_param("ball", p)
    shape = _shape("ball", shape)
    d = int(d)
    if d < 0:
        raise ValueError(f"ball: the dimension d must be nonnegative, got {d}")
    out_shape = (*shape, d)
    return _sample("ball", out_shape, dtype, words, d=d, p=p, shape=shape, dtype=dtype.name)


@_sampler("ball")
def _ball_host(words: np.ndarray, d: int, p: Any, shape: tuple[int, ...], dtype: str
               ) -> np.ndarray:
    dtype = np.dtype(dtype)
    key_g, key_e = threefry.split(words, (2,))
    g = _generalized_normal(key_g, p, (*shape, d), dtype)
    e = _exponential(key_e, shape, dtype)
    inverse = _inverse(p, dtype)
    powered = xla_math.FloatMath(dtype).pow(np.abs(g), np.asarray(p, dtype))
    radius = xla_math.FloatMath(dtype).pow(_sum_last(powered)[..., 0] + e, inverse)
    with np.errstate(divide="ignore", invalid="ignore"):  # XLA: g * (1 / radius)
        return (g * (dtype.type(1) / radius[..., None])).astype(dtype)


# ---- the reparameterised derivative of gamma samples ------------------------------------------

_lgamma64 = np.frompyfunc(math.lgamma, 1, 1)
_SERIES_LIMIT = 100_000


def _digamma64(x: np.ndarray) -> np.ndarray:
    """psi(x) for x > 0 in float64: recurrence up to x >= 8, then the asymptotic series."""
    x = np.array(x, np.float64)
    shift = np.zeros_like(x)
    while np.any(small := x < 8):
        shift = shift - np.where(small, 1 / np.where(small, x, 1), 0)
        x = np.where(small, x + 1, x)
    inv2 = 1 / (x * x)
    tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240
                                                                         - inv2 / 132))))
    return shift + np.log(x) - 0.5 / x - tail


def _gamma_grad64(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d x / d a along the sample x = F^-1(u; a) for fixed u: -(dP/da)(a, x) / density(x; a),
    with P(a, x) the regularised lower incomplete gamma function, summed by its series."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        log_x = np.log(x)
        term = np.ones_like(x)
        total = np.ones_like(x)
        d_log_term = np.zeros_like(x)
        d_total = np.zeros_like(x)
        for n in range(1, _SERIES_LIMIT):
            term = term * x / (a + n)
            d_log_term = d_log_term - 1 / (a + n)
            total = total + term
            d_total = d_total + term * d_log_term
            if n > np.nanmax(x - a, initial=0) and np.all(
                    ~(term > 1e-17 * total) | ~np.isfinite(term)):
                break
        lg_a1 = np.asarray(_lgamma64(a + 1), np.float64)  # a 0-d input gives a float
        front = np.exp(a * log_x - x - lg_a1)
        dp_da = front * (total * (log_x - _digamma64(a + 1)) + d_total)
        density = np.exp((a - 1) * log_x - x - (lg_a1 - np.log(a)))
        grad = -dp_da / density
    return np.where(x > 0, grad, 0.0)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative of a standard gamma sample x with respect to its shape a, holding the
    sample's quantile fixed (implicit reparameterisation, JAX's lax.random_gamma_grad)."""
    a_dtype = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
    x_dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    dtype = np.result_type(a_dtype, x_dtype)
    dtype = np.dtype(F32) if dtype.kind != "f" else dtype
    shape = tuple(np.broadcast_shapes(np.shape(a), np.shape(x)))
    return _sample("gamma_grad", shape, dtype, a, x=x, dtype=dtype.name)


@_sampler("gamma_grad")
def _gamma_grad_host(a: Any, x: Any, dtype: str) -> np.ndarray:
    return _gamma_grad64(np.asarray(a), np.asarray(x)).astype(np.dtype(dtype))
