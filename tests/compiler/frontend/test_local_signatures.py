"""Local functions with keyword-only parameters, *args and **kwargs, called inside a
transformed function: each call is bound as Python binds it when the source is read. The
expected values are JAX 0.10.2's for the same functions (jax.grad / jax.vmap), stored here."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax

X = jnp.arange(3.0)


def keyword_only_with_default(x):
    def inner(a, *, scale=2.0):
        return a * scale
    return inner(x).sum() + inner(x, scale=3.0).sum()


def keyword_only_required(x):
    def inner(a, *, p, q=1.0):
        return a ** p * q
    return inner(x, p=2).sum() + inner(x, q=x, p=3).sum()


def gathers_positional(x):
    def total(*xs):
        s = 0.0
        for v in xs:
            s = s + v
        return s * len(xs)
    return jnp.sum(total(x, x * 2) + total(x))


def gathers_keywords(x):
    def f(a, **kw):
        return a * kw["w"] + kw.get("b", 0.0) + len(kw)
    return jnp.sum(f(x, w=x) + f(x, w=2.0, b=x))


def every_kind_of_parameter(x):
    def f(a, b=1.0, *rest, k, m=2.0, **kw):
        return a * b + sum(rest) * k + m * kw.get("z", 1.0)
    return jnp.sum(f(x, 2.0, x, x, k=3.0, z=x) + f(x, k=x))


def spreads_what_it_gathers(x):
    def g(a, b):
        return a * b

    def f(*args, **kw):
        return g(*args, **kw)
    return jnp.sum(f(x, b=x))


def keyword_only_and_captured(x):
    w = x * 2

    def f(a, *, s=1.0):
        return a * w * s
    return jnp.sum(f(x, s=x))


def default_computed_in_the_caller(x):
    c = jnp.sum(x)

    def f(a, *, s=c):
        return a * s
    return jnp.sum(f(x)) + jnp.sum(f(x, s=2.0))


def lambda_with_keyword_only(x):
    f = lambda a, *, s=2.0: a * s  # noqa: E731
    return jnp.sum(f(x, s=x))


def loop_body_with_keyword_only(x):
    def body(i, c, *, k=2.0):
        return c * k + i
    return lax.fori_loop(0, 3, body, x).sum()


def vmapped_local_with_keyword_only(x):
    def inner(a, *, scale=2.0):
        return a * scale
    return redraft.vmap(inner)(x).sum()


@pytest.mark.parametrize("fn, expected", [
    (keyword_only_with_default, [5.0, 5.0, 5.0]),
    (keyword_only_required, [0.0, 6.0, 36.0]),
    (gathers_positional, [7.0, 7.0, 7.0]),
    (gathers_keywords, [3.0, 5.0, 7.0]),
    (every_kind_of_parameter, [11.0, 11.0, 11.0]),
    (spreads_what_it_gathers, [0.0, 2.0, 4.0]),
    (keyword_only_and_captured, [0.0, 6.0, 24.0]),
    (default_computed_in_the_caller, [8.0, 8.0, 8.0]),
    (lambda_with_keyword_only, [0.0, 2.0, 4.0]),
    (loop_body_with_keyword_only, [8.0, 8.0, 8.0]),
])
def test_grad_matches_jax(fn, expected):
    np.testing.assert_allclose(np.asarray(redraft.grad(fn)(X)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(fn)(X)), np.asarray(fn(X)), rtol=1e-6)


def test_vmap_of_a_local_function_with_keyword_only_parameters():
    """Used as a value (vmap of it), its keyword-only parameters take their defaults."""
    got = redraft.grad(vmapped_local_with_keyword_only)(jnp.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(got), np.full((2, 3), 2.0))


def batched_keyword(x):
    def inner(a, *, scale=2.0):
        return a * scale
    return inner(x, scale=x).sum()


def test_vmap_of_a_function_calling_a_keyword_only_local():
    np.testing.assert_allclose(np.asarray(redraft.vmap(batched_keyword)(jnp.ones((2, 3)))),
                               [3.0, 3.0])


def scaled_square(x, *, scale=2.0):
    return jnp.sum(x * x * scale)


def test_top_level_keyword_only_parameter_under_grad_and_vmap():
    """grad passes keywords through and differentiates the first positional argument;
    vmap maps keyword arguments along axis 0, as JAX does."""
    np.testing.assert_allclose(np.asarray(redraft.grad(scaled_square)(X, scale=3.0)),
                               [0.0, 6.0, 12.0])
    np.testing.assert_allclose(np.asarray(redraft.grad(scaled_square)(X)), [0.0, 4.0, 8.0])
    got = redraft.vmap(scaled_square)(jnp.ones((2, 3)), scale=jnp.arange(2.0))
    np.testing.assert_allclose(np.asarray(got), [0.0, 3.0])


def too_many_positional(x):
    def inner(a, *, scale=2.0):
        return a * scale
    return inner(x, 3.0).sum()


def unexpected_keyword(x):
    def inner(a, *, scale=2.0):
        return a * scale
    return inner(x, scal=3.0).sum()


def missing_keyword_only(x):
    def inner(a, *, scale):
        return a * scale
    return inner(x).sum()


@pytest.mark.parametrize("fn, message", [
    (too_many_positional, "inner() takes 1 positional argument but 2 were given"),
    (unexpected_keyword, "inner() got an unexpected keyword argument 'scal'"),
    (missing_keyword_only, "inner() missing 1 required keyword-only argument: 'scale'"),
])
def test_a_bad_call_raises_pythons_type_error_at_the_users_line(fn, message):
    with pytest.raises(TypeError) as info:
        redraft.grad(fn)(X)
    text = str(info.value)
    assert text.startswith(f"{__file__}:")
    assert message in text


def keyword_only_required_as_value(x):
    def inner(a, *, scale):
        return a * scale
    return redraft.vmap(inner)(x).sum()


def test_a_required_keyword_only_local_used_as_a_value_is_refused():
    with pytest.raises(SyntaxError, match="keyword-only parameter 'scale' has no constant"):
        redraft.grad(keyword_only_required_as_value)(jnp.ones((2, 3)))
