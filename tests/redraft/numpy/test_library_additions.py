"""The redraft.numpy functions composed from existing ones (nan-reductions, statistics,
polynomials, index tricks, sets, windows, array-API aliases, functional helpers) against
NumPy, and a few under grad, jit and vmap."""
import numpy as np
import pytest
from checks import check

import redraft
import redraft.numpy as jnp

RNG = np.random.RandomState(0)
X = RNG.randn(3, 20).astype(np.float32)
XN = X.copy()
XN[0, 3] = np.nan
XN[1, :] = np.nan


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean",
                                  "nanvar", "nanstd", "nancumsum", "nancumprod"])
def test_nan_reductions(name):
    with np.errstate(all="ignore"), _quiet():
        want = getattr(np, name)(XN, axis=1).astype(np.float32)
    check(getattr(jnp, name)(XN, axis=1), want, rtol=1e-4, atol=1e-5)


class _quiet:
    def __enter__(self):
        import warnings
        self.w = warnings.catch_warnings()
        self.w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self.w.__exit__(*exc)


def test_nanarg_functions_mark_all_nan_slices():
    assert np.asarray(jnp.nanargmax(XN, axis=1)).tolist() == [np.nanargmax(XN[0]), -1,
                                                               np.nanargmax(XN[2])]
    assert int(jnp.nanargmin(XN[0])) == np.nanargmin(XN[0])


def test_cov_and_corrcoef():
    check(jnp.cov(X), np.cov(X).astype(np.float32), rtol=1e-5)
    check(jnp.cov(X.T, rowvar=False, bias=True), np.cov(X.T, rowvar=False, bias=True)
          .astype(np.float32), rtol=1e-5)
    fw, aw = np.arange(20) % 3 + 1, np.arange(20.0) + 1
    check(jnp.cov(X, fweights=fw, aweights=aw),
          np.cov(X, fweights=fw, aweights=aw).astype(np.float32), rtol=1e-4)
    check(jnp.corrcoef(X[0], X[1]), np.corrcoef(X[0], X[1]).astype(np.float32), rtol=1e-5)


def test_histograms_digitize_bincount():
    counts, edges = jnp.histogram(X[0], 5)
    want_counts, want_edges = np.histogram(X[0], 5)
    np.testing.assert_array_equal(np.asarray(counts), want_counts)
    np.testing.assert_allclose(np.asarray(edges), want_edges, rtol=1e-6)
    counts, _ = jnp.histogram(X[0], bins=[-1.0, 0.0, 2.0], weights=X[1])
    np.testing.assert_allclose(np.asarray(counts),
                               np.histogram(X[0], [-1.0, 0.0, 2.0], weights=X[1])[0], rtol=1e-5)
    counts2, _, _ = jnp.histogram2d(X[0], X[1], bins=3)
    np.testing.assert_array_equal(np.asarray(counts2), np.histogram2d(X[0], X[1], bins=3)[0])
    for bins, right in [([-1, 0, 1], False), ([1, 0, -1], True), ([0.5], False)]:
        np.testing.assert_array_equal(np.asarray(jnp.digitize(X[0], bins, right=right)),
                                      np.digitize(X[0], bins, right=right))
    check(jnp.bincount(jnp.array([0, 1, 1, 3]), minlength=6), np.bincount([0, 1, 1, 3],
                                                                          minlength=6))
    check(jnp.bincount(jnp.array([0, 1, 1]), weights=jnp.array([0.5, 1.0, 2.0]), length=3),
          np.float32([0.5, 3.0, 0.0]))


def test_interp_and_trapezoid():
    xp = np.linspace(0, 5, 7).astype(np.float32)
    fp = np.sin(xp)
    xs = np.linspace(-1, 6, 13).astype(np.float32)
    check(jnp.interp(xs, xp, fp), np.interp(xs, xp, fp).astype(np.float32), rtol=1e-5)
    check(jnp.interp(xs, xp, fp, left=-9.0, right=9.0),
          np.interp(xs, xp, fp, left=-9, right=9).astype(np.float32), rtol=1e-5)
    check(jnp.interp(xs, xp, fp, period=5.0),
          np.interp(xs, xp, fp, period=5).astype(np.float32), rtol=1e-5, atol=1e-5)
    check(jnp.trapezoid(X, axis=1), np.trapezoid(X, axis=1), rtol=1e-5)
    check(jnp.trapezoid(X[0], x=np.cumsum(np.abs(X[1]))),
          np.float32(np.trapezoid(X[0], x=np.cumsum(np.abs(X[1])))), rtol=1e-5)


def interp_sum(x):
    return jnp.sum(jnp.interp(x, jnp.array([0.0, 1.0, 3.0]), jnp.array([0.0, 2.0, 3.0])))


def test_interp_grad_jit_vmap():
    x = jnp.array([0.5, 2.0])
    np.testing.assert_allclose(np.asarray(redraft.grad(interp_sum)(x)), [2.0, 0.5])
    assert float(redraft.jit(interp_sum)(x)) == pytest.approx(float(interp_sum(x)))
    np.testing.assert_allclose(np.asarray(redraft.vmap(interp_sum)(x[:, None])), [1.0, 2.5])


def test_polynomials():
    check(jnp.polyval(jnp.array([1.0, 2, 3]), jnp.array([0.0, 1, 2])), np.float32([3, 6, 11]))
    check(jnp.polymul(jnp.array([1.0, 2]), jnp.array([1.0, 3, 1])), np.float32([1, 5, 7, 2]))
    check(jnp.polyadd(jnp.array([1.0, 2]), jnp.array([1.0, 3, 1])), np.float32([1, 4, 3]))
    check(jnp.polysub(jnp.array([1.0, 2]), jnp.array([1.0, 3, 1])), np.float32([-1, -2, 1]))
    check(jnp.polyder(jnp.array([1.0, 2, 3, 4]), 2), np.float32([6, 4]))
    check(jnp.polyint(jnp.array([3.0, 2, 1]), 2, k=[1.0, 2.0]),
          np.polyint([3, 2, 1], 2, k=[1, 2]).astype(np.float32), rtol=1e-6)
    check(jnp.vander(jnp.array([1.0, 2, 3]), 4, increasing=True),
          np.vander(np.float32([1, 2, 3]), 4, increasing=True))


def test_index_tricks():
    check(jnp.r_[1:4, 0, np.array([7, 8])], np.r_[1:4, 0, np.array([7, 8])].astype(np.int32))
    check(jnp.r_[0:1:5j], np.r_[0:1:5j].astype(np.float32))
    check(jnp.c_[np.array([1, 2]), np.array([3, 4])], np.c_[np.array([1, 2]),
                                                            np.array([3, 4])].astype(np.int32))
    check(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2].astype(np.int32))
    assert [g.shape for g in jnp.ogrid[0:3, 0:2]] == [(3, 1), (1, 2)]
    check(list(jnp.ix_([0, 2], [1, 3])), [a.astype(np.int32) for a in np.ix_([0, 2], [1, 3])])
    check(jnp.indices((2, 3)), np.indices((2, 3)).astype(np.int32))
    check(list(jnp.tril_indices(3, -1)), [a.astype(np.int32) for a in np.tril_indices(3, -1)])
    check(list(jnp.triu_indices(3, 1, 4)), [a.astype(np.int32)
                                            for a in np.triu_indices(3, 1, 4)])
    check(list(jnp.diag_indices(3)), [a.astype(np.int32) for a in np.diag_indices(3)])
    check(list(jnp.unravel_index(jnp.array([5, 7]), (3, 4))),
          [a.astype(np.int32) for a in np.unravel_index([5, 7], (3, 4))])
    check(jnp.ravel_multi_index((jnp.array([1, 2]), jnp.array([1, 3])), (3, 4), order="F"),
          np.ravel_multi_index(([1, 2], [1, 3]), (3, 4), order="F").astype(np.int32))
    with pytest.raises(ValueError):
        jnp.ravel_multi_index((jnp.array([5]), jnp.array([0])), (3, 4))
    assert jnp.s_[1:2] == slice(1, 2) and jnp.index_exp[1] == (1,)


def test_sets():
    a, b = np.array([1, 2, 3, 4, 2]), np.array([2, 4, 6])
    check(jnp.isin(a, b), np.isin(a, b))
    check(jnp.isin(a, b, invert=True), np.isin(a, b, invert=True))
    check(jnp.union1d(a, b), np.union1d(a, b).astype(np.int32))
    check(jnp.intersect1d(a, b), np.intersect1d(a, b).astype(np.int32))
    check(jnp.setdiff1d(a, b), np.setdiff1d(a, b).astype(np.int32))
    check(jnp.setxor1d(a, b), np.setxor1d(a, b).astype(np.int32))
    check(jnp.setdiff1d(a, b, size=4, fill_value=0), np.int32([1, 3, 0, 0]))


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [0, 1, 6])
def test_windows(name, m):
    check(getattr(jnp, name)(m), getattr(np, name)(m).astype(np.float32), atol=1e-6)


def test_aliases_and_elementwise():
    x = np.float32([-1.5, -0.5, 0.5, 2.5])
    check(jnp.trunc(x), np.trunc(x))
    check(jnp.rint(x), np.rint(x))
    check(list(jnp.modf(x)), list(np.modf(x)))
    check(jnp.fmax(np.float32([np.nan, 1, 3]), np.float32([2, np.nan, 1])),
          np.fmax(np.float32([np.nan, 1, 3]), np.float32([2, np.nan, 1])))
    check(jnp.fmin(np.float32([np.nan, 1, 3]), np.float32([2, np.nan, 1])),
          np.fmin(np.float32([np.nan, 1, 3]), np.float32([2, np.nan, 1])))
    check(jnp.ldexp(np.float32([1, 2]), np.int32([2, -1])), np.ldexp(np.float32([1, 2]), [2, -1]))
    check(jnp.acos(np.float32([0.5])), np.arccos(np.float32([0.5])))
    check(jnp.pow(np.float32([2]), 3), np.float32([8]))
    check(jnp.matrix_transpose(X[None]), np.swapaxes(X[None], -1, -2))
    check(jnp.cumulative_sum(np.int32([1, 2, 3]), include_initial=True), np.int32([0, 1, 3, 6]))
    check(jnp.cumulative_prod(np.float32([[1, 2], [3, 4]]), axis=1),
          np.float32([[1, 2], [3, 12]]))
    check(jnp.rollaxis(np.ones((2, 3, 4), np.float32), 2, 1),
          np.rollaxis(np.ones((2, 3, 4), np.float32), 2, 1))
    check(jnp.matvec(X[:, :3], np.float32([1, 2, 3])), X[:, :3] @ np.float32([1, 2, 3]),
          rtol=1e-5)
    check(list(jnp.unstack(X[:, :2], axis=1)), [X[:, 0], X[:, 1]])
    assert jnp.issubdtype(jnp.float32, jnp.floating) and jnp.isdtype(jnp.int8, "integral")
    assert not jnp.isdtype(jnp.float32, ("bool", "complex floating"))
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.isscalar(3.0) and jnp.isscalar(jnp.float32(1)) and not jnp.isscalar([1])
    assert jnp.iscomplexobj(jnp.ones(2, jnp.complex64)) and jnp.isrealobj(X)


def mul_add(a, b):
    return a * b + 1


def square_sum(v):
    return jnp.sum(v ** 2)


def test_functional_helpers():
    check(jnp.vectorize(mul_add)(np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)),
          np.ones((2, 3), np.float32) * np.arange(3) + 1)
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(jnp.apply_along_axis(square_sum, 1, arr), np.float32([5, 50]))
    check(jnp.apply_along_axis(square_sum, 0, arr), np.float32([9, 17, 29]))
    check(jnp.apply_over_axes(jnp.sum, np.ones((2, 3, 4), np.float32), [0, 2]),
          np.apply_over_axes(np.sum, np.ones((2, 3, 4), np.float32), [0, 2]))
    x = np.arange(-2.0, 3.0, dtype=np.float32)
    check(jnp.piecewise(x, [x < 0], [jnp.negative, lambda v: v * 10]),
          np.piecewise(x, [x < 0], [np.negative, lambda v: v * 10]))
    check(jnp.fromfunction(jnp.add, (2, 3)), np.fromfunction(np.add, (2, 3)).astype(np.float32))


def matvec(m, v):
    return m @ v


def total_and_double(x):
    return jnp.sum(x), x * 2


def test_vectorize_with_a_gufunc_signature():
    """Core axes at the end of each argument, loop axes broadcast in front (as NumPy's
    np.vectorize(signature=...) does), several outputs, and clear errors."""
    rng = np.random.default_rng(0)
    m, v = rng.standard_normal((4, 2, 3), np.float32), rng.standard_normal((5, 1, 3), np.float32)
    mv = jnp.vectorize(matvec, signature="(m,n),(n)->(m)")
    want = np.vectorize(lambda a, b: a @ b, signature="(m,n),(n)->(m)")(m, v)
    np.testing.assert_allclose(mv(m, v), want, rtol=1e-5)
    assert mv(m, v).shape == (5, 4, 2)
    total, double = jnp.vectorize(total_and_double, signature="(n)->(),(n)")(m)
    np.testing.assert_allclose(total, m.sum(-1), rtol=1e-5)
    np.testing.assert_allclose(double, 2 * m)
    with pytest.raises(ValueError, match="core dimension 'n'"):
        mv(m, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(matvec, signature="(n)->")
    with pytest.raises(ValueError, match="rank"):
        jnp.vectorize(matvec, signature="(m,n),(n)->()")(m, v)


def test_vectorize_with_a_signature_compiles():
    mv = jnp.vectorize(matvec, signature="(m,n),(n)->(m)")
    m = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    np.testing.assert_allclose(redraft.jit(lambda a: mv(a, jnp.ones(3)))(m), m.sum(-1))
