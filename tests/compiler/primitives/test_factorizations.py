"""The factorisation and fft primitives (lax.linalg, lax.fft) against NumPy: every option
of triangular_solve, LU's pivots and permutation, result types, shape and dtype errors."""
import itertools

import numpy as np
import pytest

from redraft import lax

RNG = np.random.default_rng(4)
A = RNG.standard_normal((2, 4, 4)).astype(np.float32)
B = RNG.standard_normal((2, 4, 3)).astype(np.float32)


@pytest.mark.parametrize("left,lower,transpose,conjugate,unit",
                         list(itertools.product([False, True], repeat=5)))
def test_triangular_solve_every_option(left, lower, transpose, conjugate, unit):
    a = (A + 1j * A[::-1]).astype(np.complex64)
    b = (B + 1j).astype(np.complex64) if left else np.swapaxes(B + 1j, -1, -2).astype(
        np.complex64)
    b = b[..., :4, :] if left else b[..., :, :4]
    x = np.asarray(lax.linalg.triangular_solve(a, b, left, lower, transpose, conjugate, unit))
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t.copy()
        t[..., range(4), range(4)] = 1
    if conjugate:
        t = t.conj()
    if transpose:
        t = np.swapaxes(t, -1, -2)
    np.testing.assert_allclose(t @ x if left else x @ t, b, atol=1e-3)


def test_lu_pivots_and_permutation():
    for m in (A, A[:, :3], A[:, :, :3]):
        lu, pivots, perm = (np.asarray(v) for v in lax.linalg.lu(m))
        assert pivots.dtype == np.int32 and perm.dtype == np.int32
        k = min(m.shape[-2:])
        lower = np.tril(lu[..., :, :k], -1) + np.eye(m.shape[-2], k)
        upper = np.triu(lu[..., :k, :])
        rows = np.take_along_axis(m, perm[..., :, None], axis=-2)
        np.testing.assert_allclose(lower @ upper, rows, atol=1e-5)
        swapped = np.tile(np.arange(m.shape[-2]), m.shape[:-2] + (1,))
        for j in range(k):  # the pivots, applied as row interchanges, give the permutation
            for idx in np.ndindex(m.shape[:-2]):
                p = pivots[idx + (j,)]
                swapped[idx + (j,)], swapped[idx + (p,)] = (swapped[idx + (p,)],
                                                            swapped[idx + (j,)])
        np.testing.assert_array_equal(swapped, perm)


def test_result_types():
    spd = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    v, w = lax.linalg.eigh(spd)
    assert v.shape == (2, 4, 4) and w.shape == (2, 4) and w.dtype == np.float32
    u, s, vh = lax.linalg.svd(A[:, :, :3], full_matrices=True)
    assert (u.shape, s.shape, vh.shape) == ((2, 4, 4), (2, 3), (2, 3, 3))
    assert lax.linalg.svd(A, compute_uv=False).shape == (2, 4)
    q, r = lax.linalg.qr(A[:, :, :3], full_matrices=False)
    assert q.shape == (2, 4, 3) and r.shape == (2, 3, 3)
    w, vr = lax.linalg.eig(A)
    assert w.dtype == np.complex64 and vr.shape == (2, 4, 4)
    assert lax.linalg.cholesky(spd.astype(np.float64)).dtype == np.float32  # x64 off


def test_fft_types_and_lengths():
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    half = lax.fft(x, lax.FftType.RFFT, (8,))
    assert half.shape == (3, 5) and half.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(half), np.fft.rfft(x), atol=1e-5)
    back = lax.fft(half, "IRFFT", (8,))
    assert back.dtype == np.float32
    np.testing.assert_allclose(np.asarray(back), x, atol=1e-5)
    z = np.asarray(half[:, :4])
    np.testing.assert_allclose(np.asarray(lax.fft(z, "FFT", (4,))), np.fft.fft(z), atol=1e-5)
    np.testing.assert_allclose(np.asarray(lax.fft(z, "IFFT", (4,))), np.fft.ifft(z),
                               atol=1e-5)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="square"):
        lax.linalg.cholesky(A[:, :, :3])
    with pytest.raises(ValueError, match="rank >= 2"):
        lax.linalg.eigh(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="floating"):
        lax.linalg.lu(np.ones((3, 3), np.int32))
    with pytest.raises(ValueError, match="does not fit"):
        lax.linalg.triangular_solve(A, B, left_side=False)
    with pytest.raises(TypeError, match="one dtype"):
        lax.linalg.triangular_solve(A, B.astype(np.int32), left_side=True)
    with pytest.raises(TypeError, match="real"):
        lax.fft(np.ones(4, np.complex64), "RFFT", (4,))
    with pytest.raises(TypeError, match="complex"):
        lax.fft(np.ones(4, np.float32), "FFT", (4,))
    with pytest.raises(ValueError, match="fft_type"):
        lax.fft(np.ones(4, np.complex64), "DCT", (4,))
    with pytest.raises(ValueError, match="IRFFT"):
        lax.fft(np.ones(4, np.complex64), "IRFFT", (8,))


def _cases():
    spd = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    for dtype in (np.float32, np.complex64):
        a, s = A.astype(dtype), spd.astype(dtype)
        yield "cholesky", [s], {}
        yield "triangular_solve", [a, B.astype(dtype)], dict(
            left_side=True, lower=True, transpose_a=False, conjugate_a=False,
            unit_diagonal=False)
        yield "lu", [a[:, :3]], {}
        yield "qr", [a[:, :, :3]], dict(full_matrices=True)
        yield "qr", [a[:, :, :3]], dict(full_matrices=False)
        yield "eigh", [s], dict(lower=False)
        yield "svd", [a[:, :3]], dict(full_matrices=True, compute_uv=True)
        yield "svd", [a], dict(full_matrices=False, compute_uv=False)
        yield "eig", [a], {}
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    yield "fft", [x], dict(fft_type="RFFT", fft_lengths=(4, 6))
    z = np.fft.rfft(x).astype(np.complex64)
    yield "fft", [z], dict(fft_type="IRFFT", fft_lengths=(6,))
    yield "fft", [z], dict(fft_type="FFT", fft_lengths=(2, 4, 4))
    yield "fft", [z], dict(fft_type="IFFT", fft_lengths=(4,))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name,operands,params", list(_cases()))
def test_abstract_eval_predicts_impl(name, operands, params):
    from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
    from redraft.compiler.primitives import ALL_PRIMITIVES
    from redraft.runtime.array import wrap_host
    from redraft.runtime.eager import bind
    prim = ALL_PRIMITIVES[name]
    for weak in (False, True):
        avals = abstract_eval_rules[prim](*(ShapedArray(x.shape, x.dtype, weak)
                                            for x in operands), **params)
        outs = bind(prim, *(wrap_host(x, weak) for x in operands), **params)
        if not prim.multiple_results:
            avals, outs = (avals,), (outs,)
        for aval, out in zip(avals, outs, strict=True):
            assert (out.shape, out.dtype) == (tuple(aval.shape), aval.dtype)
            assert out.weak_type == prim.result_weak([weak] * len(operands), params)
