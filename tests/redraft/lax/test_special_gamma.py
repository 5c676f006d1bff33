"""lax.igamma, igammac, igamma_grad_a, random_gamma_grad, polygamma, zeta and betainc
(redraft/lax/special.py): values against JAX 0.10.2's (stored below) and SciPy, lax's
dtype rule, derivatives against finite differences and SciPy, under jit and vmap."""
import numpy as np
import pytest
import scipy.special

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

A = [0.5, 2.0, 10.0, 3.0, 50.0, 0.1]
X = [0.1, 1.5, 30.0, 0.5, 45.0, 5.0]
# jax.lax's float32 results on these points (JAX 0.10.2, CPU)
JAX = {
    "igamma": [0.34527918696403503, 0.4421745538711548, 0.9999929070472717,
               0.014387673698365688, 0.2468019276857376, 0.9998560547828674],
    "igammac": [0.6547207832336426, 0.5578254461288452, 7.1217345976037905e-06,
                0.9856123328208923, 0.7531980872154236, 0.0001439389743609354],
    "igamma_grad_a": [-0.8229361772537231, -0.31348860263824463, -8.500182957504876e-06,
                      -0.02852022834122181, -0.04554324597120285, -0.0017539472319185734],
    "random_gamma_grad": [0.509765625, 0.9366390109062195, 1.6746938228607178,
                          0.3761754035949707, 0.9514099955558777, 10.54150390625],
}


@pytest.mark.parametrize("name", sorted(JAX))
def test_gamma_family_matches_jax(name):
    got = getattr(lax, name)(jnp.asarray(A), jnp.asarray(X))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, JAX[name], rtol=2e-3 if name == "random_gamma_grad"
                               else 2e-5, atol=1e-9)


def test_gamma_family_matches_scipy_in_float64():
    a = np.array([0.5, 2.0, 10.0, 3.0, 50.0, 0.1, 120.0, 7.5])
    x = np.array([0.1, 1.5, 30.0, 0.5, 45.0, 5.0, 130.0, 2.0])
    with redraft.enable_x64():
        p = lax.igamma(jnp.asarray(a), jnp.asarray(x))
        q = lax.igammac(jnp.asarray(a), jnp.asarray(x))
        da = lax.igamma_grad_a(jnp.asarray(a), jnp.asarray(x))
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, scipy.special.gammainc(a, x), rtol=1e-12)
    np.testing.assert_allclose(q, scipy.special.gammaincc(a, x), rtol=1e-10)
    h = 1e-6
    fd = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(da, fd, rtol=1e-6, atol=1e-12)


def test_edges_and_domain():
    got = lax.igamma(jnp.asarray([3.0, -1.0, 2.0]), jnp.asarray([0.0, 1.0, -1.0]))
    assert got[0] == 0.0 and np.isnan(got[1]) and np.isnan(got[2])
    assert lax.igammac(3.0, 0.0) == 1.0
    assert lax.igamma_grad_a(3.0, 0.0) == 0.0
    assert np.isnan(lax.igamma_grad_a(-1.0, 2.0))


def test_polygamma_zeta_betainc_match_jax():
    got = lax.polygamma(jnp.asarray([0.0, 1.0, 2.0, 3.0, 4.0]),
                        jnp.asarray([0.5, 1.5, 2.5, 4.0, 0.7]))
    np.testing.assert_allclose(got, [-1.9635100364685059, 0.934802234172821,
                                     -0.2362041175365448, 0.04486536234617233,
                                     -144.70838928222656], rtol=2e-5)
    assert np.isnan(lax.polygamma(1.5, 2.0))  # m must be a whole number
    got = lax.zeta(jnp.asarray([2.0, 3.0, 1.5, 4.5]), jnp.asarray([1.0, 2.0, 0.5, 3.0]))
    np.testing.assert_allclose(got, [1.644934058189392, 0.2020569145679474, 4.776538372039795,
                                     0.010513336397707462], rtol=2e-6)
    assert lax.zeta(1.0, 1.0) == np.inf and np.isnan(lax.zeta(0.5, 1.0))
    got = lax.betainc(jnp.asarray([0.5, 2.0, 10.0, 1.5]), jnp.asarray([0.5, 3.0, 2.0, 7.0]),
                      jnp.asarray([0.1, 0.5, 0.9, 0.2]))
    np.testing.assert_allclose(got, [0.20483292639255524, 0.6874998211860657,
                                     0.6973570585250854, 0.6425384879112244], rtol=1e-5)


@pytest.mark.parametrize("call", [lambda: lax.igamma(2, 1.5), lambda: lax.polygamma(1, 2.0),
                                  lambda: lax.zeta(jnp.arange(3), 1.0),
                                  lambda: lax.betainc(1.0, 2, 0.5)])
def test_integer_operands_are_refused_as_in_jax(call):
    with pytest.raises(TypeError, match="floating"):
        call()


def test_mixed_strong_dtypes_are_refused_and_weak_scalars_follow():
    with redraft.enable_x64():
        with pytest.raises(TypeError, match="same dtype"):
            lax.igamma(jnp.float32(2.0), jnp.float64(1.5))
        assert lax.igamma(jnp.float32(2.0), 1.5).dtype == np.float32
    assert lax.igamma(2.0, 1.5).weak_type


def _gamma_mix(a, x):
    return jnp.sum(lax.igamma(a, x) * 2.0 + lax.igammac(a, x) * x)


def test_igamma_derivatives_match_jax_and_finite_differences():
    da, dx = redraft.grad(lax.igamma, argnums=(0, 1))(2.0, 1.5)
    np.testing.assert_allclose([da, dx], [-0.31348860263824463, 0.3346952497959137], rtol=2e-5)
    a = jnp.asarray([0.5, 2.0, 4.0])
    x = jnp.asarray([0.3, 1.5, 6.0])
    check_grads(_gamma_mix, (a, x), 1, atol=2e-2, rtol=2e-2)
    check_grads(lambda v: _gamma_mix(a, v), (x,), 2, atol=2e-2, rtol=2e-2)


def _x_only(x):
    return jnp.sum(lax.polygamma(2.0, x) + lax.zeta(3.0, x) + lax.betainc(2.0, 3.0, x / 8.0)
                   + lax.igamma_grad_a(2.0, x))


def test_x_derivatives_to_order_two():
    x = jnp.asarray([0.7, 1.5, 3.0])
    check_grads(_x_only, (x,), 2, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(redraft.grad(lambda v: lax.polygamma(2.0, v))(1.5),
                               1.4090921878814697, rtol=1e-5)
    np.testing.assert_allclose(redraft.grad(lambda v: lax.betainc(2.0, 3.0, v))(0.3),
                               1.7640011310577393, rtol=1e-5)


def test_arguments_without_a_derivative_say_so():
    with pytest.raises(Exception, match="no reverse rule for its argument `m`"):
        redraft.grad(lambda m: lax.polygamma(m, 2.0))(1.0)
    with pytest.raises(Exception, match="no reverse rule for its argument `a`"):
        redraft.grad(lambda a: lax.betainc(a, 2.0, 0.5))(1.0)


def test_jit_and_vmap_agree_with_eager():
    a = jnp.asarray([0.5, 2.0, 4.0])
    x = jnp.asarray([0.3, 1.5, 6.0])
    eager = _gamma_mix(a, x)
    np.testing.assert_allclose(redraft.jit(_gamma_mix)(a, x), eager, rtol=1e-5)
    per = redraft.vmap(lambda u, v: _gamma_mix(u, v))(a, x)
    loop = [_gamma_mix(a[i], x[i]) for i in range(3)]
    np.testing.assert_allclose(per, loop, rtol=1e-5)
    grads = redraft.jit(redraft.vmap(redraft.grad(_x_only)))(x)
    np.testing.assert_allclose(grads, [redraft.grad(_x_only)(x[i]) for i in range(3)],
                               rtol=1e-4)
