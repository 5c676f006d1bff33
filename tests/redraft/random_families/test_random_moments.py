"""Large samples of each family against scipy.stats: mean and variance within a few standard
errors, and a Kolmogorov-Smirnov test for the continuous families (an independent check that
the algorithms sample the distribution they claim, beyond matching JAX's bits)."""
import numpy as np
import pytest
from scipy import stats

from redraft import random

N = 100_000
KEY = random.PRNGKey(2024)


def _check_moments(sample: np.ndarray, dist) -> None:
    sample = np.asarray(sample, np.float64)
    mean, var = dist.mean(), dist.var()
    assert abs(sample.mean() - mean) < 6 * np.sqrt(var / sample.size), (sample.mean(), mean)
    if np.isfinite(dist.moment(4)):  # the variance's own standard error needs a 4th moment
        fourth = dist.expect(lambda x: (x - mean) ** 4)
        se_var = np.sqrt(max(fourth - var ** 2, 0) / sample.size)
        assert abs(sample.var() - var) < 6 * se_var + 1e-12, (sample.var(), var)


CONTINUOUS = {
    "cauchy": (lambda k: random.cauchy(k, (N,)), stats.cauchy()),
    "lognormal": (lambda k: random.lognormal(k, 0.5, (N,)), stats.lognorm(0.5)),
    "pareto": (lambda k: random.pareto(k, 5.0, (N,)), stats.pareto(5.0)),
    "maxwell": (lambda k: random.maxwell(k, (N,)), stats.maxwell()),
    # |x - loc| / scale of a double-sided Maxwell sample is Maxwell distributed
    "double_sided_maxwell": (lambda k: np.abs(
        (np.asarray(random.double_sided_maxwell(k, 1.0, 2.0, (N,))) - 1.0) / 2.0),
        stats.maxwell()),
    "weibull_min": (lambda k: random.weibull_min(k, 2.0, 1.5, (N,)),
                    stats.weibull_min(1.5, scale=2.0)),
    "wald": (lambda k: random.wald(k, 1.5, (N,)), stats.invgauss(1.5)),
    "gamma": (lambda k: random.gamma(k, 2.5, (N,)), stats.gamma(2.5)),
    "gamma_small": (lambda k: random.gamma(k, 0.3, (N,)), stats.gamma(0.3)),
    "beta": (lambda k: random.beta(k, 2.0, 5.0, (N,)), stats.beta(2.0, 5.0)),
    "chisquare": (lambda k: random.chisquare(k, 3.0, (N,)), stats.chi2(3.0)),
    "f": (lambda k: random.f(k, 5.0, 12.0, (N,)), stats.f(5.0, 12.0)),
    "t": (lambda k: random.t(k, 6.0, (N,)), stats.t(6.0)),
    "generalized_normal": (lambda k: random.generalized_normal(k, 1.5, (N,)),
                           stats.gennorm(1.5)),
}

DISCRETE = {
    "geometric": (lambda k: random.geometric(k, 0.3, (N,)), stats.geom(0.3)),
    "poisson_knuth": (lambda k: random.poisson(k, 3.5, (N,)), stats.poisson(3.5)),
    "poisson_rejection": (lambda k: random.poisson(k, 40.0, (N,)), stats.poisson(40.0)),
    "binomial_inversion": (lambda k: random.binomial(k, 10.0, 0.3, (N,)),
                           stats.binom(10, 0.3)),
    "binomial_btrs": (lambda k: random.binomial(k, 200.0, 0.7, (N,)), stats.binom(200, 0.7)),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_family_matches_scipy(name):
    sampler, dist = CONTINUOUS[name]
    sample = np.asarray(sampler(KEY), np.float64)
    assert np.all(np.isfinite(sample))
    if name != "cauchy":  # no moments
        _check_moments(sample, dist)
    assert stats.kstest(sample, dist.cdf).pvalue > 1e-4


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_family_matches_scipy(name):
    sampler, dist = DISCRETE[name]
    sample = np.asarray(sampler(KEY))
    _check_moments(sample, dist)
    values, counts = np.unique(sample, return_counts=True)
    expected = dist.pmf(values) * sample.size
    common = expected > 50  # a chi-square test over the well-populated values
    observed, expected = counts[common], expected[common]
    statistic = np.sum((observed - expected) ** 2 / expected)
    assert stats.chi2(common.sum()).sf(statistic) > 1e-4


def test_double_sided_maxwell_is_symmetric():
    x = np.asarray(random.double_sided_maxwell(KEY, 1.0, 2.0, (N,)))
    assert abs(np.mean(x > 1.0) - 0.5) < 6 * np.sqrt(0.25 / N)


def test_dirichlet_and_multinomial_marginals():
    alpha = np.array([0.5, 1.5, 3.0])
    x = np.asarray(random.dirichlet(KEY, alpha, (N,)), np.float64)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(0), stats.dirichlet(alpha).mean(), atol=0.005)
    np.testing.assert_allclose(x.var(0), stats.dirichlet(alpha).var(), rtol=0.05)
    p = np.array([0.2, 0.3, 0.5], np.float32)
    counts = np.asarray(random.multinomial(KEY, 30.0, p, shape=(N, 3)))
    assert np.all(counts.sum(-1) == 30)
    np.testing.assert_allclose(counts.mean(0), 30 * p, rtol=0.01)
    np.testing.assert_allclose(counts.var(0), 30 * p * (1 - p), rtol=0.05)


def test_multivariate_normal_covariance():
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    cov = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.5]], np.float32)
    for method in ("cholesky", "svd", "eigh"):
        x = np.asarray(random.multivariate_normal(KEY, mean, cov, (N,), method=method))
        np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.03)


def test_ball_points_lie_in_the_ball_uniformly():
    d, p = 3, 2
    x = np.asarray(random.ball(KEY, d, p, (N,)), np.float64)
    radius = np.linalg.norm(x, axis=-1)
    assert np.all(radius <= 1 + 1e-6)
    # uniform in the unit 3-ball: P(radius <= r) = r ** 3
    assert stats.kstest(radius, lambda r: np.clip(r, 0, 1) ** d).pvalue > 1e-4


def test_loggamma_is_log_of_gamma():
    a = np.array([0.01, 0.5, 3.0], np.float32)
    g = np.asarray(random.gamma(KEY, a, (1000, 3)))
    lg = np.asarray(random.loggamma(KEY, a, (1000, 3)))
    both = g > 1e-30
    np.testing.assert_allclose(np.exp(lg[both]), g[both], rtol=1e-5)
