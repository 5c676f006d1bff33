"""lax.custom_linear_solve, lax.custom_root and closure_convert: values are the solver's,
derivatives come from the equation solved (checked against the closed forms), not from the
solver's iterations."""
import functools

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


def test_linear_solve_batched_gradient():
    ds = np.stack([D, 2 * D])
    d_bar = redraft.vmap(redraft.grad(loss), in_axes=(0, None))(jnp.asarray(ds), jnp.asarray(B))
    np.testing.assert_allclose(d_bar, [-W * B / D ** 2, -W * B / (2 * D) ** 2], rtol=1e-6)


def richardson(matvec, b):
    """x <- x + (b - A x) / 5, 300 times: converges for these symmetric positive matrices."""
    def body(i, x):
        return x + (b - matvec(x)) / 5.0
    return lax.fori_loop(0, 300, body, jnp.zeros_like(b))


def matrix_loss(theta, b):
    def matvec(x):
        return jnp.stack([theta[0] * x[0] + x[1], x[0] + theta[1] * x[1]])
    x = lax.custom_linear_solve(matvec, b, richardson, symmetric=True)
    return jnp.sum(x * jnp.array([1.0, -2.0]))


def test_linear_solve_of_a_matrix_against_its_inverse():
    theta, b = np.array([3.0, 4.0], np.float32), np.array([1.0, 2.0], np.float32)
    a = np.array([[3.0, 1.0], [1.0, 4.0]])
    x = np.linalg.solve(a, b)
    w = np.linalg.solve(a.T, [1.0, -2.0])  # dL/db, and dL/dA = -w x^T
    expected = [-w[0] * x[0], -w[1] * x[1]]
    for fn in (redraft.grad(matrix_loss), redraft.jit(redraft.grad(matrix_loss))):
        np.testing.assert_allclose(fn(jnp.asarray(theta), jnp.asarray(b)), expected, rtol=1e-5)
    np.testing.assert_allclose(redraft.grad(matrix_loss, argnums=1)(jnp.asarray(theta),
                                                                    jnp.asarray(b)), w,
                               rtol=1e-5)


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


def test_root_compiled_batched_forward_and_second_order():
    a = np.array([2.0, 3.0], np.float32)
    x = np.array([float(root_of(v)) for v in a], np.float32)
    np.testing.assert_allclose(redraft.jit(root_of)(2.0), x[0], rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(redraft.grad(root_of))(2.0), 1 / (2 * x[0]),
                               rtol=1e-6)
    np.testing.assert_allclose(redraft.vmap(redraft.grad(root_of))(jnp.asarray(a)),
                               1 / (2 * x), rtol=1e-6)
    _, x_dot = redraft.jvp(root_of, (2.0,), (1.0,))
    np.testing.assert_allclose(x_dot, 1 / (2 * x[0]), rtol=1e-6)
    # d/da of 1/(2 x(a)), with dx/da = 1/(2x): -1/(4 x^3), through the rule again
    np.testing.assert_allclose(redraft.grad(redraft.grad(root_of))(2.0), -1 / (4 * x[0] ** 3),
                               rtol=1e-5)


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


@functools.partial(redraft.custom_vjp, nondiff_argnums=(0,))
def apply_with(f, x, c):
    return f(x, c)


def _apply_fwd(f, x, c):
    return f(x, c), (x, c)


def _apply_bwd(f, res, g):
    x, c = res
    _, pull = redraft.vjp(f, x, c)
    return pull(g)


apply_with.defvjp(_apply_fwd, _apply_bwd)


def through_converted(a, x):
    converted, consts = redraft.closure_convert(lambda y: a * jnp.sin(y), x)
    return apply_with(converted, x, consts[0])


def test_closure_convert_feeds_a_users_custom_vjp():
    """JAX's documented use: the captured `a` reaches the rule as an argument, so its
    cotangent comes from the rule."""
    for fn in (redraft.grad(through_converted, argnums=(0, 1)),
               redraft.jit(redraft.grad(through_converted, argnums=(0, 1)))):
        a_bar, x_bar = fn(2.0, 1.0)
        np.testing.assert_allclose([a_bar, x_bar], [np.sin(1.0), 2 * np.cos(1.0)], rtol=1e-6)
