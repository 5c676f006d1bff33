"""Elementwise functions against NumPy (values and 32-bit dtypes), JAX's promotion of mixed
operands, broadcasting errors, and the whole-array comparisons (isclose, allclose, ...)."""
from functools import partial

import numpy as np
import pytest
from checks import check as _check

import redraft.numpy as jnp

RNG = np.random.RandomState(4)
X = RNG.uniform(-3, 3, size=(3, 4)).astype(np.float32)
POS = RNG.uniform(0.1, 4, size=(3, 4)).astype(np.float32)
UNIT = RNG.uniform(-0.9, 0.9, size=(3, 4)).astype(np.float32)
BIG = RNG.uniform(1.1, 5, size=(3, 4)).astype(np.float32)
INTS = RNG.randint(-7, 8, size=(3, 4)).astype(np.int32)
NONZERO = np.where(INTS == 0, 3, INTS).astype(np.int32)
SPECIAL = np.float32([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan])


check = partial(_check, rtol=2e-06, atol=1e-06)


UNARY = [
    ("negative", X), ("absolute", X), ("abs", INTS), ("sign", X), ("sign", INTS),
    ("exp", X), ("exp2", X), ("expm1", X), ("log", POS), ("log1p", POS), ("log2", POS),
    ("log10", POS), ("sqrt", POS), ("cbrt", X), ("square", X), ("square", INTS),
    ("reciprocal", POS), ("sin", X), ("cos", X), ("tan", UNIT), ("arcsin", UNIT),
    ("arccos", UNIT), ("arctan", X), ("sinh", X), ("cosh", X), ("tanh", X),
    ("arcsinh", X), ("arccosh", BIG), ("arctanh", UNIT), ("floor", X), ("ceil", X),
    ("floor", INTS), ("round", X), ("rint", X), ("trunc", X), ("fix", X), ("deg2rad", X),
    ("rad2deg", X), ("sinc", X), ("signbit", SPECIAL), ("isnan", SPECIAL),
    ("isinf", SPECIAL), ("isfinite", SPECIAL), ("isposinf", SPECIAL), ("isneginf", SPECIAL),
    ("isnan", INTS), ("isfinite", INTS), ("logical_not", INTS), ("bitwise_not", INTS),
    ("invert", np.array([True, False])), ("positive", X), ("fabs", INTS),
    ("nan_to_num", SPECIAL), ("real", X), ("conjugate", X),
]


@pytest.mark.parametrize("name,x", UNARY, ids=[f"{n}-{i}" for i, (n, _) in enumerate(UNARY)])
def test_unary_matches_numpy(name, x):
    if not hasattr(jnp, name):
        pytest.skip(f"jnp.{name} is not implemented yet")
    expected = getattr(np, name)(x)
    if np.asarray(expected).dtype == np.float16:  # NumPy computes small ints in float16
        expected = np.asarray(expected, np.float32)
    check(getattr(jnp, name)(x), expected, rtol=3e-6, atol=2e-6)


def test_unary_integer_input_becomes_float32():
    for name in ("exp", "sin", "sqrt", "log1p", "tanh", "arctan"):
        assert getattr(jnp, name)(np.int32([1, 2])).dtype == np.float32


BINARY = [
    ("add", X, POS), ("subtract", INTS, X), ("multiply", INTS, INTS), ("divide", X, POS),
    ("divide", INTS, NONZERO), ("true_divide", INTS, 2), ("floor_divide", INTS, NONZERO),
    ("floor_divide", X, POS), ("remainder", INTS, NONZERO), ("remainder", X, -POS),
    ("mod", INTS, 3), ("fmod", INTS, NONZERO), ("fmod", X, POS), ("power", POS, X),
    ("power", INTS, 2), ("power", X, 3), ("float_power", POS, X), ("maximum", X, POS),
    ("minimum", INTS, X), ("fmax", X, POS), ("fmin", X, POS), ("arctan2", X, POS),
    ("hypot", X, POS), ("copysign", X, -POS), ("logaddexp", X, POS),
    ("logaddexp2", X, POS), ("nextafter", X, POS), ("heaviside", X, POS),
    ("equal", INTS, 2), ("not_equal", X, X), ("less", X, POS), ("less_equal", INTS, 0),
    ("greater", X, 0.5), ("greater_equal", INTS, X), ("logical_and", INTS, X),
    ("logical_or", INTS, 0), ("logical_xor", INTS, X), ("bitwise_and", INTS, 6),
    ("bitwise_or", INTS, NONZERO), ("bitwise_xor", INTS, 5), ("left_shift", INTS, 2),
    ("right_shift", INTS, 1), ("divmod", INTS, NONZERO), ("gcd", INTS, NONZERO),
    ("lcm", INTS, NONZERO),
]


@pytest.mark.parametrize("name,x,y", BINARY, ids=[f"{n}-{i}" for i, (n, *_) in
                                                   enumerate(BINARY)])
def test_binary_matches_numpy(name, x, y):
    if not hasattr(jnp, name):
        pytest.skip(f"jnp.{name} is not implemented yet")
    check(getattr(jnp, name)(x, y), getattr(np, name)(x, y), rtol=5e-6, atol=2e-6)


def test_operators_match_numpy():
    x, y = jnp.asarray(X), jnp.asarray(POS)
    check(x + y, X + POS)
    check(x - 1, X - 1)
    check(2 * x, 2 * X)
    check(x / y, X / POS)
    check(x ** 2, X ** 2)
    check(x // y, X // POS)
    check(x % y, X % POS)
    check(-x, -X)
    check(abs(x), abs(X))
    check(x < y, X < POS)
    check(jnp.asarray(INTS) & 3, INTS & 3)
    check(~jnp.asarray(INTS), ~INTS)


def test_where_and_clip():
    check(jnp.where(X > 0, X, 0), np.where(X > 0, X, 0))
    check(jnp.where(X > 0, INTS, X), np.where(X > 0, INTS, X))
    check(jnp.clip(X, -1, 1), np.clip(X, -1, 1))
    check(jnp.clip(INTS, 0), np.clip(INTS, 0, None))
    check(jnp.clip(X, max=0.5), np.clip(X, None, 0.5))


def test_round_decimals():
    check(jnp.round(X, 2), np.round(X, 2), atol=1e-6)
    check(jnp.round(np.float32([0.5, 1.5, 2.5, -0.5])), np.float32([0, 2, 2, -0]))


def test_weak_scalars_keep_array_dtype():
    f16 = np.ones(3, np.float16)
    assert jnp.add(f16, 1.0).dtype == np.float16
    assert jnp.multiply(np.int8([1, 2]), 3).dtype == np.int8
    out = jnp.add(np.int32([1]), 1.5)  # join(i32, f*) = f*: JAX's result is a weak float32
    assert out.dtype == np.float32 and out.weak_type


def test_integer_division_rounds_toward_minus_infinity():
    a, b = np.int32([7, -7, 7, -7]), np.int32([2, 2, -2, -2])
    check(jnp.floor_divide(a, b), a // b)
    check(jnp.remainder(a, b), a % b)
    check(jnp.fmod(a, b), np.fmod(a, b))


# ---- whole-array comparisons (redraft.numpy.comparison) --------------------------------------

A = np.float32([1.0, np.inf, -np.inf, np.nan, 1e6, 0.0, 2.0])
B = np.float32([1.000001, np.inf, np.inf, np.nan, 1.00001e6, 1e-9, 2.1])


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0.1},
                                    {"atol": 0.2, "rtol": 0.0}])
def test_isclose_matches_numpy(kwargs):
    check(jnp.isclose(A, B, **kwargs), np.isclose(A, B, **kwargs))
    assert bool(jnp.allclose(A, B, **kwargs)) == np.allclose(A, B, **kwargs)


def test_isclose_integers_and_scalars():
    check(jnp.isclose(INTS, INTS + 1, atol=1), np.isclose(INTS, INTS + 1, atol=1))
    out = jnp.allclose(1, 1.0)
    assert isinstance(out, jnp.ndarray) and out.dtype == np.bool_ and bool(out)


@pytest.mark.parametrize("a,b,equal_nan", [
    (X, X, False), (X, X + 1, False), (X, X[:2], False), (A, A, False), (A, A, True),
    (INTS, INTS.astype(np.float32), False), ([1, 2], [[1, 2]], False)])
def test_array_equal_matches_numpy(a, b, equal_nan):
    out = jnp.array_equal(a, b, equal_nan=equal_nan)
    assert isinstance(out, jnp.ndarray)
    assert bool(out) == np.array_equal(a, b, equal_nan=equal_nan)


@pytest.mark.parametrize("a,b", [(X, X), ([1, 2], [[1, 2], [1, 2]]), ([1, 2], [1, 3]),
                                 ([1, 2], [1, 2, 3]), (X, X[0])])
def test_array_equiv_matches_numpy(a, b):
    assert bool(jnp.array_equiv(a, b)) == np.array_equiv(a, b)


# ---- errors -----------------------------------------------------------------------------------

def test_broadcast_failure_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2,\)|\(2,\).*\(3, 4\)"):
        jnp.add(X, np.float32([1, 2]))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(4, 3\)"):
        jnp.asarray(X) * jnp.asarray(X.T)


ERRORS = [
    (lambda: jnp.bitwise_and(X, X), TypeError, "float32"),
    (lambda: jnp.left_shift(X, 1), TypeError, "float32"),
    (lambda: jnp.where(X > 0, X), ValueError, "one or three arguments"),
    (lambda: jnp.add(X, "a"), TypeError, "string"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


@pytest.mark.xfail(reason="BUG eager/elementwise: add/sub/mul impls run NumPy without "
                          "errstate, so inf - inf warns (lax returns nan quietly)", strict=True)
def test_inf_minus_inf_is_quiet_nan():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jnp.subtract(np.float32([np.inf]), np.float32([np.inf]))
    assert np.isnan(np.asarray(out)).all()


def test_every_jnp_function_the_elementwise_family_declares_is_bound():
    from redraft.compiler.primitives import elementwise as ew
    for names, (prim, _) in ew.JNP_TWINS.items():
        for name in names:
            fn = getattr(jnp, name)
            assert fn.__name__ == names[0], (name, fn)
