"""The Threefry-2x32 kernel: known answers, JAX's bits, XLA's float functions, and agreement
of the native kernels with the NumPy reference path, bit for bit."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from redraft.kernels import threefry as tf

U32_MAX = 0xFFFFFFFF

# Bit patterns (input, output) of float32 values that JAX 0.10.2 computed on the CPU with
# jax.jit(lax.log / lax.log1p / lax.erf_inv / lax.erf).
XLA_SPOT_VALUES = {
    "erf": [[3231711232, 3212836864], [3228911562, 3212836864], [3221225472, 3212758384],
            [3207803699, 3207431264], [3129152111, 3130254876], [0, 0], [897988541, 899117776],
            [1036831949, 1038504693], [1056964608, 1057308539], [1067869798, 1064246054],
            [1077936128, 1065352846], [1081417400, 1065353217], [1092616192, 1065353216]],
    "erf_inv": [[3212836863, 3228911562], [3211159142, 3214204937], [3204448256, 3203674366],
                [3129152111, 3127398834], [0, 0], [850119799, 848838827],
                [1036831949, 1035336225], [1058642330, 1058560391], [1064514355, 1068590411],
                [1065336439, 1075112345], [1065351538, 1076891859], [1065353215, 1081427914]],
    "log": [[228737632, 3263834037], [874581936, 3246089967], [1011451376, 3230449074],
            [1048576000, 3216077336], [1060439283, 3199300121], [1060439284, 3199300118],
            [1065336439, 3129156298], [1065353216, 0], [1071225242, 1057478465],
            [1078530000, 1066567292], [1148846080, 1088228437], [2137108966, 1118908822]],
    "log1p": [[3212836862, 3246330882], [3208642560, 3216077336], [3201569741, 3205032102],
              [3201569739, 3205032102], [3184315597, 3185035073], [3072837036, 3072837091],
              [0, 0], [841731191, 841731191], [1050253722, 1048990876],
              [1054086093, 1051816471], [1075838976, 1067473546], [1232348160, 1096617046]],
}
XLA_FUNCTIONS = {"erf": tf.erf_float32, "erf_inv": tf.erfinv_float32, "log": tf.log_float32,
                 "log1p": tf.log1p_float32}


@pytest.fixture
def reference_path(monkeypatch):
    """Run the NumPy reference path instead of the native kernels."""
    monkeypatch.setattr(tf, "NATIVE_MIN_SIZE", 1 << 62)


@pytest.fixture(params=["native", "reference"])
def either_path(request, monkeypatch):
    if request.param == "reference":
        monkeypatch.setattr(tf, "NATIVE_MIN_SIZE", 1 << 62)
    return request.param


def _u32(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint32)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --------------------------------------------------------------------------------------------
# The hash


@pytest.mark.parametrize("key, count, expected", [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((U32_MAX, U32_MAX), (U32_MAX, U32_MAX), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_random123_known_answers(key, count, expected):
    assert tf.threefry_2x32(_u32(*key), _u32(*count)).tolist() == list(expected)


def test_threefry_2x32_pads_odd_counts_and_keeps_the_shape():
    key = _u32(0x13198A2E, 0x03707344)
    count = np.arange(6, dtype=np.uint32).reshape(2, 3)
    out = tf.threefry_2x32(key, count)
    assert out.shape == (2, 3) and out.dtype == np.uint32
    odd = tf.threefry_2x32(key, np.arange(5, dtype=np.uint32))
    padded = tf.threefry_2x32(key, np.array([0, 1, 2, 3, 4, 0], np.uint32))
    y0, y1 = tf.threefry2x32_pair(key, _u32(0, 1, 2), _u32(3, 4, 0))
    assert odd.tolist() == np.concatenate([y0, y1])[:5].tolist()
    assert padded[:3].tolist() == odd[:3].tolist()
    assert tf.threefry_2x32(key, np.zeros((3, 0), np.uint32)).shape == (3, 0)


def test_threefry_rejects_bad_keys_and_counts():
    with pytest.raises(TypeError, match="uint32 array of shape"):
        tf.threefry_2x32(np.array([0, 1]), _u32(1, 2))
    with pytest.raises(TypeError, match="uint32 counts"):
        tf.threefry_2x32(_u32(0, 1), np.array([1, 2]))
    with pytest.raises(TypeError, match="8-, 16-, 32- or 64-bit"):
        tf.random_bits(_u32(0, 1), 12, (3,))


def test_iota_2x32_shape():
    high, low = tf.iota_2x32_shape((3, 4))
    assert high.tolist() == [[0] * 4] * 3
    assert low.tolist() == np.arange(12).reshape(3, 4).tolist()


def test_seed_keeps_the_low_32_bits():
    assert tf.seed(1701).tolist() == [0, 1701]
    assert tf.seed(-1).tolist() == [0, U32_MAX]
    assert tf.seed(2**40 + 7).tolist() == [0, 7]


def test_key_operations_match_jax(either_path):
    key = tf.seed(1701)
    assert tf.split(key, (2,)).ravel().tolist() == [741045208, 1847055613, 85238482, 2594297577]
    assert tf.split(tf.seed(0), 3).ravel().tolist() == [
        1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009]
    assert tf.fold_in(key, 7).tolist() == [33961628, 564353879]
    assert tf.random_bits(key, 32, (8,)).tolist() == [
        1111271205, 2679469115, 974515252, 521976754, 2127438447, 4120601916, 260271764,
        598044107]


def test_split_shapes():
    key = tf.seed(3)
    assert tf.split(key, (2, 3)).shape == (2, 3, 2)
    assert tf.split(key, 0).shape == (0, 2)
    assert tf.split(key, (2, 3)).reshape(6, 2).tolist() == tf.split(key, 6).tolist()


def test_narrow_and_wide_bits_derive_from_the_word_pair(reference_path):
    key = tf.seed(9)
    y0, y1 = tf.threefry2x32_pair(key, *tf.iota_2x32_shape((40,)))
    assert tf.random_bits(key, 32, (40,)).tolist() == (y0 ^ y1).tolist()
    assert tf.random_bits(key, 8, (40,)).tolist() == ((y0 ^ y1) & 0xFF).tolist()
    assert tf.random_bits(key, 16, (5, 8)).ravel().tolist() == ((y0 ^ y1) & 0xFFFF).tolist()
    wide = (y0.astype(np.uint64) << np.uint64(32)) | y1
    assert tf.random_bits(key, 64, (40,)).tolist() == wide.tolist()


# --------------------------------------------------------------------------------------------
# Native kernels against the reference path


SIZES = [0, 1, 15, 16, 17, 1000, 70001]  # 70001 runs on several threads


@pytest.mark.parametrize("size", SIZES)
def test_native_kernels_match_the_reference(size, monkeypatch):
    key = tf.seed(1701)

    def run_all():
        return [tf.random_bits(key, width, (size,)) for width in (8, 16, 32, 64)] + [
            tf.split(key, size),
            tf.uniform_float32(key, (size,), -2.0, 5.0),
            tf.uniform_float32(key, (size,), 0.0, 1.0),
            tf.normal_float32(key, (size,)),
        ]

    monkeypatch.setattr(tf, "NATIVE_MIN_SIZE", 1)
    native = run_all()
    monkeypatch.setattr(tf, "NATIVE_MIN_SIZE", 1 << 62)
    reference = run_all()
    for got, want in zip(native, reference):
        assert _same_bits(got, want)


@pytest.mark.parametrize("lanes", [16, 32])
def test_kernels_of_any_width_agree(lanes, monkeypatch):
    """The host picks the loop width; narrower machines (AVX2, SSE) must give the same bits."""
    key = tf.seed(7)

    def run_all():
        return [tf.random_bits(key, 32, (1001,)), tf.split(key, 77),
                tf.uniform_float32(key, (1001,), -1.0, 4.0), tf.normal_float32(key, (70001,))]

    host = run_all()
    monkeypatch.setattr(tf, "_native", tf._NativeKernels(lanes))
    for got, want in zip(run_all(), host):
        assert _same_bits(got, want)


@pytest.mark.parametrize("data", [0, 1, 7, 123456789, U32_MAX - 3, U32_MAX])
def test_native_fold_in_matches_the_reference(data, monkeypatch):
    key = tf.seed(42)
    native = tf.fold_in(key, data)
    monkeypatch.setattr(tf, "NATIVE_MIN_SIZE", 1 << 62)
    assert native.tolist() == tf.fold_in(key, data).tolist()
    assert native.tolist() == tf.threefry_2x32(key, _u32(0, data)).tolist()


def test_native_kernel_carries_counters_into_the_high_word(monkeypatch):
    """Counters at and past 2**32 (outputs of 4 G elements, too big to build in a test)."""
    key = tf.seed(5)
    first = (1 << 32) - 16
    out = np.empty((48, 2), np.uint32)
    for start in (first, first + 16, first + 32):
        part = np.empty((tf._padded(16), 2), np.uint32)
        tf._run_native("pairs", key, 16, part, first=start)
        part = part[:16]
        out[start - first:start - first + 16] = part
    counters = np.arange(first, first + 48, dtype=np.uint64)
    y0, y1 = tf.threefry2x32_pair(key, (counters >> np.uint64(32)).astype(np.uint32),
                                  (counters & np.uint64(U32_MAX)).astype(np.uint32))
    assert out.tolist() == np.stack([y0, y1], -1).tolist()


# --------------------------------------------------------------------------------------------
# XLA's float32 functions


@pytest.mark.parametrize("name", sorted(XLA_SPOT_VALUES))
def test_float_functions_match_xla_bit_for_bit(name):
    pairs = np.array(XLA_SPOT_VALUES[name], dtype=np.uint32)
    x, expected = pairs[:, 0].view(np.float32), pairs[:, 1].view(np.float32)
    assert XLA_FUNCTIONS[name](x).view(np.uint32).tolist() == expected.view(np.uint32).tolist()


def _round_to_float32(value: Fraction) -> np.float32:
    """The float32 nearest to an exact rational (ties to even), without double rounding."""
    guess = np.float32(float(value))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value),
                                          int(np.array(c).view(np.uint32)) & 1))


def test_fma_float32_rounds_once():
    # 4097 * 4097 = 2**24 + 2**13 + 1 is halfway between two float32 values; the tiny addend
    # decides the rounding, which float64 arithmetic alone would lose.
    assert tf.fma_float32(4097, 4097, 2.0**-30) == np.float32(16785410)
    assert tf.fma_float32(-4097, 4097, -(2.0**-30)) == np.float32(-16785410)
    assert tf.fma_float32(4097, 4097, 0) == np.float32(16785408)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    c = (rng.standard_normal(300) * 10.0 ** rng.integers(-12, 3, 300)).astype(np.float32)
    got = tf.fma_float32(a, b, c)
    for ai, bi, ci, gi in zip(a, b, c, got):
        exact = Fraction(float(ai)) * Fraction(float(bi)) + Fraction(float(ci))
        assert gi == _round_to_float32(exact)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    want32 = want.astype(np.float32)
    spacing = np.spacing(np.abs(want32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def test_log_and_log1p_accuracy():
    x = np.geomspace(1e-37, 3e38, 20001).astype(np.float32)
    assert _ulps(tf.log_float32(x), np.log(x.astype(np.float64))).max() < 2
    t = np.linspace(-0.999, 3.0, 20001).astype(np.float32)
    assert _ulps(tf.log1p_float32(t), np.log1p(t.astype(np.float64))).max() < 2.5


def test_log_special_values():
    x = np.array([0.0, -1.0, np.inf, np.nan, 1e-45, 1.0], np.float32)
    out = tf.log_float32(x)
    assert out[0] == -np.inf and np.isnan(out[1]) and out[2] == np.inf and np.isnan(out[3])
    assert out[4] == tf.log_float32(np.finfo(np.float32).tiny) and out[5] == 0


def _erfinv_float64(y: float) -> float:
    """erfinv by bisection on math.erf, good to float64 rounding."""
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_erfinv_accuracy_and_edges():
    x = np.concatenate([np.linspace(-0.9999, 0.9999, 801), [1e-30, -3e-8, 0.99999994]])
    x = x.astype(np.float32)
    want = np.array([_erfinv_float64(float(v)) for v in x])
    # Giles' polynomial itself is good to about 3e-6 near |x| = 1 (XLA's too).
    np.testing.assert_allclose(tf.erfinv_float32(x), want, rtol=4e-6, atol=0)
    edges = tf.erfinv_float32(np.array([1, -1, 0, 1.5, -2, np.nan], np.float32))
    assert edges[0] == np.inf and edges[1] == -np.inf and edges[2] == 0
    assert np.isnan(edges[3:]).all()


def test_erf_accuracy():
    x = np.linspace(-6, 6, 4001).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    assert np.abs(tf.erf_float32(x) - want).max() < 3e-7
    assert tf.erf_float32(np.float32(10)) == 1 and tf.erf_float32(np.float32(-4)) == -1
