"""make_mesh, NamedSharding, P and lax.with_sharding_constraint on this one-device machine,
as JAX 0.10.2 gives them there; and JAX's option objects (enable_checks, default_prng_impl)
that accept only the settings redraft already behaves as."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def test_mesh_and_named_sharding():
    mesh = redraft.make_mesh((1,), ("x",))
    assert mesh.shape == {"x": 1} and mesh.axis_names == ("x",) and mesh.size == 1
    s = redraft.NamedSharding(mesh, redraft.P("x"))
    assert s.spec == redraft.P("x", None) and repr(redraft.P("x")) == "P('x',)"
    assert repr(redraft.P("x", None)) == "P('x', None)"
    assert s.is_fully_replicated and s.shard_shape((4, 2)) == (4, 2)


def test_a_mesh_of_more_devices_than_there_are_is_refused():
    with pytest.raises(ValueError, match="must equal the product"):
        redraft.make_mesh((len(redraft.devices()) + 1,), ("x",))
    with pytest.raises(ValueError, match="is not an axis"):
        redraft.NamedSharding(redraft.make_mesh((1,), ("x",)), redraft.P("y"))


def test_with_sharding_constraint_keeps_values_under_transforms():
    s = redraft.NamedSharding(redraft.make_mesh((1,), ("x",)), redraft.P("x"))
    x = jnp.arange(4.0)

    def f(x):
        return redraft.lax.with_sharding_constraint(x * 2, s).sum()
    np.testing.assert_array_equal(redraft.grad(f)(x), [2.0] * 4)
    np.testing.assert_array_equal(redraft.jit(redraft.grad(f))(x), [2.0] * 4)
    out = redraft.vmap(lambda v: redraft.lax.with_sharding_constraint(v * 2, s))(x)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])


def test_option_objects():
    assert redraft.default_prng_impl.value == "threefry2x32"
    assert redraft.threefry_partitionable.value is True
    with redraft.enable_checks(True):
        assert redraft.enable_checks.value is True
    assert redraft.enable_checks.value is False
    with pytest.raises(NotImplementedError, match="jax_threefry_partitionable=False"):
        redraft.threefry_partitionable(False)
