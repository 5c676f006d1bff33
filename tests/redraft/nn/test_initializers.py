"""redraft.nn.initializers: JAX's values for a key (figures taken from JAX 0.10.2), fans,
variance, orthogonality, errors."""
import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import random
from redraft.nn import initializers as init

KEY = random.PRNGKey(3)

JAX_VALUES = {  # jax.nn.initializers.<name>()(PRNGKey(3), shape) in JAX 0.10.2
    ("glorot_normal", (2, 3)): [[-0.9490191340446472, 1.0016626119613647, 0.2619267702102661],
                                [1.2113326787948608, -0.40112194418907166, 0.14362576603889465]],
    ("he_uniform", (3, 2)): [[-1.204761266708374, 1.2392592430114746],
                             [0.4213140606880188, 1.3452593088150024],
                             [-0.6268423199653625, 0.23458430171012878]],
}


@pytest.mark.parametrize("name,shape", sorted(JAX_VALUES))
def test_bit_identical_with_jax(name, shape):
    got = getattr(init, name)()(KEY, shape)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.float32(JAX_VALUES[name, shape]))


def test_orthogonal_matches_jax_to_rounding_and_is_orthonormal():
    q = np.asarray(init.orthogonal()(KEY, (2, 3)))
    want = [[-0.8998209238052368, 0.2379847764968872, -0.3656303286552429],
            [0.2803363800048828, 0.9575866460800171, -0.06662873923778534]]
    np.testing.assert_allclose(q, want, atol=1e-6)
    np.testing.assert_allclose(q @ q.T, np.eye(2), atol=1e-6)
    tall = np.asarray(init.orthogonal(2.0)(KEY, (6, 3)))
    np.testing.assert_allclose(tall.T @ tall, 4 * np.eye(3), atol=1e-5)
    with pytest.raises(ValueError):
        init.orthogonal()(KEY, (3,))


def test_delta_orthogonal_is_zero_off_centre():
    w = np.array(init.delta_orthogonal()(KEY, (3, 3, 2, 4)))
    centre = w[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-6)
    w[1, 1] = 0
    assert not w.any()
    with pytest.raises(ValueError):
        init.delta_orthogonal()(KEY, (3, 3))


@pytest.mark.parametrize("name,scale,mode", [("glorot_uniform", 1.0, "avg"),
                                             ("lecun_uniform", 1.0, "in"),
                                             ("he_uniform", 2.0, "in"),
                                             ("xavier_uniform", 1.0, "avg"),
                                             ("kaiming_uniform", 2.0, "in")])
def test_uniform_variance_scaling_bounds(name, scale, mode):
    shape = (3, 3, 16, 32)  # receptive field 9: fan_in 144, fan_out 288
    fan = {"in": 144.0, "avg": (144.0 + 288.0) / 2}[mode]
    w = np.asarray(getattr(init, name)()(KEY, shape))
    limit = np.sqrt(3 * scale / fan)
    assert w.shape == shape and np.abs(w).max() <= limit
    assert abs(w.var() - scale / fan) < 0.1 * scale / fan


@pytest.mark.parametrize("name,scale", [("glorot_normal", 1.0), ("he_normal", 2.0),
                                        ("lecun_normal", 1.0), ("kaiming_normal", 2.0),
                                        ("xavier_normal", 1.0)])
def test_truncated_normal_variance_scaling(name, scale):
    w = np.asarray(getattr(init, name)()(KEY, (64, 128)))
    fan = 64.0 if scale == 2.0 or name == "lecun_normal" else 96.0
    assert abs(w.var() - scale / fan) < 0.1 * scale / fan


def test_simple_initializers():
    np.testing.assert_array_equal(np.asarray(init.zeros(KEY, (2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(init.ones(KEY, (2,), jnp.float16)), [1, 1])
    assert init.ones(KEY, (2,), jnp.float16).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(init.constant(-2.5)(KEY, (3,))), [-2.5] * 3)
    np.testing.assert_array_equal(np.asarray(init.normal(0.5)(KEY, (4,))),
                                  np.asarray(random.normal(KEY, (4,))) * np.float32(0.5))
    u = np.asarray(init.uniform(2.0)(KEY, (1000,)))
    assert u.min() >= 0 and u.max() < 2
    t = np.asarray(init.truncated_normal(1.0)(KEY, (1000,)))
    assert np.abs(t).max() <= 2


def test_variance_scaling_errors_and_axes():
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="in_axis"):
        init.glorot_normal()(KEY, (5,))
    assert init.compute_fans((4, 3, 2), in_axis=0, out_axis=(1, 2)) == (4.0, 6.0)
    w = init.variance_scaling(1.0, "fan_in", "normal", in_axis=0, out_axis=1)(KEY, (400, 3))
    assert abs(np.asarray(w).var() - 1 / 400) < 0.15 / 400
