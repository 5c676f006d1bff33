"""vmap composed with every other transform: per-example gradients (vmap of grad), grad of
a vmapped function, nested vmap, jit, jvp, jacfwd/jacrev, and vmap over random keys. Each
result is checked against a Python loop over the examples."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, random, vmap

RNG = np.random.RandomState(1)
X = jnp.asarray(RNG.randn(4, 3).astype(np.float32))
Y = jnp.asarray(RNG.randn(4).astype(np.float32))
W = jnp.asarray(RNG.randn(3).astype(np.float32))
M = jnp.asarray(RNG.randn(3, 3).astype(np.float32))


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def loss(w, x, y):
    return (jnp.tanh(jnp.dot(x, w)) - y) ** 2


def mlp_loss(params, x, y):
    w1, w2 = params
    h = jnp.tanh(w1 @ x)
    return (jnp.dot(w2, h) - y) ** 2


def total_loss(w):
    return jnp.sum(vmap(loss, in_axes=(None, 0, 0))(w, X, Y))


def test_vmap_of_grad_gives_per_example_gradients():
    got = vmap(grad(loss), in_axes=(None, 0, 0))(W, X, Y)
    close(got, np.stack([np.asarray(grad(loss)(W, X[i], Y[i])) for i in range(4)]))


def test_per_example_gradients_of_a_pytree_of_parameters():
    params = (jnp.asarray(RNG.randn(5, 3).astype(np.float32)),
              jnp.asarray(RNG.randn(5).astype(np.float32)))
    got = vmap(grad(mlp_loss), in_axes=(None, 0, 0))(params, X, Y)
    for k in range(2):
        want = np.stack([np.asarray(grad(mlp_loss)(params, X[i], Y[i])[k]) for i in range(4)])
        close(got[k], want, rtol=1e-4, atol=1e-5)


def test_grad_of_vmap_called_inside_the_function():
    want = sum(np.asarray(grad(loss)(W, X[i], Y[i])) for i in range(4))
    close(grad(total_loss)(W), want, rtol=1e-5, atol=1e-5)


def test_grad_of_a_vmapped_function():
    f = vmap(lambda w, x: jnp.sin(w * x).sum(), in_axes=(None, 0))
    got = grad(lambda w: jnp.sum(f(w, X)))(W)
    close(got, np.sum(np.cos(np.asarray(W) * np.asarray(X)) * np.asarray(X), axis=0),
          rtol=1e-5)


def test_nested_vmap_builds_a_matrix_product_from_a_dot_product():
    vv = lambda a, b: jnp.vdot(a, b)
    mv = vmap(vv, (0, None), 0)
    mm = vmap(mv, (None, 1), 1)
    close(mm(M, X.T), np.asarray(M) @ np.asarray(X).T, rtol=1e-5)


def test_nested_vmap_sees_one_example_of_each_level():
    f = lambda x: jnp.sum(x) * x.shape[0] + len(x) + x.ndim
    close(vmap(vmap(f))(jnp.ones((2, 3, 5))), np.full((2, 3), 5 * 5 + 5 + 1.0))


def test_triple_vmap_with_reductions_and_products():
    f = lambda a, b: jnp.dot(a, b) + jnp.max(a)
    a, b = RNG.randn(2, 3, 4, 5).astype(np.float32), RNG.randn(5).astype(np.float32)
    got = vmap(vmap(vmap(f, (0, None)), (0, None)), (0, None))(a, b)
    close(got, a @ b + a.max(-1), rtol=1e-5)


def test_vmap_of_vmap_of_grad():
    g = vmap(vmap(grad(loss), in_axes=(None, 0, 0)), in_axes=(0, None, None))
    ws = jnp.stack([W, 2 * W])
    got = g(ws, X, Y)
    want = np.stack([[np.asarray(grad(loss)(ws[j], X[i], Y[i])) for i in range(4)]
                     for j in range(2)])
    close(got, want, rtol=1e-5)


def test_grad_of_vmap_of_grad():
    def f(w):
        return jnp.sum(vmap(grad(loss), in_axes=(None, 0, 0))(w, X, Y) ** 2)
    eps = 1e-3
    numeric = [(float(f(W + eps * e)) - float(f(W - eps * e))) / (2 * eps)
               for e in np.eye(3, dtype=np.float32)]
    close(grad(f)(W), numeric, rtol=2e-2, atol=2e-3)


def test_jit_of_vmap_and_vmap_of_jit():
    want = (np.tanh(np.asarray(X) @ np.asarray(W)) - np.asarray(Y)) ** 2
    close(jit(vmap(loss, in_axes=(None, 0, 0)))(W, X, Y), want, rtol=1e-5)
    close(vmap(jit(loss), in_axes=(None, 0, 0))(W, X, Y), want, rtol=1e-5)


def test_vmap_of_jvp():
    f = lambda x: jnp.sin(x) * 2
    got = vmap(lambda x, t: redraft.jvp(f, (x,), (t,))[1])(X, X)
    close(got, 2 * np.cos(np.asarray(X)) * np.asarray(X), rtol=1e-5)


def test_jacfwd_and_jacrev_of_vmap():
    f = vmap(jnp.sin)
    close(redraft.jacfwd(f)(W), np.diag(np.cos(np.asarray(W))), rtol=1e-5)
    close(redraft.jacrev(f)(W), np.diag(np.cos(np.asarray(W))), rtol=1e-5)


@pytest.mark.parametrize("jac", [redraft.jacfwd, redraft.jacrev], ids=["jacfwd", "jacrev"])
def test_vmap_of_jacobians(jac):
    f = lambda x: jnp.sin(x) * x[0]
    got = vmap(jac(f))(X)
    close(got, np.stack([np.asarray(jac(f)(X[i])) for i in range(4)]), rtol=1e-5)


def test_hessian_of_a_vmapped_sum():
    f = lambda x: jnp.sum(vmap(lambda v: jnp.sin(v) ** 2)(x))
    want = np.diag(2 * np.cos(2 * np.asarray(W)))
    close(redraft.hessian(f)(W), want, rtol=1e-4, atol=1e-5)


def test_vmap_over_typed_random_keys():
    keys = random.split(random.key(0), 5)
    got = vmap(lambda k: random.normal(k, (3,)))(keys)
    close(got, np.stack([np.asarray(random.normal(k, (3,))) for k in keys]))


def test_vmap_over_raw_keys_and_split():
    keys = random.split(random.PRNGKey(0), 3)
    got = vmap(lambda k: random.uniform(random.split(k)[1], (2,)))(keys)
    want = np.stack([np.asarray(random.uniform(random.split(keys[i])[1], (2,)))
                     for i in range(3)])
    close(got, want)
