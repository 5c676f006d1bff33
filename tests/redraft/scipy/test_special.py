"""redraft.scipy.special against Python's math module (float64 references) and identities."""
import math

import numpy as np
import pytest

import redraft.numpy as jnp
from redraft.scipy import special

RNG = np.random.RandomState(10)
X = RNG.uniform(-3, 3, size=12).astype(np.float32)
POS = RNG.uniform(0.05, 8, size=12).astype(np.float32)
PROB = RNG.uniform(0.01, 0.99, size=12).astype(np.float32)
EULER = 0.5772156649015329


def _vectorised(fn):
    return np.vectorize(fn, otypes=[np.float64])


def _digamma_reference(v: float) -> float:
    """psi by recurrence up to 20 plus the asymptotic series: float64 accurate."""
    acc = 0.0
    while v < 20:
        acc -= 1 / v
        v += 1
    inv2 = 1 / (v * v)
    return acc + math.log(v) - 0.5 / v - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 / 252))


REFERENCES = [
    ("erf", X, _vectorised(math.erf)),
    ("erfc", X, _vectorised(math.erfc)),
    ("gammaln", POS, _vectorised(math.lgamma)),
    ("gamma", POS / 2, _vectorised(math.gamma)),
    ("digamma", POS, _vectorised(_digamma_reference)),
    ("expit", X, lambda x: 1 / (1 + np.exp(-x))),
    ("logit", PROB, lambda p: np.log(p / (1 - p))),
    ("ndtr", X, lambda x: 0.5 * _vectorised(math.erfc)(-x / math.sqrt(2))),
    ("entr", POS, lambda x: -x * np.log(x)),
]


@pytest.mark.parametrize("name,x,reference", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_matches_float64_reference(name, x, reference):
    out = getattr(special, name)(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), reference(x.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)


def test_erfinv_inverts_erf():
    y = np.float32([-0.999, -0.5, 0.0, 0.3, 0.9, 0.99])
    back = _vectorised(math.erf)(np.asarray(special.erfinv(y), np.float64))
    np.testing.assert_allclose(back, y, rtol=1e-5, atol=1e-6)
    assert special.erfinv(np.float32([1.0, -1.0])).tolist() == [np.inf, -np.inf]


def test_ndtri_inverts_ndtr():
    np.testing.assert_allclose(np.asarray(special.ndtr(special.ndtri(PROB))), PROB, rtol=1e-5)


def test_digamma_known_values():
    out = special.digamma(np.float32([1.0, 0.5, 4.0]))
    expected = [-EULER, -EULER - 2 * math.log(2), 1 + 1 / 2 + 1 / 3 - EULER]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_gamma_sign_on_negative_intervals():
    out = special.gamma(np.float32([-0.5, -1.5, -2.5]))
    np.testing.assert_allclose(np.asarray(out), [math.gamma(v) for v in (-0.5, -1.5, -2.5)],
                               rtol=1e-5)


def test_betaln():
    a, b = np.float32([0.5, 2.0, 3.5]), np.float32([1.5, 2.0, 0.7])
    expected = [math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q) for p, q in zip(a, b)]
    np.testing.assert_allclose(np.asarray(special.betaln(a, b)), expected, rtol=1e-5)


def test_xlogy_and_xlog1py_define_zero_times_log_zero():
    x = np.float32([0.0, 0.0, 2.0, 3.0])
    y = np.float32([0.0, 5.0, 0.5, 4.0])
    np.testing.assert_allclose(np.asarray(special.xlogy(x, y)), [0, 0, 2 * math.log(0.5),
                                                                3 * math.log(4)], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(special.xlog1py(x, y - 1)),
                               [0, 0, 2 * math.log(0.5), 3 * math.log(4)], rtol=1e-6)
    assert special.xlogy(0, 0.0).dtype == np.float32


def test_log_ndtr_far_tail_is_finite():
    x = np.float32([-40.0, -10.0, -3.0, 0.0, 3.0])
    out = np.asarray(special.log_ndtr(x), np.float64)
    reference = [math.log(0.5 * math.erfc(-v / math.sqrt(2))) if v > -30 else
                 -0.5 * v * v - math.log(-v) - 0.5 * math.log(2 * math.pi) for v in x]
    np.testing.assert_allclose(out, reference, rtol=1e-4)


def test_integer_inputs_become_float32():
    for name in ("erf", "expit", "gammaln", "digamma"):
        assert getattr(special, name)(np.int32([1, 2])).dtype == np.float32
    assert special.erf(np.ones(2, np.float16)).dtype == np.float16


def test_logsumexp_reexport():
    assert special.logsumexp is jnp.logsumexp
    x = np.float32([[1000.0, 1000.0], [0.0, -np.inf]])
    np.testing.assert_allclose(np.asarray(special.logsumexp(x, axis=1)),
                               [1000 + math.log(2), 0.0], rtol=1e-6)


def test_bad_input_errors():
    with pytest.raises(TypeError, match="complex64"):
        special.erf(np.complex64([1j]))
