"""kernels/blas.py: the triangular solve on NumPy's OpenBLAS, against the substitution that
factorizations.py falls back to (an independent method) and against the definition."""
import itertools

import numpy as np
import pytest

from redraft.compiler.primitives import factorizations
from redraft.kernels import blas

pytestmark = pytest.mark.skipif(not blas.available(np.float64),
                                reason="NumPy brings no OpenBLAS with ILP64 CBLAS names")


def _triangle(n: int, lower: bool, dtype, seed: int) -> np.ndarray:
    """A well-conditioned triangular matrix with junk in the other triangle (never read)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(dtype) * 0.1 + n * np.eye(n, dtype=dtype)
    junk = rng.standard_normal((n, n)).astype(dtype) * 1e3
    return np.where(np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T, a, junk)


def _substituted(a, b, **flags):
    t, is_lower = factorizations._effective(a, flags["lower"], flags["transpose_a"], False,
                                            flags["unit_diagonal"])
    if flags["left_side"]:
        return factorizations._substitute(t, b, is_lower)
    xt = factorizations._substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2),
                                    not is_lower)
    return np.swapaxes(xt, -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal",
                         list(itertools.product([True, False], repeat=4)))
def test_trsm_agrees_with_substitution(dtype, left_side, lower, transpose_a, unit_diagonal):
    flags = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                 unit_diagonal=unit_diagonal)
    a = _triangle(70, lower, dtype, seed=1)
    b = np.random.default_rng(2).standard_normal((70, 5) if left_side else (5, 70)).astype(dtype)
    got = blas.trsm(a, b, **flags)
    assert got.dtype == dtype and got.shape == b.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, _substituted(a, b, **flags), rtol=tol, atol=tol)


def test_trsm_broadcasts_leading_axes_and_keeps_its_inputs():
    a = np.stack([_triangle(20, True, np.float64, seed=s) for s in range(3)])  # (3, 20, 20)
    b = np.random.default_rng(4).standard_normal((2, 1, 20, 4))
    before = (a.copy(), b.copy())
    got = blas.trsm(a, b, left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
    assert got.shape == (2, 3, 20, 4)
    np.testing.assert_allclose(np.tril(a) @ got, np.broadcast_to(b, got.shape), atol=1e-12)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


def test_trsm_of_a_transposed_view_and_empty_operands():
    a = _triangle(30, False, np.float64, seed=5).T  # a non-contiguous lower triangle
    b = np.random.default_rng(6).standard_normal((4, 30)).T
    got = blas.trsm(a, b, left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
    np.testing.assert_allclose(np.tril(a) @ got, b, atol=1e-12)
    empty = blas.trsm(a, np.zeros((30, 0)), left_side=True, lower=True, transpose_a=False,
                      unit_diagonal=False)
    assert empty.shape == (30, 0)


def test_zero_on_the_diagonal_gives_ieee_infinities_as_substitution_does():
    a = _triangle(10, True, np.float64, seed=7)
    a[4, 4] = 0.0
    b = np.ones((10, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        got = blas.trsm(a, b, left_side=True, lower=True, transpose_a=False,
                        unit_diagonal=False)
        want = factorizations._substitute_rows(np.tril(a), b, True)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got[:4], want[:4])


def test_other_dtypes_are_left_to_the_caller():
    a = np.eye(3, dtype=np.complex64)
    assert blas.trsm(a, a, left_side=True, lower=True, transpose_a=False,
                     unit_diagonal=False) is None
    assert blas.trsm(np.eye(3), np.eye(3, dtype=np.float32), left_side=True, lower=True,
                     transpose_a=False, unit_diagonal=False) is None


def test_a_small_solve_leaves_openblas_thread_count_as_it_was():
    count = getattr(blas._library(), "scipy_openblas_get_num_threads64_", None)
    if count is None or blas._thread_setter() is None:
        pytest.skip("this OpenBLAS has no thread-count calls")
    before = count()
    a, b = _triangle(50, True, np.float64, seed=8), np.ones((50, 3))
    blas.trsm(a, b, left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
    assert count() == before
