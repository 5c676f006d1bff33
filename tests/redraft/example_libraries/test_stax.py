"""redraft.example_libraries.stax: layers against NumPy, init shapes against apply's output,
and networks under grad (against finite differences), jit and vmap."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import random
from redraft.example_libraries import stax
from redraft.tree_util import tree_leaves

KEY = random.PRNGKey(0)
X = np.random.RandomState(0).randn(2, 6, 6, 3).astype(np.float32)


def np_pool(x, window, stride, kind):
    n, h, w, c = x.shape
    oh, ow = (h - window) // stride + 1, (w - window) // stride + 1
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + window, j * stride:j * stride + window]
            out[:, i, j] = patch.max((1, 2)) if kind == "max" else patch.sum((1, 2))
    return out


def test_dense_relu_logsoftmax_against_numpy():
    init, apply = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init(KEY, (5, 2))
    x = np.random.RandomState(1).randn(5, 2).astype(np.float32)
    (w1, b1), _, (w2, b2), _ = [tuple(np.asarray(a) for a in p) for p in params]
    h = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    want = h - np.log(np.exp(h).sum(-1, keepdims=True))
    got = apply(params, jnp.asarray(x))
    assert out_shape == (5, 3) and got.shape == (5, 3)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer,kind,window,stride", [
    (stax.MaxPool((2, 2), strides=(2, 2)), "max", 2, 2),
    (stax.SumPool((3, 3)), "sum", 3, 1),
    (stax.AvgPool((2, 2), strides=(2, 2)), "avg", 2, 2)])
def test_pooling_against_numpy(layer, kind, window, stride):
    init, apply = layer
    out_shape, _ = init(KEY, X.shape)
    got = np.asarray(apply((), jnp.asarray(X)))
    want = np_pool(X, window, stride, "max" if kind == "max" else "sum")
    if kind == "avg":
        want = want / window ** 2
    assert out_shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_same_padded_average_pool_counts_only_real_inputs():
    init, apply = stax.AvgPool((3, 3), padding="SAME")
    ones = jnp.ones((1, 4, 4, 2))
    assert init(KEY, (1, 4, 4, 2))[0] == (1, 4, 4, 2)
    np.testing.assert_allclose(np.asarray(apply((), ones)), np.ones((1, 4, 4, 2)), rtol=1e-6)


def test_batchnorm_standardises_over_the_batch_axes():
    init, apply = stax.BatchNorm(axis=(0, 1, 2))
    _, (beta, gamma) = init(KEY, X.shape)
    assert beta.shape == gamma.shape == (3,)
    out = np.asarray(apply((beta + 1.0, gamma * 2.0), jnp.asarray(X)))
    np.testing.assert_allclose(out.mean((0, 1, 2)), 1.0, atol=1e-5)
    np.testing.assert_allclose(out.std((0, 1, 2)), 2.0, rtol=1e-3)


def _network():
    return stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Tanh,
        stax.FanOut(2), stax.parallel(stax.Conv(4, (1, 1)), stax.Identity), stax.FanInSum,
        stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten, stax.Dense(3), stax.Softmax)


def test_init_shapes_agree_with_apply():
    init, apply = _network()
    out_shape, params = init(KEY, X.shape)
    assert out_shape == (2, 3) == apply(params, jnp.asarray(X)).shape
    init2, apply2 = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(2), stax.Dense(5)),
                                stax.FanInConcat())
    shape2, params2 = init2(KEY, (4, 3))
    assert shape2 == (4, 7) == apply2(params2, jnp.ones((4, 3))).shape
    init3, apply3 = stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME")
    shape3, params3 = init3(KEY, X.shape)
    assert shape3 == (2, 12, 12, 2) == apply3(params3, jnp.asarray(X)).shape
    init4, _ = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    assert init4(KEY, (3, 5))[0] == (3, 10)


def test_grad_of_a_network_against_finite_differences():
    init, apply = _network()
    _, params = init(KEY, X.shape)
    x = jnp.asarray(X)

    def loss(p):
        return jnp.sum(apply(p, x) * jnp.arange(3.0))

    grads = redraft.grad(loss)(params)
    w = params[-2][0]
    direction = np.random.RandomState(2).randn(*w.shape).astype(np.float32)

    def loss_w(wv):
        p = list(params)
        p[-2] = (jnp.asarray(wv), params[-2][1])
        return float(loss(p))

    eps = 1e-2
    fd = (loss_w(np.asarray(w) + eps * direction) - loss_w(np.asarray(w) - eps * direction))
    fd /= 2 * eps
    assert np.isclose(float(np.sum(np.asarray(grads[-2][0]) * direction)), fd, rtol=2e-2,
                      atol=1e-3)
    assert len(tree_leaves(grads)) == len(tree_leaves(params))


def test_jit_and_vmap_agree_with_eager():
    init, apply = stax.serial(stax.Dense(8), stax.Gelu, stax.Dense(2), stax.Sigmoid)
    _, params = init(KEY, (-1, 3))
    xs = jnp.asarray(np.random.RandomState(3).randn(4, 3).astype(np.float32))
    eager = np.asarray(apply(params, xs))
    np.testing.assert_allclose(np.asarray(redraft.jit(apply)(params, xs)), eager, rtol=1e-5)

    def one(x):
        return apply(params, x)

    np.testing.assert_allclose(np.asarray(redraft.vmap(one)(xs)), eager, rtol=1e-5)


def test_dropout():
    init, apply = stax.Dropout(0.5)
    x = jnp.ones((1000,))
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), x)
    y = np.asarray(apply((), x, rng=random.PRNGKey(1)))
    assert set(np.unique(y)) == {0.0, 2.0} and 400 < (y == 0).sum() < 600
    _, test_apply = stax.Dropout(0.5, mode="test")
    np.testing.assert_array_equal(np.asarray(test_apply((), x)), np.ones(1000))
