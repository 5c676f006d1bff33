"""float32 math evaluated as JAX's CPU backend (XLA) evaluates it, for bit-exact samples.

JAX's samplers run compiled by XLA, whose CPU code generator has its own polynomial for exp
and calls the C library for pow and tan; LLVM contracts each multiply feeding an add into a
fused multiply-add. The functions here repeat those evaluations step for step (kernels/
threefry.py holds log, log1p, erf and erfinv), so that a sample built from them has JAX's
bits, not just its value to a few ulp. pow and tan call the C library's powf and tanf (glibc's
on Linux, which is what XLA calls there): their bits are the C library's.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np

from redraft.kernels.threefry import (fma_float32, fma_float64, log1p_float32, log1p_float64,
                                     log_float32)

__all__ = ["FloatMath", "exp", "fma", "lgamma_positive", "log", "log1p", "log1p_folded", "pow",
           "rsqrt", "tan"]

F32 = np.float32
fma = fma_float32
log = log_float32
log1p = log1p_float32

# Cephes' expf, as XLA's CPU backend generates it (n = round(x / ln 2), a = x - n ln 2 in two
# parts, a degree-5 polynomial in a, times 2**n built from the exponent bits)
_LOG2E = F32(1.44269504088896341)
_LN2_HI, _LN2_LO = F32(0.693359375), F32(-2.12194440e-4)
_EXP_POLY = np.array([1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                      1.6666665459e-1, 5.0000001201e-1], F32)


def exp(x) -> np.ndarray:
    """e**x in float32 (XLA's Cephes polynomial; 0 below about -87.3, inf above 88.7)."""
    x = np.asarray(x, F32)
    with np.errstate(invalid="ignore", over="ignore"):
        clamped = np.clip(x, F32(-87.8), F32(88.8))
        n = np.clip(np.floor(fma(clamped, _LOG2E, F32(0.5))), F32(-127), F32(127))
        a = fma(-_LN2_HI, n, clamped)
        a = fma(-_LN2_LO, n, a)
        z = fma(a, _EXP_POLY[0], _EXP_POLY[1])
        for coef in _EXP_POLY[2:]:
            z = fma(z, a, coef)
        z = F32(1) + fma(z, a * a, a)
        scale = ((n.astype(np.int32) + 127) << 23).view(F32)
        out = flush_subnormal(z * scale)
    return np.where(np.isnan(x), x, out)


def flush_subnormal(x: np.ndarray) -> np.ndarray:
    """x with subnormal values replaced by zero of the same sign, as XLA's CPU code runs with
    flush-to-zero on."""
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x * x.dtype.type(0), x)


def rsqrt(x) -> np.ndarray:
    """1 / sqrt(x) in float32, correctly rounded.

    XLA's CPU backend computes rsqrt from the processor's approximate reciprocal square root
    (rsqrtps or rsqrt14, whose bits differ between Intel and AMD) refined by Newton steps, so
    JAX's own results differ between machines by an ulp; the correctly rounded value is the
    one every machine can agree on, and samples built on it stay within a few ulp of JAX's.
    """
    x = np.asarray(x, F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / np.sqrt(x.astype(np.float64))).astype(F32)


@functools.cache
def _libm() -> ctypes.CDLL:
    """The C library's math library, found once (each find_library runs ldconfig: 3 ms)."""
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _libm_unary(name: str):
    fn = getattr(_libm(), name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def _libm_binary(name: str):
    fn = getattr(_libm(), name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
    return fn


def _libm_double(name: str, arity: int):
    fn = getattr(_libm(), name)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double] * arity
    return np.frompyfunc(fn, arity, 1)


_powf = np.frompyfunc(_libm_binary("powf"), 2, 1)
# XLA's CPU backend calls the C library for float64 pow, tan and log (NumPy's own SIMD
# versions differ from it by an ulp on a few values in a hundred)
_pow64, _tan64, _log64 = _libm_double("pow", 2), _libm_double("tan", 1), _libm_double("log", 1)


def libm_float64(fn, *args) -> np.ndarray:
    """The C library's double function `fn` (_pow64, _tan64, _log64) elementwise."""
    arrays = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in args))
    if arrays[0].size == 0:
        return np.zeros(arrays[0].shape, np.float64)
    return np.asarray(fn(*arrays), np.float64).reshape(arrays[0].shape)
_tanf = np.frompyfunc(_libm_unary("tanf"), 1, 1)


def pow(x, y) -> np.ndarray:  # noqa: A001 - the name of the operation it repeats
    """x**y in float32 by the C library's powf, elementwise, as XLA's CPU backend calls it."""
    x, y = np.broadcast_arrays(np.asarray(x, F32), np.asarray(y, F32))
    return np.asarray(_powf(x, y), F32).reshape(x.shape)


def tan(x) -> np.ndarray:
    """tan(x) in float32 by the C library's tanf, elementwise."""
    x = np.asarray(x, F32)
    return np.asarray(_tanf(x), F32).reshape(x.shape)


# XLA's Lanczos approximation of log|gamma| (g = 7, 9 terms), as chlo.lgamma expands it
_LANCZOS_G = 7.0
_LANCZOS_BASE = F32(0.99999999999980993227684700473478)
_LANCZOS = np.array([676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                     771.3234287776530788486528258894, -176.61502916214059906584551354,
                     12.507343278686904814458936853, -0.13857109526572011689554707,
                     9.984369578019570859563e-6, 1.50563273514931155834e-7], F32)
_LOG_SQRT_2PI = F32(0.91893853320467274178032973640562)
_LOG_LANCZOS_T = F32(np.log(_LANCZOS_G + 0.5))


def lgamma_positive(x) -> np.ndarray:
    """log(gamma(x)) in float32 for x >= 0.5, as XLA computes it (no reflection: callers that
    may pass smaller x select those results away)."""
    x = np.asarray(x, F32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z = x - F32(1)
        series = np.full_like(z, _LANCZOS_BASE)
        for i, coef in enumerate(_LANCZOS):
            series = series + coef / (z + F32(i + 1))
        t = F32(_LANCZOS_G + 0.5) + z
        log_t = log1p(z * F32(1 / (_LANCZOS_G + 0.5))) + _LOG_LANCZOS_T
        log_y = fma((z + F32(0.5)) - t / log_t, log_t, _LOG_SQRT_2PI) + log(series)
    return np.where(np.isinf(x), F32(np.inf), log_y)


_log1pf = np.frompyfunc(_libm_unary("log1pf"), 1, 1)


def log1p_folded(x) -> np.ndarray:
    """log(1 + x) as XLA's constant folder computes it for a constant operand: the C
    library's log1pf, not the compiled polynomial."""
    x = np.asarray(x, F32)
    return np.asarray(_log1pf(x), F32).reshape(x.shape)


_logf = np.frompyfunc(_libm_unary("logf"), 1, 1)


def log_folded(x) -> np.ndarray:
    """log(x) as XLA's constant folder computes it for a constant operand (the C library's
    logf)."""
    x = np.asarray(x, F32)
    return np.asarray(_logf(x), F32).reshape(x.shape)


def to_int(x, dtype) -> np.ndarray:
    """Floats converted to an integer dtype as XLA converts them: truncated toward zero,
    saturating at the dtype's bounds, NaN to 0 (NumPy's cast is undefined there)."""
    x = np.asarray(x)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        clipped = np.clip(np.nan_to_num(np.trunc(x), nan=0.0), info.min, info.max)
        big = clipped >= float(info.max)  # float(info.max) may round up past the bound
        return np.where(big, info.max, clipped.astype(np.float64).astype(dtype)).astype(dtype)


# Cephes' double exp (Eigen's pexp for double), as XLA's CPU backend generates it: n =
# floor(x log2(e) + 1/2), r = x - n ln 2 in two parts, e**r = 1 + 2 r P(r^2) / (Q(r^2) -
# r P(r^2)), times 2**n; multiply-adds fused. Subnormal results are flushed to zero, as
# XLA's vectorised loop does (its scalar remainder keeps them: arrays of a few elements may
# differ from JAX's there, below exp(-708.4)).
_EXP64_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXP64_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
            2.00000000000000000009e0)
_EXP64_LN2_HI, _EXP64_LN2_LO = 0.693145751953125, 1.42860682030941723212e-6
_EXP64_LOW = -709.784


def exp_float64(x) -> np.ndarray:
    """e**x in float64 as XLA computes it (bit for bit on 200,000 values against JAX 0.10.2's
    CPU backend, where the C library's exp differs by up to 2 ulp on one value in seven)."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(x)
        clamped = np.where(finite, np.maximum(x, _EXP64_LOW), 0.0)  # keeps 2**n finite
        n = np.floor(fma_float64(clamped, 1.4426950408889634073599, 0.5))
        r = fma_float64(-n, _EXP64_LN2_HI, clamped)
        r = fma_float64(-n, _EXP64_LN2_LO, r)
        r2 = r * r
        p = np.full_like(r, _EXP64_P[0])
        for coef in _EXP64_P[1:]:
            p = fma_float64(p, r2, coef)
        p = p * r
        q = np.full_like(r, _EXP64_Q[0])
        for coef in _EXP64_Q[1:]:
            q = fma_float64(q, r2, coef)
        y = fma_float64(2.0, p / (q - p), 1.0)
        out = flush_subnormal(np.ldexp(y, n.astype(np.int64)))
    return np.where(finite, out, np.where(x > 0, np.inf, np.where(np.isnan(x), x, 0.0)))


class FloatMath:
    """XLA's float steps in one sample dtype, for samplers written once for every dtype.

    float32 uses the functions above (XLA's polynomials, fused multiply-adds); float16 computes
    each step in float32 and rounds it back, as XLA does. float64 (x64 mode) repeats XLA's
    float64 code too: exact fused multiply-adds, Cephes' exp (exp_float64), XLA's log1p, and
    the C library's log, pow and tan, which XLA calls. Only rsqrt is not XLA's: it starts
    from the processor's approximation (as in float32), so 1 / sqrt(x) is used, within 2 ulp.
    """

    def __init__(self, dtype) -> None:
        self.dtype = np.dtype(dtype)
        self.type = self.dtype.type
        self.double = self.dtype == np.float64
        self.single = self.dtype == np.float32

    def fma(self, a, b, c) -> np.ndarray:
        if self.double:
            return fma_float64(a, b, c)
        return fma_float32(a, b, c) if self.single else a * b + c

    def exp(self, x) -> np.ndarray:
        if self.double:
            return exp_float64(x)
        return exp(x).astype(self.dtype)

    def log(self, x) -> np.ndarray:
        if self.double:
            return libm_float64(_log64, x)
        return log(x).astype(self.dtype)

    def log1p(self, x) -> np.ndarray:
        if self.double:
            return log1p_float64(x)
        return log1p(x).astype(self.dtype)

    def pow(self, x, y) -> np.ndarray:
        if self.double:
            return libm_float64(_pow64, x, y)
        return pow(x, y).astype(self.dtype)

    def tan(self, x) -> np.ndarray:
        if self.double:
            return libm_float64(_tan64, x)
        return tan(x).astype(self.dtype)

    def rsqrt(self, x) -> np.ndarray:
        if self.double:
            with np.errstate(divide="ignore", invalid="ignore"):
                return 1.0 / np.sqrt(np.asarray(x, np.float64))
        return rsqrt(x).astype(self.dtype)
