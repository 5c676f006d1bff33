"""Batching rules of random numbers: vmap over keys draws each example's numbers from its own
key, by a loop over the keys (the samples are exactly those of the unbatched calls)."""
from redraft.compiler.transforms.batch.rules.common import loop_returning
from redraft.compiler.transforms.batch.batching import defbatch

from redraft import random

_KEYS_OUT = ("key", "split", "fold_in", "wrap_key_data", "clone")
_VALUES_OUT = ("PRNGKey", "key_data", "bits", "uniform", "normal", "randint", "bernoulli",
               "permutation", "shuffle", "gumbel", "choice", "truncated_normal", "categorical",
               "exponential", "laplace", "logistic", "rademacher", "rayleigh", "triangular",
               "orthogonal", "cauchy", "lognormal", "pareto", "maxwell", "double_sided_maxwell",
               "weibull_min", "wald", "geometric", "poisson", "binomial", "multinomial",
               "gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
               "generalized_normal", "ball", "multivariate_normal")

for _name in _KEYS_OUT:
    defbatch(getattr(random, _name), loop_returning("any"))
for _name in _VALUES_OUT:
    if hasattr(random, _name):
        defbatch(getattr(random, _name), loop_returning("any"))

defbatch(random.random_gamma_grad, loop_returning("any"))
