"""Forward mode over reverse mode through loops whose tape holds ints beside arrays: a
range index, a while loop's counter (compiler/transforms/ad/vjp.py constants_restored).
Reverse mode restores a saved value that no parameter feeds through ad.tape_constant, which
has no derivative, so jvp of the gradient does not differentiate it (and refuse ops such
as jnp.roll's shift or cumsum's axis). Expected values are JAX 0.10.2's (stored here; JAX
is not imported), checked against central differences and reverse-over-forward too."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

X = np.array([0.3, 1.0, 2.0, -0.5], np.float32)
T = np.ones(4, np.float32)


def rolled_while(x):
    i = 0
    while i < 3:
        x = jnp.roll(x, i) * x
        i = i + 1
    return jnp.sum(x)


def rolled_range(x):
    for k in range(3):
        x = jnp.roll(x, k) * jnp.sin(x)
    return jnp.sum(x)


def rotated_by_slices(x):
    for k in range(1, 3):
        x = jnp.concatenate([x[k:], x[:k]]) * jnp.cos(x)
    return jnp.sum(x)


def cumsum_each_axis(x):
    m = jnp.reshape(x, (2, 2))
    for a in range(2):
        m = jnp.cumsum(m, axis=a) * jnp.tanh(m)
    return jnp.sum(m)


def scaled_by_counter(x, w):
    n = 0
    s = w
    while n < 2:
        x = jnp.sin(x * s) + n
        s = s * w  # carried, fed by w alone: inactive in grad in x, not a constant
        n = n + 1
    return jnp.sum(x)


# fn, JAX's jvp(grad(fn), (X,), (ones,)): (gradient, its tangent)
CASES = [
    (rolled_while, [2.4, 0.72, 0.36, -1.44], [5.6, 3.36, 1.86, -11.04]),
    (rolled_range, [0.5832, 0.1172, 0.0017, -0.3301], [0.4243, 0.2195, -0.052, -2.1794]),
    (rotated_by_slices, [-0.0726, -0.4616, 0.5689, -0.1309],
     [-0.675, -0.0361, -1.9189, 0.0258]),
    (cumsum_each_axis, [1.2833, 0.5826, 0.9601, -0.1141], [1.7436, 2.4303, -0.9081, 4.4752]),
]


@pytest.mark.parametrize("fn, grad, tangent", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_of_grad_against_jax(fn, grad, tangent):
    got_grad, got_tangent = redraft.jvp(redraft.grad(fn), (X,), (T,))
    np.testing.assert_allclose(got_grad, grad, atol=2e-4)
    np.testing.assert_allclose(got_tangent, tangent, atol=2e-4, rtol=1e-4)
    np.testing.assert_allclose(redraft.hessian(fn)(X) @ T, tangent, atol=2e-4, rtol=1e-4)


@pytest.mark.parametrize("fn, grad, tangent", CASES, ids=[c[0].__name__ for c in CASES])
def test_second_order_against_differences(fn, grad, tangent):
    check_grads(fn, (X,), order=2, modes=("fwd", "rev"))


def test_a_parameter_fed_value_keeps_its_derivative():
    """w feeds the loop's values but is not differentiated by the inner grad: the outer
    jvp in w must still see it (only values no parameter feeds are restored as
    constants)."""
    x, w = np.float32(0.4), np.float32(1.3)
    inner = redraft.grad(scaled_by_counter)  # in x only
    _, tangent = redraft.jvp(inner, (x, w), (np.float32(0.0), np.float32(1.0)))
    eps = 1e-3
    numeric = (inner(x, w + eps) - inner(x, w - eps)) / (2 * eps)
    np.testing.assert_allclose(tangent, numeric, rtol=2e-2, atol=2e-3)
