"""Which triangle a Cholesky factorisation reads decides its gradient, as in JAX:
jnp.linalg.cholesky symmetrises its input, so the gradient is symmetric; scipy.linalg's
cholesky/cho_factor read one triangle (as SciPy and JAX), so the gradient lies in that
triangle (the derivative of what is computed); multivariate_normal.logpdf factors the symmetrised
covariance, so its gradient is the symmetric 0.5 (C^-1 d d^T C^-1 - C^-1).
Closed forms are computed here in float64 NumPy."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.scipy import linalg as sla
from redraft.scipy import stats

RNG = np.random.RandomState(3)
_A = RNG.randn(4, 4)
SPD = (_A @ _A.T + 4 * np.eye(4)).astype(np.float32)


def _phi(x):
    return np.tril(x) - 0.5 * np.diag(np.diag(x))


def _primitive_gradient(c, g):
    """The cotangent of c for L = chol(c) and cotangent g of L (the rule, unsymmetrised)."""
    l = np.linalg.cholesky(c.astype(np.float64))
    li = np.linalg.inv(l)
    return li.T @ _phi(l.T @ g) @ li


def _loss_cotangent(c):
    return 3 * np.linalg.cholesky(c.astype(np.float64)) ** 2  # d sum(L**3) / dL


def _fold_lower(s):
    """The gradient of f(x) = g(tril(x) + tril(x, -1)^T) from g's gradient s."""
    return np.tril(s + s.T) - np.diag(np.diag(s))


def test_scipy_cholesky_reads_one_triangle_and_differentiates_exactly_that():
    lower_only = np.tril(SPD) + np.triu(RNG.randn(4, 4), 1).astype(np.float32)
    got = sla.cholesky(jnp.asarray(lower_only), lower=True)
    np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(SPD.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)
    g = redraft.grad(lambda c: jnp.sum(sla.cholesky(c, lower=True) ** 3))(jnp.asarray(SPD))
    want = _fold_lower(_primitive_gradient(SPD, _loss_cotangent(SPD)))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4, atol=1e-5)


def test_scipy_upper_cholesky_reads_the_upper_triangle():
    upper_only = np.triu(SPD) + np.tril(RNG.randn(4, 4), -1).astype(np.float32)
    c = jnp.asarray(upper_only)
    np.testing.assert_allclose(np.asarray(sla.cholesky(c)),
                               np.linalg.cholesky(SPD.astype(np.float64)).T, rtol=1e-5,
                               atol=1e-6)
    g = redraft.grad(lambda c: jnp.sum(sla.cholesky(c) ** 3))(c)
    want = _fold_lower(_primitive_gradient(SPD, _loss_cotangent(SPD))).T
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4, atol=1e-5)


def test_cho_solve_gradient_agrees_with_finite_differences():
    b = jnp.asarray(RNG.randn(4).astype(np.float32))

    def f(c):
        return jnp.sum(sla.cho_solve(sla.cho_factor(c, lower=True), b))
    g = np.asarray(redraft.grad(f)(jnp.asarray(SPD)), np.float64)
    d = RNG.randn(4, 4)
    eps = 1e-2
    fd = (float(f(jnp.asarray(SPD + eps * d))) - float(f(jnp.asarray(SPD - eps * d)))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), fd, rtol=2e-2)


def test_numpy_cholesky_gradient_is_symmetric():
    got = np.asarray(redraft.grad(lambda c: jnp.sum(jnp.linalg.cholesky(c) ** 3))(
        jnp.asarray(SPD)))
    s = _primitive_gradient(SPD, _loss_cotangent(SPD))
    np.testing.assert_allclose(got, (s + s.T) / 2, rtol=1e-4, atol=1e-5)


def test_multivariate_normal_covariance_gradient_is_symmetric():
    x = RNG.randn(4)
    mean = RNG.randn(4)
    got = np.asarray(redraft.grad(stats.multivariate_normal.logpdf, argnums=2)(
        jnp.asarray(x, jnp.float32), jnp.asarray(mean, jnp.float32), jnp.asarray(SPD)))
    ci = np.linalg.inv(SPD.astype(np.float64))
    d = (x - mean)[:, None]
    want = 0.5 * (ci @ d @ d.T @ ci - ci)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def test_multivariate_normal_broadcasts_points_over_a_batch_of_covariances():
    x = RNG.randn(2, 3, 4).astype(np.float32)
    covs = np.stack([SPD, 2 * SPD, SPD + np.eye(4, dtype=np.float32)])
    got = np.asarray(stats.multivariate_normal.logpdf(jnp.asarray(x), jnp.zeros(4),
                                                      jnp.asarray(covs)))
    want = np.empty((2, 3))
    for i in range(2):
        for j in range(3):
            c = covs[j].astype(np.float64)
            want[i, j] = -0.5 * (x[i, j] @ np.linalg.solve(c, x[i, j])
                                 + np.linalg.slogdet(2 * np.pi * c)[1])
    np.testing.assert_allclose(got, want, rtol=1e-4)
