"""float64 through the LLVM backend with x64 on: compiled functions agree with NumPy's
float64 to 1e-12 (float64 kernels or libm, never float32), int64 indices and arange, and
gradients stay float64. REDRAFT_LLVM_STRICT=2 makes any fallback to the interpreter fail."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
import redraft.scipy.special as rsp


@pytest.fixture(autouse=True)
def x64(monkeypatch):
    monkeypatch.setenv("REDRAFT_LLVM_STRICT", "2")
    with redraft.enable_x64(True):
        yield


X = np.linspace(-3.0, 3.0, 1001)
POSITIVE = np.abs(X) + 0.25

# name -> (redraft function, NumPy float64 reference, input)
CASES = {
    "exp": (jnp.exp, np.exp, X),
    "log": (jnp.log, np.log, POSITIVE),
    "log1p": (jnp.log1p, np.log1p, POSITIVE),
    "expm1": (jnp.expm1, np.expm1, X),
    "tanh": (jnp.tanh, np.tanh, X),
    "sin": (jnp.sin, np.sin, X * 10),
    "cos": (jnp.cos, np.cos, X * 10),
    "tan": (jnp.tan, np.tan, X / 3),
    "sqrt": (jnp.sqrt, np.sqrt, POSITIVE),
    "arctan": (jnp.arctan, np.arctan, X),
    "sinh": (jnp.sinh, np.sinh, X),
    "logistic": (lambda v: 1 / (1 + jnp.exp(-v)), lambda v: 1 / (1 + np.exp(-v)), X),
    "power": (lambda v: v ** 1.7, lambda v: v ** 1.7, POSITIVE),
    "arctan2": (lambda v: jnp.arctan2(v, 1.3), lambda v: np.arctan2(v, 1.3), X),
    "erf": (rsp.erf, None, X),
    "sum": (lambda v: jnp.sum(v * v), lambda v: np.sum(v * v), X),
    "dot": (lambda v: jnp.dot(v, v[::-1]), lambda v: np.dot(v, v[::-1]), X),
    "softplus": (lambda v: jnp.log1p(jnp.exp(v)) - v / 3,
                 lambda v: np.log1p(np.exp(v)) - v / 3, X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_float64_agrees_with_numpy(name):
    fn, ref, x = CASES[name]
    if ref is None:
        ref = pytest.importorskip("scipy.special").erf
    out = redraft.jit(fn)(x)
    assert out.dtype == np.float64
    expected = ref(x)
    scale = np.maximum(1.0, np.abs(expected))
    assert np.max(np.abs(np.asarray(out) - expected) / scale) < 1e-12


def test_python_scalars_are_float64_inside_compiled_code():
    out = redraft.jit(lambda v: v * 0.1 + 1e-13)(jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(out), np.ones(3) * 0.1 + 1e-13)


def test_int64_arange_and_indices():
    f = redraft.jit(lambda n: jnp.arange(5) * n + 2 ** 40)
    out = f(3)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(out), np.arange(5) * 3 + 2 ** 40)
    a = jnp.arange(10.0)
    assert redraft.jit(lambda v: jnp.argmax(v))(a).dtype == np.int64
    assert redraft.jit(lambda v: v[jnp.argmax(v)])(a) == 9.0


def test_grad_and_vmap_compiled_in_float64():
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    w = np.full(3, 0.3)
    x = np.arange(12.0).reshape(4, 3) / 10
    g = redraft.jit(redraft.grad(loss))(jnp.asarray(w), jnp.asarray(x))
    t = np.tanh(x @ w)
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), x.T @ (2 * t * (1 - t ** 2)), rtol=1e-13)
    rows = redraft.jit(redraft.vmap(lambda r: jnp.sin(r) @ r))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(rows), (np.sin(x) * x).sum(1), rtol=1e-14)


def test_the_flag_is_part_of_the_jit_cache():
    f = redraft.jit(lambda: jnp.zeros(2) + 0.5)
    assert f().dtype == np.float64
    with redraft.enable_x64(False):
        assert f().dtype == np.float32
    assert f().dtype == np.float64


def _selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def _sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def _apply_matrix(m, v):
    return jnp.dot(m, v)


def test_the_seed_workloads_in_float64():
    """The quickstart's workloads with x64 on: float64 results, compiled, agreeing with
    NumPy's float64 to 1e-12 (selu, grad of sum_logistic, its Hessian, vmap of a product)."""
    x = np.linspace(-2.0, 2.0, 257)
    s = redraft.jit(_selu)(x)
    assert s.dtype == np.float64
    want = 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
    np.testing.assert_allclose(np.asarray(s), want, rtol=1e-12, atol=1e-15)
    g = redraft.jit(redraft.grad(_sum_logistic))(x)
    sig = 1 / (1 + np.exp(-x))
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), sig * (1 - sig), rtol=1e-12)
    h = redraft.jit(redraft.hessian(_sum_logistic))(x[:5])
    np.testing.assert_allclose(np.asarray(h), np.diag((sig * (1 - sig) * (1 - 2 * sig))[:5]),
                               rtol=1e-12, atol=1e-15)
    m, vs = np.arange(6.0).reshape(2, 3) / 7, np.linspace(0, 1, 12).reshape(4, 3)
    out = redraft.jit(redraft.vmap(_apply_matrix, in_axes=(None, 0)))(m, vs)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), vs @ m.T, rtol=1e-12)
