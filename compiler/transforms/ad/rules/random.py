"""Derivative rules of random numbers.

A sample is not a differentiable function of its key (redraft.random's samplers are recorded
as compiler/primitives/random.py's primitive, whose family file marks it so). gamma and loggamma
are differentiable in their shape parameter `a` by implicit reparameterisation, as in JAX:
holding the sample's quantile fixed, d x / d a = -(dP/da)(a, x) / density(x; a), computed by
random_gamma_grad. The families built on gamma draws and the location/scale families get
JAX's derivatives from their formulas, recomputing the draws a sample was made from; the few
parameters without a rule here raise NotImplementedError when differentiated, never a zero.
"""
import redraft.numpy as jnp
from redraft import random
from redraft.compiler.primitives.registry import defjvp, defnondiff, defvjp
from redraft.compiler.transforms.runtime import ad
from redraft.random.gamma import random_gamma_grad

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


# ---- location, scale and shape parameters, by the derivative of each sampler's formula -------
# The rules recompute the draw a sample was made from (same key, same shape) where the formula
# needs it; each gives JAX's derivative, which its samplers get by plain AD.

def _lognormal_dsigma(key, ans):
    """x = exp(sigma z): dx/dsigma = x z."""
    return ans * random.normal(key, ans.shape, ans.dtype)


defjvp(random.lognormal, None, lambda s_dot, ans, key: s_dot * _lognormal_dsigma(key, ans))
defvjp(random.lognormal, None,
       lambda g, ans, key, sigma: ad.unbroadcast(g * _lognormal_dsigma(key, ans), sigma))


def _pareto_db(ans, b):
    """x = exp(e / b): dx/db = -x log(x) / b."""
    return -ans * jnp.log(ans) / b


defjvp(random.pareto, None, lambda b_dot, ans, b: b_dot * _pareto_db(ans, b))
defvjp(random.pareto, None, lambda g, ans, b: ad.unbroadcast(g * _pareto_db(ans, b), b))


def _weibull_dconcentration(ans, scale, concentration):
    """x = scale e**(1/c): dx/dc = -x log(x / scale) / c."""
    return -ans * jnp.log(ans / scale) / concentration


defjvp(random.weibull_min, None,
       lambda s_dot, ans, scale: s_dot * ans / scale,
       lambda c_dot, ans, scale, concentration:
           c_dot * _weibull_dconcentration(ans, scale, concentration))
defvjp(random.weibull_min, None,
       lambda g, ans, scale: ad.unbroadcast(g * ans / scale, scale),
       lambda g, ans, scale, concentration:
           ad.unbroadcast(g * _weibull_dconcentration(ans, scale, concentration),
                          concentration))

defjvp(random.double_sided_maxwell, None,
       lambda l_dot, ans, loc: l_dot * jnp.ones_like(ans),
       lambda s_dot, ans, loc, scale: s_dot * (ans - loc) / scale)
defvjp(random.double_sided_maxwell, None,
       lambda g, ans, loc: ad.unbroadcast(g, loc),
       lambda g, ans, loc, scale: ad.unbroadcast(g * (ans - loc) / scale, scale))


def _chisquare_ddf(ans, df):
    """x = 2 G(df / 2): dx/ddf = dG/da at a = df / 2."""
    return random_gamma_grad(df / 2, ans / 2)


defjvp(random.chisquare, None, lambda d_dot, ans, df: d_dot * _chisquare_ddf(ans, df))
defvjp(random.chisquare, None, lambda g, ans, df: ad.unbroadcast(g * _chisquare_ddf(ans, df), df))

# Integer-valued samples (floats for binomial and multinomial) have zero derivative in JAX too.
for _sampler in (random.geometric, random.poisson, random.binomial, random.multinomial):
    defnondiff(_sampler, "the samples are integers: piecewise constant in the parameters")


def _t_ddf(key, ans, df):
    """x = z sqrt(h / G(h)), h = df / 2: dx/ddf = x / 4 (1 / h - G'(h) / G)."""
    half = df / 2
    key_g = random.split(key)[1]
    g = random.gamma(key_g, half, ans.shape, ans.dtype)
    return ans / 4 * (1 / half - random_gamma_grad(half, g) / g)


defjvp(random.t, None, lambda d_dot, ans, key, df: d_dot * _t_ddf(key, ans, df))
defvjp(random.t, None, lambda g, ans, key, df: ad.unbroadcast(g * _t_ddf(key, ans, df), df))


def _beta_dlog(key, ans, param, which):
    """x = Ga / (Ga + Gb) from log-gamma draws: dx/da = x (1 - x) dlog(Ga)/da, and
    dx/db = -x (1 - x) dlog(Gb)/db."""
    sub = random.split(key)[which]
    log_g = random.loggamma(sub, param, ans.shape, ans.dtype)
    return ans * (1 - ans) * _loggamma_grad(jnp.broadcast_to(param, ans.shape), log_g)


defjvp(random.beta, None,
       lambda a_dot, ans, key, a: a_dot * _beta_dlog(key, ans, a, 0),
       lambda b_dot, ans, key, b: -b_dot * _beta_dlog(key, ans, b, 1))
defvjp(random.beta, None,
       lambda g, ans, key, a: ad.unbroadcast(g * _beta_dlog(key, ans, a, 0), a),
       lambda g, ans, key, b: ad.unbroadcast(-g * _beta_dlog(key, ans, b, 1), b))


def _f_dlog(key, ans, df, which):
    """x = (Cn / dfnum) / (Cd / dfden), C = 2 G(df / 2): dlog(x)/ddfnum =
    G'(dfnum / 2) / (2 Gn) - 1 / dfnum, and the negative of the same for dfden."""
    sub = random.split(key)[which]
    g = random.gamma(sub, df / 2, ans.shape, ans.dtype)
    return ans * (random_gamma_grad(df / 2, g) / (2 * g) - 1 / df)


defjvp(random.f, None,
       lambda n_dot, ans, key, dfnum: n_dot * _f_dlog(key, ans, dfnum, 1),
       lambda d_dot, ans, key, dfden: -d_dot * _f_dlog(key, ans, dfden, 0))
defvjp(random.f, None,
       lambda g, ans, key, dfnum: ad.unbroadcast(g * _f_dlog(key, ans, dfnum, 1), dfnum),
       lambda g, ans, key, dfden: ad.unbroadcast(-g * _f_dlog(key, ans, dfden, 0), dfden))


def _dirichlet_dlog(key, ans, alpha):
    """The derivative of each log-gamma draw in its own alpha (x = softmax of the draws)."""
    log_g = random.loggamma(key, alpha, ans.shape, ans.dtype)
    return _loggamma_grad(jnp.broadcast_to(alpha, ans.shape), log_g)


def _dirichlet_jvp(alpha_dot, ans, key, alpha):
    t = alpha_dot * _dirichlet_dlog(key, ans, alpha)
    return ans * (t - jnp.sum(ans * t, axis=-1, keepdims=True))


def _dirichlet_vjp(g, ans, key, alpha):
    inner = ans * (g - jnp.sum(ans * g, axis=-1, keepdims=True))
    return ad.unbroadcast(inner * _dirichlet_dlog(key, ans, alpha), alpha)


defjvp(random.dirichlet, None, _dirichlet_jvp)
defvjp(random.dirichlet, None, _dirichlet_vjp)

defjvp(random.multivariate_normal, None, lambda m_dot, ans, mean: m_dot * jnp.ones_like(ans))
defvjp(random.multivariate_normal, None, lambda g, ans, mean: ad.unbroadcast(g, mean))


def _no_derivative(sampler: str, parameter: str) -> None:
    raise NotImplementedError(f"redraft.random.{sampler} is not differentiable in "
                              f"`{parameter}` (JAX's is, by AD through its formula)")


defjvp(random.wald, None, lambda m_dot, ans: _no_derivative("wald", "mean"))
defvjp(random.wald, None, lambda g, ans: _no_derivative("wald", "mean"))
defjvp(random.multivariate_normal, None, None,
       lambda c_dot, ans: _no_derivative("multivariate_normal", "cov"))
defvjp(random.multivariate_normal, None, None,
       lambda g, ans: _no_derivative("multivariate_normal", "cov"))
defjvp(random.generalized_normal, None,
       lambda p_dot, ans: _no_derivative("generalized_normal", "p"))
defvjp(random.generalized_normal, None, lambda g, ans: _no_derivative("generalized_normal", "p"))
defjvp(random.ball, None, None, lambda p_dot, ans: _no_derivative("ball", "p"))
defvjp(random.ball, None, None, lambda g, ans: _no_derivative("ball", "p"))
