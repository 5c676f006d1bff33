"""redraft.scipy.stats: log-densities, densities and distribution functions of the
distributions in jax.scipy.stats, one module per distribution, written with redraft.numpy and
redraft.scipy.special so that grad, vmap and jit transform them."""
from redraft.scipy.stats import (bernoulli, beta, cauchy, dirichlet, expon,  # noqa: F401
                                 gamma, laplace, logistic, multinomial, multivariate_normal,
                                 norm, poisson, t, uniform)
