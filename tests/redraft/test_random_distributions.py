"""The distributions added on top of uniform and normal samples: bit for bit JAX 0.10.2's
samples for the same key (bit patterns recorded from JAX), shapes, dtypes, moments."""
import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import random

JAX_BITS = {  # float32 bit patterns (ints for rademacher) of JAX's samples, shape (6,)
    "exponential/0": [1077726950, 1081473707, 1053740146, 1059185393, 1062731126, 1043940533],
    "laplace/0": [3222303331, 3226050091, 1053897580, 1032095730, 3189386623, 1066239208],
    "logistic/0": [1077501497, 1081382888, 3207767447, 3187703960, 1049629512, 3218019678],
    "rademacher/0": [-1, -1, 1, 1, -1, 1],
    "rayleigh/0": [1062328214, 1057304358, 1080918427, 1078262712, 1076473206, 1083686078],
    "triangular/0": [1069408084, 1070969232, 1041086128, 1052060820, 1057282204, 3192475608],
    "exponential/12345": [1053220560, 1071647144, 1065774720, 1051499300, 1048749929,
                          1050881941],
    "laplace/12345": [1054966615, 3213316254, 3199653332, 1057937607, 1061955914, 1058733256],
    "logistic/12345": [3208561756, 1070046389, 1058972724, 3211394382, 3214812120, 3212498712],
    "rademacher/12345": [1, -1, -1, 1, 1, 1],
    "rayleigh/12345": [1081141876, 1069920354, 1075083574, 1081940234, 1082794419, 1082191053],
    "triangular/12345": [1039570176, 1065845893, 1059720182, 1030175520, 3179320096,
                         1023530112],
}


def _sample(name: str, key):
    if name == "rayleigh":
        return random.rayleigh(key, 2.5, (6,))
    if name == "triangular":
        return random.triangular(key, -1.0, 0.3, 2.0, (6,))
    return getattr(random, name)(key, (6,))


@pytest.mark.parametrize("case", sorted(JAX_BITS))
def test_bit_identical_with_jax(case):
    name, seed = case.split("/")
    got = np.asarray(_sample(name, random.PRNGKey(int(seed))))
    if name == "rademacher":
        assert got.dtype == np.int32 and got.tolist() == JAX_BITS[case]
    else:
        assert got.dtype == np.float32
        assert got.view(np.uint32).tolist() == JAX_BITS[case]


def test_typed_keys_give_the_same_samples():
    a = random.exponential(random.key(3), (4,))
    b = random.exponential(random.PRNGKey(3), (4,))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name,mean,var", [("exponential", 1.0, 1.0), ("laplace", 0.0, 2.0),
                                           ("logistic", 0.0, np.pi ** 2 / 3)])
def test_moments(name, mean, var):
    x = np.asarray(getattr(random, name)(random.PRNGKey(1), (200000,)), np.float64)
    assert abs(x.mean() - mean) < 0.02 and abs(x.var() / var - 1) < 0.03


def test_parameters_shapes_and_dtypes():
    r = random.rayleigh(random.PRNGKey(0), jnp.array([1.0, 2.0]))
    assert r.shape == (2,)
    t = np.asarray(random.triangular(random.PRNGKey(0), 0.0, 0.2, 1.0, (10000,)))
    assert t.min() >= 0 and t.max() <= 1 and abs(t.mean() - 0.4) < 0.01
    assert random.exponential(random.PRNGKey(0), (3,), jnp.float16).dtype == np.float16
    assert random.rademacher(random.PRNGKey(0), (3,), jnp.float32).dtype == np.float32
    with pytest.raises(ValueError):
        random.rayleigh(random.PRNGKey(0), jnp.ones(3), (2,))


def test_orthogonal_is_orthonormal_and_batched():
    q = np.asarray(random.orthogonal(random.PRNGKey(2), 4, (3,)))
    assert q.shape == (3, 4, 4)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
