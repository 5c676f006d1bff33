"""redraft.scipy.stats and the new redraft.scipy.special functions against SciPy's values
(scipy_reference.json, made with SciPy 1.x in float64), plus derivatives against finite
differences and jit/vmap against eager."""
import importlib
import json
from pathlib import Path

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.scipy import special, stats

REF = json.loads((Path(__file__).parent / "scipy_reference.json").read_text())


def _arg(a):
    return jnp.asarray(np.float32(a)) if isinstance(a, list) else a


def _check(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-4, atol=2e-6)


@pytest.mark.parametrize("case", REF["stats"], ids=lambda c: f"{c['module']}.{c['fn']}")
def test_stats_against_scipy(case):
    module = importlib.import_module(f"redraft.scipy.stats.{case['module']}")
    out = getattr(module, case["fn"])(*[_arg(a) for a in case["args"]])
    assert out.dtype == np.float32
    _check(out, case["want"])


@pytest.mark.parametrize("case", REF["special"], ids=lambda c: c["fn"])
def test_special_against_scipy(case):
    out = getattr(special, case["fn"])(*[_arg(a) for a in case["args"]])
    _check(out, case["want"])


def _fd(f, x, eps=1e-2):
    return (float(f(x + eps)) - float(f(x - eps))) / (2 * eps)


@pytest.mark.parametrize("f,x", [
    (lambda v: stats.norm.logpdf(v, 0.5, 2.0), 0.3),
    (lambda v: stats.norm.cdf(v), -0.7),
    (lambda v: stats.t.logpdf(v, 3.0), 1.1),
    (lambda v: stats.gamma.logpdf(v, 2.5), 1.7),
    (lambda v: stats.gamma.cdf(v, 2.5), 1.7),
    (lambda v: stats.beta.logpdf(v, 2.0, 3.0), 0.4),
    (lambda v: stats.logistic.logpdf(v), 0.8),
    (lambda v: stats.cauchy.logcdf(v), -0.3),
    (lambda v: stats.poisson.logpmf(3.0, v), 2.2),
    (lambda v: special.gammainc(2.0, v), 3.0),
    (lambda v: special.betainc(2.0, 3.0, v), 0.6)], ids=range(11))
def test_derivatives_against_finite_differences(f, x):
    g = float(redraft.grad(f)(jnp.float32(x)))
    assert np.isclose(g, _fd(f, x), rtol=2e-2, atol=1e-3)


def mvn_logpdf(x, mean, cov):
    return stats.multivariate_normal.logpdf(x, mean, cov)


def test_multivariate_normal_grad_jit_vmap():
    cov = jnp.asarray(np.float32([[2.0, 0.3], [0.3, 1.0]]))
    mean = jnp.asarray(np.float32([0.1, -0.2]))
    x = jnp.asarray(np.float32([0.5, 0.4]))
    g = np.asarray(redraft.grad(mvn_logpdf)(x, mean, cov))
    want = -np.linalg.solve(np.asarray(cov), np.asarray(x) - np.asarray(mean))
    np.testing.assert_allclose(g, want, rtol=1e-4)
    xs = jnp.asarray(np.random.RandomState(0).randn(4, 2).astype(np.float32))
    eager = np.asarray(mvn_logpdf(xs, mean, cov))
    np.testing.assert_allclose(np.asarray(redraft.jit(mvn_logpdf)(xs, mean, cov)), eager,
                               rtol=1e-5)

    def one(v):
        return mvn_logpdf(v, mean, cov)

    np.testing.assert_allclose(np.asarray(redraft.vmap(one)(xs)), eager, rtol=1e-5)


def test_dirichlet_shape_errors():
    with pytest.raises(ValueError):
        stats.dirichlet.logpdf(jnp.ones((2,)), jnp.ones((2, 2)))
    with pytest.raises(ValueError):
        stats.dirichlet.logpdf(jnp.ones((5,)), jnp.ones((3,)))


def norm_cdf(x):
    return stats.gamma.cdf(x, 2.0) + stats.norm.logcdf(x)


def test_compiled_stats_agree_with_eager():
    x = jnp.asarray(np.float32([0.5, 1.0, 4.0]))
    np.testing.assert_allclose(np.asarray(redraft.jit(norm_cdf)(x)), np.asarray(norm_cdf(x)),
                               rtol=1e-5)
