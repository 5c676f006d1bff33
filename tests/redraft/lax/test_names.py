"""lax's primitive objects under JAX's names and its configuration types."""
import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.base import Primitive


def test_primitive_names_are_the_bound_primitives():
    jaxpr = redraft.make_jaxpr(lambda x: lax.sin(x) * 2.0)(jnp.ones(3))
    text = str(jaxpr)
    assert "sin" in text
    for name in ("add_p", "sin_p", "reduce_sum_p", "dot_general_p", "gather_p", "cumsum_p",
                 "conv_general_dilated_p", "psum_p", "transpose_p", "iota_p"):
        prim = getattr(lax, name)
        assert isinstance(prim, Primitive)
        assert prim.name == name[:-2]


def test_precision_and_rounding_method():
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision["DEFAULT"] is lax.Precision.DEFAULT
    x = jnp.asarray([0.5, 1.5, 2.5, -0.5])
    assert list(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)) == [0.0, 2.0, 2.0, -0.0]
    assert list(lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)) == [1.0, 2.0, 3.0, -1.0]
    y = lax.dot(jnp.ones((2, 3)), jnp.ones((3,)), precision=lax.Precision.HIGHEST)
    assert list(y) == [3.0, 3.0]


def test_stop_gradient_is_the_transforms_one():
    assert lax.stop_gradient is redraft.stop_gradient
    grad = redraft.grad(lambda x: jnp.sum(x * lax.stop_gradient(x)))(jnp.arange(3.0))
    assert list(grad) == [0.0, 1.0, 2.0]
