"""redraft.scipy.linalg against SciPy (a test-only dependency): values, errors, and the
derivatives and batching of the factorisation-based functions."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
import redraft.scipy.linalg as rsl
from redraft.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(1)
A = RNG.standard_normal((4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.standard_normal((4, 2)).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def test_cholesky_family_matches_scipy():
    close(rsl.cholesky(SPD), sl.cholesky(SPD))
    close(rsl.cholesky(SPD, lower=True), sl.cholesky(SPD, lower=True))
    for lower in (False, True):
        factor = rsl.cho_factor(SPD, lower=lower)
        assert factor[1] == lower
        close(rsl.cho_solve(factor, B), sl.cho_solve(sl.cho_factor(SPD, lower=lower), B))
        close(rsl.cho_solve(factor, V), np.linalg.solve(SPD, V))
    close(rsl.solve(SPD, B, assume_a="pos"), np.linalg.solve(SPD, B))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_matches_scipy(trans, lower):
    tri = np.tril(SPD) if lower else np.triu(SPD)
    close(rsl.solve_triangular(tri, B, trans=trans, lower=lower),
          sl.solve_triangular(tri, B, trans=trans, lower=lower))
    close(rsl.solve_triangular(tri, V, trans=trans, lower=lower, unit_diagonal=True),
          sl.solve_triangular(tri, V, trans=trans, lower=lower, unit_diagonal=True))


def test_lu_family_matches_scipy():
    lu, piv = rsl.lu_factor(A)
    lu_e, piv_e = sl.lu_factor(A)
    close(lu, lu_e)
    np.testing.assert_array_equal(np.asarray(piv), piv_e)
    for trans in (0, 1, 2):
        close(rsl.lu_solve((lu, piv), B, trans=trans), sl.lu_solve((lu_e, piv_e), B, trans=trans))
    for m in (A, A[:, :3], A[:3]):
        p, l, u = rsl.lu(m)
        pe, le, ue = sl.lu(m)
        close(p, pe)
        close(l, le)
        close(u, ue)
        pl, u2 = rsl.lu(m, permute_l=True)
        close(pl @ u2, m)


def test_decompositions_and_basics_match_scipy():
    q, r = rsl.qr(A[:, :3])
    assert q.shape == (4, 4)
    close(q @ r, A[:, :3])
    q, r = rsl.qr(A[:, :3], mode="economic")
    assert q.shape == (4, 3)
    assert rsl.qr(A, mode="r")[0].shape == (4, 4)
    qc, r = rsl.qr_multiply(A, B.T)
    qce, _re = sl.qr_multiply(A, B.T)
    close(np.abs(qc), np.abs(qce))
    close(rsl.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))
    close(rsl.eigh(SPD, eigvals_only=True), sl.eigh(SPD, eigvals_only=True))
    close(rsl.det(A), sl.det(A))
    close(rsl.inv(A), sl.inv(A), 1e-3)
    close(rsl.solve(A, B), sl.solve(A, B), 1e-3)
    d, e = V, V[:3]
    close(rsl.eigh_tridiagonal(d, e, eigvals_only=True), sl.eigh_tridiagonal(d, e, True))
    u, p = rsl.polar(A)
    ue, pe = sl.polar(A)
    close(u, ue)
    close(p, pe)
    u, p = rsl.polar(A, side="left")
    ue, pe = sl.polar(A, side="left")
    close(p, pe)
    x = rsl.solve_sylvester(A, SPD, B @ B.T)
    close(x, sl.solve_sylvester(A, SPD, B @ B.T), 1e-3)


def test_matrix_functions_match_scipy():
    for m in (A, A * 10, np.zeros((3, 3), np.float32), SPD / 8):
        close(rsl.expm(m), sl.expm(m), 2e-3 * max(1.0, float(np.abs(sl.expm(m)).max())))
    batch = np.stack([A, -A, A / 3])
    close(rsl.expm(batch), np.stack([sl.expm(x) for x in batch]), 1e-3)
    e, frechet = rsl.expm_frechet(A, B @ B.T)
    ee, fe = sl.expm_frechet(A, B @ B.T)
    close(e, ee, 1e-3)
    close(frechet, fe, 1e-3)
    close(rsl.sqrtm(SPD), sl.sqrtm(SPD), 1e-3)
    close(rsl.funm(SPD, jnp.exp), sl.expm(SPD), 2e-2)
    h, q = rsl.hessenberg(A, calc_q=True)
    he = sl.hessenberg(A)
    close(np.abs(h), np.abs(he))
    close(q @ h @ q.T, A)


def test_special_matrices_match_scipy():
    c, r = np.array([1.0, 2, 3]), np.array([1.0, 5, 6, 7])
    close(rsl.toeplitz(c, r), sl.toeplitz(c, r))
    close(rsl.toeplitz(c), sl.toeplitz(c))
    close(rsl.hankel(c, r), sl.hankel(c, r))
    close(rsl.hankel(c), sl.hankel(c))
    close(rsl.circulant(c), sl.circulant(c))
    close(rsl.companion(r), sl.companion(r))
    close(rsl.fiedler(r), sl.fiedler(r))
    for poly in ([1.0, 2, 3], [2.0, 1, 3, 4, 5], [1.0, -1, 2, 3, 4, 5, 6], [1.0, 4]):
        close(rsl.fiedler_companion(np.array(poly)), sl.fiedler_companion(np.array(poly)))
    for mode in ("full", "same", "valid"):
        close(rsl.convolution_matrix(c, 5, mode), sl.convolution_matrix(c, 5, mode))
        close(rsl.convolution_matrix(r, 2, mode), sl.convolution_matrix(r, 2, mode))
    close(rsl.dft(5), sl.dft(5))
    close(rsl.dft(4, "sqrtn"), sl.dft(4, "sqrtn"))
    close(rsl.hadamard(8), sl.hadamard(8))
    close(rsl.helmert(5), sl.helmert(5))
    close(rsl.helmert(5, full=True), sl.helmert(5, full=True))
    close(rsl.hilbert(4), sl.hilbert(4))
    close(rsl.invhilbert(4), sl.invhilbert(4), 1e-3)
    for kind in ("symmetric", "lower", "upper"):
        close(rsl.pascal(5, kind), sl.pascal(5, kind))
        close(rsl.invpascal(5, kind), sl.invpascal(5, kind))
    close(rsl.leslie([0.1, 2.0, 1.0], [0.2, 0.8]), sl.leslie([0.1, 2.0, 1.0], [0.2, 0.8]))
    close(rsl.block_diag(A[:2, :3], V[:2], np.ones((1, 1))),
          sl.block_diag(A[:2, :3], V[:2], np.ones((1, 1))))


def test_errors():
    with pytest.raises(ValueError, match="trans"):
        rsl.solve_triangular(SPD, B, trans=5)
    with pytest.raises(ValueError, match="power of two"):
        rsl.hadamard(6)
    with pytest.raises(NotImplementedError, match="generalized"):
        rsl.eigh(SPD, SPD)


def _gp(kernel, y):
    factor = rsl.cho_factor(kernel, lower=True)
    return jnp.dot(y, rsl.cho_solve(factor, y))


def _tri(a, b):
    return rsl.solve_triangular(a, b, trans=1, lower=True)


def _lu_solve(a, b):
    return rsl.lu_solve(rsl.lu_factor(a), b)


def _expm(a):
    return rsl.expm(a)


@pytest.mark.parametrize("fn,args", [(_gp, (SPD, V)), (_tri, (np.tril(SPD), B)),
                                     (_lu_solve, (A, B)), (_expm, (A / 4,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_derivatives_to_order_two(fn, args):
    check_grads(fn, tuple(np.asarray(a, np.float64) for a in args), order=2, atol=3e-2,
                rtol=3e-2)


def test_vmap_and_jit():
    batch = np.stack([SPD, SPD + np.eye(4, dtype=np.float32)])
    ys = np.stack([V, -V])
    got = redraft.vmap(_gp)(batch, ys)
    close(got, [float(_gp(k, y)) for k, y in zip(batch, ys)])
    close(redraft.jit(_gp)(SPD, V), _gp(SPD, V))
    close(redraft.jit(_expm)(A), sl.expm(A), 1e-3)


def test_schur_forms_reconstruct_and_triangularise():
    rotation = np.array([[0.0, -2.0, 1.0], [2.0, 0.0, 0.5], [0.0, 0.0, 3.0]], np.float32)
    for m in (A, SPD, rotation):
        t, z = rsl.schur(m)
        t, z = np.asarray(t), np.asarray(z)
        close(z @ t @ z.T, m, 1e-3)
        close(z.T @ z, np.eye(len(m)), 1e-4)
        assert np.allclose(np.tril(t, -2), 0)
        close(np.sort_complex(np.linalg.eigvals(t)), np.sort_complex(np.linalg.eigvals(m)),
              1e-3)
        tc, zc = rsl.schur(m, output="complex")
        tc, zc = np.asarray(tc), np.asarray(zc)
        close(zc @ tc @ zc.conj().T, m, 1e-3)
        assert np.allclose(np.tril(tc, -1), 0)
        t2, z2 = rsl.rsf2csf(t, z)
        t2, z2 = np.asarray(t2), np.asarray(z2)
        close(z2 @ t2 @ z2.conj().T, m, 1e-3)
        assert np.allclose(np.tril(t2, -1), 0, atol=1e-5)
    with pytest.raises(ValueError, match="output"):
        rsl.schur(A, output="bad")
