"""Threefry-2x32 random bits, bit-for-bit as JAX computes them.

JAX's PRNG (with `jax_threefry_partitionable=True`, the default since JAX 0.5) derives every
random number from the Threefry-2x32 block cipher (Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC 2011) keyed by a (2,) uint32 key and applied to a counter. Element i
of a result of shape `shape` hashes the 64-bit counter i (its flat index), split into two
uint32 words; a sample depends only on the key and its own index, never on the shape's size.

The module has three parts:

* the reference hash and the key operations JAX builds on it (`threefry_2x32`, `seed`,
  `split`, `fold_in`, `random_bits`), in NumPy, vectorised over all counters;
* the float transforms that JAX's samplers apply to the bits (`unit_floats`,
  `scale_to_range`, `log_float32`, `log1p_float32`, `erf_float32`, `erfinv_float32`),
  evaluated step for step as XLA's CPU backend does, so that floats match JAX's bit for bit;
* fused native kernels, compiled once with llvmlite (through `jit_host`), that compute the
  same bits and floats; `split`, `fold_in`, `random_bits`, `uniform_float32` and
  `normal_float32` use them. Pure NumPy needs about 20 ms for the 100 passes of a
  million-element hash and 60 ms for a million normal samples, and 100 us even for a few
  numbers; the fused loop keeps everything in registers, runs on all cores, and costs
  microseconds per call. Its results are identical, bit for bit, to the NumPy path's: both
  perform the same float32 operations in the same order, with the same fused multiply-adds.
  The NumPy path stays as the readable specification that tests hold the kernels to.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import itertools
import math
import os
import struct
import threading
from collections.abc import Sequence

import numpy as np

from redraft.kernels import jit_host

Shape = Sequence[int]

KEY_SHAPE = (2,)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant (Skein's C240)
_MASK32 = 0xFFFFFFFF
_CHUNK = 1 << 16  # counters hashed at a time by the NumPy path: the working set fits in L2

# Outputs at least this large use the native kernels (compiled on first use, in about 0.1 s;
# a call then costs microseconds where the NumPy path needs 100 us to 1 ms even for a few
# numbers). Tests raise it to run the NumPy reference path instead.
NATIVE_MIN_SIZE = 1


# ---------------------------------------------------------------------------------------------
# The hash, in NumPy


def check_key(key: np.ndarray) -> np.ndarray:
    """`key` as a (2,) uint32 array, or a TypeError saying what is wrong with it."""
    key = np.asarray(key)
    if key.shape != KEY_SHAPE or key.dtype != np.uint32:
        raise TypeError(
            f"threefry key must be a uint32 array of shape (2,); got {key.dtype} {key.shape}")
    return key


def _key_schedule(k0: int, k1: int) -> tuple[int, int, int]:
    return k0, k1, k0 ^ k1 ^ _PARITY


def _hash_in_place(k0: int, k1: int, x0: np.ndarray, x1: np.ndarray, tmp: np.ndarray) -> None:
    """Threefry-2x32 (20 rounds) of the word pairs (x0, x1), overwriting them; tmp is scratch.

    uint32 array arithmetic wraps modulo 2**32, which is the cipher's arithmetic.
    """
    ks = _key_schedule(k0, k1)
    np.add(x0, np.uint32(ks[0]), out=x0)
    np.add(x1, np.uint32(ks[1]), out=x1)
    for group in range(5):
        for rot in _ROTATIONS[group % 2]:
            np.add(x0, x1, out=x0)
            np.left_shift(x1, np.uint32(rot), out=tmp)
            np.right_shift(x1, np.uint32(32 - rot), out=x1)
            np.bitwise_or(x1, tmp, out=x1)
            np.bitwise_xor(x1, x0, out=x1)
        np.add(x0, np.uint32(ks[(group + 1) % 3]), out=x0)
        np.add(x1, np.uint32((ks[(group + 2) % 3] + group + 1) & _MASK32), out=x1)


def threefry2x32_pair(key: np.ndarray, x0: np.ndarray, x1: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Hash the counter pairs (x0[i], x1[i]) under `key`: JAX's threefry2x32 primitive."""
    k0, k1 = (int(k) for k in check_key(key))
    x0, x1 = np.broadcast_arrays(np.asarray(x0, np.uint32), np.asarray(x1, np.uint32))
    shape = x0.shape
    y0 = np.array(x0, dtype=np.uint32, order="C").reshape(-1)
    y1 = np.array(x1, dtype=np.uint32, order="C").reshape(-1)
    tmp = np.empty(min(y0.size, _CHUNK), np.uint32)
    for start in range(0, y0.size, _CHUNK):
        part = slice(start, start + _CHUNK)
        _hash_in_place(k0, k1, y0[part], y1[part], tmp[: y0[part].size])
    return y0.reshape(shape), y1.reshape(shape)


def threefry_2x32(key: np.ndarray, count: np.ndarray) -> np.ndarray:
    """JAX's `threefry_2x32(keypair, count)`: hash a uint32 array, same shape out.

    The flattened counts (padded with one zero when their number is odd) are cut in two
    halves that form the word pairs; the hashed halves are joined again.
    """
    count = np.asarray(count)
    if count.dtype != np.uint32:
        raise TypeError(f"threefry_2x32 requires uint32 counts, got {count.dtype}")
    flat = count.reshape(-1)
    odd = flat.size % 2
    if odd:
        flat = np.concatenate([flat, np.zeros(1, np.uint32)])
    half = flat.size // 2
    y0, y1 = threefry2x32_pair(key, flat[:half], flat[half:])
    out = np.concatenate([y0, y1])
    return (out[:-1] if odd else out).reshape(count.shape)


def seed(value: int) -> np.ndarray:
    """The key JAX's `PRNGKey(seed)` makes with 32-bit types: [0, seed mod 2**32].

    With x64 off, JAX converts the seed to int32 (wrapping) before splitting it into words,
    so the high word is always 0 and the low word holds the seed's low 32 bits.
    """
    return np.array([0, int(value) & _MASK32], dtype=np.uint32)


def iota_2x32_shape(shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """The flat index of every element of `shape`, as (high word, low word) uint32 arrays."""
    size = math.prod(shape)
    if size <= _MASK32 + 1:
        low = np.arange(size, dtype=np.uint32)
        high = np.zeros(size, np.uint32)
    else:
        index = np.arange(size, dtype=np.uint64)
        low = (index & np.uint64(_MASK32)).astype(np.uint32)
        high = (index >> np.uint64(32)).astype(np.uint32)
    return high.reshape(shape), low.reshape(shape)


def _counter_pairs(key: np.ndarray, size: int, first: int = 0) -> np.ndarray:
    """hash(key, c) as a (size, 2) array, for the 64-bit counters c = first, first + 1, ...

    The counters must not cross a multiple of 2**32 unless first is 0.
    """
    if size >= NATIVE_MIN_SIZE:
        return _native_pairs(key, size, first)
    counters = np.arange(first, first + size, dtype=np.uint64)
    high = (counters >> np.uint64(32)).astype(np.uint32)
    low = (counters & np.uint64(_MASK32)).astype(np.uint32)
    return np.stack(threefry2x32_pair(key, high, low), axis=-1)


def split(key: np.ndarray, shape: int | Shape = 2) -> np.ndarray:
    """New keys of shape (*shape, 2): key i is the word pair hash(key, i)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return _counter_pairs(check_key(key), math.prod(shape)).reshape(*shape, 2)


def fold_in(key: np.ndarray, data: int) -> np.ndarray:
    """The key for (key, data): threefry_2x32(key, seed(data)), the hash of the pair (0, data)."""
    return _counter_pairs(check_key(key), 1, int(data) & _MASK32).reshape(2)


_UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def random_bits(key: np.ndarray, bit_width: int, shape: Shape) -> np.ndarray:
    """Uniform random unsigned integers of `bit_width` bits and shape `shape`.

    Element i is hash(key, i) = (y0, y1); 64-bit values are y0 << 32 | y1, narrower ones
    y0 ^ y1 truncated to the width.
    """
    if bit_width not in _UINT_DTYPES:
        raise TypeError(f"random_bits requires 8-, 16-, 32- or 64-bit fields, got {bit_width}")
    check_key(key)
    shape = tuple(shape)
    size = math.prod(shape)
    if bit_width == 64:
        pairs = _counter_pairs(key, size).astype(np.uint64)
        return ((pairs[:, 0] << np.uint64(32)) | pairs[:, 1]).reshape(shape)
    if size >= NATIVE_MIN_SIZE:
        bits = _native_bits32(key, size)
    else:
        y0, y1 = threefry2x32_pair(key, *iota_2x32_shape((size,)))
        bits = np.bitwise_xor(y0, y1, out=y0)
    bits = bits.reshape(shape)
    return bits if bit_width == 32 else bits.astype(_UINT_DTYPES[bit_width])


# ---------------------------------------------------------------------------------------------
# Float transforms, as XLA's CPU backend computes them
#
# JAX's samplers turn bits into floats with a few float32 operations and special functions
# (log, log1p, erf, erfinv). XLA's CPU code generator evaluates those with its own polynomial
# approximations and contracts each multiply feeding an add into a fused multiply-add. The
# functions below repeat that evaluation step for step (`fma_float32` where XLA fuses), so
# that samples match JAX's bit for bit, not just to a few ulp.


def fma_float32(a, b, c) -> np.ndarray:
    """a * b + c rounded once to float32: a fused multiply-add, exact on every machine.

    The float64 product of two float32 values is exact. The float64 sum is rounded to odd
    (an inexact result gets an odd last bit), which makes its rounding to float32 correct.
    """
    a = np.asarray(a, np.float32).astype(np.float64)
    product = a * np.asarray(b, np.float32)
    addend = np.asarray(c, np.float32).astype(np.float64)
    product, addend = np.broadcast_arrays(product, addend)
    with np.errstate(invalid="ignore", over="ignore"):
        total = product + addend
        back = total - product
        error = (product - (total - back)) + (addend - back)  # Knuth's TwoSum
        even = (total.view(np.uint64) & np.uint64(1)) == 0
        inexact = (error != 0) & even & np.isfinite(total)
        toward = np.where(error > 0, np.inf, -np.inf)
        total = np.where(inexact, np.nextafter(total, toward), total)
        return total.astype(np.float32)


def unit_floats(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats in [0, 1): the top mantissa bits under the exponent of 1.0, minus 1.

    `bits` must be unsigned integers as wide as `dtype` (JAX draws 8 bits for 8-bit floats,
    not supported here).
    """
    dtype = np.dtype(dtype)
    finfo = np.finfo(dtype)
    uint = np.dtype(f"uint{finfo.bits}")
    if bits.dtype != uint:
        raise TypeError(f"unit_floats needs {uint} bits for {dtype}, got {bits.dtype}")
    shifted = bits >> uint.type(finfo.bits - finfo.nmant)
    shifted |= np.array(1.0, dtype).view(uint)
    return shifted.view(dtype) - dtype.type(1.0)


def scale_to_range(unit: np.ndarray, minval: np.ndarray, maxval: np.ndarray) -> np.ndarray:
    """JAX's max(minval, unit * (maxval - minval) + minval), in unit's dtype.

    float32 and float64 fuse the multiply-add as XLA does; float16 arithmetic rounds every
    step.
    """
    dtype = unit.dtype
    minval = np.asarray(minval, dtype)
    span = np.asarray(maxval, dtype) - minval
    if dtype == np.float32:
        value = fma_float32(unit, span, minval)
    elif dtype == np.float64:
        value = fma_float64(unit, span, minval)
    else:
        value = unit * span + minval
    return np.where(value < minval, minval, value)


def _f32(values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


# Cephes' logf polynomial, in XLA's split evaluation: three cubics joined by powers of x^3.
_LOG_POLY = _f32([7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                  1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                  3.3333331174e-1])
_SQRT_HALF = np.float32(0.707106781186547524)
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.12194440e-4)
_MIN_NORMAL = np.finfo(np.float32).tiny

# Cephes' rational log1p for |t| < sqrt(2) - 1, as XLA's log1p uses it.
_LOG1P_NUM = _f32([4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
                   6.5787325942061044846969e0, 2.9911919328553073277375e1,
                   6.0949667980987787057556e1, 5.7112963590585538103336e1,
                   2.0039553499201281259648e1])
_LOG1P_DEN = _f32([1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
                   2.2176239823732856465394e2, 3.0909872225312059774938e2,
                   2.1642788614495947685003e2, 6.0118660497603843919306e1])
_LOG1P_SMALL = np.float32(0.41421356237309504880)

# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems),
# the polynomial XLA lowers erf_inv to for float32: one for w < 5, one for w >= 5.
_ERFINV_SMALL = _f32([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                      0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941])
_ERFINV_LARGE = _f32([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                      0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682])

# Eigen's rational erf (x * P(x^2) / Q(x^2)), XLA's float32 erf; +-1 from |x| >= 3.8325.
_ERF_NUM = _f32([0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
                 0.18520832239976145, 1.128379143519084])
_ERF_DEN = _f32([-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
                 0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0])
_ERF_SATURATES = np.float32(3.832506856900711)

SQRT2_F32 = np.float32(np.sqrt(2.0))


def _horner(x: np.ndarray, coefficients: np.ndarray, start=None) -> np.ndarray:
    """The polynomial with `coefficients` (highest power first) at x, by fused Horner steps.

    With `start` (XLA's log1p starts from 0), every coefficient takes a step.
    """
    if start is None:
        poly, coefficients = np.full_like(x, coefficients[0]), coefficients[1:]
    else:
        poly = start
    for coef in coefficients:
        poly = fma_float32(poly, x, coef)
    return poly


def log_float32(x: np.ndarray) -> np.ndarray:
    """Natural log in float32, as XLA's CPU backend computes it (Cephes' logf, fused)."""
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore"):
        bits = np.maximum(x, _MIN_NORMAL).view(np.uint32)  # subnormals count as the least normal
        e = np.float32(1) + ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(np.float32)
        m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)
        small = m < _SQRT_HALF  # move m from [0.5, 1) to [sqrt(1/2), sqrt(2)), minus 1
        shift = np.where(small, m, np.float32(0))
        m = m - np.float32(1)
        e = e - np.where(small, np.float32(1), np.float32(0))
        m = m + shift
        m2 = m * m
        m3 = m2 * m
        y0 = _horner(m, _LOG_POLY[0:3])
        y1 = _horner(m, _LOG_POLY[3:6])
        y2 = _horner(m, _LOG_POLY[6:9])
        y = fma_float32(fma_float32(y0, m3, y1), m3, y2)
        y = fma_float32(y, m3, _LN2_LO * e)
        r = fma_float32(np.float32(-0.5), m2, m) + y
        r = fma_float32(_LN2_HI, e, r)
        r = np.where(np.isnan(x) | (x < 0), np.float32(np.nan), r)
        r = np.where(x == 0, np.float32(-np.inf), r)
        return np.where(x == np.inf, np.float32(np.inf), r)


def log1p_float32(t: np.ndarray) -> np.ndarray:
    """log(1 + t) in float32, as XLA computes it: Cephes' rational for small |t|, else log."""
    t = np.asarray(t, np.float32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        t2 = t * t
        zero = np.zeros_like(t)
        ratio = _horner(t, _LOG1P_NUM, zero) / _horner(t, _LOG1P_DEN, zero)
        small = t + fma_float32(np.float32(-0.5), t2, (t * t2) * ratio)
        return np.where(np.abs(t) < _LOG1P_SMALL, small, log_float32(t + np.float32(1)))


def erfinv_float32(x: np.ndarray) -> np.ndarray:
    """Inverse error function in float32, as XLA computes it (Giles' polynomial).

    erfinv(+-1) = +-inf and |x| > 1 gives nan, as in XLA.
    """
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        w = -log1p_float32(x * -x)
        small = w < np.float32(5)
        w = np.where(small, w - np.float32(2.5), np.sqrt(w) - np.float32(3))
        poly = np.where(small, _ERFINV_SMALL[0], _ERFINV_LARGE[0])
        for lo_coef, hi_coef in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
            poly = fma_float32(poly, w, np.where(small, lo_coef, hi_coef))
        result = poly * x
        return np.where(np.abs(x) == np.float32(1), x * np.float32(np.inf), result)


def fma_float64(a, b, c) -> np.ndarray:
    """a * b + c rounded once to float64, emulated exactly (Boldo and Melquiond): the product
    split into two doubles (Veltkamp/Dekker), the sum of the three parts rounded to odd, then
    to nearest. Used where XLA fuses a float64 multiply-add. Operands must keep a * b finite
    and away from the subnormal range (sampler values are)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        high = a * b
        low = _two_product_error(a, b, high)
        total, error = _two_sum(c, high)
        odd = _round_to_odd(error, low)
        # an infinite or nan product or sum: the fused result is the plain one
        return np.where(np.isfinite(high) & np.isfinite(total), total + odd, high + c)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = hi + lo with each part on 26 bits (Veltkamp's splitting)."""
    t = x * np.float64(134217729.0)  # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def _two_product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """The exact a * b - product, where product = fl(a * b) (Dekker)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fl(a + b), the exact rounding error) by Knuth's TwoSum."""
    total = a + b
    back = total - a
    return total, (a - (total - back)) + (b - back)


def _round_to_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: an inexact sum gets an odd last bit."""
    total, error = _two_sum(a, b)
    even = (total.view(np.uint64) & np.uint64(1)) == 0
    inexact = (error != 0) & even & np.isfinite(total)
    return np.where(inexact, np.nextafter(total, np.where(error > 0, np.inf, -np.inf)), total)


def log1p_float64(t: np.ndarray) -> np.ndarray:
    """log(1 + t) in float64 as XLA's CPU backend computes it: Cephes' rational (the float32
    version's coefficients, in double) for |t| < sqrt(2) - 1, else log(1 + t) by libm."""
    t = np.asarray(t, np.float64)
    num, den = (np.asarray(c, np.float64) for c in (_LOG1P_NUM64, _LOG1P_DEN64))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        t2 = t * t
        p, q = np.zeros_like(t), np.zeros_like(t)
        for a, b in zip(num, den):
            p, q = fma_float64(p, t, a), fma_float64(q, t, b)
        small = t + fma_float64(-0.5, t2, (t * t2) * (p / q))
        out = np.where(np.abs(t) < _LOG1P_SMALL64, small, np.log(t + 1.0))
        return np.where(t == 0, t, out)  # log1p(-0) is -0, as in XLA


_LOG1P_NUM64 = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
                6.5787325942061044846969e0, 2.9911919328553073277375e1,
                6.0949667980987787057556e1, 5.7112963590585538103336e1,
                2.0039553499201281259648e1)
_LOG1P_DEN64 = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
                2.2176239823732856465394e2, 3.0909872225312059774938e2,
                2.1642788614495947685003e2, 6.0118660497603843919306e1)
_LOG1P_SMALL64 = 0.41421356237309504880


# Giles' float64 erfinv polynomials in three ranges of w = -log1p(-x * x), highest order
# first, as XLA's ErfInv for F64 evaluates them (published coefficients).
_ERFINV64_W_BELOW_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_ERFINV64_W_BELOW_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_ERFINV64_W_ABOVE_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def erfinv_float64(x: np.ndarray) -> np.ndarray:
    """Inverse error function in float64 as XLA computes it: Giles' three polynomials, the
    multiply-adds fused. erfinv(+-1) = +-inf and |x| > 1 gives nan."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        w = -log1p_float64(-x * x)
        below_6_25, below_16 = w < 6.25, w < 16.0
        root = np.sqrt(w)
        w = np.where(below_6_25, w - 3.125, root - np.where(below_16, 3.25, 5.0))
        tiers = (_ERFINV64_W_BELOW_6_25, _ERFINV64_W_BELOW_16, _ERFINV64_W_ABOVE_16)
        p = np.where(below_6_25, tiers[0][0], np.where(below_16, tiers[1][0], tiers[2][0]))
        for i in range(1, 23):
            coef = np.where(below_6_25, tiers[0][i], np.where(
                below_16, tiers[1][i] if i < 19 else 0.0, tiers[2][i] if i < 17 else 0.0))
            step = fma_float64(p, w, coef)
            live = True if i < 17 else (below_16 if i < 19 else below_6_25)
            p = np.where(live, step, p)
        return np.where(np.abs(x) == 1, x * np.inf, p * x)


def erf_float32(x: np.ndarray) -> np.ndarray:
    """Error function in float32, as XLA's CPU backend computes it (Eigen's rational)."""
    x = np.asarray(x, np.float32)
    x2 = x * x
    num = x * _horner(x2, _ERF_NUM)
    den = _horner(x2, _ERF_DEN)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = num / den
    return np.where(np.abs(x) >= _ERF_SATURATES, np.copysign(np.float32(1), x), ratio)


NORMAL_LOW = np.nextafter(np.float32(-1), np.float32(0))  # normal's uniform in (-1, 1)


def uniform_float32(key: np.ndarray, shape: Shape, minval: float, maxval: float) -> np.ndarray:
    """JAX's `uniform(key, shape, float32, minval, maxval)` for scalar bounds."""
    shape = tuple(shape)
    size = math.prod(shape)
    lo, hi = np.float32(minval), np.float32(maxval)
    if size >= NATIVE_MIN_SIZE:
        return _native_floats("uniform", key, size, lo, hi - lo).reshape(shape)
    unit = unit_floats(random_bits(key, 32, shape), np.float32)
    return scale_to_range(unit, lo, hi)


def normal_float32(key: np.ndarray, shape: Shape) -> np.ndarray:
    """JAX's `normal(key, shape, float32)`: sqrt(2) * erfinv(uniform in (-1, 1))."""
    shape = tuple(shape)
    size = math.prod(shape)
    lo = NORMAL_LOW
    if size >= NATIVE_MIN_SIZE:
        return _native_floats("normal", key, size, lo, np.float32(1) - lo).reshape(shape)
    u = uniform_float32(key, shape, lo, np.float32(1))
    return SQRT2_F32 * erfinv_float32(u)


# ---------------------------------------------------------------------------------------------
# Native kernels: the hash and the transforms above, fused into one vectorised loop
#
# Each kernel fills out[0 : lanes * nsteps] for the counters (hi, lo0 + j); the caller cuts
# the range into work items that do not cross a multiple of 2**32 and shares them among
# threads. A loop step handles `lanes` counters: four of the host's widest registers, which
# gives the out-of-order core independent work while one step's dependency chains wait (64
# lanes run 30% faster than 16 on AVX-512).


def _default_lanes() -> int:
    return 4 * max(128, jit_host.host_vector_bits()) // 32


def _hex_float(value: float) -> str:
    """An LLVM IR float constant (the double spelling of a float32 value)."""
    bits = struct.unpack("<Q", struct.pack("<d", float(np.float32(value))))[0]
    return f"0x{bits:016X}"


def _vec(elem: str, value: str, lanes: int) -> str:
    return "<" + ", ".join([f"{elem} {value}"] * lanes) + ">"


class _IR:
    """A tiny SSA text emitter for one loop body over <lanes x i32> / <lanes x float> values."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.VI, self.VF = f"<{lanes} x i32>", f"<{lanes} x float>"
        self.lines: list[str] = []
        self.count = 0

    def op(self, text: str) -> str:
        name = f"%t{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text}")
        return name

    def i(self, value: int) -> str:
        return _vec("i32", str(value & _MASK32), self.lanes)

    def f(self, value: float) -> str:
        return _vec("float", _hex_float(value), self.lanes)

    def splat(self, scalar: str, elem: str) -> str:
        vty = f"<{self.lanes} x {elem}>"
        one = self.op(f"insertelement {vty} poison, {elem} {scalar}, i64 0")
        return self.op(f"shufflevector {vty} {one}, {vty} poison, "
                       f"<{self.lanes} x i32> zeroinitializer")

    def ibin(self, opcode: str, a: str, b: str) -> str:
        return self.op(f"{opcode} {self.VI} {a}, {b}")

    def fbin(self, opcode: str, a: str, b: str) -> str:
        return self.op(f"{opcode} {self.VF} {a}, {b}")

    def fcmp(self, cond: str, a: str, b: str) -> str:
        return self.op(f"fcmp {cond} {self.VF} {a}, {b}")

    def select(self, cond: str, a: str, b: str, vty: str) -> str:
        return self.op(f"select <{self.lanes} x i1> {cond}, {vty} {a}, {vty} {b}")

    def fma(self, a: str, b: str, c: str) -> str:
        return self.call("fma", "f32", self.VF, a, b, c)

    def rotl(self, x: str, r: int) -> str:
        return self.call("fshl", "i32", self.VI, x, x, self.i(r))

    def call(self, intrinsic: str, elem: str, vty: str, *args: str) -> str:
        operands = ", ".join(f"{vty} {a}" for a in args)
        return self.op(f"call {vty} @llvm.{intrinsic}.v{self.lanes}{elem}({operands})")


def _emit_hash(ir: _IR, ks: list[str], inject: list[str], high: str, low: str
               ) -> tuple[str, str]:
    """Threefry of (high, low) under splatted key words ks, with the key injections."""
    x0 = ir.ibin("add", high, ks[0])
    x1 = ir.ibin("add", low, ks[1])
    for group in range(5):
        for rot in _ROTATIONS[group % 2]:
            x0 = ir.ibin("add", x0, x1)
            x1 = ir.ibin("xor", ir.rotl(x1, rot), x0)
        x0 = ir.ibin("add", x0, ks[(group + 1) % 3])
        x1 = ir.ibin("add", x1, inject[group])
    return x0, x1


def _emit_uniform(ir: _IR, bits: str, minval: str, span: str) -> str:
    """unit_floats + scale_to_range, op for op."""
    shifted = ir.ibin("lshr", bits, ir.i(9))
    one_bits = ir.ibin("or", shifted, ir.i(0x3F800000))
    unit = ir.op(f"bitcast {ir.VI} {one_bits} to {ir.VF}")
    unit = ir.fbin("fsub", unit, ir.f(1.0))
    value = ir.fma(unit, span, minval)
    return ir.select(ir.fcmp("olt", value, minval), minval, value, ir.VF)


def _emit_horner(ir: _IR, x: str, coefficients, start: str | None = None) -> str:
    if start is None:
        poly, coefficients = ir.f(coefficients[0]), coefficients[1:]
    else:
        poly = start
    for coef in coefficients:
        poly = ir.fma(poly, x, ir.f(coef))
    return poly


def _emit_log(ir: _IR, x: str) -> str:
    """log_float32 for positive normal x (all the normal sampler produces), op for op."""
    bits = ir.op(f"bitcast {ir.VF} {x} to {ir.VI}")
    exponent = ir.ibin("sub", ir.ibin("lshr", bits, ir.i(23)), ir.i(127))
    e = ir.fbin("fadd", ir.f(1.0), ir.op(f"sitofp {ir.VI} {exponent} to {ir.VF}"))
    mbits = ir.ibin("or", ir.ibin("and", bits, ir.i(0x807FFFFF)), ir.i(0x3F000000))
    m = ir.op(f"bitcast {ir.VI} {mbits} to {ir.VF}")
    small = ir.fcmp("olt", m, ir.f(_SQRT_HALF))
    shift = ir.select(small, m, ir.f(0.0), ir.VF)
    m = ir.fbin("fsub", m, ir.f(1.0))
    e = ir.fbin("fsub", e, ir.select(small, ir.f(1.0), ir.f(0.0), ir.VF))
    m = ir.fbin("fadd", m, shift)
    m2 = ir.fbin("fmul", m, m)
    m3 = ir.fbin("fmul", m2, m)
    y0 = _emit_horner(ir, m, _LOG_POLY[0:3])
    y1 = _emit_horner(ir, m, _LOG_POLY[3:6])
    y2 = _emit_horner(ir, m, _LOG_POLY[6:9])
    y = ir.fma(ir.fma(y0, m3, y1), m3, y2)
    y = ir.fma(y, m3, ir.fbin("fmul", ir.f(_LN2_LO), e))
    r = ir.fbin("fadd", ir.fma(ir.f(-0.5), m2, m), y)
    return ir.fma(ir.f(_LN2_HI), e, r)


def _emit_erfinv(ir: _IR, x: str) -> str:
    """erfinv_float32 for |x| < 1 (all the normal sampler produces), op for op."""
    t = ir.fbin("fmul", x, ir.op(f"fneg {ir.VF} {x}"))
    t2 = ir.fbin("fmul", t, t)
    zero = ir.f(0.0)
    ratio = ir.fbin("fdiv", _emit_horner(ir, t, _LOG1P_NUM, zero),
                    _emit_horner(ir, t, _LOG1P_DEN, zero))
    near = ir.fbin("fadd", t, ir.fma(ir.f(-0.5), t2, ir.fbin("fmul", ir.fbin("fmul", t, t2),
                                                              ratio)))
    far = _emit_log(ir, ir.fbin("fadd", t, ir.f(1.0)))
    absolute = ir.call("fabs", "f32", ir.VF, t)
    log1p = ir.select(ir.fcmp("olt", absolute, ir.f(_LOG1P_SMALL)), near, far, ir.VF)
    w = ir.op(f"fneg {ir.VF} {log1p}")
    small = ir.fcmp("olt", w, ir.f(5.0))
    root = ir.call("sqrt", "f32", ir.VF, w)
    w = ir.select(small, ir.fbin("fsub", w, ir.f(2.5)), ir.fbin("fsub", root, ir.f(3.0)), ir.VF)
    poly = ir.select(small, ir.f(_ERFINV_SMALL[0]), ir.f(_ERFINV_LARGE[0]), ir.VF)
    for lo_coef, hi_coef in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
        poly = ir.fma(poly, w, ir.select(small, ir.f(lo_coef), ir.f(hi_coef), ir.VF))
    return ir.fbin("fmul", poly, x)


def _kernel_ir(name: str, kind: str, lanes: int) -> str:
    """One kernel: kind is 'pairs' (both hash words), 'bits' (their xor), 'uniform' or
    'normal' (float32)."""
    ir = _IR(lanes)
    ks2 = ir.op("xor i32 %k0, %k1")
    ks2 = ir.op(f"xor i32 {ks2}, {_PARITY}")
    scalars = ["%k0", "%k1", ks2]
    ks = [ir.splat(k, "i32") for k in scalars]
    inject = [ir.splat(ir.op(f"add i32 {scalars[(g + 2) % 3]}, {g + 1}"), "i32")
              for g in range(5)]
    high = ir.splat("%hi", "i32")
    floats = kind in ("uniform", "normal")
    if floats:
        minval, span = ir.splat("%minval", "float"), ir.splat("%span", "float")
    entry = ir.lines
    ir.lines = []
    index = ir.op("phi i64 [0, %entry], [%next, %loop]")  # the vector's number
    offset = ir.op(f"mul i32 {ir.op(f'trunc i64 {index} to i32')}, {lanes}")
    base = ir.op(f"add i32 %lo0, {offset}")
    iota = "<" + ", ".join(f"i32 {j}" for j in range(lanes)) + ">"
    low = ir.ibin("add", ir.splat(base, "i32"), iota)
    y0, y1 = _emit_hash(ir, ks, inject, high, low)
    if kind == "pairs":  # interleave: y0[0], y1[0], y0[1], ...
        order = ", ".join(f"i32 {j // 2 + (j % 2) * lanes}" for j in range(2 * lanes))
        result = ir.op(f"shufflevector {ir.VI} {y0}, {ir.VI} {y1}, <{2 * lanes} x i32> <{order}>")
    else:
        result = ir.ibin("xor", y0, y1)
    if floats:
        result = _emit_uniform(ir, result, minval, span)
    if kind == "normal":
        result = ir.fbin("fmul", _emit_erfinv(ir, result), ir.f(SQRT2_F32))
    elem = "float" if floats else "i32"
    lanes_out = 2 * lanes if kind == "pairs" else lanes
    ptr = ir.op(f"getelementptr {elem}, ptr %out, i64 {ir.op(f'mul i64 {index}, {lanes_out}')}")
    ir.lines.append(f"  store <{lanes_out} x {elem}> {result}, ptr {ptr}, align 4")
    body = ir.lines
    params = "i32 %k0, i32 %k1, i32 %hi, i32 %lo0, i64 %nsteps, ptr %out"
    if floats:
        params += ", float %minval, float %span"
    return "\n".join([
        f"define void @{name}({params}) {{", "entry:", *entry, "  br label %loop", "loop:",
        *body, f"  %next = add i64 {index}, 1", "  %more = icmp ult i64 %next, %nsteps",
        "  br i1 %more, label %loop, label %done", "done:", "  ret void", "}"])


_KINDS = ("pairs", "bits", "uniform", "normal")


def _module_ir(lanes: int) -> str:
    vi, vf = f"<{lanes} x i32>", f"<{lanes} x float>"
    decls = [f"declare {vi} @llvm.fshl.v{lanes}i32({vi}, {vi}, {vi})",
             f"declare {vf} @llvm.sqrt.v{lanes}f32({vf})",
             f"declare {vf} @llvm.fabs.v{lanes}f32({vf})",
             f"declare {vf} @llvm.fma.v{lanes}f32({vf}, {vf}, {vf})"]
    kernels = [_kernel_ir(f"threefry_{kind}", kind, lanes) for kind in _KINDS]
    return "\n\n".join(decls + kernels)


class _NativeKernels:
    """The compiled kernels as ctypes functions (built once, on first use)."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.module = jit_host.compile_module(_module_ir(lanes))
        counters = [ctypes.c_uint32] * 4 + [ctypes.c_uint64, ctypes.c_void_p]
        self.functions = {}
        for kind in _KINDS:
            bounds = [ctypes.c_float] * 2 if kind in ("uniform", "normal") else []
            self.functions[kind] = self.module.function(f"threefry_{kind}", None,
                                                        counters + bounds)


_native_lock = threading.Lock()
_native: _NativeKernels | None = None
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_WORKERS = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                       else os.cpu_count() or 1, 16))
_CHUNK_COUNTERS = 1 << 16  # counters per work item: about 0.1 ms of normal samples


def _kernels() -> _NativeKernels:
    global _native
    with _native_lock:
        if _native is None:
            _native = _NativeKernels(_default_lanes())
        return _native


def _helpers() -> concurrent.futures.ThreadPoolExecutor:
    """Threads that help the caller through a batch of work items."""
    global _pool
    with _native_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(_WORKERS - 1, "redraft-threefry")
        return _pool


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's threads: start a new pool when needed."""
    global _pool, _native_lock
    _pool, _native_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Batch:
    """Work items that the caller and helper threads claim one at a time.

    Claiming (rather than handing each thread a fixed share) keeps a busy machine from
    stalling the call: when a helper is not scheduled, the caller does its items, and it
    waits only for items that a helper has actually started.
    """

    def __init__(self, function, items: list[tuple]) -> None:
        self.function, self.items = function, items
        self.claims = itertools.count()  # next() on a count is atomic under the GIL
        self.remaining = len(items)
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def drain(self) -> None:
        for index in self.claims:
            if index >= len(self.items):
                return
            self.function(*self.items[index])  # releases the GIL while the kernel runs
            with self.lock:
                self.remaining -= 1
                if self.remaining == 0:
                    self.finished.set()

    def run(self, helpers: int) -> None:
        for _ in range(helpers):
            _helpers().submit(self.drain)
        self.drain()
        self.finished.wait()


def _run_native(kind: str, key: np.ndarray, size: int, out: np.ndarray, extra: tuple = (),
                first: int = 0) -> None:
    """Fill `out` (padded to whole loop steps) with kernel `kind` for the counters first,
    first + 1, ..., on all cores.

    Work items hold _CHUNK_COUNTERS counters and never cross a multiple of 2**32 (beyond
    2**32 elements), so that no item's low word wraps.
    """
    kernels = _kernels()
    function, lanes = kernels.functions[kind], kernels.lanes
    k0, k1 = (int(k) for k in check_key(key))
    steps = -(-size // lanes)
    if steps == 0:
        return
    per_item = max(1, _CHUNK_COUNTERS // lanes)  # a power of two, so items align to 2**32
    address, stride = out.ctypes.data, out.nbytes // (steps * lanes)  # bytes per counter
    items = []
    for step in range(0, steps, per_item):
        start = first + step * lanes
        items.append((k0, k1, start >> 32, start & _MASK32, min(per_item, steps - step),
                      address + step * lanes * stride, *extra))
    if len(items) == 1 or _WORKERS == 1:
        for item in items:
            function(*item)
        return
    _Batch(function, items).run(min(_WORKERS, len(items)) - 1)


def _padded(size: int) -> int:
    """size rounded up to whole loop steps (the kernels write whole steps)."""
    lanes = _kernels().lanes
    return -(-size // lanes) * lanes


def _native_pairs(key: np.ndarray, size: int, first: int) -> np.ndarray:
    out = np.empty((_padded(size), 2), np.uint32)
    _run_native("pairs", key, size, out, first=first)
    return out[:size]


def _native_bits32(key: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(_padded(size), np.uint32)
    _run_native("bits", key, size, out)
    return out[:size]


def _native_floats(kind: str, key: np.ndarray, size: int, minval: np.float32,
                   span: np.float32) -> np.ndarray:
    out = np.empty(_padded(size), np.float32)
    _run_native(kind, key, size, out, (float(minval), float(span)))
    return out[:size]
