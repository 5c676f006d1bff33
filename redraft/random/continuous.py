"""Continuous families JAX builds from one or two uniform or normal draws by elementwise steps:
cauchy, lognormal, pareto, maxwell, double_sided_maxwell, weibull_min, wald.

Each host sampler repeats JAX's steps as XLA runs them, in the samples' dtype (xla_math: its
exp, the C library's pow and tan, fused multiply-adds where XLA's code generator fuses;
float64 with x64 on, as JAX computes then), so samples are JAX's bits for the same key.
Parameters that are Python numbers stay static; arrays become operands of the recorded sampler
inside jit.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from redraft.kernels import threefry
from redraft.random import xla_math
from redraft.runtime import dtypes
from redraft.random.basic import (KeyLike, Shape, _float_dtype, _normal, _result_shape,
                                  _sample, _sampler, _shape, _single_key, _uniform)

__all__ = ["cauchy", "double_sided_maxwell", "lognormal", "maxwell", "pareto", "wald",
           "weibull_min"]


def _param(name: str, value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A parameter as `dtype` broadcast to `shape`; complex values cannot become real."""
    array = np.asarray(value)
    if array.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"In arguments to {name}, cannot safely cast argument of type "
                        f"{array.dtype} to {dtype}")
    if array.dtype.kind not in "biufc":
        raise TypeError(f"{name}: parameters must be numbers, got dtype {array.dtype}")
    return np.broadcast_to(array.astype(dtype), shape)


def _check_param(name: str, value: Any) -> None:
    """Refuse parameters that are neither numbers nor arrays of numbers."""
    dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
    if dtype.kind == "c":
        raise TypeError(f"In arguments to {name}, cannot safely cast argument of type "
                        f"{dtype} to a real float dtype")
    if dtype.kind not in "biuf":
        raise TypeError(f"{name}: parameters must be numbers, got dtype {dtype}")


def float_dtype(name: str, dtype: Any) -> np.dtype:
    """The float dtype a sampler of this package returns: the default float (float32, or
    float64 with x64 on), or float16/float32/float64 as `dtype` asks (float64 only with x64
    on, as in JAX). Every step then runs in that dtype, as JAX's samplers do."""
    return _float_dtype(name, dtype)


def is_constant(value: Any) -> bool:
    """Whether JAX would embed `value` in its compiled sampler as a constant (a Python or NumPy
    scalar), where XLA folds it: x / c becomes x * (1 / c), and (x * c1) * c2 becomes
    x * (c1 * c2). Samples for such parameters must repeat the folded arithmetic."""
    return isinstance(value, (int, float, np.generic)) or (
        isinstance(value, np.ndarray) and value.ndim == 0)


# ---- cauchy -----------------------------------------------------------------------------------

def cauchy(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard Cauchy samples, tan(pi * (u - 1/2)) for u uniform in [eps, 1)."""
    words = _single_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    shape = _shape("cauchy", shape)
    return _sample("cauchy", shape, dtype, words, shape=shape, dtype=dtype.name)


@_sampler("cauchy")
def _cauchy_host(words: np.ndarray, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    u = _uniform(words, shape, dtype, np.finfo(dtype).eps, 1.)
    angle = dtype.type(np.pi) * (u - dtype.type(0.5))
    return xla_math.FloatMath(dtype).tan(angle)


# ---- lognormal and pareto --------------------------------------------------------------------

def lognormal(key: KeyLike, sigma: Any = np.float32(1), shape: Shape | None = None,
              dtype: Any = None) -> Any:
    """Log-normal samples, exp(sigma * z) for standard normal z."""
    words = _single_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    _check_param("lognormal", sigma)
    shape = _result_shape("lognormal", shape, sigma)
    return _sample("lognormal", shape, dtype, words, sigma=sigma, shape=shape,
                   dtype=dtype.name)


@_sampler("lognormal")
def _lognormal_host(words: np.ndarray, sigma: Any, shape: tuple[int, ...], dtype: str
                    ) -> np.ndarray:
    dtype = np.dtype(dtype)
    if is_constant(sigma) and dtype == np.float32:  # XLA folds sqrt(2) * sigma
        u = _uniform(words, shape, dtype, threefry.NORMAL_LOW, 1.)
        scaled = threefry.erfinv_float32(u) * (threefry.SQRT2_F32 * np.float32(sigma))
    elif is_constant(sigma) and dtype == np.float64:
        u = _uniform(words, shape, dtype, np.nextafter(-1.0, 0.0), 1.)
        scaled = threefry.erfinv_float64(u) * (np.sqrt(2.0) * np.float64(sigma))
    else:
        scaled = _normal(words, shape, dtype) * _param("lognormal", sigma, dtype, shape)
    return xla_math.FloatMath(dtype).exp(scaled)


def pareto(key: KeyLike, b: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Pareto samples of shape parameter b (support x >= 1), exp(e / b) for exponential e."""
    words = _single_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    _check_param("pareto", b)
    shape = _result_shape("pareto", shape, b)
    return _sample("pareto", shape, dtype, words, b=b, shape=shape, dtype=dtype.name)


@_sampler("pareto")
def _pareto_host(words: np.ndarray, b: Any, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    math = xla_math.FloatMath(dtype)
    e = -math.log1p(-_uniform(words, shape, dtype, 0., 1.))
    with np.errstate(divide="ignore", invalid="ignore"):
        if is_constant(b):  # XLA turns the division by a constant into a multiplication
            return math.exp(e * (dtype.type(1) / dtype.type(b)))
        return math.exp(e / _param("pareto", b, dtype, shape))


# ---- maxwell ----------------------------------------------------------------------------------

def _maxwell(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The norm of three standard normals (JAX's jnp.linalg.norm over the last axis, summed as
    XLA's CPU reduction sums three squares: the second's, then the first and third fused in)."""
    z = _normal(words, (*shape, 3), dtype)
    if dtype == np.float32:
        total = z[..., 1] * z[..., 1]
        total = xla_math.fma(z[..., 0], z[..., 0], total)
        total = xla_math.fma(z[..., 2], z[..., 2], total)
        return np.sqrt(total)
    if dtype == np.float64:  # XLA's float64 loop sums the squares in index order
        fma = xla_math.FloatMath(dtype).fma
        total = fma(z[..., 1], z[..., 1], z[..., 0] * z[..., 0])
        return np.sqrt(fma(z[..., 2], z[..., 2], total))
    squares = (z * z).astype(np.float32)  # float16: squares rounded, summed in float32
    total = ((squares[..., 0] + squares[..., 1]) + squares[..., 2]).astype(dtype)
    return np.sqrt(total).astype(dtype)


def maxwell(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Maxwell samples (one-sided, scale 1): the length of a 3-D standard normal vector."""
    words = _single_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    shape = _shape("maxwell", shape)
    return _sample("maxwell", shape, dtype, words, shape=shape, dtype=dtype.name)


@_sampler("maxwell")
def _maxwell_host(words: np.ndarray, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return _maxwell(words, shape, np.dtype(dtype))


def _signs(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """JAX's rademacher in `dtype`: -1 or +1 from a fair coin (a bernoulli(0.5), whose
    uniform is in the default float: float64 with x64 on)."""
    real = np.dtype(dtypes.DEFAULT_FLOAT)
    heads = _uniform(words, shape, real, 0., 1.) < real.type(0.5)
    return (dtype.type(2) * heads.astype(dtype) - dtype.type(1)).astype(dtype)


def double_sided_maxwell(key: KeyLike, loc: Any, scale: Any, shape: Shape = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell samples: loc + scale * (random sign) * maxwell.

    As in JAX, the result's shape is `shape + broadcast(loc, scale).shape` (and just the
    parameters' shape when `shape` is empty)."""
    words = _single_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    _check_param("double_sided_maxwell", loc)
    _check_param("double_sided_maxwell", scale)
    shape = _shape("double_sided_maxwell", shape)
    params = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    out_shape = (shape or params) + params
    return _sample("double_sided_maxwell", out_shape, dtype, words, loc=loc, scale=scale,
                   shape=out_shape, dtype=dtype.name)


@_sampler("double_sided_maxwell")
def _double_sided_maxwell_host(words: np.ndarray, loc: Any, scale: Any,
                               shape: tuple[int, ...], dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    key_maxwell, key_sign = threefry.split(words, (2,))
    magnitude = _maxwell(key_maxwell, shape, dtype)
    signed = _signs(key_sign, shape, dtype) * magnitude
    loc = _param("double_sided_maxwell", loc, dtype, shape)
    scale = _param("double_sided_maxwell", scale, dtype, shape)
    if dtype != np.float16:
        return xla_math.FloatMath(dtype).fma(signed, scale, loc)
    return (signed * scale + loc).astype(dtype)


# ---- weibull_min ------------------------------------------------------------------------------

def weibull_min(key: KeyLike, scale: Any, concentration: Any, shape: Shape = (),
                dtype: Any = None) -> Any:
    """Weibull samples: scale * (-log(1 - u)) ** (1 / concentration)."""
    words = _single_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    _check_param("weibull_min", scale)
    _check_param("weibull_min", concentration)
    shape = _shape("weibull_min", shape)
    out_shape = tuple(np.broadcast_shapes(shape, np.shape(scale), np.shape(concentration)))
    return _sample("weibull_min", out_shape, dtype, words, scale=scale,
                   concentration=concentration, shape=shape, dtype=dtype.name)


@_sampler("weibull_min")
def _weibull_min_host(words: np.ndarray, scale: Any, concentration: Any,
                      shape: tuple[int, ...], dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    math = xla_math.FloatMath(dtype)
    u = _uniform(words, shape, dtype, 0., 1.)
    base = -math.log1p(-u)
    if isinstance(concentration, (int, float)):  # JAX divides a Python number in double
        exponent = np.asarray(1.0 / concentration, dtype)
    else:
        with np.errstate(divide="ignore"):
            exponent = dtype.type(1) / np.asarray(concentration).astype(dtype)
    out = math.pow(*np.broadcast_arrays(base, exponent))
    return (out * np.asarray(scale).astype(dtype)).astype(dtype)


# ---- wald -------------------------------------------------------------------------------------

def wald(key: KeyLike, mean: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) samples of the given mean and unit shape parameter
    (Michael, Schucany and Haas' transformation of a normal and a uniform draw)."""
    words = _single_key("wald", key)
    dtype = float_dtype("wald", dtype)
    _check_param("wald", mean)
    shape = _result_shape("wald", shape, mean)
    return _sample("wald", shape, dtype, words, mean=mean, shape=shape, dtype=dtype.name)


@_sampler("wald")
def _wald_host(words: np.ndarray, mean: Any, shape: tuple[int, ...], dtype: str
               ) -> np.ndarray:
    dtype = np.dtype(dtype)
    key_normal, key_uniform = threefry.split(words, (2,))
    mean = _param("wald", mean, dtype, shape)
    v = _normal(key_normal, shape, dtype)
    z = _uniform(key_uniform, shape, dtype, 0., 1.)
    fma = xla_math.FloatMath(dtype).fma
    y = v * v
    mean_sq = mean * mean
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sqrt_term = np.sqrt(fma(dtype.type(4) * mean, y, mean_sq * (y * y)))
        x = fma(mean_sq * y, dtype.type(0.5), mean)
        x = fma(-(mean * dtype.type(0.5)), sqrt_term, x)
        return np.where(z <= mean / (mean + x), x, mean_sq / x).astype(dtype)
