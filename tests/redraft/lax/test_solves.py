"""lax.custom_linear_solve, lax.custom_root and closure_convert: values are the solver's,
derivatives come from the equation solved (checked against the closed forms), not from the
solver's iterations."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax


def diagonal_solve(matvec, b):
    return b / matvec(jnp.ones_like(b))


def scaled_solve(d, b):
    return lax.custom_linear_solve(lambda x: d * x, b, diagonal_solve, symmetric=True)


def loss(d, b):
    return jnp.sum(scaled_solve(d, b) * jnp.array([1.0, 2.0, 3.0]))


D = np.array([2.0, 4.0, 5.0], np.float32)
B = np.array([1.0, -1.0, 3.0], np.float32)
W = np.array([1.0, 2.0, 3.0], np.float32)


def test_linear_solve_value_and_reverse_mode():
    np.testing.assert_allclose(scaled_solve(jnp.asarray(D), jnp.asarray(B)), B / D, rtol=1e-6)
    d_bar, b_bar = redraft.grad(loss, argnums=(0, 1))(jnp.asarray(D), jnp.asarray(B))
    np.testing.assert_allclose(d_bar, -W * B / D ** 2, rtol=1e-6)
    np.testing.assert_allclose(b_bar, W / D, rtol=1e-6)


def test_linear_solve_compiled_reverse_mode():
    d_bar, b_bar = redraft.jit(redraft.grad(loss, argnums=(0, 1)))(jnp.asarray(D),
                                                                     jnp.asarray(B))
    np.testing.assert_allclose(d_bar, -W * B / D ** 2, rtol=1e-6)
    np.testing.assert_allclose(b_bar, W / D, rtol=1e-6)


def test_linear_solve_forward_mode():
    d_dot = np.array([1.0, 0.0, 2.0], np.float32)
    _, out_dot = redraft.jvp(scaled_solve, (jnp.asarray(D), jnp.asarray(B)),
                             (jnp.asarray(d_dot), jnp.zeros(3)))
    np.testing.assert_allclose(out_dot, -B * d_dot / D ** 2, rtol=1e-6)


def test_linear_solve_reverse_mode_needs_a_transpose_solve():
    def no_transpose(d, b):
        return jnp.sum(lax.custom_linear_solve(lambda x: d * x, b, diagonal_solve))
    try:
        redraft.grad(no_transpose)(jnp.asarray(D), jnp.asarray(B))
    except TypeError as e:
        assert "transpose_solve required" in str(e)
    else:
        raise AssertionError("expected a TypeError")


def three_newton_steps(f, x0):
    """Newton's method stopped early: the root it returns is off by about 1e-3, so the
    derivative through its iterations differs from the implicit one at that point."""
    def body(i, x):
        return x - f(x) / redraft.grad(f)(x)
    return lax.fori_loop(0, 3, body, x0)


def scalar_tangent_solve(g, y):
    return y / g(1.0)


def root_of(a):
    return lax.custom_root(lambda x: x * x - a, 1.0, three_newton_steps, scalar_tangent_solve)


def test_root_value_and_implicit_gradient():
    x = float(root_of(2.0))
    np.testing.assert_allclose(x, 1.4142157, rtol=1e-6)  # three steps from 1.0
    # f(x, a) = x^2 - a: dx/da = -f_a / f_x = 1 / (2 x) at the returned x
    np.testing.assert_allclose(redraft.grad(root_of)(2.0), 1.0 / (2.0 * x), rtol=1e-6)


def test_closure_convert_outside_a_transform_keeps_the_function():
    def f(x):
        return x * 3.0
    converted, consts = redraft.closure_convert(f, 1.0)
    assert consts == [] and float(converted(2.0)) == 6.0


def test_closure_convert_of_a_local_function_lifts_its_captured_values():
    def g(a, x):
        converted, consts = redraft.closure_convert(lambda y: a * y, x)
        return converted(x, consts[0])
    np.testing.assert_allclose(redraft.grad(g)(2.0, 3.0), 3.0)
    np.testing.assert_allclose(redraft.jit(g)(2.0, 3.0), 6.0)
