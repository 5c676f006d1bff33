"""A Jacobian's source is one batched jvp (jacfwd) or backward pass (jacrev) over the
standard basis, for an array argument as for a pytree, with no run-time `vm.is_array`
branch; where vmap refuses the derivative, the loop over basis vectors, and its docstring
says why."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.test_util import numerical_grad
from redraft.transforms import _built_jacobian


def f(x):
    return jnp.sin(x) * x


def g(p):
    return jnp.sin(p["a"]) * p["b"]


def test_source_for_an_array_is_one_batched_jvp():
    source = _built_jacobian(f, 0, True).__redraft_source__
    assert "is_array" not in source and "if " not in source and "for " not in source
    assert "f_jvp_batched" in source and "ad.standard_basis(x)" in source


def test_source_for_a_pytree_is_one_batched_jvp_too():
    source = _built_jacobian(g, 0, True).__redraft_source__
    assert "is_array" not in source and "if " not in source and "for " not in source
    assert "g_jvp_batched" in source


def test_emit_is_the_batched_form_with_no_run_time_choice():
    for mode in ("jacfwd", "jacrev"):
        source = redraft.emit(f, mode)
        assert "is_array" not in source and "if " not in source and "for " not in source


def test_jacobians_match_finite_differences():
    x = np.linspace(-1.0, 1.0, 4)
    expected = np.stack([numerical_grad(lambda v, i=i: float(np.sin(v[i]) * v[i]), x)
                         for i in range(4)])
    got = redraft.jacfwd(f)(jnp.asarray(x, jnp.float32))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-5)
    a, b = np.array([0.3, -0.7]), np.array([1.5, 2.0])
    tree = redraft.jacfwd(g)({"a": jnp.asarray(a, jnp.float32), "b": jnp.asarray(b, jnp.float32)})
    np.testing.assert_allclose(np.asarray(tree["a"]), np.diag(np.cos(a) * b), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tree["b"]), np.diag(np.sin(a)), rtol=1e-5)


def _with_aux(x, y):
    return jnp.sin(x) * y ** 2 + x * y, {"aux": jnp.sum(x)}


def test_jacobians_with_aux_return_the_aux_itself():
    """jacfwd/jacrev(has_aux=True) return (Jacobian of the output, aux) as JAX's do; they
    took the Jacobian of the aux too (its derivative came back in its place)."""
    x = jnp.array([0.5, 1.0, -0.3])
    y = jnp.array([1.5, -2.0, 0.7])
    want_x = np.diag(np.cos(x) * y ** 2 + y)
    for jac in (redraft.jacfwd, redraft.jacrev):
        (jx, jy), aux = jac(_with_aux, argnums=(0, 1), has_aux=True)(x, y)
        np.testing.assert_allclose(jx, want_x, rtol=1e-6)
        np.testing.assert_allclose(jy, np.diag(2 * np.sin(x) * y + x), rtol=1e-6)
        np.testing.assert_allclose(aux["aux"], np.sum(x), rtol=1e-6)
        j0, aux0 = jac(_with_aux, has_aux=True)(x, y)
        np.testing.assert_allclose(j0, want_x, rtol=1e-6)
        np.testing.assert_allclose(aux0["aux"], np.sum(x), rtol=1e-6)


def test_hessian_in_several_arguments():
    """hessian(f, argnums=(0, 1)) is the 2x2 block of second derivatives (jacfwd of a
    jacrev with several argnums, which had no Core for the outer transform to read)."""
    def f(x, y):
        return jnp.sum(x ** 2 * y + y ** 3)
    x, y = jnp.array([1.0, 2.0]), jnp.array([0.5, -1.0])
    h = redraft.hessian(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(h[0][0], np.diag(2 * np.asarray(y)))
    np.testing.assert_allclose(h[0][1], np.diag(2 * np.asarray(x)))
    np.testing.assert_allclose(h[1][1], np.diag(6 * np.asarray(y)))
