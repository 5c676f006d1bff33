"""redraft.scipy.optimize.minimize (BFGS) against known minima and scipy.optimize."""
import numpy as np
import pytest
import scipy.optimize as so

import redraft
import redraft.numpy as jnp
from redraft.scipy.optimize import OptimizeResults, minimize


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x, a, b):
    return 0.5 * x @ a @ x - b @ x


def test_rosenbrock_converges_to_ones():
    result = minimize(rosenbrock, jnp.zeros(4), method="BFGS")
    assert isinstance(result, OptimizeResults)
    assert bool(result.success) and int(result.status) == 0
    np.testing.assert_allclose(np.asarray(result.x), np.ones(4), atol=1e-3)
    assert float(result.fun) < 1e-6 and int(result.nfev) >= int(result.nit) > 0
    expected = so.minimize(lambda v: so.rosen(v), np.zeros(4), method="BFGS")
    np.testing.assert_allclose(np.asarray(result.x), expected.x, atol=1e-3)


def test_quadratic_solution_and_inverse_hessian():
    a = np.float32([[3.0, 1.0], [1.0, 2.0]])
    b = np.float32([1.0, 1.0])
    result = minimize(quadratic, jnp.zeros(2), (jnp.asarray(a), jnp.asarray(b)), method="bfgs")
    np.testing.assert_allclose(np.asarray(result.x), np.linalg.solve(a, b), atol=1e-5)
    np.testing.assert_allclose(np.asarray(result.hess_inv), np.linalg.inv(a), atol=1e-4)
    np.testing.assert_allclose(np.asarray(result.jac), 0.0, atol=1e-5)


def test_iteration_limit_and_errors():
    result = minimize(rosenbrock, jnp.zeros(4), method="BFGS", options={"maxiter": 3})
    assert int(result.status) == 1 and not bool(result.success) and int(result.nit) == 3
    with pytest.raises(ValueError, match="BFGS"):
        minimize(rosenbrock, jnp.zeros(4), method="Nelder-Mead")
    with pytest.raises(ValueError, match="1-dimensional"):
        minimize(rosenbrock, jnp.zeros((2, 2)), method="BFGS")


def _inside_jit(x0):
    return minimize(rosenbrock, x0, method="BFGS").x


def test_minimize_inside_jit_says_why_not():
    with pytest.raises(NotImplementedError, match="outside jit"):
        redraft.jit(_inside_jit)(jnp.zeros(2))


def test_the_counts_are_weakly_typed_ints_as_jaxs():
    r = minimize(lambda x: jnp.sum((x - 1.0) ** 2), jnp.zeros(2), method="BFGS")
    for count in (r.nit, r.nfev, r.njev, r.status):
        assert count.dtype == np.int32 and count.weak_type
