"""*args, **kwargs, keyword-only parameters and spreading at call sites, desugared against the
shape of each call (compiler/frontend/call_shape.py), and functools.wraps wrappers read as
the code that runs. Every transform is checked against NumPy or float64 central differences."""
import functools

import numpy as np
import pytest
from redraft.compiler.frontend.normalize import UnsupportedSyntaxError

import redraft
import redraft.numpy as jnp
from redraft.test_util import numerical_grad as fd_grad


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# ---- a functools.wraps decorator that changes the result --------------------------------------

def with_weight_decay(lam):
    def decorate(loss_fn):
        @functools.wraps(loss_fn)
        def wrapped(params, *args, **kwargs):
            return loss_fn(params, *args, **kwargs) + lam * jnp.sum(params ** 2)
        return wrapped
    return decorate


@with_weight_decay(0.25)
def line_fit_loss(w, x, y):
    return jnp.mean((x * w - y) ** 2)


def decayed_wrapper(f):
    @functools.wraps(f)
    def wrapper(w):
        return f(w) + 0.25 * w ** 2
    return wrapper


@decayed_wrapper
def quadratic(w):
    return (w - 3.0) ** 2 / 3.0


X = np.array([1.0, 2.0, 3.0], np.float32)
Y = np.array([2.0, 3.0, 7.0], np.float32)


def line_fit_np(w):
    return np.mean((X * w - Y) ** 2) + 0.25 * np.sum(w ** 2)


def test_grad_of_a_wraps_decorator_transforms_the_wrapper():
    # issue 8, case 2: the wrapped function's slope alone is 2 (w - 3) / 3
    close(redraft.grad(quadratic)(1.0), 2 * (1.0 - 3.0) / 3.0 + 0.5)
    close(redraft.jit(redraft.grad(quadratic))(1.0), 2 * (1.0 - 3.0) / 3.0 + 0.5)
    close(redraft.vmap(redraft.grad(quadratic))(np.array([1.0, 4.0], np.float32)),
          [2 * (1.0 - 3.0) / 3.0 + 0.5, 2 * (4.0 - 3.0) / 3.0 + 2.0])


def test_wraps_decorator_with_star_args_under_grad_jit_and_vmap():
    w = 1.5
    close(redraft.grad(line_fit_loss)(w, X, Y), fd_grad(line_fit_np, w), rtol=1e-4)
    close(redraft.jit(line_fit_loss)(w, X, Y), line_fit_np(w))
    close(redraft.jit(redraft.grad(line_fit_loss))(w, X, Y), fd_grad(line_fit_np, w),
          rtol=1e-4)
    ws = np.array([0.0, 1.5], np.float32)
    close(redraft.jit(redraft.vmap(line_fit_loss, in_axes=(0, None, None)))(ws, X, Y),
          [line_fit_np(0.0), line_fit_np(1.5)])
    close(redraft.vmap(redraft.grad(line_fit_loss), in_axes=(0, None, None))(ws, X, Y),
          [fd_grad(line_fit_np, 0.0), fd_grad(line_fit_np, 1.5)], rtol=1e-4)
    _, t = redraft.jvp(line_fit_loss, (np.float32(w), X, Y),
                       (np.float32(1.0), np.zeros(3, np.float32), np.zeros(3, np.float32)))
    close(t, fd_grad(line_fit_np, w), rtol=1e-4)


# ---- *args -------------------------------------------------------------------------------------

def poly(x, *coeffs):
    return sum(c * x ** i for i, c in enumerate(coeffs))


def test_star_args_parameter_under_every_transform():
    x = np.float32(1.5)
    close(poly(x, 1.0, -2.0, 0.5), 1.0 - 3.0 + 0.5 * 2.25)
    close(redraft.grad(poly)(x, 1.0, -2.0, 0.5), -2.0 + 2 * 0.5 * 1.5)
    close(redraft.jit(poly)(x, 1.0, -2.0, 0.5), 1.0 - 3.0 + 0.5 * 2.25)
    close(redraft.jit(redraft.grad(poly, argnums=(1, 2, 3)))(x, 1.0, -2.0, 0.5),
          [1.0, 1.5, 2.25])
    xs = np.array([-1.0, 0.5, 2.0], np.float32)
    close(redraft.jit(redraft.vmap(poly, in_axes=(0, None, None, None)))(xs, 1.0, -2.0, 0.5),
          1 - 2 * xs + 0.5 * xs ** 2)
    close(redraft.vmap(poly, in_axes=(None, None, 0))(x, 1.0, xs), 1.0 + xs * 1.5)
    # another arity is another specialisation
    close(redraft.grad(poly)(x, 1.0, -2.0, 0.5, 1.0), -2.0 + 1.5 + 3 * 2.25)


def test_star_args_of_a_lambda_forwarded():
    f = lambda *args: jnp.sum(jnp.sin(args[0]) * args[1])  # noqa: E731
    x = np.array([0.3, -0.7], np.float32)
    w = np.array([2.0, 0.5], np.float32)
    close(redraft.grad(f)(x, w), np.cos(x) * w)
    close(redraft.jit(redraft.grad(f, argnums=1))(x, w), np.sin(x))


# ---- keyword-only parameters and **kwargs -------------------------------------------------------

def ridge_loss(w, X, y, *, lam=0.1, power=2):
    r = X @ w - y
    return jnp.mean(r ** power) + lam * jnp.sum(w ** 2)


RNG = np.random.default_rng(0)
XR = RNG.normal(size=(6, 3)).astype(np.float32)
YR = RNG.normal(size=6).astype(np.float32)
WR = np.array([0.3, -0.2, 0.5], np.float32)


def ridge_np(w, lam=0.1, power=2):
    r = XR.astype(np.float64) @ w - YR
    return np.mean(r ** power) + lam * np.sum(w ** 2)


def test_keyword_only_parameters_with_defaults():
    close(redraft.grad(ridge_loss)(WR, XR, YR), fd_grad(ridge_np, WR), rtol=1e-4)
    close(redraft.jit(redraft.grad(ridge_loss))(WR, XR, YR, lam=0.5),
          fd_grad(lambda w: ridge_np(w, lam=0.5), WR), rtol=1e-4)
    close(redraft.jit(ridge_loss)(WR, XR, YR), ridge_np(WR))
    quartic = redraft.jit(ridge_loss, static_argnames="power")
    close(quartic(WR, XR, YR, power=4, lam=0.0), ridge_np(WR, lam=0.0, power=4), rtol=1e-4)
    lams = np.array([0.0, 1.0, 2.0], np.float32)
    close(redraft.jit(redraft.vmap(lambda lam: ridge_loss(WR, XR, YR, lam=lam)))(lams),
          [ridge_np(WR, lam=v) for v in lams], rtol=1e-4)
    v = np.array([1.0, 0.0, -1.0], np.float32)
    _, t = redraft.jvp(lambda w: ridge_loss(w, XR, YR, lam=0.5), (WR,), (v,))
    close(t, fd_grad(lambda w: ridge_np(w, lam=0.5), WR) @ v, rtol=1e-4)


def forwarding(f):
    def wrapped(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapped


@forwarding
def spring_energy(x, k=2.0):
    return 0.5 * k * jnp.sum(x ** 2) + jnp.sum(jnp.cos(x))


def test_forwarding_wrapper_with_star_args_and_kwargs():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    close(redraft.grad(spring_energy)(x), 2.0 * x - np.sin(x))
    close(redraft.jit(redraft.grad(spring_energy))(x, k=3.0), 3.0 * x - np.sin(x))
    close(redraft.grad(spring_energy)(x, 3.0), 3.0 * x - np.sin(x))
    close(redraft.jit(spring_energy)(x), np.sum(x ** 2) + np.sum(np.cos(x)))
    _, t = redraft.jvp(spring_energy, (x,), (np.ones(3, np.float32),))
    close(t, np.sum(2.0 * x - np.sin(x)))
    close(redraft.grad(forwarding(jnp.tanh))(0.5), 1 - np.tanh(0.5) ** 2)


def gathered_keywords(x, **options):
    return jnp.sum(options["scale"] * x ** 2) + options["shift"]


def test_kwargs_parameter_read_by_key():
    x = np.array([1.0, -2.0], np.float32)
    close(redraft.grad(gathered_keywords)(x, scale=3.0, shift=1.0), 6.0 * x)
    close(redraft.jit(gathered_keywords)(x, scale=3.0, shift=1.0), 3.0 * 5.0 + 1.0)


# ---- spreading at call sites --------------------------------------------------------------------

def affine_tanh(W, b, x, scale=1.0, shift=0.0):
    return scale * jnp.tanh(x @ W + b) + shift


def spread_loss(params, x, cfg):
    return jnp.sum(affine_tanh(*params, x, **cfg) ** 2)


def literal_spread(W, b, x):
    return jnp.sum(affine_tanh(*(W, b), x, **{"scale": 2.0}) ** 2)


def test_spread_of_tuple_and_dict_arguments():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(3, 2)).astype(np.float32)
    b = np.array([0.1, -0.2], np.float32)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    cfg = {"scale": 2.0, "shift": 0.5}

    def loss_np(W):
        return np.sum((2.0 * np.tanh(x.astype(np.float64) @ W + b) + 0.5) ** 2)

    gW, gb = redraft.jit(redraft.grad(spread_loss))((W, b), x, cfg)
    close(gW, fd_grad(loss_np, W), rtol=1e-4, atol=1e-4)
    gW, _ = redraft.grad(spread_loss)((W, b), x, cfg)
    close(gW, fd_grad(loss_np, W), rtol=1e-4, atol=1e-4)
    close(redraft.grad(literal_spread)(W, b, x),
          fd_grad(lambda W: np.sum((2.0 * np.tanh(x.astype(np.float64) @ W + b)) ** 2), W),
          rtol=1e-4, atol=1e-4)


def test_core_of_a_spread_names_the_arguments():
    """`f(*xs)` with xs of known length reads as an ordinary call in the emitted source."""
    src = redraft.emit(literal_spread, "core")
    assert "affine_tanh(W, b, x, scale=2.0)" in src


def spread_unknown_keys(x, d):
    e = d
    return affine_tanh(x, x, x, **e)


def test_spread_of_a_dict_with_unknown_keys_is_refused_at_the_users_line():
    with pytest.raises(UnsupportedSyntaxError, match="known"):
        redraft.grad(spread_unknown_keys)(np.ones(2, np.float32), {"scale": 1.0})


def default_then_star(x, k=2.0, *rest):
    return jnp.sum(k * x ** 2) + sum(rest)


def test_defaults_before_star_args():
    x = np.array([1.0, 2.0], np.float32)
    close(redraft.grad(default_then_star)(x), 4.0 * x)
    close(redraft.grad(default_then_star)(x, 3.0, 1.0, 2.0), 6.0 * x)
    close(redraft.jit(default_then_star)(x, 3.0, 1.0), 3.0 * 5.0 + 1.0)
    close(redraft.grad(default_then_star, argnums=2)(x, 3.0, 1.0), 1.0)


def test_default_values_are_the_ones_python_computed():
    """`lambda x, k=k: ...` in a comprehension: k's default is not a constant of the
    source, but Python computed it when it made the lambda."""
    waves = [lambda x, k=k: jnp.sin(k * x) for k in (1.0, 2.0, 3.0)]
    for k, f in zip((1.0, 2.0, 3.0), waves):
        close(redraft.grad(f)(0.4), k * np.cos(k * 0.4))
    close(redraft.jit(waves[1])(0.4), np.sin(0.8))
    xs = np.array([0.0, 0.4], np.float32)
    close(redraft.jit(redraft.vmap(redraft.grad(waves[2])))(xs), 3.0 * np.cos(3.0 * xs))
