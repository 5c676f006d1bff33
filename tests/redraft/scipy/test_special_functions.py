"""redraft.scipy.special's Bessel, error-family, exponential-integral, zeta and hypergeometric
functions against scipy.special (float64 references), their derivatives against the known
closed forms and finite differences, and their jit and vmap forms against the eager ones."""
import math

import numpy as np
import pytest
import scipy.special as sp

import redraft
import redraft.numpy as jnp
from redraft.scipy import special
from redraft.test_util import check_grads

REAL = np.float32([-20, -4.5, -1.3, -0.5, 0.0, 0.3, 1.0, 1.7, 2.5, 3.9, 4.1, 7.0, 14.9, 15.1,
                   30.0])
POSITIVE = np.float32([0.01, 0.3, 0.99, 1.01, 1.9, 2.1, 3.9, 4.2, 7.0, 14.9, 35.0, 45.0])
UNIT = np.float32([0.0, 0.05, 0.3, 0.5, 0.9, 1.0, 1.4, 1.6, 2.0, 2.5, 10.0, 100.0])

# name, arguments, reference, relative tolerance
UNARY = [
    ("i0", REAL, sp.i0, 2e-6),
    ("i0e", REAL, sp.i0e, 2e-6),
    ("i1", REAL, sp.i1, 2e-6),
    ("i1e", REAL, sp.i1e, 2e-6),
    ("erfcx", REAL[1:], sp.erfcx, 2e-6),
    ("dawsn", REAL, sp.dawsn, 2e-6),
    ("exp1", POSITIVE, sp.exp1, 1e-5),
    ("expi", np.concatenate([-POSITIVE[:8], POSITIVE]), sp.expi, 1e-5),
    ("spence", UNIT, sp.spence, 2e-6),
]


@pytest.mark.parametrize("name,x,reference,rtol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_scipy(name, x, reference, rtol):
    out = getattr(special, name)(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), reference(x.astype(np.float64)), rtol=rtol,
                               atol=1e-30)


def test_integer_arguments_become_float32():
    assert special.i0(np.int32([1, 2])).dtype == np.float32
    assert special.expn(np.int32(2), np.int32(3)).dtype == np.float32


def test_pairs_match_scipy():
    for name in ("fresnel", "sici"):
        got = getattr(special, name)(REAL)
        want = getattr(sp, name)(REAL.astype(np.float64))
        for g, w in zip(got, want):
            assert g.dtype == np.float32
            np.testing.assert_allclose(np.asarray(g), w, rtol=5e-6, atol=1e-6)
    si, ci = special.sici(np.float32(0.0))
    assert float(si) == 0.0 and float(ci) == -math.inf


def test_expn_matches_scipy_over_orders_and_edges():
    n = np.int32([0, 1, 2, 3, 5, 10])[:, None]
    x = np.float32([0.0, 0.01, 0.5, 1.0, 1.5, 4.0, 20.0])[None, :]
    np.testing.assert_allclose(np.asarray(special.expn(n, x)), sp.expn(n, x.astype(np.float64)),
                               rtol=1e-5)
    assert np.isnan(np.asarray(special.expn(np.int32([-1, 2]), np.float32([1.0, -1.0])))).all()


def test_zeta_polygamma_bernoulli():
    s = np.float32([1.1, 2.0, 3.0, 4.5, 10.0, 1.0, 0.5])
    q = np.float32([0.3, 1.0, 2.5, 0.01, 7.0, 1.0, 2.0])
    np.testing.assert_allclose(np.asarray(special.zeta(s, q)), sp.zeta(s, q), rtol=2e-6)
    np.testing.assert_allclose(np.asarray(special.zeta(s[:5])), sp.zeta(s[:5]), rtol=2e-6)
    n = np.int32([0, 1, 2, 3, 4, 1])
    x = np.float32([0.3, 1.0, 2.5, 0.1, 7.0, 20.0])
    np.testing.assert_allclose(np.asarray(special.polygamma(n, x)), sp.polygamma(n, x),
                               rtol=2e-6)
    with pytest.raises(ValueError, match="integer n"):
        special.polygamma(np.float32(1.0), x)
    np.testing.assert_allclose(np.asarray(special.bernoulli(12)), sp.bernoulli(12), rtol=1e-6)
    assert special.bernoulli(12).shape == (13,)


def test_owens_t_matches_scipy():
    h = np.float32([-2.0, -0.5, 0.0, 0.3, 1.0, 3.0, 6.0, 0.7])
    a = np.float32([0.5, -2.0, 3.0, 0.9, 1.5, -0.2, 10.0, 1.0])
    np.testing.assert_allclose(np.asarray(special.owens_t(h, a)), sp.owens_t(h, a), rtol=5e-6,
                               atol=1e-9)


def test_hypergeometric_match_scipy():
    a = np.float32([0.5, 1.0, 2.0, -1.5, 3.0, 0.2])
    b = np.float32([1.5, 2.0, 0.7, 2.5, 4.0, 5.0])
    x = np.float32([-10.0, -1.0, 0.0, 2.0, 15.0, 30.0])
    np.testing.assert_allclose(np.asarray(special.hyp1f1(a, b, x)),
                               sp.hyp1f1(a.astype(float), b.astype(float), x.astype(float)),
                               rtol=1e-5)
    c = np.float32([2.5, 3.0, 1.5, 0.5, 6.0, 7.0])
    x2 = np.float32([-5.0, -0.5, 0.0, 0.3, 0.9, 1.0])
    np.testing.assert_allclose(np.asarray(special.hyp2f1(a, b, c, x2)),
                               sp.hyp2f1(a.astype(float), b.astype(float), c.astype(float),
                                         x2.astype(float)), rtol=2e-6)
    assert np.isnan(float(special.hyp2f1(1.0, 1.0, 2.0, 1.5)))


def test_bessel_jn_matches_scipy():
    z = np.float32([0.0, 0.1, 1.0, 2.4048, 5.0, 10.0, 20.0, -3.0])
    out = special.bessel_jn(z, v=4)
    assert out.shape == (5, 8) and out.dtype == np.float32
    want = np.stack([sp.jv(k, z.astype(np.float64)) for k in range(5)])
    np.testing.assert_allclose(np.asarray(out), want, atol=2e-7)
    with pytest.raises(ValueError, match="n_iter"):
        special.bessel_jn(z, v=4, n_iter=3)


# ---- derivatives -----------------------------------------------------------------------------

def _derivative(fn, x):
    return np.asarray(redraft.vmap(redraft.grad(fn))(x))


CLOSED_FORM_DERIVATIVES = [
    ("i0", lambda x: special.i0(x), np.float32([-3.0, 0.5, 2.0, 16.0]), sp.i1),
    ("erfcx", lambda x: special.erfcx(x), np.float32([-1.0, 0.5, 3.0, 6.0]),
     lambda x: 2 * x * sp.erfcx(x) - 2 / np.sqrt(np.pi)),
    ("dawsn", lambda x: special.dawsn(x), np.float32([-1.0, 0.5, 3.0, 6.0]),
     lambda x: 1 - 2 * x * sp.dawsn(x)),
    ("expi", lambda x: special.expi(x), np.float32([-2.0, 0.5, 3.0, 50.0]),
     lambda x: np.exp(x) / x),
    ("exp1", lambda x: special.exp1(x), np.float32([0.3, 0.9, 1.5, 6.0]),
     lambda x: -np.exp(-x) / x),
    ("si", lambda x: special.sici(x)[0], np.float32([-3.0, 0.5, 1.5, 6.0]),
     lambda x: np.sin(x) / x),
    ("fresnel_c", lambda x: special.fresnel(x)[1], np.float32([-3.0, 0.5, 1.2, 2.0]),
     lambda x: np.cos(np.pi * x * x / 2)),
    ("spence", lambda x: special.spence(x), np.float32([0.2, 0.7, 1.7, 3.0]),
     lambda x: np.log(x) / (1 - x)),
    ("zeta_q", lambda q: special.zeta(3.0, q), np.float32([0.5, 1.0, 4.0]),
     lambda q: -3 * sp.zeta(4.0, q)),
    ("hyp1f1", lambda x: special.hyp1f1(0.5, 1.5, x), np.float32([-2.0, 0.5, 4.0]),
     lambda x: (0.5 / 1.5) * sp.hyp1f1(1.5, 2.5, x)),
    ("hyp2f1", lambda x: special.hyp2f1(0.5, 1.0, 2.0, x), np.float32([-0.5, 0.3]),
     lambda x: 0.25 * sp.hyp2f1(1.5, 2.0, 3.0, x)),
]


@pytest.mark.parametrize("name,fn,x,reference", CLOSED_FORM_DERIVATIVES,
                         ids=[c[0] for c in CLOSED_FORM_DERIVATIVES])
def test_derivative_matches_closed_form(name, fn, x, reference):
    np.testing.assert_allclose(_derivative(fn, x), reference(x.astype(np.float64)), rtol=2e-4,
                               atol=1e-6)


SECOND_ORDER = [
    ("i1e", lambda x: special.i1e(x), np.float32([-3.0, 0.5, 2.0])),
    ("dawsn", lambda x: special.dawsn(x), np.float32([0.5, 2.0, 5.0])),
    ("expn", lambda x: special.expn(2, x), np.float32([0.5, 2.0])),
    ("owens_t", lambda h: special.owens_t(h, 0.7), np.float32([-1.0, 0.4])),
    ("spence", lambda x: special.spence(x), np.float32([0.3, 1.2, 2.5])),
    ("polygamma", lambda x: special.polygamma(1, x), np.float32([0.7, 3.0])),
]


@pytest.mark.parametrize("name,fn,x", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_derivatives_to_order_two(name, fn, x):
    check_grads(fn, (x,), order=2, atol=2e-2, rtol=2e-2, eps=1e-2)


# ---- jit and vmap ----------------------------------------------------------------------------

TRANSFORMED = [
    ("i0e", lambda x: special.i0e(x)),
    ("erfcx", lambda x: special.erfcx(x)),
    ("sici", lambda x: special.sici(x)[1]),
    ("fresnel", lambda x: special.fresnel(x)[0]),
    ("expi", lambda x: special.expi(x)),
    ("expn", lambda x: special.expn(3, x)),
    ("zeta", lambda x: special.zeta(x + 2.0, 1.5)),
    ("spence", lambda x: special.spence(x)),
    ("owens_t", lambda x: special.owens_t(x, 1.7)),
    ("hyp1f1", lambda x: special.hyp1f1(1.5, 2.0, x)),
    ("bessel_jn", lambda x: special.bessel_jn(x, v=2)[2]),
]


@pytest.mark.parametrize("name,fn", TRANSFORMED, ids=[t[0] for t in TRANSFORMED])
def test_jit_and_vmap_agree_with_eager(name, fn):
    x = np.float32([0.2, 0.9, 1.6, 3.0, 6.0])
    eager = np.asarray(fn(x))
    np.testing.assert_allclose(np.asarray(redraft.jit(fn)(x)), eager, rtol=1e-6, atol=1e-7)
    batched = redraft.vmap(lambda row: fn(row))(jnp.stack([x, x[::-1]]))
    np.testing.assert_allclose(np.asarray(batched[0]), eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(batched[1]), eager[::-1], rtol=1e-6, atol=1e-7)


def test_incomplete_gamma_derivative_in_x_is_the_density():
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), on both sides of the series/fraction switch
    (the branch not taken once leaked a nan into the derivative at x = a - 1)."""
    a = np.float32([0.5, 2.0, 2.0, 5.0, 3.0])
    x = np.float32([0.3, 1.0, 3.5, 2.0, 10.0])
    g = redraft.vmap(redraft.grad(lambda v, s: special.gammainc(s, v)))(jnp.asarray(x),
                                                                         jnp.asarray(a))
    want = np.exp(-x.astype(float)) * x.astype(float) ** (a - 1) / sp.gamma(a)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)
