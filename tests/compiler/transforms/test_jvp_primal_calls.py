"""jvp code calls a user's function as written where nothing reads its result's tangent
(compiler/transforms/ad/jvp.py): the forward pass of derivative code computes no tangent it
drops, so forward over reverse through a custom_vjp function (which has no tangent rule)
works where JAX's does, and jvp of the custom_vjp function itself is refused as JAX's is."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


@redraft.custom_vjp
def clipped_sin(x):
    return jnp.sin(x)


def _fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _bwd(c, g):
    return (jnp.clip(g * c, -0.8, 0.8),)


clipped_sin.defvjp(_fwd, _bwd)


def loss(x):
    return jnp.sum(clipped_sin(x) * 2.0)


def helper(x):
    return jnp.tanh(x) * 3.0


def uses_helper(x):
    y = helper(x)
    return jnp.sum(y * y)


def test_forward_over_reverse_through_a_custom_vjp_differentiates_its_rules():
    x = jnp.array([0.5, 1.0, 2.5])
    c = np.cos(np.asarray(x))
    # d/dx clip(2 cos x, -0.8, 0.8): -2 sin x where |2 cos x| < 0.8, else 0
    want = np.where(np.abs(2 * c) < 0.8, -2 * np.sin(np.asarray(x)), 0.0)
    _, tangent = redraft.jvp(redraft.grad(loss), (x,), (jnp.ones(3),))
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(redraft.hessian(loss)(x), np.diag(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(redraft.jit(redraft.hessian(loss))(x), np.diag(want),
                               rtol=1e-5, atol=1e-6)


def test_jvp_of_a_custom_vjp_function_is_refused_as_jax_refuses_it():
    x = jnp.array([0.5, 1.0])
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        redraft.jvp(clipped_sin, (x,), (x,))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        redraft.jvp(lambda v: clipped_sin(v) * v, (x,), (x,))


def test_a_call_whose_tangent_is_unread_is_the_plain_call():
    source = redraft.emit(redraft.grad(uses_helper), "jvp")
    assert "helper_jvp" in source  # the gradient reads the helper's tangent
    hess = redraft.hessian(uses_helper)
    x = jnp.array([0.2, -0.4])
    t = np.tanh(np.asarray(x))
    want = np.diag(18 * (1 - t * t) * (1 - 3 * t * t))
    np.testing.assert_allclose(hess(x), want, rtol=1e-5, atol=1e-5)
    jac_source = redraft.emit(redraft.jacrev(uses_helper), "jvp")
    assert "out = uses_helper(x)" in jac_source and "uses_helper_jvp" not in jac_source
