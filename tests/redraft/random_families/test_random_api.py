"""The new redraft.random functions' defaults, dtypes and shapes (as JAX's), their errors for
bad arguments, and their behaviour under jit, vmap and grad."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import random

KEY = random.PRNGKey(5)
A3 = np.array([0.5, 1.0, 2.0], np.float32)
EYE3 = np.eye(3, dtype=np.float32)

# name -> (call on a key, expected dtype, expected shape)
SAMPLERS = {
    "cauchy": (lambda k: random.cauchy(k, (2, 3)), np.float32, (2, 3)),
    "lognormal": (lambda k: random.lognormal(k), np.float32, ()),
    "lognormal_f16": (lambda k: random.lognormal(k, shape=(4,), dtype=np.float16),
                      np.float16, (4,)),
    "pareto": (lambda k: random.pareto(k, A3), np.float32, (3,)),
    "maxwell": (lambda k: random.maxwell(k, (5,)), np.float32, (5,)),
    "double_sided_maxwell": (lambda k: random.double_sided_maxwell(k, A3, 1.0, (2,)),
                             np.float32, (2, 3)),
    "double_sided_maxwell_default": (lambda k: random.double_sided_maxwell(k, A3, 1.0),
                                     np.float32, (3, 3)),
    "weibull_min": (lambda k: random.weibull_min(k, 1.0, A3), np.float32, (3,)),
    "wald": (lambda k: random.wald(k, A3), np.float32, (3,)),
    "geometric": (lambda k: random.geometric(k, A3 / 4), np.int32, (3,)),
    "poisson": (lambda k: random.poisson(k, A3), np.int32, (3,)),
    "poisson_uint8": (lambda k: random.poisson(k, 2.0, (4,), np.uint8), np.uint8, (4,)),
    "binomial": (lambda k: random.binomial(k, 10, A3 / 4), np.float32, (3,)),
    "multinomial": (lambda k: random.multinomial(k, 10, A3 / A3.sum()), np.float32, (3,)),
    "gamma": (lambda k: random.gamma(k, A3), np.float32, (3,)),
    "loggamma": (lambda k: random.loggamma(k, 1.0, (2, 2)), np.float32, (2, 2)),
    "beta": (lambda k: random.beta(k, A3, 2.0), np.float32, (3,)),
    "dirichlet": (lambda k: random.dirichlet(k, A3, (4,)), np.float32, (4, 3)),
    "chisquare": (lambda k: random.chisquare(k, A3), np.float32, (3,)),
    "f": (lambda k: random.f(k, A3, 3.0), np.float32, (3,)),
    "t": (lambda k: random.t(k, A3), np.float32, (3,)),
    "generalized_normal": (lambda k: random.generalized_normal(k, 3.0, (3,)), np.float32, (3,)),
    "ball": (lambda k: random.ball(k, 4), np.float32, (4,)),
    "multivariate_normal": (lambda k: random.multivariate_normal(k, A3, EYE3),
                            np.float32, (3,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_dtype_and_shape(name):
    sampler, dtype, shape = SAMPLERS[name]
    out = np.asarray(sampler(KEY))
    assert out.dtype == dtype and out.shape == shape


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_gives_the_eager_bits(name):
    sampler = SAMPLERS[name][0]
    assert np.asarray(redraft.jit(sampler)(KEY)).tobytes() == np.asarray(sampler(KEY)).tobytes()


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_vmap_over_keys_is_a_loop(name):
    sampler = SAMPLERS[name][0]
    keys = random.split(KEY, 3)
    batched = np.asarray(redraft.vmap(sampler)(keys))
    looped = np.stack([np.asarray(sampler(one)) for one in keys])
    assert batched.tobytes() == looped.tobytes()


def test_parameters_known_only_at_run_time():
    a = jnp.array([0.3, 1.0, 4.0])
    for sampler in (random.gamma, random.poisson, random.chisquare, random.t, random.wald):
        compiled = redraft.jit(lambda key, p: sampler(key, p))(KEY, a)
        assert np.asarray(compiled).tobytes() == np.asarray(sampler(KEY, a)).tobytes()
    lam = redraft.vmap(lambda lam: random.poisson(KEY, lam))(a)
    assert np.asarray(lam).tolist() == [int(random.poisson(KEY, x)) for x in np.asarray(a)]


def test_samples_depend_on_the_key_only_through_its_bits():
    typed = random.key(11)
    raw = random.PRNGKey(11)
    assert np.asarray(random.gamma(typed, A3)).tobytes() == \
        np.asarray(random.gamma(raw, A3)).tobytes()
    assert np.asarray(random.gamma(random.split(typed)[0], A3)).tobytes() != \
        np.asarray(random.gamma(typed, A3)).tobytes()


def test_gamma_gradient_matches_the_implicit_derivative():
    """d sample / d a, holding the quantile fixed, equals -dF/da / f (finite differences of
    scipy's gamma CDF in a, at the sample)."""
    from scipy import stats
    a = np.float32(2.5)
    sample = np.asarray(random.gamma(KEY, a, (6,)), np.float64)
    grads = np.asarray(redraft.jacfwd(lambda a: random.gamma(KEY, a, (6,)))(a))
    h = 1e-5
    dF_da = (stats.gamma(2.5 + h).cdf(sample) - stats.gamma(2.5 - h).cdf(sample)) / (2 * h)
    np.testing.assert_allclose(grads, -dF_da / stats.gamma(2.5).pdf(sample), rtol=1e-4)
    reverse = redraft.grad(lambda a: random.gamma(KEY, a, (6,)).sum())(a)
    np.testing.assert_allclose(reverse, grads.sum(), rtol=1e-5)


def test_loggamma_gradient_is_gamma_gradient_over_sample():
    a = np.float32(0.8)
    g = redraft.grad(lambda a: random.loggamma(KEY, a, (4,)).sum())(a)
    sample = np.asarray(random.gamma(KEY, a, (4,)))
    per = np.asarray(random.random_gamma_grad(np.full(4, a), sample))
    np.testing.assert_allclose(g, np.sum(per / sample), rtol=1e-4)


def test_gamma_gradient_under_jit_and_vmap():
    f = redraft.grad(lambda a: random.gamma(KEY, a, (3,)).sum())
    a = jnp.array([0.5, 2.0, 9.0])
    eager = [float(f(x)) for x in np.asarray(a)]
    np.testing.assert_allclose(redraft.vmap(f)(a), eager, rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(f)(a[1]), eager[1], rtol=1e-6)


def test_random_gamma_p_binds_like_jax():
    a = np.full((2, 3), 1.5, np.float32)
    assert np.asarray(random.random_gamma_p.bind(KEY, a)).tobytes() == \
        np.asarray(random.gamma(KEY, a)).tobytes()
    assert np.asarray(random.random_gamma_p.bind(KEY, a, log_space=True)).tobytes() == \
        np.asarray(random.loggamma(KEY, a)).tobytes()


def test_key_helpers():
    key = random.key(3)
    assert random.key_impl(key) == "threefry2x32"
    assert random.key_impl(random.PRNGKey(3)) == "threefry2x32"
    assert random.key_dtype() is key.dtype and repr(random.key_dtype()) == "key<fry>"
    copy = random.clone(key)
    assert isinstance(copy, random.PRNGKeyArray)
    assert np.asarray(random.key_data(copy)).tolist() == np.asarray(random.key_data(key)).tolist()
    assert np.asarray(random.clone(random.PRNGKey(3))).tolist() == [0, 3]
    with pytest.raises(ValueError, match="threefry2x32"):
        random.key_dtype("rbg")
    with pytest.raises(TypeError):
        random.key_impl(3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: random.gamma(KEY, 1.0, 3), TypeError, "shape"),
    (lambda: random.gamma(KEY, A3, (2,)), ValueError, "broadcast"),
    (lambda: random.gamma(KEY, 1.0, dtype=np.int32), ValueError, "float"),
    (lambda: random.gamma(KEY, 1.0 + 2j), TypeError, "cast"),
    (lambda: random.poisson(KEY, 1.0, dtype=np.float32), ValueError, "int"),
    (lambda: random.geometric(KEY, 0.5, dtype=np.float32), ValueError, "int"),
    (lambda: random.dirichlet(KEY, 1.0), ValueError, "alpha.ndim"),
    (lambda: random.multivariate_normal(KEY, 0.0, np.eye(2)), ValueError, "mean.ndim"),
    (lambda: random.multivariate_normal(KEY, np.zeros(3), np.eye(2)), ValueError, "cov.shape"),
    (lambda: random.multivariate_normal(KEY, np.zeros(2), np.eye(2), method="qr"),
     ValueError, "method"),
    (lambda: random.ball(KEY, -1), ValueError, "nonnegative"),
    (lambda: random.cauchy(random.split(KEY, 2)), ValueError, "single key"),
    (lambda: random.weibull_min(3, 1.0, 1.0), TypeError, "PRNG key"),
    (lambda: random.binomial(KEY, 5, "p"), TypeError, "p must"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_edge_parameters_follow_jax():
    assert int(random.poisson(KEY, 0.0)) == 0
    b = np.asarray(random.binomial(KEY, np.array([np.nan, -1.0, np.inf, 5.0], np.float32),
                                   np.array([0.5, 0.5, 0.5, np.nan], np.float32)))
    assert np.isnan(b[0]) and np.isnan(b[1]) and b[2] == np.inf and np.isnan(b[3])
    assert np.all(np.asarray(random.binomial(KEY, 7.0, 1.0, (5,))) == 7)
    assert np.all(np.asarray(random.binomial(KEY, 7.0, 0.0, (5,))) == 0)


RECORDED = {  # older samplers computed on the host, recorded into compiled code by key
    "laplace": lambda k: random.laplace(k, (3,)),
    "logistic": lambda k: random.logistic(k, (3,)),
    "rademacher": lambda k: random.rademacher(k, (3,)),
    "rayleigh": lambda k: random.rayleigh(k, 2.0, (3,)),
    "triangular": lambda k: random.triangular(k, 0.0, 0.5, 1.0, (3,)),
    "truncated_normal": lambda k: random.truncated_normal(k, -1.0, 1.0, (3,)),
    "orthogonal": lambda k: random.orthogonal(k, 3),
    "choice": lambda k: random.choice(k, 5, (3,)),
    "choice_weighted": lambda k: random.choice(k, 5, (3,), replace=False,
                                               p=jnp.array([0.1, 0.2, 0.3, 0.2, 0.2])),
    "categorical": lambda k: random.categorical(k, jnp.zeros(4)),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_older_samplers_on_keys_known_at_run_time(name):
    sampler = RECORDED[name]
    assert np.asarray(redraft.jit(sampler)(KEY)).tobytes() == np.asarray(sampler(KEY)).tobytes()
    keys = random.split(KEY, 2)
    looped = np.stack([np.asarray(sampler(one)) for one in keys])
    assert np.asarray(redraft.vmap(sampler)(keys)).tobytes() == looped.tobytes()


def test_older_samplers_with_parameters_known_at_run_time():
    logits = jnp.array([0.0, 1.0, 2.0])
    compiled = redraft.jit(lambda k, l: random.categorical(k, l, shape=(5,)))(KEY, logits)
    assert np.asarray(compiled).tolist() == np.asarray(
        random.categorical(KEY, logits, shape=(5,))).tolist()
    lower = jnp.float32(-0.5)
    compiled = redraft.jit(lambda k, lo: random.truncated_normal(k, lo, 2.0, (3,)))(KEY, lower)
    assert np.asarray(compiled).tobytes() == np.asarray(
        random.truncated_normal(KEY, -0.5, 2.0, (3,))).tobytes()


# parameter derivatives: JAX 0.10.2's jax.grad of the sum of 3 samples (PRNGKey(0)) at x
JAX_GRADS = {
    "lognormal": (lambda k, x: random.lognormal(k, x, (3,)), 0.7, 13.09191608428955),
    "pareto": (lambda k, x: random.pareto(k, x, (3,)), 2.5, -4.473112106323242),
    "weibull_scale": (lambda k, x: random.weibull_min(k, x, 1.5, (3,)), 2.0, 5.057024002075195),
    "weibull_concentration": (lambda k, x: random.weibull_min(k, 2.0, x, (3,)), 1.5,
                              -4.474192142486572),
    "dsm_loc": (lambda k, x: random.double_sided_maxwell(k, x, 2.0, (3,)), 0.5, 3.0),
    "dsm_scale": (lambda k, x: random.double_sided_maxwell(k, 0.5, x, (3,)), 2.0,
                  1.0373179912567139),
    "chisquare": (lambda k, x: random.chisquare(k, x, (3,)), 3.0, 2.7219126224517822),
    "t": (lambda k, x: random.t(k, x, (3,)), 4.0, 0.619453489780426),
    "beta_a": (lambda k, x: random.beta(k, x, 3.0, (3,)), 2.0, 0.433845192193985),
    "beta_b": (lambda k, x: random.beta(k, 2.0, x, (3,)), 3.0, -0.33046838641166687),
    "f_dfnum": (lambda k, x: random.f(k, x, 5.0, (3,)), 3.0, -0.022215545177459717),
    "f_dfden": (lambda k, x: random.f(k, 3.0, x, (3,)), 5.0, -0.11381471157073975),
    "dirichlet": (lambda k, x: random.dirichlet(k, x * jnp.array([1.0, 2.0, 3.0]), (2,))
                  * jnp.arange(3.0), 0.8, 0.11240452527999878),
}


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_parameter_gradients_match_jax(name):
    sampler, x, expected = JAX_GRADS[name]
    key = random.PRNGKey(0)
    g = redraft.grad(lambda x: sampler(key, x).sum())(np.float32(x))
    np.testing.assert_allclose(g, expected, rtol=2e-5)
    fwd = redraft.jacfwd(lambda x: sampler(key, x).sum())(np.float32(x))
    np.testing.assert_allclose(fwd, expected, rtol=2e-5)


def test_parameters_without_a_derivative_say_so():
    key = random.PRNGKey(0)
    with pytest.raises(NotImplementedError, match="wald"):
        redraft.grad(lambda m: random.wald(key, m, (3,)).sum())(1.5)
    with pytest.raises(NotImplementedError, match="cov"):
        redraft.grad(lambda c: random.multivariate_normal(
            key, jnp.zeros(2), c * jnp.eye(2), (3,)).sum())(1.0)
    assert float(redraft.grad(lambda lam: random.poisson(key, lam, (3,)).sum() * 1.0)(3.0)) == 0


def test_unbounded_parameters_end_as_jax_does():
    """An infinite rate or count can never be accepted by the rejection loops; JAX's loops run
    2**31 rounds and convert the NaN result to int as XLA does (NaN to 0, saturating)."""
    rates = np.array([np.inf, 3.0], np.float32)
    assert np.asarray(random.poisson(KEY, rates)).tolist()[0] == 0
    assert np.asarray(random.binomial(KEY, np.float32(np.inf), 0.3)) == np.inf
    assert np.asarray(random.geometric(KEY, np.float32(0.0))) == np.iinfo(np.int32).max
    assert np.asarray(random.poisson(KEY, 300.0, (3,), np.uint8)).tolist() == [255] * 3
