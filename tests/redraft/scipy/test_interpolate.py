"""redraft.scipy.interpolate.RegularGridInterpolator and redraft.scipy.integrate.trapezoid
against SciPy; the interpolator's call under grad (finite differences), jit and vmap."""
import numpy as np
import pytest
from scipy import integrate as si
from scipy import interpolate as sp_interp

import redraft
import redraft.numpy as jnp
from redraft.scipy.integrate import trapezoid
from redraft.scipy.interpolate import RegularGridInterpolator

XS = np.linspace(0, 1, 5)
YS = np.array([0.0, 0.5, 1.5, 2.0])
VALS = (XS[:, None] ** 2 + np.sin(YS[None, :])).astype(np.float32)
INSIDE = np.array([[0.3, 0.5], [0.9, 1.9], [0.0, 0.0], [1.0, 2.0], [0.55, 0.25]], np.float32)
OUTSIDE = np.array([[1.2, 0.3], [0.5, -1.0]], np.float32)


def _ours(**kw):
    return RegularGridInterpolator((jnp.asarray(XS, jnp.float32), jnp.asarray(YS, jnp.float32)),
                                   jnp.asarray(VALS), **kw)


def _scipy(**kw):
    return sp_interp.RegularGridInterpolator((XS, YS), VALS.astype(np.float64),
                                             bounds_error=False, **kw)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_values_inside_and_outside_the_grid_are_scipys(method):
    points = np.concatenate([INSIDE, OUTSIDE])
    got = np.asarray(_ours(method=method)(jnp.asarray(points)))
    np.testing.assert_allclose(got, _scipy(method=method)(points), rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32 and np.isnan(got[-2:]).all()


def test_fill_value_none_extrapolates_and_a_number_fills():
    got = _ours(fill_value=None)(jnp.asarray(OUTSIDE))
    np.testing.assert_allclose(np.asarray(got), _scipy(fill_value=None)(OUTSIDE), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(_ours(fill_value=-1.0)(jnp.asarray(OUTSIDE))),
                                  [-1.0, -1.0])


def test_query_shapes_tuples_and_trailing_value_axes():
    f = _ours()
    gx, gy = np.meshgrid([0.1, 0.7], [0.2, 1.0, 1.7], indexing="ij")
    got = f((jnp.asarray(gx), jnp.asarray(gy)))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(got), _scipy()((gx, gy)), rtol=1e-5)
    assert f(jnp.asarray([0.3, 0.5])).shape == (1,)  # one point, given flat
    stacked = RegularGridInterpolator((XS, YS), np.stack([VALS, 2 * VALS], -1))
    got = np.asarray(stacked(jnp.asarray(INSIDE)))
    assert got.shape == (5, 2)
    np.testing.assert_allclose(got[:, 1], 2 * got[:, 0], rtol=1e-6)


def test_integer_values_interpolate_in_the_default_float():
    f = RegularGridInterpolator((jnp.arange(3), jnp.arange(3)), jnp.arange(9).reshape(3, 3))
    got = f(jnp.asarray([[0.5, 1.5]]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), [3.0])


def test_call_under_grad_jit_and_vmap():
    f = _ours()
    p = np.array([0.3, 0.7], np.float32)
    g = np.asarray(redraft.grad(lambda p: f(p[None])[0])(jnp.asarray(p)))
    ref = _scipy()
    eps = 1e-4
    fd = [(ref(p + eps * e)[0] - ref(p - eps * e)[0]) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(redraft.jit(lambda q: f(q))(jnp.asarray(INSIDE))),
                               ref(INSIDE), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.vmap(lambda q: f(q[None])[0])(
        jnp.asarray(INSIDE))), ref(INSIDE), rtol=1e-5, atol=1e-6)


def test_unknown_method_and_bounds_error_are_refused():
    with pytest.raises(ValueError, match="cubic"):
        _ours(method="cubic")
    with pytest.raises(NotImplementedError):
        _ours(bounds_error=True)


def test_trapezoid_is_scipys():
    x = np.linspace(0, 1, 11)
    y = np.outer(x, x ** 2)
    np.testing.assert_allclose(float(trapezoid(jnp.asarray(x ** 2), jnp.asarray(x))),
                               si.trapezoid(x ** 2, x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(trapezoid(jnp.asarray(y), jnp.asarray(x), axis=0)),
                               si.trapezoid(y, x, axis=0), rtol=1e-5)
    np.testing.assert_allclose(float(trapezoid(jnp.arange(4), dx=0.5)),
                               si.trapezoid(np.arange(4), dx=0.5))


def test_every_submodule_is_an_attribute_of_the_package():
    import redraft.scipy as jsp
    assert float(jsp.stats.norm.logpdf(0.0)) == pytest.approx(-0.9189385)
    assert float(jsp.special.erf(0.5)) == pytest.approx(0.5204999, rel=1e-6)
    assert jsp.integrate.trapezoid is trapezoid
    with pytest.raises(AttributeError):
        jsp.no_such_module
