"""redraft.numpy.linalg against numpy.linalg: values, dtypes, errors; derivatives to order 2
in both modes on well-conditioned inputs; vmap against a loop; jit against eager."""
import numpy as np
import pytest
from checks import check

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
TALL = RNG.standard_normal((5, 3)).astype(np.float32)
WIDE = TALL.T.copy()
B = RNG.standard_normal((4, 2)).astype(np.float32)
VEC = RNG.standard_normal(4).astype(np.float32)
BATCH = RNG.standard_normal((3, 4, 4)).astype(np.float32)
BATCH_SPD = (BATCH @ BATCH.transpose(0, 2, 1) + 4 * np.eye(4)).astype(np.float32)


def _sign_fixed(u, axis=-2):
    """Columns (axis=-2) or rows scaled so their largest entry is positive."""
    u = np.asarray(u)
    idx = np.argmax(np.abs(u), axis=axis)
    big = np.take_along_axis(u, np.expand_dims(idx, axis), axis)
    return u * np.sign(big)


# ---- values against NumPy ----------------------------------------------------------------------

def test_cholesky_matches_numpy_and_batches():
    check(jnp.linalg.cholesky(SPD), np.linalg.cholesky(SPD), 1e-5, 1e-5)
    check(jnp.linalg.cholesky(BATCH_SPD), np.linalg.cholesky(BATCH_SPD), 1e-5, 1e-5)
    check(jnp.linalg.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T, 1e-5, 1e-5)


def test_cholesky_of_an_indefinite_matrix_is_nan_as_in_jax():
    assert np.isnan(np.asarray(jnp.linalg.cholesky(-SPD))).all()


def test_solve_inv_det_slogdet_match_numpy():
    check(jnp.linalg.solve(A, B), np.linalg.solve(A, B), 1e-4, 1e-4)
    check(jnp.linalg.solve(A, VEC), np.linalg.solve(A, VEC), 1e-4, 1e-4)
    check(jnp.linalg.solve(BATCH, B), np.linalg.solve(BATCH, B), 1e-4, 1e-4)
    check(jnp.linalg.inv(BATCH), np.linalg.inv(BATCH), 1e-4, 1e-4)
    check(jnp.linalg.det(BATCH), np.linalg.det(BATCH), 1e-4, 1e-4)
    sign, logdet = jnp.linalg.slogdet(A)
    check((sign, logdet), tuple(np.linalg.slogdet(A)), 1e-5, 1e-5)
    assert float(jnp.linalg.det(np.zeros((3, 3), np.float32))) == 0.0
    check(jnp.linalg.slogdet(np.zeros((2, 2), np.float32))[0], np.float32(0))


def test_float64_and_integer_inputs_follow_jax_dtypes():
    check(jnp.linalg.inv(np.eye(3, dtype=np.int32)), np.eye(3, dtype=np.float32))
    assert jnp.linalg.det(SPD.astype(np.float64)).dtype == np.float32  # x64 off


def test_eigh_eigvalsh_match_numpy():
    w, v = jnp.linalg.eigh(SPD)
    we, ve = np.linalg.eigh(SPD)
    check(w, we, 1e-4, 1e-4)
    np.testing.assert_allclose(_sign_fixed(v), _sign_fixed(ve), atol=1e-4)
    check(jnp.linalg.eigvalsh(BATCH_SPD), np.linalg.eigvalsh(BATCH_SPD), 1e-4, 1e-4)
    upper_only = np.triu(SPD)
    check(jnp.linalg.eigvalsh(upper_only, UPLO="U", symmetrize_input=False),
          np.linalg.eigvalsh(upper_only, UPLO="U"), 1e-4, 1e-4)


def test_svd_qr_match_numpy():
    for m in (A, TALL, WIDE, BATCH):
        u, s, vh = jnp.linalg.svd(m, full_matrices=False)
        check(s, np.linalg.svd(m, compute_uv=False), 1e-4, 1e-4)
        np.testing.assert_allclose(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vh),
                                   m, atol=1e-4)
        check(jnp.linalg.svdvals(m), np.linalg.svd(m, compute_uv=False), 1e-4, 1e-4)
        q, r = jnp.linalg.qr(m)
        _qe, re = np.linalg.qr(m)
        check(jnp.abs(r), np.abs(re), 1e-4, 1e-4)
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), m, atol=1e-4)
    q, r = jnp.linalg.qr(TALL, mode="complete")
    assert q.shape == (5, 5) and r.shape == (5, 3)
    assert jnp.linalg.qr(TALL, mode="r").shape == (3, 3)
    with pytest.raises(ValueError, match="mode"):
        jnp.linalg.qr(TALL, mode="raw")


def test_eig_matches_numpy():
    w, v = jnp.linalg.eig(A)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(A))),
                               np.sort_complex(np.linalg.eigvals(A)), atol=1e-4)
    np.testing.assert_allclose(A @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-4)


def test_lstsq_pinv_rank_cond_power():
    x, resid, rank, _s = jnp.linalg.lstsq(TALL, VEC[:4].repeat(2)[:5])
    xe, re, ranke, _se = np.linalg.lstsq(TALL, VEC[:4].repeat(2)[:5], rcond=None)
    check(x, xe, 1e-4, 1e-4)
    check(resid, re, 1e-3, 1e-3)
    assert int(rank) == ranke
    check(jnp.linalg.pinv(TALL), np.linalg.pinv(TALL), 1e-4, 1e-4)
    check(jnp.linalg.pinv(BATCH), np.linalg.pinv(BATCH), 1e-3, 1e-3)
    singular = np.outer(VEC, VEC)
    assert int(jnp.linalg.matrix_rank(singular)) == np.linalg.matrix_rank(singular) == 1
    check(jnp.linalg.matrix_rank(BATCH), np.linalg.matrix_rank(BATCH).astype(np.int32))
    check(jnp.linalg.cond(A), np.linalg.cond(A), 1e-3, 1e-3)
    check(jnp.linalg.cond(A, 1), np.linalg.cond(A, 1), 1e-3, 1e-3)
    for n in (0, 1, 3, 6, -2):
        check(jnp.linalg.matrix_power(SPD / 4, n), np.linalg.matrix_power(SPD / 4, n), 1e-4,
              1e-4)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_match_numpy(ord):
    check(jnp.linalg.norm(A, ord), np.linalg.norm(A, ord), 1e-5, 1e-5)
    check(jnp.linalg.norm(BATCH, ord, axis=(1, 2)), np.linalg.norm(BATCH, ord, axis=(1, 2)),
          1e-5, 1e-5)
    check(jnp.linalg.matrix_norm(BATCH, ord=ord or "fro"),
          np.linalg.matrix_norm(BATCH, ord=ord or "fro"), 1e-5, 1e-5)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, 0.5, np.inf, -np.inf])
def test_vector_norms_match_numpy(ord):
    check(jnp.linalg.norm(VEC, ord), np.linalg.norm(VEC, ord), 1e-5, 1e-5)
    check(jnp.linalg.vector_norm(BATCH, ord=ord if ord is not None else 2),
          np.linalg.vector_norm(BATCH, ord=ord if ord is not None else 2), 1e-5, 1e-5)


def test_tensor_and_product_functions():
    a = RNG.standard_normal((6, 2, 3)).astype(np.float32)
    check(jnp.linalg.tensorinv(a, 1), np.linalg.tensorinv(a, 1), 1e-3, 1e-3)
    b = RNG.standard_normal(6).astype(np.float32)
    check(jnp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b), 1e-3, 1e-3)
    mats = [A, B, B.T, VEC]
    check(jnp.linalg.multi_dot(mats), np.linalg.multi_dot(mats), 1e-4, 1e-4)
    check(jnp.linalg.cross(A[:, :3], B[:, :1].repeat(3, 1)),
          np.linalg.cross(A[:, :3], B[:, :1].repeat(3, 1)), 1e-5, 1e-5)
    check(jnp.linalg.outer(VEC, VEC), np.linalg.outer(VEC, VEC))
    check(jnp.linalg.trace(BATCH), np.linalg.trace(BATCH), 1e-5, 1e-5)
    check(jnp.linalg.diagonal(BATCH, offset=1), np.linalg.diagonal(BATCH, offset=1))
    check(jnp.linalg.vecdot(A, B[:, :1].T), np.linalg.vecdot(A, B[:, :1].T), 1e-5, 1e-5)
    check(jnp.linalg.matrix_transpose(BATCH), np.linalg.matrix_transpose(BATCH))
    check(jnp.linalg.matmul(A, B), A @ B, 1e-5, 1e-5)
    check(jnp.linalg.tensordot(A, B, 1), np.tensordot(A, B, 1), 1e-5, 1e-5)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.inv(TALL)
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.det(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="size 3"):
        jnp.linalg.cross(A, A)
    with pytest.raises(ValueError, match="invalid matrix norm"):
        jnp.linalg.norm(A, "bad")
    with pytest.raises(TypeError, match="floating"):
        redraft.lax.linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)


# ---- derivatives -------------------------------------------------------------------------------

def _chol_sum(x):
    return jnp.sum(jnp.linalg.cholesky(x) ** 2)


def _solve(a, b):
    return jnp.linalg.solve(a, b)


def _inv(a):
    return jnp.linalg.inv(a)


def _det(a):
    return jnp.linalg.det(a)


def _logdet(a):
    _sign, logdet = jnp.linalg.slogdet(a)
    return logdet


def _eigh(x):
    w, v = jnp.linalg.eigh(x)
    return jnp.sum(w * w) + jnp.sum((v * v[0:1, :]) ** 2)


def _svd(x):
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    return jnp.sum(s) + jnp.sum((u * u[0:1, :]) ** 2) + jnp.sum((vh * vh[:, 0:1]) ** 2)


def _qr(x):
    q, r = jnp.linalg.qr(x)
    return jnp.sum(q * q[:, 0:1]) + jnp.sum(r)


def _pinv(x):
    return jnp.linalg.pinv(x)


def _norms(x):
    return jnp.linalg.norm(x) + jnp.linalg.norm(x, axis=0)[1]


def _gp_loglik(kernel, y):
    chol = jnp.linalg.cholesky(kernel)
    alpha = redraft.scipy.linalg.cho_solve((chol, True), y)
    return -0.5 * jnp.dot(y, alpha) - jnp.sum(jnp.log(jnp.diagonal(chol)))


GRAD_CASES = [(_chol_sum, (SPD,)), (_solve, (SPD, B)), (_solve, (SPD, VEC)), (_inv, (SPD,)),
              (_det, (A,)), (_logdet, (SPD,)), (_eigh, (SPD,)), (_svd, (TALL,)), (_svd, (WIDE,)),
              (_svd, (A,)), (_qr, (TALL,)), (_qr, (A,)), (_qr, (WIDE,)), (_pinv, (TALL,)),
              (_norms, (A,)), (_gp_loglik, (SPD, VEC))]


@pytest.mark.parametrize("fn,args", GRAD_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_derivatives_to_order_two_in_both_modes(fn, args):
    args = tuple(a.astype(np.float64) for a in args)
    check_grads(fn, args, order=2, atol=3e-2, rtol=3e-2)


def test_grad_of_det_is_cofactor_matrix():
    g = redraft.grad(_det)(A)
    np.testing.assert_allclose(np.asarray(g), np.linalg.det(A) * np.linalg.inv(A).T,
                               rtol=1e-3, atol=1e-3)


def _eigvals_sq(x):
    w = jnp.linalg.eigvals(x)
    return jnp.sum(jnp.real(w) ** 2) + jnp.sum(jnp.imag(w) ** 2)


def _eigvecs(x):
    return jnp.sum(jnp.real(jnp.linalg.eig(x)[1]))


def test_eigvals_differentiate_and_eigenvectors_raise():
    check_grads(_eigvals_sq, (A.astype(np.float64),), order=1, atol=3e-2, rtol=3e-2)
    with pytest.raises(NotImplementedError, match="eigh"):
        redraft.grad(_eigvecs)(A)


# ---- vmap and jit --------------------------------------------------------------------------------

def _cholesky(x):
    return jnp.linalg.cholesky(x)


def _eigh_pair(x):
    return jnp.linalg.eigh(x)


def _svd_triple(x):
    return jnp.linalg.svd(x)


def _qr_pair(x):
    return jnp.linalg.qr(x)


def _slogdet_pair(x):
    return jnp.linalg.slogdet(x)


def _rank(x):
    return jnp.linalg.matrix_rank(x)


BATCHED = [(_cholesky, (BATCH_SPD,)), (_inv, (BATCH,)), (_det, (BATCH,)),
           (_slogdet_pair, (BATCH,)), (_eigh_pair, (BATCH_SPD,)), (_svd_triple, (BATCH,)),
           (_qr_pair, (BATCH,)), (_pinv, (BATCH,)), (_rank, (BATCH,)),
           (_solve, (BATCH, B[None].repeat(3, 0)))]


def _close(got, want, atol=1e-4):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _close(g, w, atol)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=atol, rtol=1e-4)


@pytest.mark.parametrize("fn,args", BATCHED, ids=lambda v: getattr(v, "__name__", ""))
def test_vmap_matches_a_loop_and_jit_matches_eager(fn, args):
    got = redraft.vmap(fn)(*args)
    looped = [fn(*(a[i] for a in args)) for i in range(args[0].shape[0])]
    if isinstance(got, tuple):
        want = tuple(np.stack([np.asarray(r[k]) for r in looped]) for k in range(len(got)))
    else:
        want = np.stack([np.asarray(r) for r in looped])
    _close(got, want)
    _close(redraft.jit(fn)(*args), fn(*args))


def test_vmap_of_grad_of_logdet():
    got = redraft.vmap(redraft.grad(_logdet))(BATCH_SPD)
    np.testing.assert_allclose(np.asarray(got), np.linalg.inv(BATCH_SPD).transpose(0, 2, 1),
                               rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("fn", [jnp.linalg.det, jnp.linalg.slogdet, jnp.linalg.eigvals,
                                jnp.linalg.cholesky, jnp.linalg.svd, jnp.linalg.eigh,
                                jnp.linalg.qr, jnp.linalg.inv],
                         ids=lambda f: f.__name__)
def test_vmap_and_jit_of_the_library_functions_themselves(fn):
    arg = BATCH_SPD
    want = fn(arg)
    _close(redraft.vmap(fn)(arg), want, 1e-3)
    _close(redraft.jit(fn)(arg), want, 1e-3)


def _norm_of(ord, axis=None):
    def fn(x):
        return jnp.linalg.norm(x, ord, axis)
    return fn


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_every_matrix_norm_differentiates_to_order_two(ord):
    check_grads(_norm_of(ord), (TALL.astype(np.float64),), order=2, atol=3e-2, rtol=3e-2)


@pytest.mark.parametrize("ord", [None, 1, 3, 0.5, np.inf, -np.inf])
def test_every_vector_norm_differentiates_to_order_two(ord):
    check_grads(_norm_of(ord, 1), (TALL.astype(np.float64),), order=2, atol=3e-2, rtol=3e-2)


@pytest.mark.parametrize("ord,axis", [(None, None), (1, None), ("nuc", None), (-2, (1, 0)),
                                      (np.inf, 1), (3, 0)])
def test_vmap_of_norm_matches_a_loop(ord, axis):  # noqa: A002
    fn = _norm_of(ord, axis)
    _close(redraft.vmap(fn)(BATCH), np.stack([np.asarray(fn(x)) for x in BATCH]))
