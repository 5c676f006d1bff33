"""Accuracy and special values of the vecmath kernels against wider-precision NumPy.

float32 results are compared with NumPy in float64; float64 results with NumPy in long
double (skipped where long double is no wider than double). Errors are in ulps of the
reference rounded to the tested dtype.
"""
from __future__ import annotations

import math
import re
import zlib

import numpy as np
import pytest
from llvmlite import ir

from redraft.kernels.vecmath import ARITY, VECMATH
from redraft.kernels.vecmath.loops import map_kernel

F32_OPS = ["exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "logistic", "erf"]
F64_OPS = ["exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "logistic"]

# Bounds checked here: the measured maxima in the docstrings, rounded up.
MAX_ULP = {"exp": 1.0, "expm1": 2.0, "log": 1.0, "log1p": 1.5, "sin": 2.0, "cos": 2.0,
           "tanh": 2.0, "logistic": 2.5, "erf": 1.0, "pow": 1.0}

WIDE_LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63
HALF_PI = np.longdouble("1.57079632679489661923132169163975144")
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _logistic(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


REFERENCE = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
             "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "logistic": _logistic,
             "erf": _erf, "pow": np.power}


def reference(op: str, dtype: np.dtype, *args: np.ndarray) -> np.ndarray:
    wide = np.longdouble if dtype == np.float64 else np.float64
    with np.errstate(all="ignore"):
        return REFERENCE[op](*(a.astype(wide) for a in args))


def ulp_error(got: np.ndarray, ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """|got - ref| in ulps of ref rounded to dtype; 0 where both are the same NaN/inf."""
    with np.errstate(all="ignore"):
        rounded = ref.astype(dtype)
        magnitude = np.where(np.isfinite(rounded), np.abs(rounded), np.finfo(dtype).max)
        err = np.abs(got.astype(ref.dtype) - ref) / np.spacing(magnitude.astype(dtype))
    err[np.isnan(got) & np.isnan(ref)] = 0
    err[np.isinf(rounded) & (got == rounded)] = 0
    err[np.isnan(err)] = np.inf
    return err


def samples(op: str, dtype: np.dtype, n: int = 60_000) -> np.ndarray:
    """Wide sampled inputs: uniform over the interesting range, log-uniform magnitudes."""
    rng = np.random.default_rng(zlib.crc32(f"{op}/{np.dtype(dtype).name}".encode()))
    emin, emax = (-149, 128) if dtype == np.float32 else (-1074, 1024)
    big = 89.0 if dtype == np.float32 else 710.0

    def signed_log(lo: float, hi: float) -> np.ndarray:
        return np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)

    uniform = {"exp": (-big - 16, big + 1), "expm1": (-big - 16, big + 1), "log": (0, 4),
               "log1p": (-1, 4), "sin": (-1e4, 1e4), "cos": (-1e4, 1e4), "tanh": (-12, 12),
               "logistic": (-120, 40), "erf": (-5, 5)}[op]
    parts = [rng.uniform(*uniform, n)]
    if op in ("log", "log1p"):
        parts.append(np.exp2(rng.uniform(emin, emax, n)))
    else:
        top = {"sin": 40, "cos": 40}.get(op, 8)
        parts.append(signed_log(emin, top))
    if op in ("sin", "cos"):
        k = rng.integers(-2**30, 2**30, n).astype(np.longdouble)
        parts.append((k * HALF_PI).astype(dtype))
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dtype)


def _f64_ok(dtype: np.dtype) -> None:
    if dtype == np.float64 and not WIDE_LONG_DOUBLE:
        pytest.skip("long double is not wider than double here")


CASES = [(op, np.float32) for op in F32_OPS] + [(op, np.float64) for op in F64_OPS]


@pytest.mark.parametrize("op,dtype", CASES)
def test_accuracy_over_wide_ranges(op: str, dtype: type) -> None:
    _f64_ok(dtype)
    x = samples(op, dtype)
    got = map_kernel(op, np.dtype(dtype).name)(x)
    err = ulp_error(got, reference(op, dtype, x), dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP[op], f"{op}({x[worst]!r}) = {got[worst]!r}: {err[worst]} ulp"


def special_inputs(dtype: type) -> np.ndarray:
    info = np.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 3 * tiny, float(info.tiny),
              -float(info.tiny), 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0, 2.0,
              -2.0, 3.0, 10.0, -10.0, 20.0, -20.0, 88.72, 88.73, -87.3, -103.9, -104.0,
              -110.0, 709.0, 710.0, -745.0, 1e4, -1e4, 2.0 ** 24 + 2, float(info.max),
              -float(info.max), math.pi, -math.pi / 2]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)


@pytest.mark.parametrize("op,dtype", CASES)
def test_special_values(op: str, dtype: type) -> None:
    _f64_ok(dtype)
    x = special_inputs(dtype)
    got = map_kernel(op, np.dtype(dtype).name)(x)
    ref = reference(op, dtype, x)
    beyond = np.abs(x) > 2.0 ** 40 if op in ("sin", "cos") else np.zeros(x.shape, bool)
    assert np.all(np.abs(got[beyond & np.isfinite(x)]) <= 1)
    err = ulp_error(got[~beyond], ref[~beyond], dtype)
    bad = err > MAX_ULP[op]
    assert not bad.any(), list(zip(x[~beyond][bad], got[~beyond][bad], ref[~beyond][bad]))
    zeros = (ref == 0) & ~beyond
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(ref[zeros].astype(dtype)))


@pytest.mark.parametrize("op,dtype", CASES + [("pow", np.float32)])
@pytest.mark.parametrize("lanes", [1, 4])
def test_scalar_and_narrow_vectors_match_wide_vectors(op: str, dtype: type, lanes: int) -> None:
    rng = np.random.default_rng(7)
    args = [np.concatenate([special_inputs(dtype), rng.uniform(-30, 30, 301).astype(dtype)])
            for _ in range(ARITY[op])]
    wide = map_kernel(op, np.dtype(dtype).name)(*args)
    narrow = map_kernel(op, np.dtype(dtype).name, lanes)(*args)
    assert np.array_equal(wide.view(f"u{wide.itemsize}"), narrow.view(f"u{wide.itemsize}")) or \
        np.array_equal(wide, narrow, equal_nan=True)


def test_pow_accuracy() -> None:
    rng = np.random.default_rng(11)
    n = 100_000
    x = np.concatenate([np.exp2(rng.uniform(-40, 40, n)), rng.uniform(-3, 3, n)])
    y = np.concatenate([rng.uniform(-5, 5, n), rng.integers(-60, 60, n).astype(np.float64)])
    x, y = x.astype(np.float32), y.astype(np.float32)
    got = map_kernel("pow", "float32")(x, y)
    err = ulp_error(got, reference("pow", np.float32, x, y), np.float32)
    assert err.max() <= MAX_ULP["pow"]


def test_pow_special_values_follow_c99() -> None:
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf,
                       np.nan, 1e-45, 3e38, 1e-3], np.float32)
    x, y = (g.ravel() for g in np.meshgrid(values, values))
    got = map_kernel("pow", "float32")(x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    same = (got == ref) & (np.signbit(got) == np.signbit(ref))
    same |= np.isnan(got) & np.isnan(ref)
    assert same.all(), list(zip(x[~same], y[~same], got[~same], ref[~same]))


def test_emitters_define_once_internal_always_inline() -> None:
    module = ir.Module()
    ty = ir.VectorType(ir.FloatType(), 8)
    for name, emit in VECMATH.items():
        fn = emit(module, ty)
        assert emit(module, ty) is fn
        assert fn.linkage == "internal" and "alwaysinline" in fn.attributes
        assert len(fn.args) == ARITY[name]
    assert sorted(VECMATH) == sorted(F32_OPS + ["pow"])


def test_unsupported_types_are_refused() -> None:
    module = ir.Module()
    with pytest.raises(NotImplementedError):
        VECMATH["erf"](module, ir.DoubleType())
    with pytest.raises(NotImplementedError):
        VECMATH["pow"](module, ir.VectorType(ir.DoubleType(), 4))
    with pytest.raises(TypeError):
        VECMATH["exp"](module, ir.IntType(32))


@pytest.mark.parametrize("op", F32_OPS + ["pow"])
def test_compiled_loops_call_no_library_functions(op: str) -> None:
    text = str(map_kernel(op, "float32").compiled.llvm_module)
    calls = re.findall(r"call [^@]*@\"?([\w.]+)", text)
    assert all(name.startswith("llvm.") for name in calls), calls


def float32_sweep(lo: float, hi: float, step: int) -> np.ndarray:
    """Every `step`-th float32 in [lo, hi) by bit pattern (lo, hi >= 0), and their negatives."""
    start, stop = np.array([lo, hi], np.float32).view(np.uint32)
    x = np.arange(start, stop, step, dtype=np.uint32).view(np.float32)
    return np.concatenate([x, -x])


def test_tanh_float32_over_a_dense_sweep() -> None:
    """tanh's two branches and their seam at 0.625, the expm1 reduction's steps and the
    saturation, every 257th float32 from the subnormals to 12: within the docstring's 1.50
    ulp (an odd step, so the low mantissa bits take every value)."""
    x = float32_sweep(0.0, 12.0, 257)
    err = ulp_error(map_kernel("tanh", "float32")(x), reference("tanh", np.float32, x),
                    np.float32)
    worst = int(np.argmax(err))
    assert err[worst] <= 1.5, f"tanh({x[worst]!r}): {err[worst]} ulp"


def test_tanh_float32_near_the_branch_seam_every_value() -> None:
    x = float32_sweep(0.5, 0.75, 1)
    err = ulp_error(map_kernel("tanh", "float32")(x), reference("tanh", np.float32, x),
                    np.float32)
    assert err.max() <= 1.5


@pytest.mark.parametrize("n", [1, 15, 16, 63, 64, 65, 1000, 4099])
def test_unrolled_vector_and_tail_loops_agree(n: int) -> None:
    """The map loop's UNROLL-register body, one-register loop and scalar tail give the same
    bits for an element wherever it falls (eager arrays of any length against jit)."""
    x = np.random.default_rng(n).uniform(-6, 6, n).astype(np.float32)
    scalar = map_kernel("tanh", "float32", 1)(x)
    assert np.array_equal(map_kernel("tanh", "float32")(x).view(np.uint32),
                          scalar.view(np.uint32))
