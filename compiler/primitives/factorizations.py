"""Matrix factorisations: cholesky, triangular_solve, lu, qr, eigh, svd, eig.

Each works on the last two axes and maps over any leading (batch) axes, as JAX's
lax.linalg does, so vmap only moves its batch axis in front. The impl rules are NumPy
(numpy.linalg's LAPACK for cholesky, qr, eigh, svd and eig; LU with partial pivoting and
triangular substitution written here, vectorised over the batch, since numpy.linalg has
neither; where NumPy's wheel brings OpenBLAS, the triangular solve calls its trsm,
kernels/blas.py); compiled code calls the same functions as host calls. As in JAX,
cholesky of a matrix that is not positive definite gives NaNs rather than raising.
"""
from __future__ import annotations

import numpy as np
from redraft.kernels import blas
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import (LeadingAxesBatching, ad, defbatch, defjvp,
                                                  defnondiff, defstatic, defvjp, jnp, lah,
                                                  lax, names_primitive)

FAMILY = "factorizations"

cholesky_p = Primitive("cholesky", FAMILY)
triangular_solve_p = Primitive("triangular_solve", FAMILY)
lu_p = Primitive("lu", FAMILY, WeakRule.NEVER, multiple_results=True)
qr_p = Primitive("qr", FAMILY, WeakRule.NEVER, multiple_results=True)
eigh_p = Primitive("eigh", FAMILY, WeakRule.NEVER, multiple_results=True)
svd_p = Primitive("svd", FAMILY, WeakRule.NEVER, multiple_results=True)
eig_p = Primitive("eig", FAMILY, WeakRule.NEVER, multiple_results=True)

FACTORIZATIONS = (cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, svd_p, eig_p)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.complex64 else (
        np.dtype(np.float64) if dtype == np.complex128 else dtype)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128) if dtype in (np.float64, np.complex128) else np.dtype(
        np.complex64)


def _check_matrix(x: ShapedArray, name: str, square: bool = True) -> None:
    if len(x.shape) < 2:
        raise ValueError(f"{name}: expects an array of rank >= 2 (..., m, n), got shape "
                         f"{tuple(x.shape)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: expects square matrices in the last two axes, got shape "
                         f"{tuple(x.shape)}")
    if np.dtype(x.dtype).kind not in "fc":
        raise TypeError(f"{name}: expects a floating or complex array, got {x.dtype}")


# ---- impl rules (NumPy) ---------------------------------------------------------------------

def cholesky_impl(a: np.ndarray) -> np.ndarray:
    """The lower factor; NaNs for matrices that are not positive definite (as JAX)."""
    a = np.asarray(a)
    try:
        return np.linalg.cholesky(a).astype(a.dtype, copy=False)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1,) + a.shape[-2:])
        out = np.empty_like(flat)
        for k, m in enumerate(flat):
            try:
                out[k] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                out[k] = np.nan
        return out.reshape(a.shape)


def _effective(a: np.ndarray, lower: bool, transpose_a: bool, conjugate_a: bool,
               unit_diagonal: bool) -> tuple[np.ndarray, bool]:
    """The triangular matrix op(a) actually solved with, and whether it is lower."""
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    if conjugate_a:
        t = np.conj(t)
    if transpose_a:
        return np.swapaxes(t, -1, -2), not lower
    return t, lower


SUBSTITUTION_BLOCK = 64  # rows of a triangular solve done by one LAPACK solve (past ~100
#                         OpenBLAS threads its LU, which costs more than it gains here)


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """x with t @ x = b for triangular t, over the batch, a block of rows at a time: the
    rows solved so far are subtracted by one product, and the block's own triangle solved
    by LAPACK (numpy.linalg.solve); a block with a zero on its diagonal goes row by row,
    giving the infinities and NaNs of the division (a Python loop per row cost ~5 us a
    row: 0.3 ms for 100 x 100)."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    starts = range(0, n, SUBSTITUTION_BLOCK)
    for i0 in (starts if lower else reversed(starts)):
        i1 = min(i0 + SUBSTITUTION_BLOCK, n)
        done = slice(0, i0) if lower else slice(i1, n)
        rhs = b[..., i0:i1, :] - t[..., i0:i1, done] @ x[..., done, :]
        block = t[..., i0:i1, i0:i1]
        if np.all(np.diagonal(block, axis1=-2, axis2=-1) != 0) and np.all(np.isfinite(block)):
            x[..., i0:i1, :] = np.linalg.solve(block, rhs)
        else:
            x[..., i0:i1, :] = _substitute_rows(block, rhs, lower)
    return x


def _substitute_rows(t: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """x with t @ x = b for triangular t, row by row over the batch (forward/backward)."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def triangular_solve_impl(a, b, *, left_side: bool, lower: bool, transpose_a: bool,
                          conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    """x with op(a) @ x = b (left_side) or x @ op(a) = b: by NumPy's BLAS where it serves
    the dtype (conjugation is nothing for real matrices), else by substitution here."""
    a, b = np.asarray(a), np.asarray(b)
    if not np.iscomplexobj(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            x = blas.trsm(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                          unit_diagonal=unit_diagonal)
        if x is not None:
            return x
    t, is_lower = _effective(a, lower, transpose_a, conjugate_a, unit_diagonal)
    with np.errstate(divide="ignore", invalid="ignore"):
        if left_side:
            return _substitute(t, b, is_lower).astype(b.dtype, copy=False)
        # x op(a) = b  <=>  op(a)^T x^T = b^T
        xt = _substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not is_lower)
        return np.swapaxes(xt, -1, -2).astype(b.dtype, copy=False)


def lu_impl(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial-pivoting LU of (..., m, n): packed L\\U, LAPACK-style pivots (int32) and the
    permutation (int32) with a[perm] = L @ U; vectorised over the batch."""
    a = np.array(a, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((-1, m, n))
    rows = np.arange(lu.shape[0])
    pivots = np.zeros((lu.shape[0], k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (lu.shape[0], 1))
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p
        top, piv = lu[rows, j].copy(), lu[rows, p].copy()
        lu[rows, j], lu[rows, p] = piv, top
        pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = pp, pj
        diag = lu[:, j, j]
        safe = np.where(diag == 0, 1, diag)
        lu[:, j + 1:, j] = np.where((diag == 0)[:, None], 0, lu[:, j + 1:, j] / safe[:, None])
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return (lu.reshape(a.shape), pivots.reshape(batch + (k,)),
            perm.reshape(batch + (m,)))


def qr_impl(a, *, full_matrices: bool) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a)
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


def eigh_impl(a, *, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvectors, eigenvalues ascending), reading only the `lower` (or upper) triangle."""
    a = np.asarray(a)
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return v.astype(a.dtype, copy=False), w.astype(_real_dtype(a.dtype), copy=False)


def svd_impl(a, *, full_matrices: bool, compute_uv: bool) -> tuple[np.ndarray, ...]:
    """(s,) or (s, u, vh), singular values descending."""
    a = np.asarray(a)
    real = _real_dtype(a.dtype)
    if not compute_uv:
        return (np.linalg.svd(a, compute_uv=False).astype(real, copy=False),)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (s.astype(real, copy=False), u.astype(a.dtype, copy=False),
            vh.astype(a.dtype, copy=False))


def eig_impl(a) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues, right eigenvectors), complex, in LAPACK's order."""
    a = np.asarray(a)
    w, v = np.linalg.eig(a)
    out = _complex_dtype(a.dtype)
    return w.astype(out, copy=False), v.astype(out, copy=False)


impl_rules[cholesky_p] = cholesky_impl
impl_rules[triangular_solve_p] = triangular_solve_impl
impl_rules[lu_p] = lu_impl
impl_rules[qr_p] = qr_impl
impl_rules[eigh_p] = eigh_impl
impl_rules[svd_p] = svd_impl
impl_rules[eig_p] = eig_impl


# ---- abstract evaluation ---------------------------------------------------------------------

def _cholesky_abstract(a: ShapedArray) -> ShapedArray:
    _check_matrix(a, "cholesky")
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def _triangular_solve_abstract(a: ShapedArray, b: ShapedArray, *, left_side, lower,
                               transpose_a, conjugate_a, unit_diagonal) -> ShapedArray:
    _check_matrix(a, "triangular_solve")
    if len(b.shape) != len(a.shape) or tuple(b.shape[:-2]) != tuple(a.shape[:-2]):
        raise ValueError(f"triangular_solve: b of shape {tuple(b.shape)} must have a's batch "
                         f"axes {tuple(a.shape[:-2])} and rank {len(a.shape)}")
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != a.shape[-1]:
        raise ValueError(f"triangular_solve: a of shape {tuple(a.shape)} does not fit b of "
                         f"shape {tuple(b.shape)} (left_side={left_side})")
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise TypeError(f"triangular_solve: a and b must have one dtype, got {a.dtype} and "
                        f"{b.dtype}")
    return ShapedArray(b.shape, b.dtype, False)


def _lu_abstract(a: ShapedArray):
    _check_matrix(a, "lu", square=False)
    m, n = a.shape[-2:]
    batch = tuple(a.shape[:-2])
    i32 = np.dtype(np.int32)
    return (ShapedArray(a.shape, a.dtype), ShapedArray(batch + (min(m, n),), i32),
            ShapedArray(batch + (m,), i32))


def _qr_abstract(a: ShapedArray, *, full_matrices: bool):
    _check_matrix(a, "qr", square=False)
    m, n = a.shape[-2:]
    batch = tuple(a.shape[:-2])
    k = m if full_matrices else min(m, n)
    return ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype)


def _eigh_abstract(a: ShapedArray, *, lower: bool):
    _check_matrix(a, "eigh")
    return (ShapedArray(a.shape, a.dtype),
            ShapedArray(tuple(a.shape[:-1]), _real_dtype(np.dtype(a.dtype))))


def _svd_abstract(a: ShapedArray, *, full_matrices: bool, compute_uv: bool):
    _check_matrix(a, "svd", square=False)
    m, n = a.shape[-2:]
    batch = tuple(a.shape[:-2])
    k = min(m, n)
    s = ShapedArray(batch + (k,), _real_dtype(np.dtype(a.dtype)))
    if not compute_uv:
        return (s,)
    ku, kv = (m, n) if full_matrices else (k, k)
    return s, ShapedArray(batch + (m, ku), a.dtype), ShapedArray(batch + (kv, n), a.dtype)


def _eig_abstract(a: ShapedArray):
    _check_matrix(a, "eig")
    out = _complex_dtype(np.dtype(a.dtype))
    return ShapedArray(tuple(a.shape[:-1]), out), ShapedArray(a.shape, out)


abstract_eval_rules[cholesky_p] = _cholesky_abstract
abstract_eval_rules[triangular_solve_p] = _triangular_solve_abstract
abstract_eval_rules[lu_p] = _lu_abstract
abstract_eval_rules[qr_p] = _qr_abstract
abstract_eval_rules[eigh_p] = _eigh_abstract
abstract_eval_rules[svd_p] = _svd_abstract
abstract_eval_rules[eig_p] = _eig_abstract


# ---- the lax.linalg functions ------------------------------------------------------------------

def _aval(x: Array) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, x._weak)


def _bind_checked(prim: Primitive, *args: Array, **params):
    abstract_eval_rules[prim](*(_aval(a) for a in args), **params)
    return bind(prim, *args, **params)


def _symmetrized(x: Array) -> Array:
    """(x + x^H) / 2: the Hermitian part, which cholesky and eigh read by default."""
    from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS as E
    xh = E["conj"](x.swapaxes(-1, -2)) if x.dtype.kind == "c" else x.swapaxes(-1, -2)
    return E["div"](E["add"](x, xh), as_array(np.asarray(2, x.dtype)))


def cholesky(x, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor of each (..., n, n) matrix (NaN if not positive definite)."""
    x = as_array(x)
    _check_matrix(_aval(x), "cholesky")
    if symmetrize_input:
        x = _symmetrized(x)
    return _bind_checked(cholesky_p, x)


def triangular_solve(a, b, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """x with op(a) @ x = b (left_side) or x @ op(a) = b, for triangular a; op is a, a.T,
    conj(a) or a.H. Leading batch axes of a and b broadcast."""
    a, b = as_array(a), as_array(b)
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[:-2] != b.shape[:-2]:
        from redraft.compiler.primitives.shape import broadcast_in_dim
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a, b = (_broadcast_batch(v, batch, broadcast_in_dim) for v in (a, b))
    return _bind_checked(triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                         transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                         unit_diagonal=bool(unit_diagonal))


def _broadcast_batch(v: Array, batch: tuple, broadcast_in_dim) -> Array:
    if v.shape[:-2] == tuple(batch):
        return v
    shape = tuple(batch) + v.shape[-2:]
    lead = len(shape) - v.ndim
    return broadcast_in_dim(v, shape, tuple(range(lead, len(shape))))


def lu(x) -> tuple[Array, Array, Array]:
    """(lu, pivots, permutation): packed unit-lower L and upper U with x[perm] = L @ U."""
    return _bind_checked(lu_p, as_array(x))


def qr(x, full_matrices: bool = True) -> tuple[Array, Array]:
    """(q, r) with x = q @ r (lax.linalg.qr; full_matrices as JAX's default)."""
    return _bind_checked(qr_p, as_array(x), full_matrices=bool(full_matrices))


def eigh(x, lower: bool = True, symmetrize_input: bool = True) -> tuple[Array, Array]:
    """(v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian matrices."""
    x = as_array(x)
    _check_matrix(_aval(x), "eigh")
    if symmetrize_input:
        x = _symmetrized(x)
    return _bind_checked(eigh_p, x, lower=bool(lower))


def svd(x, full_matrices: bool = True, compute_uv: bool = True):
    """(u, s, vh) (or s alone without compute_uv), singular values descending."""
    out = _bind_checked(svd_p, as_array(x), full_matrices=bool(full_matrices),
                        compute_uv=bool(compute_uv))
    if not compute_uv:
        return out[0]
    s, u, vh = out
    return u, s, vh


def eig(x, compute_left_eigenvectors: bool = False, compute_right_eigenvectors: bool = True):
    """(w, vr): complex eigenvalues and right eigenvectors of general square matrices."""
    if compute_left_eigenvectors:
        raise NotImplementedError("lax.linalg.eig: left eigenvectors are not supported; "
                                  "take the right eigenvectors of the conjugate transpose")
    w, v = _bind_checked(eig_p, as_array(x))
    return (w, v) if compute_right_eigenvectors else (w,)


for _fn, _p in ((cholesky, cholesky_p), (triangular_solve, triangular_solve_p), (lu, lu_p),
                (qr, qr_p), (eigh, eigh_p), (svd, svd_p), (eig, eig_p)):
    names_primitive(_fn, _p)

# ---- derivatives ---------------------------------------------------------------------------------
# As the literature gives them: cholesky after Murray (2016), the triangular solve and LU by
# differentiating A X = B and P A = L U, QR after Walter and Lehmann's forward formula (its
# reverse derived from it), eigh after Giles (2008), SVD after Townsend (2016) (the thin
# factorisation; full factors of a non-square matrix have no unique derivative). Reverse rules
# use the transpose convention for complex values, as JAX does. Rules read `jnp`, `lax`, `ad`
# and `lah` through the registry's placeholders.

tsolve = triangular_solve

# ---- cholesky ----------------------------------------------------------------------------------


def _cholesky_jvp(x_dot, ans, x, symmetrize_input=True):
    s = lah.sym(x_dot) if symmetrize_input else x_dot
    tmp = tsolve(ans, s, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    inner = tsolve(ans, tmp, left_side=True, lower=True)
    return ans @ lah.phi(inner)


def _cholesky_vjp(g, ans, x, symmetrize_input=True):
    p = lah.phi(lah.mT(ans) @ g)
    t = tsolve(ans, p, left_side=True, lower=True, transpose_a=True)
    s = tsolve(ans, t, left_side=False, lower=True)
    if symmetrize_input:
        return (s + lah.mT(s)) / 2
    return s


defjvp(cholesky_p, _cholesky_jvp)
defvjp(cholesky_p, _cholesky_vjp)

# ---- triangular_solve ----------------------------------------------------------------------------


def _tsolve_jvp_a(a_dot, ans, a, b, left_side=False, lower=False, transpose_a=False,
                  conjugate_a=False, unit_diagonal=False):
    da = lah.op(lah.tri(a_dot, lower, unit_diagonal), transpose_a, conjugate_a)
    rhs = -(da @ ans) if left_side else -(ans @ da)
    return tsolve(a, rhs, left_side, lower, transpose_a, conjugate_a, unit_diagonal)


def _tsolve_jvp_b(b_dot, ans, a, b, left_side=False, lower=False, transpose_a=False,
                  conjugate_a=False, unit_diagonal=False):
    return tsolve(a, b_dot, left_side, lower, transpose_a, conjugate_a, unit_diagonal)


def _tsolve_vjp_b(g, ans, a, b, left_side=False, lower=False, transpose_a=False,
                  conjugate_a=False, unit_diagonal=False):
    return tsolve(a, g, left_side, lower, not transpose_a, conjugate_a, unit_diagonal)


def _tsolve_vjp_a(g, ans, a, b, left_side=False, lower=False, transpose_a=False,
                  conjugate_a=False, unit_diagonal=False):
    b_bar = tsolve(a, g, left_side, lower, not transpose_a, conjugate_a, unit_diagonal)
    m = -(b_bar @ lah.mT(ans)) if left_side else -(lah.mT(ans) @ b_bar)
    return lah.tri(lah.op(m, transpose_a, conjugate_a), lower, unit_diagonal)


defjvp(triangular_solve_p, _tsolve_jvp_a, _tsolve_jvp_b)
defvjp(triangular_solve_p, _tsolve_vjp_a, _tsolve_vjp_b)

# ---- lu (square) ---------------------------------------------------------------------------------


def _lu_jvp(x_dot, ans, x):
    lu, pivots, perm = ans
    l, u = lah.lu_factors(lu)
    pa = lah.permutation_matrix(perm, x_dot.dtype) @ x_dot
    la = tsolve(l, pa, left_side=True, lower=True, unit_diagonal=True)
    lau = tsolve(u, la, left_side=False, lower=False)
    lu_dot = l @ jnp.tril(lau, -1) + jnp.triu(lau) @ u
    return (lu_dot, ad.zeros_like(pivots), ad.zeros_like(perm))


def _lu_vjp(g, ans, x):
    lu, _pivots, perm = ans
    l, u = lah.lu_factors(lu)
    lau_bar = jnp.tril(lah.mT(l) @ g[0], -1) + jnp.triu(g[0] @ lah.mT(u))
    t = tsolve(l, lau_bar, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
    pa_bar = tsolve(u, t, left_side=False, lower=False, transpose_a=True)
    return lah.mT(lah.permutation_matrix(perm, pa_bar.dtype)) @ pa_bar


defjvp(lu_p, _lu_jvp)
defvjp(lu_p, _lu_vjp)

# ---- qr ------------------------------------------------------------------------------------------
# A tall or square x (m >= n, reduced or square factors) has the rules below. A wide one
# (m < n) is x = [X Y] with X square: Q R_X = X and R_Y = Q^T Y, so R_Y's derivative is
# Q^T (dY - dQ R_Y) and the rules of the square X do the rest.


def _qr_jvp(x_dot, ans, x, full_matrices=True):
    q, r = ans
    m = x.shape[-2]
    if m >= x.shape[-1]:
        return lah.qr_jvp_tall(x_dot, q, r)
    q_dot, r_x_dot = lah.qr_jvp_tall(x_dot[..., :m], q, r[..., :m])
    r_y_dot = lah.mH(q) @ (x_dot[..., m:] - q_dot @ r[..., m:])
    return (q_dot, jnp.concatenate([r_x_dot, r_y_dot], axis=-1))


def _qr_vjp(g, ans, x, full_matrices=True):
    q, r = ans
    m = x.shape[-2]
    if m >= x.shape[-1]:
        return lah.qr_vjp_tall(g[0], g[1], q, r)
    g_ry = g[1][..., m:]
    g_x = lah.qr_vjp_tall(g[0] - q @ g_ry @ lah.mT(r[..., m:]), g[1][..., :m], q,
                            r[..., :m])
    return jnp.concatenate([g_x, q @ g_ry], axis=-1)


defjvp(qr_p, _qr_jvp)
defvjp(qr_p, _qr_vjp)

# ---- eigh --------------------------------------------------------------------------------------


def _eigh_jvp(x_dot, ans, x, lower=True, symmetrize_input=True):
    v, w = ans
    xd = lah.sym(x_dot) if symmetrize_input else x_dot
    vdag = lah.mH(v) @ xd @ v
    f = lah.inverse_gaps(w).astype(vdag.dtype)
    return (v @ (f * vdag), jnp.real(lah.diag_part(vdag)))


def _eigh_vjp(g, ans, x, lower=True, symmetrize_input=True):
    v, w = ans
    f = lah.inverse_gaps(w).astype(v.dtype)
    inner = lah.diag_matrix(g[1].astype(v.dtype)) + f * (lah.mT(v) @ g[0])
    xb = v @ inner @ lah.mT(v)
    if symmetrize_input:
        return (xb + lah.mT(xb)) / 2
    return xb


defjvp(eigh_p, _eigh_jvp)
defvjp(eigh_p, _eigh_vjp)

# ---- svd (thin) ----------------------------------------------------------------------------------


def _svd_jvp(x_dot, ans, x, full_matrices=True, compute_uv=True):
    u, s, vt = lax.linalg.svd(x, False, True)
    v = lah.mH(vt)
    ds_mat = lah.mH(u) @ x_dot @ v
    ds = jnp.real(lah.diag_part(ds_mat))
    if not compute_uv:
        return ds
    f = lah.svd_gaps(s).astype(x.dtype)
    s_row = s[..., None, :].astype(x.dtype)
    dss = ds_mat * s_row
    sds = lah.mT(s_row) * ds_mat
    du = u @ (f * (dss + lah.mH(dss)))
    dv = v @ (f * (sds + lah.mH(sds)))
    m, n = x.shape[-2:]
    if m > n:
        dav = x_dot @ v
        du = du + (dav - u @ (lah.mH(u) @ dav)) / s_row
    if n > m:
        dahu = lah.mH(x_dot) @ u
        dv = dv + (dahu - v @ (vt @ dahu)) / s_row
    return (du, ds, lah.mH(dv))


def _svd_vjp(g, ans, x, full_matrices=True, compute_uv=True):
    u, s, vt = lax.linalg.svd(x, False, True)
    if not compute_uv:
        return u @ lah.diag_matrix(g.astype(x.dtype)) @ vt
    v = lah.mT(vt)
    gu, gs, gv = g[0], g[1], lah.mT(g[2])
    f = lah.svd_gaps(s).astype(x.dtype)
    sm = lah.diag_matrix(s.astype(x.dtype))
    s_inv = lah.diag_matrix(lah.safe_reciprocal(s).astype(x.dtype))
    ju = lah.mT(u) @ gu
    jv = lah.mT(v) @ gv
    core = (lah.diag_matrix(gs.astype(x.dtype)) + (f * (ju - lah.mT(ju))) @ sm
            + sm @ (f * (jv - lah.mT(jv))))
    xb = u @ core @ vt
    m, n = x.shape[-2:]
    if m > n:
        xb = xb + (gu - u @ ju) @ s_inv @ vt
    if n > m:
        xb = xb + u @ s_inv @ (lah.mT(gv) - lah.mT(jv) @ vt)
    return xb


defjvp(svd_p, _svd_jvp)
defvjp(svd_p, _svd_vjp)

defnondiff(eig_p, "eig's eigenvectors have no unique normalisation and its "
           "eigenvalues may be complex for real input: differentiate eigh (Hermitian input) "
           "instead")

# the flags are static: derivatives flow through the matrices only
defstatic(cholesky_p, "symmetrize_input")
defstatic(triangular_solve_p, "left_side", "lower", "transpose_a", "conjugate_a",
          "unit_diagonal")
defstatic(qr_p, "full_matrices")
defstatic(eigh_p, "lower", "symmetrize_input")
defstatic(svd_p, "full_matrices", "compute_uv")

# ---- batching: each maps over leading axes already (svd's and eig's result structure depends
# on a flag: their rules are in batch/rules/linalg.py) -------------------------------------------

defbatch(cholesky_p, LeadingAxesBatching(("x",)))
defbatch(triangular_solve_p, LeadingAxesBatching(("a", "b")))
defbatch(lu_p, LeadingAxesBatching(("x",), results=3))
defbatch(qr_p, LeadingAxesBatching(("x",), results=2))
defbatch(eigh_p, LeadingAxesBatching(("x",), results=2))
