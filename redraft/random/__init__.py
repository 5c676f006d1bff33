"""redraft.random: JAX's counter-based random numbers with explicit keys.

Every function takes a key and returns the same values JAX does for that key (Threefry-2x32
with `jax_threefry_partitionable=True`; 32-bit types, or 64-bit ones with x64 on): a sample
depends only on the key and the sample's position, so results are reproducible on every device
and under any transform.

Keys come in JAX's two forms and every function accepts both:

* `key(seed)` makes a typed key, a `PRNGKeyArray` of shape () that hides its two uint32 words
  (`key_data` shows them, `wrap_key_data` makes keys from them);
* `PRNGKey(seed)` makes a legacy raw key, a uint32 array of shape (2,).

`split` and `fold_in` return keys of the form they were given.

The package has one file per family: basic.py (keys, bits, uniform, normal, randint, choice
and the samplers made directly of them), continuous.py (cauchy, lognormal, pareto, maxwell,
weibull, wald), discrete.py (geometric, poisson, binomial, multinomial), gamma.py (gamma and
what is built on it), multivariate.py (multivariate_normal); xla_math.py repeats the float
math XLA runs (float32, and float64 for x64 mode) so the samples keep JAX's bits, and
many_keys.py hashes one key per element for the per-element rejection loops.
"""
from redraft.random.basic import (  # noqa: F401
    bernoulli, bits, categorical, choice, clone, exponential, fold_in, gumbel, key, key_data,
    key_dtype, key_impl, laplace, logistic, normal, orthogonal, permutation, PRNGKey,
    PRNGKeyArray, rademacher, randint, rayleigh, shuffle, split, triangular, truncated_normal,
    uniform, wrap_key_data,
)
from redraft.random.continuous import (  # noqa: F401
    cauchy, double_sided_maxwell, lognormal, maxwell, pareto, wald, weibull_min,
)
from redraft.random.discrete import binomial, geometric, multinomial, poisson  # noqa: F401
from redraft.random.gamma import (  # noqa: F401
    ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, random_gamma_grad,
    random_gamma_p, t,
)
from redraft.random.multivariate import multivariate_normal  # noqa: F401
