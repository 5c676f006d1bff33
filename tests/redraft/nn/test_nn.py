"""redraft.nn against float64 NumPy formulas: values, float32 dtypes, numerical stability at
extreme inputs, softmax/log_softmax over axes and masks, one_hot, standardize."""
import math

import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import nn

RNG = np.random.RandomState(9)
X = RNG.uniform(-6, 6, size=(3, 5)).astype(np.float32)
EXTREME = np.float32([-1000.0, -50.0, 0.0, 50.0, 1000.0])
_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sigmoid,
    "softplus": _softplus,
    "soft_sign": lambda x: x / (1 + np.abs(x)),
    "log_sigmoid": lambda x: -_softplus(-x),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.minimum(np.expm1(x), 0),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772
                                                    * np.expm1(np.minimum(x, 0))),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("x", [X, EXTREME], ids=["uniform", "extreme"])
def test_activation_matches_formula(name, x):
    out = getattr(nn, name)(x)
    with np.errstate(over="ignore"):
        expected = REFERENCES[name](x.astype(np.float64))
    assert out.dtype == np.float32 and out.shape == x.shape
    assert np.all(np.isfinite(np.asarray(out)))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, atol=2e-6)


def test_gelu_exact():
    expected = 0.5 * X * (1 + _erf(X.astype(np.float64) / np.sqrt(2)))
    np.testing.assert_allclose(np.asarray(nn.gelu(X, approximate=False)), expected,
                               rtol=2e-6, atol=2e-6)


def test_activation_dtypes():
    assert nn.relu(np.int32([-1, 2])).dtype == np.int32
    assert nn.sigmoid(np.int32([-1, 2])).dtype == np.float32
    assert nn.gelu(np.ones(2, np.float16)).dtype == np.float16
    assert nn.elu(np.int32([1])).dtype == np.float32


def test_parameters():
    np.testing.assert_allclose(np.asarray(nn.leaky_relu(X, 0.2)), np.where(X >= 0, X, 0.2 * X),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.elu(X, 2.0)),
                               np.where(X > 0, X, 2.0 * np.expm1(np.minimum(X, 0))), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.celu(X, 0.5)),
                               np.maximum(X, 0) + np.minimum(0.5 * np.expm1(X / 0.5), 0),
                               rtol=1e-5, atol=1e-6)


def _softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)], ids=str)
def test_softmax_and_log_softmax(axis):
    x = X.astype(np.float64)
    np.testing.assert_allclose(np.asarray(nn.softmax(X, axis)), _softmax(x, axis),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(X, axis)), np.log(_softmax(x, axis)),
                               rtol=1e-5, atol=1e-5)


def test_softmax_is_stable_for_huge_inputs():
    out = nn.softmax(EXTREME)
    np.testing.assert_allclose(np.asarray(out), [0, 0, 0, 0, 1], atol=1e-7)
    log_out = nn.log_softmax(EXTREME)
    assert np.all(np.isfinite(np.asarray(log_out)))
    np.testing.assert_allclose(float(log_out[0]), -2000.0, rtol=1e-6)
    all_inf = nn.softmax(np.float32([-np.inf, 0.0]))
    assert all_inf.tolist() == [0.0, 1.0]


def test_softmax_where_masks_entries():
    mask = np.array([[True, True, False, True, False]] * 3)
    out = np.asarray(nn.softmax(X, where=mask))
    expected = _softmax(np.where(mask, X, -np.inf).astype(np.float64), -1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-7)
    log_out = np.asarray(nn.log_softmax(X, where=mask))
    assert np.all(log_out[~mask] == -np.inf)
    np.testing.assert_allclose(log_out[mask], np.log(expected[mask]), rtol=1e-5, atol=1e-6)


def test_glu():
    a, b = X[:, :2], X[:, 2:4]
    np.testing.assert_allclose(np.asarray(nn.glu(X[:, :4])), a * _sigmoid(b), rtol=1e-6)


def test_logsumexp():
    np.testing.assert_allclose(float(nn.logsumexp(EXTREME)), 1000.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(X, axis=1)),
                               np.log(np.exp(X.astype(np.float64)).sum(1)), rtol=1e-5)


def test_one_hot():
    labels = np.int32([0, 2, 1, 5, -1])
    out = nn.one_hot(labels, 3)
    assert out.dtype == np.float32 and out.shape == (5, 3)
    assert out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0], [0, 0, 0]]
    out = nn.one_hot(labels[:3], 3, dtype=jnp.int32, axis=0)
    assert out.dtype == np.int32 and out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert nn.one_hot(np.int32([[0, 1]]), 2).shape == (1, 2, 2)


def test_standardize():
    x = X.astype(np.float64)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(X)), expected, rtol=1e-5, atol=1e-5)
    out = nn.standardize(X, axis=0, mean=0.0, variance=1.0, epsilon=0.0)
    np.testing.assert_allclose(np.asarray(out), X, rtol=1e-6)


ERRORS = [
    (lambda: nn.softmax(X, axis=2), ValueError, "axis 2 is out of range"),
    (lambda: nn.one_hot(np.int32([1]), 3, axis=3), ValueError, "axis 3 is out of range"),
    (lambda: nn.glu(X), ValueError, "equal"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
