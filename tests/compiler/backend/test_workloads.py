"""The seed workloads (the quickstart and the benchmarks) compiled by the LLVM backend."""
import numpy as np
from backend_util import check, sample

import redraft
import redraft.numpy as jnp


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def decay(x):
    for i in range(10):
        x -= 0.1 * x
    return x


def test_selu():
    check(selu, sample((100_003,), np.float32), rtol=2e-6)


def test_grad_sum_logistic():
    check(redraft.grad(sum_logistic), sample((10_000,), np.float32), rtol=2e-6)
    np.testing.assert_allclose(redraft.jit(redraft.grad(sum_logistic))(jnp.arange(3.0)),
                               [0.25, 0.19661197, 0.10499357], rtol=1e-6)


def test_nested_grad_jit():
    f = redraft.grad(redraft.jit(redraft.grad(redraft.jit(redraft.grad(sum_logistic)))))
    np.testing.assert_allclose(f(1.0), -0.0353256, rtol=1e-5)


def test_hessian():
    h = check(redraft.jacfwd(redraft.jacrev(sum_logistic)), np.arange(3.0, dtype=np.float32),
              rtol=1e-5, atol=1e-7)[0]
    np.testing.assert_allclose(h, [[0, 0, 0], [0, -0.09085776, 0], [0, 0, -0.07996249]],
                               rtol=1e-5, atol=1e-7)


def test_vmap_apply_matrix():
    mat = sample((150, 100), np.float32, seed=1)

    def apply_matrix(x):
        return jnp.dot(mat, x)

    def batched(xs):
        return redraft.vmap(apply_matrix)(xs)

    check(batched, sample((10, 100), np.float32, seed=2), rtol=2e-5, atol=2e-4)


def test_norm():
    check(norm, sample((10_000, 10), np.float32), rtol=1e-4, atol=1e-5)


def test_decay():
    check(decay, sample((500, 400), np.float32), rtol=2e-6)


def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return jnp.mean((logits - y) ** 2)


def mlp_step(params, x, y):
    grads = redraft.grad(mlp_loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def mlp_params(seed=0):
    rs = np.random.RandomState(seed)
    return [(rs.randn(784, 512).astype(np.float32) * 0.05, np.zeros(512, np.float32)),
            (rs.randn(512, 10).astype(np.float32) * 0.05, np.zeros(10, np.float32))]


def test_mlp_training_step():
    params = mlp_params()
    x, y = sample((128, 784), np.float32, seed=3), sample((128, 10), np.float32, seed=4)
    check(mlp_step, params, x, y, rtol=1e-4, atol=1e-5)
    check(mlp_loss, params, x, y, rtol=1e-5)
