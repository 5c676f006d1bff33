"""lax.bessel_i0e and lax.bessel_i1e (redraft/lax/special.py) against SciPy, their
derivative rules to order 2, jit against eager and vmap against a loop."""
import numpy as np
import pytest
import scipy.special

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

POINTS = np.concatenate([np.linspace(-40, 40, 801), [0.0, 1e-30, 14.99, 15.0, 15.01, 1e4, -1e4,
                                                      np.inf, -np.inf]]).astype(np.float32)


@pytest.mark.parametrize("fn,ref", [(lax.bessel_i0e, scipy.special.i0e),
                                    (lax.bessel_i1e, scipy.special.i1e)])
def test_matches_scipy(fn, ref):
    got = fn(jnp.asarray(POINTS))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(POINTS.astype(np.float64)), rtol=2e-6, atol=1e-30)
    assert np.isnan(np.asarray(fn(jnp.asarray([np.nan], jnp.float32)))).all()


def test_integer_operands_are_refused():
    with pytest.raises(TypeError):
        lax.bessel_i0e(jnp.arange(3))


def _both(x):
    return jnp.sum(lax.bessel_i0e(x) * lax.bessel_i1e(2.0 * x))


def test_derivatives_to_order_two():
    x = np.array([-20.0, -3.0, -0.5, 0.25, 1.0, 4.0, 16.0], np.float32)
    check_grads(_both, (x,), 2, atol=1e-2, rtol=1e-2)
    slope = redraft.grad(lambda v: jnp.sum(lax.bessel_i1e(v)))(jnp.asarray([0.0]))
    np.testing.assert_allclose(slope, [0.5])
    got = redraft.grad(lambda v: jnp.sum(lax.bessel_i0e(v)))(jnp.asarray(x))
    want = scipy.special.i1e(x) - np.sign(x) * scipy.special.i0e(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_jit_matches_eager_and_vmap_matches_loop():
    x = jnp.asarray(np.linspace(-30, 30, 13).astype(np.float32))
    np.testing.assert_allclose(redraft.jit(_both)(x), _both(x), rtol=1e-6, atol=1e-6)
    rows = jnp.asarray(np.stack([np.linspace(-5, 5, 4), np.linspace(10, 20, 4)]).astype(
        np.float32))
    batched = redraft.vmap(redraft.grad(_both))(rows)
    for i in range(2):
        np.testing.assert_allclose(batched[i], redraft.grad(_both)(rows[i]), rtol=1e-6)
