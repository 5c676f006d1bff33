"""Forward mode over reverse mode through a custom_vjp function whose value the gradient
reads (compiler/transforms/ad/vjp.py primal_by_rule): reverse-mode code computes the value
with the user's fwd rule, as JAX's does, so jvp, jacfwd and hessian of the gradient
differentiate fwd and bwd (ordinary functions) while jvp of the custom_vjp function itself,
or of a function calling it, is refused as JAX refuses it. Expected values are JAX 0.10.2's
(stored here; JAX is not imported) and closed forms of the rules."""
from functools import partial

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


@redraft.custom_vjp
def doubled_sin(x):
    return jnp.sin(x)


def _fwd(x):
    return jnp.sin(x), (jnp.cos(x), x)


def _bwd(res, g):
    c, _ = res
    return (g * c * 2.0,)  # twice the true derivative: the answers show the rule was used


doubled_sin.defvjp(_fwd, _bwd)


def times_x(x):
    return doubled_sin(x) * x


def weighted(x):
    return jnp.sum(doubled_sin(x) * x ** 2)


def looped(x):
    acc = x
    for _ in range(3):
        acc = doubled_sin(acc) * x
    return acc


X3 = np.array([0.3, 1.0, 2.0], np.float32)


def _weighted_hessian(x):
    """grad = 2 x^2 cos x + 2 x sin x under the rules; its derivative, diagonal."""
    return np.diag(4 * x * np.cos(x) - 2 * x * x * np.sin(x) + 2 * np.sin(x)
                   + 2 * x * np.cos(x))


def test_jvp_of_grad_differentiates_fwd_and_bwd():
    value, tangent = redraft.jvp(redraft.grad(times_x), (1.0,), (1.0,))
    # grad = sin x + 2 x cos x; its derivative 3 cos x - 2 x sin x (JAX: 1.9221, -0.0620)
    np.testing.assert_allclose(value, np.sin(1.0) + 2 * np.cos(1.0), rtol=1e-5)
    np.testing.assert_allclose(tangent, 3 * np.cos(1.0) - 2 * np.sin(1.0), rtol=1e-4)
    np.testing.assert_allclose(tangent, -0.0620, atol=1e-4)


def test_hessian_and_jacfwd_of_grad_eager_and_compiled():
    want = _weighted_hessian(X3.astype(np.float64))
    np.testing.assert_allclose(np.diag(want), [2.2575, 3.2418, -10.4495], atol=1e-3)  # JAX
    for got in (redraft.hessian(weighted)(X3), redraft.jacfwd(redraft.grad(weighted))(X3),
                redraft.jit(redraft.hessian(weighted))(X3),
                redraft.jit(redraft.jacfwd(redraft.grad(weighted)))(X3)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(redraft.hessian(times_x)(1.0), -0.0620, atol=1e-4)
    np.testing.assert_allclose(redraft.grad(redraft.grad(times_x))(1.0), -0.0620, atol=1e-4)


def test_jit_around_jvp_of_grad_and_jvp_of_jit_grad():
    want = (1.9221, -0.0620)  # JAX
    inside = redraft.jit(lambda x, t: redraft.jvp(redraft.grad(times_x), (x,), (t,)))
    np.testing.assert_allclose(inside(1.0, 1.0), want, atol=1e-4)
    outside = redraft.jvp(redraft.jit(redraft.grad(times_x)), (1.0,), (1.0,))
    np.testing.assert_allclose(outside, want, atol=1e-4)


def test_forward_over_reverse_through_a_loop_of_calls():
    np.testing.assert_allclose(redraft.jvp(redraft.grad(looped), (0.7,), (1.0,)),
                               (3.7680, 11.0259), rtol=1e-4)  # JAX


@partial(redraft.custom_vjp, nondiff_argnums=(0,))
def power_times(n, x, y):
    return x ** n * y


def _power_fwd(n, x, y):
    return x ** n * y, (x, y)


def _power_bwd(n, res, ct):
    x, y = res
    return (ct * n * x ** (n - 1) * y, ct * x ** n)


power_times.defvjp(_power_fwd, _power_bwd)


def with_nondiff(x, y):
    return jnp.sum(power_times(3, x, y) * jnp.sin(x))


def test_nondiff_argnums_hessian_against_jax():
    h = redraft.hessian(with_nondiff, argnums=(0, 1))(X3, X3 + 1)
    np.testing.assert_allclose(np.diagonal(h[0][0]), [1.3518, 14.8983, -19.0510], rtol=1e-4)
    np.testing.assert_allclose(np.diagonal(h[0][1]), [0.1056, 3.0647, 7.5824], rtol=1e-3)
    np.testing.assert_allclose(np.diagonal(h[1][0]), [0.1056, 3.0647, 7.5824], rtol=1e-3)
    np.testing.assert_allclose(h[1][1], np.zeros((3, 3)), atol=1e-6)


def test_grad_reads_the_value_fwd_gives_as_jax_does():
    """Where fwd's value differs from the function's own, the gradient's code uses fwd's
    (JAX: grad 2.2232, value 1.6829 at 1.0 for fwd = 2 sin)."""
    @redraft.custom_vjp
    def odd(x):
        return jnp.sin(x)
    odd.defvjp(lambda x: (2 * jnp.sin(x), x), lambda x, g: (g * jnp.cos(x),))
    value, grad = redraft.value_and_grad(lambda x: odd(x) * x)(1.0)
    np.testing.assert_allclose((value, grad), (1.6829, 2.2232), atol=1e-4)


def test_forward_mode_of_the_function_itself_is_still_refused():
    for fn in (doubled_sin, times_x):
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            redraft.jvp(fn, (1.0,), (1.0,))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        redraft.jacfwd(weighted)(X3)


def test_gradient_source_calls_the_fwd_rule():
    source = redraft.emit(redraft.grad(times_x))
    assert "doubled_sin_fwd_primal(x)" in source and "doubled_sin_bwd(" in source
