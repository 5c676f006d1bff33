"""redraft.custom_gradient (redraft/custom_gradient.py): the function's own vjp rule is
what grad uses, eagerly and under jit, and JAX's examples give JAX's results."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


@redraft.custom_gradient
def scaled_square(x):
    return x ** 2, lambda g: (g * 10.0 * x,)


@redraft.custom_gradient
def product(x, y):
    return x * y, lambda g: (g * y * 100.0, g * x * 1000.0)


@redraft.custom_gradient
def log1pexp(x):
    """JAX's documented example: a numerically stable gradient."""
    e = jnp.exp(x)
    return jnp.log1p(e), lambda g: g * (1.0 - 1.0 / (1.0 + e))  # a bare cotangent


def _user(x):
    return jnp.sin(scaled_square(x)) + product(x, 2.0)


def test_values_are_the_functions_and_gradients_the_rules():
    assert scaled_square(3.0) == 9.0
    assert redraft.grad(scaled_square)(3.0) == 30.0
    da, db = redraft.grad(product, argnums=(0, 1))(2.0, 3.0)
    assert (da, db) == (300.0, 2000.0)
    np.testing.assert_allclose(redraft.grad(_user)(1.0), np.cos(1.0) * 10.0 + 200.0,
                               rtol=1e-6)


def test_jit_and_jax_example():
    np.testing.assert_allclose(redraft.jit(redraft.grad(_user))(1.0), redraft.grad(_user)(1.0),
                               rtol=1e-6)
    # jax.grad(log1pexp)(100.) is 1.0 where differentiating log1p(exp(x)) gives nan
    assert redraft.grad(log1pexp)(100.0) == 1.0
    assert redraft.jit(redraft.grad(log1pexp))(100.0) == 1.0


def test_unsupported_signatures_are_refused():
    with pytest.raises(TypeError, match="positional arguments"):
        redraft.custom_gradient(lambda *xs: (xs[0], lambda g: (g,)))
    with pytest.raises(TypeError, match="positional arguments"):
        redraft.custom_gradient(lambda a, b, c, d, e: (a, lambda g: (g,) * 5))
