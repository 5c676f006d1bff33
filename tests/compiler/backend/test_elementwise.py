"""Every elementwise primitive through the LLVM backend, against the interpreter and eager
mode: float and integer dtypes, broadcasting, special values, integer edge cases."""
import functools

import numpy as np
import pytest
from backend_util import build_ir, check, check_ir, sample

import redraft.numpy as jnp
from redraft import lax


def unary(op):
    def f(x):
        return op(x)
    return f


def binary(op):
    def f(x, y):
        return op(x, y)
    return f


def ternary(op):
    def f(x, y, z):
        return op(x, y, z)
    return f


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan,
                    1e-30, 1e30, 88.0, -100.0, 3.0], np.float32)

# (name, domain low, high, rtol) for float unary ops; vecmath is within a few ulp.
FLOAT_UNARY = [
    ("neg", -5, 5, 0), ("abs", -5, 5, 0), ("sign", -5, 5, 0), ("floor", -5, 5, 0),
    ("ceil", -5, 5, 0), ("round", -5, 5, 0), ("is_finite", -5, 5, 0), ("exp", -20, 20, 2e-6),
    ("exp2", -20, 20, 2e-6), ("log", 0.01, 50, 2e-6), ("log1p", -0.9, 50, 2e-6),
    ("expm1", -5, 5, 2e-6), ("tanh", -8, 8, 2e-6), ("logistic", -20, 20, 2e-6),
    ("sin", -10, 10, 2e-6), ("cos", -10, 10, 2e-6), ("tan", -1.5, 1.5, 2e-6),
    ("asin", -1, 1, 2e-6), ("acos", -1, 1, 2e-6), ("atan", -5, 5, 2e-6),
    ("sinh", -5, 5, 2e-6), ("cosh", -5, 5, 2e-6), ("asinh", -5, 5, 2e-6),
    ("acosh", 1, 5, 2e-6), ("atanh", -0.9, 0.9, 2e-6), ("sqrt", 0, 10, 1e-7),
    ("rsqrt", 0.01, 10, 1e-6), ("cbrt", -5, 5, 2e-6), ("erf", -4, 4, 2e-6),
    ("erfc", -4, 4, 2e-6), ("lgamma", 0.1, 10, 1e-5), ("digamma", -6, 30, 0),
    ("erf_inv", -1, 1, 0),
]


@pytest.mark.parametrize("name,low,high,rtol", FLOAT_UNARY, ids=[u[0] for u in FLOAT_UNARY])
def test_float_unary(name, low, high, rtol):
    x = sample((3, 37), np.float32, low=low, high=high)
    check(unary(getattr(lax, name)), x, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", ["neg", "abs", "sign", "floor", "ceil", "round", "is_finite",
                                  "exp", "log", "sqrt", "tanh", "logistic", "sin", "expm1",
                                  "digamma", "erf_inv"])
def test_float_unary_special_values(name):
    check(unary(getattr(lax, name)), SPECIAL, rtol=2e-6, atol=1e-30)


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "expm1", "tanh", "logistic", "sin",
                                  "cos", "erf", "sqrt", "floor", "round", "pow", "atan2",
                                  "digamma", "erf_inv"])
def test_float64(name):
    """jit canonicalises to 32 bits, so float64 IR is built directly."""
    from redraft.compiler.core.abstract import ShapedArray
    from redraft.compiler.primitives import elementwise as ew
    prim = getattr(ew, f"{name}_p")
    arity = 2 if name in ("pow", "atan2") else 1
    aval = ShapedArray((41,), np.dtype(np.float64))
    fn = build_ir(name, [aval] * arity, lambda b, ps: [b.stage(prim, ps, {})])
    low, high = (-0.99, 0.99) if name == "erf_inv" else (0.1, 3)
    args = [sample((41,), np.float64, seed=k, low=low, high=high) for k in range(arity)]
    check_ir(fn, args, rtol=1e-14, atol=1e-300)


def test_round_half_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.2], np.float32)
    check(unary(functools.partial(lax.round, rounding_method=1)), x)
    check(unary(functools.partial(lax.round, rounding_method=0)), x)


FLOAT_BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter",
                "eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_float_binary(name):
    x = sample((4, 33), np.float32, seed=1, low=0.1, high=4)
    y = sample((4, 33), np.float32, seed=2, low=0.1, high=4)
    y[0, :5] = x[0, :5]  # some ties for the comparisons and max/min
    check(binary(getattr(lax, name)), x, y, rtol=2e-6)


@pytest.mark.parametrize("name", ["max", "min", "eq", "ne", "lt", "ge", "add", "div"])
def test_float_binary_nan(name):
    x = np.array([np.nan, 1.0, np.nan, -np.inf, 0.0, -0.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, np.inf, -0.0, 0.0], np.float32)
    check(binary(getattr(lax, name)), x, y)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]
INT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "eq", "ne",
              "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary(name, dtype):
    x = sample((50,), dtype, seed=3)
    y = sample((50,), dtype, seed=4)
    check(binary(getattr(lax, name)), x, y)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_power(dtype):
    """Wrapping products like NumPy's; a negative exponent gives 0, or +-1 for x = +-1
    (JAX's jnp.power, eager and compiled alike)."""
    x = np.arange(-6, 7).astype(dtype)
    y = np.array([0, 1, 2, 3, 7, 13, 31, 5, 9, 2, 1, 0, 4]).astype(dtype)
    got = check(lambda a, b: jnp.power(a, b), x, y)[0]
    np.testing.assert_array_equal(got, np.power(x, y))
    if np.dtype(dtype).kind == "i":
        x = np.array([2, -2, 1, -1, 0, 1, -1, 5], dtype)
        y = np.array([-1, -3, -5, -3, -2, -2, -2, -1], dtype)
        got = check(lambda a, b: jnp.power(a, b), x, y)[0]
        np.testing.assert_array_equal(got, [0, 0, 1, -1, 0, 1, 1, 0])


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint32], ids=lambda d: np.dtype(d).name)
def test_integer_division_edges(dtype):
    info = np.iinfo(dtype)
    x = np.array([7, -7, 7, -7, info.min, info.max, 5, 0, 3], dtype=np.int64)
    y = np.array([2, 2, -2, -2, -1, 1, 0, 0, 7], dtype=np.int64)
    x, y = x.astype(dtype), y.astype(dtype)  # wraps negatives for unsigned, on purpose
    check(binary(lax.div), x, y)
    check(binary(lax.rem), x, y)


@pytest.mark.parametrize("name", ["shift_left", "shift_right_logical", "shift_right_arithmetic"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64], ids=lambda d: np.dtype(d).name)
def test_shifts(name, dtype):
    x = np.array([1, 5, 100, 127, 3, 9, 12, 0], dtype)
    if np.dtype(dtype).kind == "i":
        x[1] = -5
    bits = 8 * np.dtype(dtype).itemsize
    y = np.array([0, 1, 3, bits - 1, bits, bits + 3, 2, 1], dtype)
    check(binary(getattr(lax, name)), x, y)


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["neg", "abs", "sign", "not"])
def test_integer_unary(name, dtype):
    op = lax.bitwise_not if name == "not" else getattr(lax, name)
    check(unary(op), sample((40,), dtype, seed=5))


def test_bool_logic():
    x, y = sample((30,), np.bool_, seed=1), sample((30,), np.bool_, seed=2)
    for op in (lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.eq, lax.ne, lax.lt):
        check(binary(op), x, y)
    check(unary(lax.bitwise_not), x)


@pytest.mark.parametrize("shapes", [
    ((5, 1), (1, 7)), ((3, 4, 5), (5,)), ((3, 1, 5), (4, 1)), ((), (6, 2)), ((8,), ()),
    ((2, 3, 1, 4), (3, 5, 1)), ((1,), (17,)), ((0, 3), (3,))])
def test_broadcasting(shapes):
    x = sample(shapes[0], np.float32, seed=6)
    y = sample(shapes[1], np.float32, seed=7)
    check(binary(lax.add), x, y)
    check(binary(lax.mul), y, x)


def test_broadcasting_python_scalars():
    def f(x):
        return 2.0 * x + 1 - x / 3.0
    check(f, sample((5, 6), np.float32))


def test_select_and_clamp():
    pred = sample((6, 9), np.bool_, seed=8)
    x, y = sample((6, 9), np.float32, seed=9), sample((6, 9), np.float32, seed=10)
    check(ternary(lax.select), pred, x, y)
    lo, hi = np.float32(-1.0), np.float32(1.5)
    check(ternary(lax.clamp), lo, x, hi)
    check(ternary(lax.clamp), np.float32(0.0), SPECIAL, np.float32(2.0))
    xi = sample((20,), np.int32)
    check(ternary(lax.clamp), np.int32(-3), xi, np.int32(7))


@pytest.mark.parametrize("y", [0, 1, 2, 3, 5, -1, -2])
def test_integer_pow(y):
    x = sample((3, 11), np.float32, low=0.5, high=2)
    check(unary(functools.partial(lax.integer_pow, y=y)), x, rtol=2e-6)
    if y >= 0:
        check(unary(functools.partial(lax.integer_pow, y=y)), sample((11,), np.int32))


CONVERT_DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float32,
                  np.float64]


@pytest.mark.parametrize("src", CONVERT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", CONVERT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_convert_element_type(src, dst):
    x = sample((24,), src, seed=11)
    if np.dtype(src).kind == "f":
        x[:4] = [np.nan, 0.0, -0.0, 250.7]
    check(unary(functools.partial(lax.convert_element_type, new_dtype=dst)), x)


def test_convert_saturates():
    """Out-of-range floats clamp to the integer range and NaN gives 0. For float64 sources
    the reference's clip is exact, so compare with it; for float32 the reference clips at
    float32(2**31 - 1) == 2**31, which overflows to INT_MIN in NumPy, so the expected values
    (JAX's) are written out."""
    from redraft.compiler.core.abstract import ShapedArray
    from redraft.compiler.primitives import elementwise as ew
    x = np.array([1e12, -1e12, np.nan, 2.0 ** 31, 2.5, -300.5], np.float64)
    for dst in (np.int32, np.uint8, np.int8, np.uint32):
        params = {"new_dtype": np.dtype(dst)}
        fn = build_ir("cvt", [ShapedArray(x.shape, x.dtype)], lambda b, ps, params=params: [
            b.stage(ew.convert_element_type_p, ps, params)])
        check_ir(fn, [x])
    from backend_util import compiled
    got, used = compiled(unary(functools.partial(lax.convert_element_type,
                                                 new_dtype=np.int32)), x.astype(np.float32))
    assert used == "llvm"
    info = np.iinfo(np.int32)
    np.testing.assert_array_equal(np.asarray(got), [info.max, info.min, 0, info.max, 2, -300])


def test_long_expression_fuses():
    def f(x, y):
        a = lax.exp(x) * y - lax.tanh(y)
        b = lax.select(a > 0, a, lax.neg(a))
        return lax.sqrt(b) + lax.log1p(b) * 0.5
    check(f, sample((1000,), np.float32), sample((1000,), np.float32, seed=3), rtol=2e-6)


def test_large_parallel_elementwise():
    """Big enough to be split over the thread pool."""
    x = sample((1 << 19,), np.float32, seed=12)
    check(unary(lax.exp), x, rtol=2e-6)
    check(binary(lax.mul), x.reshape(512, 1024), x[:1024])
