"""Reductions against NumPy: every axis form, keepdims, dtypes of the results, errors."""
from functools import partial

import numpy as np
import pytest
from checks import check as _check

import redraft.numpy as jnp

RNG = np.random.RandomState(5)
X = RNG.randn(3, 4, 5).astype(np.float32)
INTS = RNG.randint(-5, 6, size=(3, 4)).astype(np.int32)
SMALL = RNG.randint(0, 5, size=(2, 3)).astype(np.int8)
FLAGS = RNG.rand(3, 4) > 0.5
AXES = [None, 0, -1, (0, 2)]


check = partial(_check, rtol=1e-05, atol=1e-05)


WORKING = ["sum", "prod", "mean", "var", "std", "any", "all"]


@pytest.mark.parametrize("name", WORKING)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_float_reductions(name, axis, keepdims):
    check(getattr(jnp, name)(X, axis=axis, keepdims=keepdims),
          getattr(np, name)(X, axis=axis, keepdims=keepdims))




@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "ptp"])
def test_max_min(name):
    check(getattr(jnp, name)(X, axis=1), getattr(np, name)(X, axis=1))


def test_max_method_and_initial():
    check(jnp.asarray(X).max(0), X.max(0))
    check(jnp.max(np.float32([]), initial=-1.0), np.max(np.float32([]), initial=-1.0))


def test_logsumexp_is_stable():
    big = np.float32([1000.0, 1000.0])
    np.testing.assert_allclose(float(jnp.logsumexp(big)), 1000 + np.log(2), rtol=1e-6)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_arg_reductions(name, axis):
    check(getattr(jnp, name)(X, axis=axis), getattr(np, name)(X, axis=axis))
    if axis is not None:
        check(getattr(jnp, name)(INTS, axis=axis, keepdims=True),
              getattr(np, name)(INTS, axis=axis, keepdims=True))


def test_arg_reduction_keepdims_without_axis():
    check(jnp.argmax(INTS, keepdims=True), np.argmax(INTS, keepdims=True))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative(name, axis):
    check(getattr(jnp, name)(INTS, axis=axis), getattr(np, name)(INTS, axis=axis))
    check(getattr(jnp, name)(X[0], axis=axis), getattr(np, name)(X[0], axis=axis))


INTEGER_DTYPES = [
    ("sum", INTS, np.int32), ("sum", FLAGS, np.int32), ("sum", SMALL, np.int32),
    ("prod", SMALL, np.int32), ("mean", INTS, np.float32), ("var", INTS, np.float32),
    ("any", INTS, np.bool_), ("all", X, np.bool_), ("cumsum", FLAGS, np.int32),
]


@pytest.mark.parametrize("name,x,dtype", INTEGER_DTYPES,
                         ids=[f"{n}-{np.dtype(x.dtype).name}" for n, x, _ in INTEGER_DTYPES])
def test_result_dtypes(name, x, dtype):
    out = getattr(jnp, name)(x)
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out), getattr(np, name)(x), rtol=1e-5)


def test_options():
    check(jnp.sum(X, axis=0, dtype=jnp.int32), np.sum(X, axis=0, dtype=np.int32))
    check(jnp.sum(X, where=X > 0), np.sum(X, where=X > 0))
    check(jnp.sum(INTS, initial=10), np.sum(INTS, initial=10))
    check(jnp.mean(X, axis=1, where=X > 0), np.mean(X, axis=1, where=X > 0))
    check(jnp.var(X, axis=2, ddof=1), np.var(X, axis=2, ddof=1))
    check(jnp.std(INTS, ddof=1), np.std(INTS, ddof=1).astype(np.float32))
    check(jnp.count_nonzero(INTS, axis=0), np.count_nonzero(INTS, axis=0))
    check(jnp.average(X, axis=1, weights=np.arange(4.0, dtype=np.float32)),
          np.average(X, axis=1, weights=np.arange(4.0, dtype=np.float32)))


def test_methods():
    x = jnp.asarray(X)
    check(x.sum(0), X.sum(0))
    check(x.mean(axis=(1, 2)), X.mean(axis=(1, 2)))
    check(x.std(-1), X.std(-1))
    check(x.argmax(), X.argmax())


def test_weak_type_of_reduced_scalars():
    assert jnp.sum(2.0).weak_type
    assert not jnp.sum(X).weak_type


ERRORS = [
    (lambda: jnp.sum(X, axis=3), ValueError, "axis 3 is out of range for an array of rank 3"),
    (lambda: jnp.mean(X, axis=-4), ValueError, "axis -4 is out of range"),
    (lambda: jnp.sum(X, axis=(0, 0)), ValueError, "repeated axis"),
    (lambda: jnp.argmax(np.float32([])), ValueError, "empty"),
    (lambda: jnp.sum(X, dtype="nonsense"), TypeError, "not a valid dtype"),
    (lambda: jnp.cumsum(X, axis=5), ValueError, "axis 5 is out of range"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
