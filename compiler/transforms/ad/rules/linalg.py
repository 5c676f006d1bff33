"""Derivative rules of the factorisations (lax.linalg); lax.fft's are in its family file.

As the literature gives them: cholesky after Murray (2016), the triangular solve and LU by
differentiating A X = B and P A = L U, QR after Walter and Lehmann's forward formula (its
reverse derived from it), eigh after Giles (2008), SVD after Townsend (2016) (the thin
factorisation; full factors of a non-square matrix have no unique derivative). Reverse rules
use the transpose convention for complex values, as JAX does; the fft's reverse rules are
its transposes (the DFT matrix is symmetric; RFFT's transpose goes through a full FFT of the
zero-padded half spectrum, IRFFT's through an RFFT with the doubled interior bins).
"""
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lah
from redraft.compiler.primitives.registry import defjvp, defnondiff, defvjp

import redraft.numpy as jnp
from redraft import lax

tsolve = lax.linalg.triangular_solve

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


defjvp(lax.linalg.cholesky, _cholesky_jvp)
defvjp(lax.linalg.cholesky, _cholesky_vjp)

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


defjvp(tsolve, _tsolve_jvp_a, _tsolve_jvp_b)
defvjp(tsolve, _tsolve_vjp_a, _tsolve_vjp_b)

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


defjvp(lax.linalg.lu, _lu_jvp)
defvjp(lax.linalg.lu, _lu_vjp)

# ---- qr (m >= n, reduced or square) --------------------------------------------------------------


def _qr_jvp(x_dot, ans, x, full_matrices=True):
    q, r = ans
    dx_rinv = lah.solve_upper_right(r, x_dot)
    c = lah.mH(q) @ dx_rinv
    low = jnp.tril(c, -1)
    omega = low - lah.mH(low)
    q_dot = q @ omega + (dx_rinv - q @ c)
    r_dot = (c - omega) @ r
    return (q_dot, r_dot)


def _qr_vjp(g, ans, x, full_matrices=True):
    q, r = ans
    e = lah.mT(q) @ g[0] - g[1] @ lah.mT(r)
    g_c = jnp.tril(e - lah.mT(e), -1) - e
    b = g[0] + q @ g_c
    return tsolve(r, b, left_side=False, lower=False, transpose_a=True)


defjvp(lax.linalg.qr, _qr_jvp)
defvjp(lax.linalg.qr, _qr_vjp)

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


defjvp(lax.linalg.eigh, _eigh_jvp)
defvjp(lax.linalg.eigh, _eigh_vjp)

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


defjvp(lax.linalg.svd, _svd_jvp)
defvjp(lax.linalg.svd, _svd_vjp)

defnondiff(lax.linalg.eig, "eig's eigenvectors have no unique normalisation and its "
           "eigenvalues may be complex for real input: differentiate eigh (Hermitian input) "
           "instead")

# ---- norms: the Euclidean one has rules safe at 0 (the rest differentiate through source) --

defjvp(jnp.linalg._euclidean_norm, lambda x_dot, ans, x, axis, keepdims: ad.safe_div(
    jnp.sum(jnp.real(jnp.conj(x) * x_dot), axis=axis, keepdims=keepdims), ans))
defvjp(jnp.linalg._euclidean_norm, lambda g, ans, x, axis, keepdims: ad.unsum(
    ad.safe_div(g, ans), x, axis, keepdims) * x)

# ---- eig: eigenvalues only (dw = diag(V^-1 dA V)); eigenvectors raise -------------------------


def _eigvals_jvp(a_dot, ans, a):
    _w, v = jnp.linalg.eig(a)
    return lah.diag_part(jnp.linalg.solve(v, a_dot.astype(v.dtype) @ v))


def _eigvals_vjp(g, ans, a):
    _w, v = jnp.linalg.eig(a)
    xb = lah.mT(jnp.linalg.inv(v)) @ lah.diag_matrix(g.astype(v.dtype)) @ lah.mT(v)
    return ad.cotangent_astype(xb, a)


defjvp(jnp.linalg.eigvals, _eigvals_jvp)
defvjp(jnp.linalg.eigvals, _eigvals_vjp)
defjvp(jnp.linalg.eig, lambda a_dot, ans, a: lah.no_derivative("jnp.linalg.eig"))
defvjp(jnp.linalg.eig, lambda g, ans, a: lah.no_derivative("jnp.linalg.eig"))

# ---- det and slogdet (Giles 2008) ----------------------------------------------------------------

defjvp(jnp.linalg.det, lambda a_dot, ans, a: ans * jnp.trace(jnp.linalg.solve(a, a_dot), 0, -2, -1))
defvjp(jnp.linalg.det, lambda g, ans, a: (g * ans)[..., None, None] * lah.mT(jnp.linalg.inv(a)))
defjvp(jnp.linalg.slogdet, lambda a_dot, ans, a, method=None: (
    ad.zeros_like(ans[0]), jnp.real(jnp.trace(jnp.linalg.solve(a, a_dot), 0, -2, -1))))
defvjp(jnp.linalg.slogdet, lambda g, ans, a, method=None:
       g[1].astype(a.dtype)[..., None, None] * lah.mT(jnp.linalg.inv(a)))

# jnp.imag, which the fft's users need (jnp.real's rules are in rules/shapes.py)
defjvp(jnp.imag, lambda x_dot, ans, x: jnp.imag(x_dot))
defvjp(jnp.imag, lambda g, ans, x: ad.cotangent_astype(g * -1j, x) if jnp.iscomplexobj(x)
       else jnp.zeros_like(x))
