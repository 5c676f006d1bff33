"""Derivative rules of random numbers.

A sample is not a differentiable function of its key (redraft.random's samplers are recorded
as compiler/primitives/random.py's primitive, which carries no derivative). gamma and loggamma
are differentiable in their shape parameter `a` by implicit reparameterisation, as in JAX:
holding the sample's quantile fixed, d x / d a = -(dP/da)(a, x) / density(x; a), computed by
random_gamma_grad. The distributions built on gamma draws (beta, dirichlet, chisquare, f, t)
are single samplers here and carry no derivative in their parameters.
"""
import redraft.numpy as jnp
from redraft import random
from redraft.compiler.primitives.random import random_sample
from redraft.compiler.transforms import ad_helpers as ad
from redraft.compiler.transforms.registry import defjvp, defnondiff, defvjp
from redraft.random.gamma import random_gamma_grad

defnondiff(random_sample, "random bits are not a differentiable function of the key")
defnondiff(random_gamma_grad, "second derivatives of gamma samples are not implemented")

defjvp(random.gamma, None, lambda a_dot, ans, a: a_dot * random_gamma_grad(a, ans))
defvjp(random.gamma, None, lambda g, ans, a: ad.unbroadcast(g * random_gamma_grad(a, ans), a))


def _loggamma_grad(a, ans):
    """d log(x) / d a = (d x / d a) / x, with x = exp(ans) kept off zero as JAX does."""
    sample = jnp.maximum(jnp.exp(ans), jnp.finfo(ans.dtype).tiny)
    return random_gamma_grad(a, sample) / sample


defjvp(random.loggamma, None, lambda a_dot, ans, a: a_dot * _loggamma_grad(a, ans))
defvjp(random.loggamma, None,
       lambda g, ans, a: ad.unbroadcast(g * _loggamma_grad(a, ans), a))
