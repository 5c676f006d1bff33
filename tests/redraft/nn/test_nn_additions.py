"""The newer redraft.nn functions against NumPy formulas, and attention against a plain
NumPy softmax(QK^T)V, under grad and jit too."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import nn

X = np.linspace(-3, 3, 13).astype(np.float32)


def _softplus(x):
    return np.logaddexp(x, 0)


@pytest.mark.parametrize("name,ref", [
    ("identity", lambda x: x), ("tanh", np.tanh),
    ("mish", lambda x: x * np.tanh(_softplus(x))),
    ("squareplus", lambda x: (x + np.sqrt(x * x + 4)) / 2),
    ("sparse_plus", lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    ("sparse_sigmoid", lambda x: np.clip((x + 1) / 2, 0, 1))])
def test_activations(name, ref):
    np.testing.assert_allclose(np.asarray(getattr(nn, name)(X)), ref(X.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


def test_log1mexp_and_logmeanexp():
    x = np.float64([1e-4, 0.3, 0.69, 0.7, 5.0, 30.0])
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x.astype(np.float32))),
                               np.log(-np.expm1(-x)), rtol=3e-4)
    m = np.float32([[1.0, 2.0], [3.0, 50.0]])
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(m, axis=1)),
                               np.log(np.exp(m.astype(np.float64)).mean(1)), rtol=1e-6)
    np.testing.assert_allclose(float(nn.logmeanexp(m, where=np.array([[True, False],
                                                                      [True, False]]))),
                               np.log((np.exp(1.0) + np.exp(3.0)) / 2), rtol=1e-6)


def np_attention(q, k, v, causal=False):
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if causal:
        logits = np.where(np.tril(np.ones(logits.shape[-2:], bool)), logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", w, v)


def attention_loss(q, k, v):
    return jnp.sum(nn.dot_product_attention(q, k, v, is_causal=True) ** 2)


def test_dot_product_attention():
    r = np.random.RandomState(0)
    q, k, v = (r.randn(2, 5, 4, 8).astype(np.float32) for _ in range(3))
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v)),
                               np_attention(q, k, v), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v, is_causal=True)),
                               np_attention(q, k, v, causal=True), rtol=1e-4, atol=1e-5)
    grouped = nn.dot_product_attention(q, k[:, :, :2], v[:, :, :2])
    np.testing.assert_allclose(np.asarray(grouped), np_attention(
        q, np.repeat(k[:, :, :2], 2, axis=2), np.repeat(v[:, :, :2], 2, axis=2)),
        rtol=1e-4, atol=1e-5)
    assert nn.dot_product_attention(q[0], k[0], v[0]).shape == (5, 4, 8)
    g = redraft.grad(attention_loss)(q, k, v)
    eps, d = 1e-2, r.randn(*q.shape).astype(np.float32)
    fd = (float(attention_loss(q + eps * d, k, v)) - float(attention_loss(q - eps * d, k, v)))
    assert np.isclose(float(np.sum(np.asarray(g) * d)), fd / (2 * eps), rtol=2e-2)
    np.testing.assert_allclose(float(redraft.jit(attention_loss)(q, k, v)),
                               float(attention_loss(q, k, v)), rtol=1e-5)
    with pytest.raises(ValueError):
        nn.dot_product_attention(q, k[:, :, :3], v[:, :, :3])
