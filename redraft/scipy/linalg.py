"""redraft.scipy.linalg: SciPy's linear algebra as jax.scipy.linalg offers it.

Built on the factorisation primitives (redraft.lax.linalg) and redraft.numpy, so every
function is differentiated, batched and compiled through its source. Special matrices
(toeplitz, hankel, pascal, ...) are built from index arithmetic. schur, rsf2csf, sqrtm and
funm go through the eigendecomposition, so they need a diagonalizable matrix (SciPy's go
through the QR iteration's Schur form).
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft.compiler.primitives import factorizations as lax_linalg
from redraft.numpy import linalg as _np_linalg
from redraft.numpy.promotion import promote_inexact
from redraft.runtime.convert import as_array


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


# ---- factorisations and solves ------------------------------------------------------------------

def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor (upper by default, as SciPy). As in SciPy and JAX only the
    triangle asked for is read, so the values of a matrix whose other triangle differs are
    theirs; the gradient is the derivative of exactly that (it lies in the triangle read,
    and agrees with finite differences in every direction; JAX's rule gives a matrix that
    agrees with it along symmetric directions only)."""
    (a,) = promote_inexact(a)
    read = jnp.tril(a) if lower else _mH(jnp.triu(a))
    mirrored = read + _mH(jnp.tril(read, -1))
    factor = lax_linalg.cholesky(mirrored, symmetrize_input=False)
    return factor if lower else _mH(factor)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor and which triangle it is, for cho_solve."""
    return cholesky(a, lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a @ x = b, from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b = promote_inexact(c, b)
    vector = b.ndim == 1
    b2 = b[..., None] if vector else b
    if lower:
        y = lax_linalg.triangular_solve(c, b2, left_side=True, lower=True)
        x = lax_linalg.triangular_solve(c, y, left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=True)
    else:
        y = lax_linalg.triangular_solve(c, b2, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=True)
        x = lax_linalg.triangular_solve(c, y, left_side=True, lower=False)
    if vector:
        return x[..., 0]
    return x


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) @ x = b for triangular a; trans 0/'N', 1/'T' or 2/'C'."""
    a, b = promote_inexact(a, b)
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                         f"{trans!r}")
    transpose = trans in (1, 2, "T", "C")
    conjugate = trans in (2, "C")
    vector = b.ndim == 1
    b2 = b[..., None] if vector else b
    x = lax_linalg.triangular_solve(a, b2, left_side=True, lower=lower,
                                    transpose_a=transpose, conjugate_a=conjugate,
                                    unit_diagonal=unit_diagonal)
    if vector:
        return x[..., 0]
    return x


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): packed factors and LAPACK-style row interchanges, for lu_solve."""
    lu_, pivots, _perm = lax_linalg.lu(promote_inexact(a)[0])
    return lu_, pivots


def _pivots_to_permutation(pivots, m):
    """The permutation that the row interchanges `pivots` apply to range(m)."""
    perm = jnp.broadcast_to(jnp.arange(m), pivots.shape[:-1] + (m,))
    for j in range(pivots.shape[-1]):
        p = pivots[..., j:j + 1]
        here = perm[..., j:j + 1]
        there = jnp.take_along_axis(perm, p, axis=-1)
        cols = jnp.arange(m)
        perm = jnp.where(cols == j, there, jnp.where(cols == p, here, perm))
    return perm


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a @ x = b (trans 0), a.T @ x = b (1) or a.H @ x = b (2), from lu_factor."""
    lu_, pivots = lu_and_piv
    lu_, b = promote_inexact(lu_, b)
    m = lu_.shape[-1]
    perm = _pivots_to_permutation(pivots, m)
    vector = b.ndim == 1
    b2 = b[..., None] if vector else b
    p = (perm[..., :, None] == jnp.arange(m)).astype(b2.dtype)
    if trans == 0:
        y = lax_linalg.triangular_solve(lu_, p @ b2, left_side=True, lower=True,
                                        unit_diagonal=True)
        x = lax_linalg.triangular_solve(lu_, y, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        y = lax_linalg.triangular_solve(lu_, b2, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=conj)
        z = lax_linalg.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=conj, unit_diagonal=True)
        x = jnp.swapaxes(p, -1, -2) @ z
    else:
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    if vector:
        return x[..., 0]
    return x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) with permute_l."""
    a = promote_inexact(a)[0]
    lu_, _pivots, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    eye_l = jnp.eye(m, k, dtype=a.dtype)
    lower = jnp.tril(lu_[..., :, :k], -1) + eye_l
    upper = jnp.triu(lu_[..., :k, :])
    p = jnp.swapaxes((perm[..., :, None] == jnp.arange(m)).astype(a.dtype), -1, -2)
    if permute_l:
        return p @ lower, upper
    return p, lower, upper


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r); mode 'full', 'economic' or 'r' (a one-tuple (r,), as SciPy)."""
    if pivoting:
        raise NotImplementedError("scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"scipy.linalg.qr: mode must be 'full', 'economic' or 'r', got "
                         f"{mode!r}")
    q, r = lax_linalg.qr(promote_inexact(a)[0], mode == "full")
    if mode == "r":
        return (r,)
    return q, r


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(q @ c, r) for mode 'left', (c @ q, r) for 'right', q of the economic QR."""
    if pivoting:
        raise NotImplementedError("scipy.linalg.qr_multiply: pivoting=True is not supported")
    a, c = promote_inexact(a, c)
    q, r = lax_linalg.qr(a, False)
    if conjugate:
        q = jnp.conj(q)
    if mode == "left":
        return q @ c, r
    if mode == "right":
        return c @ q, r
    raise ValueError(f"scipy.linalg.qr_multiply: mode must be 'left' or 'right', got {mode!r}")


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """(u, s, vh), or s alone without compute_uv."""
    return _np_linalg.svd(a, full_matrices, compute_uv)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None,
         driver=None):
    """(w, v) of a Hermitian matrix (w alone with eigvals_only)."""
    if b is not None:
        raise NotImplementedError("scipy.linalg.eigh: the generalized problem (b=) is not "
                                  "supported")
    if subset_by_index is not None or subset_by_value is not None:
        raise NotImplementedError("scipy.linalg.eigh: subsets are not supported")
    w, v = _np_linalg.eigh(a, "L" if lower else "U")
    if eigvals_only:
        return w
    return w, v


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None, tol=None):
    """The ascending eigenvalues of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e (eigenvalues only, as JAX)."""
    if not eigvals_only:
        raise NotImplementedError("eigh_tridiagonal: only eigvals_only=True is supported "
                                  "(as in JAX)")
    if select != "a":
        raise NotImplementedError("eigh_tridiagonal: only select='a' is supported")
    d, e = promote_inexact(d, e)
    n = d.shape[-1]
    e_row = jnp.pad(e, (0, 1))  # e[i] couples rows i and i + 1
    t = (d[:, None] * jnp.eye(n, dtype=d.dtype) + e_row[:, None] * jnp.eye(n, k=1, dtype=d.dtype)
         + jnp.conj(e_row)[None, :] * jnp.eye(n, k=-1, dtype=d.dtype))
    return _np_linalg.eigvalsh(t)


def det(a, overwrite_a=False, check_finite=True):
    return _np_linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    return _np_linalg.inv(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a="gen"):
    """x with a @ x = b (assume_a 'pos' solves through Cholesky)."""
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower), b)
    return _np_linalg.solve(a, b)


def polar(a, side="right", method="svd", eps=None, maxiter=None):
    """(u, p): a = u @ p (side 'right') or p @ u ('left'), u unitary, p positive."""
    if method != "svd":
        raise NotImplementedError("scipy.linalg.polar: only method='svd' is supported")
    a = promote_inexact(a)[0]
    w, s, vh = lax_linalg.svd(a, False, True)
    u = w @ vh
    s = s.astype(a.dtype)
    if side == "right":
        return u, _mH(vh) @ (s[..., :, None] * vh)
    if side == "left":
        return u, w @ (s[..., :, None] * _mH(w))
    raise ValueError(f"scipy.linalg.polar: side must be 'right' or 'left', got {side!r}")


def solve_sylvester(a, b, c, method="kron", tol=1e-8):
    """x with a @ x + x @ b = c, by one solve of the Kronecker system (sizes up to a few
    dozen; SciPy uses the Bartels-Stewart algorithm)."""
    a, b, c = promote_inexact(a, b, c)
    m, n = c.shape
    big = jnp.kron(jnp.eye(n, dtype=a.dtype), a) + jnp.kron(jnp.swapaxes(b, 0, 1),
                                                            jnp.eye(m, dtype=a.dtype))
    x = _np_linalg.solve(big, jnp.reshape(jnp.swapaxes(c, 0, 1), (-1,)))
    return jnp.swapaxes(jnp.reshape(x, (n, m)), 0, 1)


# ---- matrix functions ----------------------------------------------------------------------------

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0,
           1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = 24


def expm(A, upper_triangular=False, max_squarings=16):
    """The matrix exponential: Pade (13, 13) after scaling by 2^-s, then s squarings
    (Higham 2005); s is chosen from the 1-norm at run time, at most max_squarings."""
    a = promote_inexact(A)[0]
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)
    norm1 = jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1)
    s = jnp.clip(jnp.ceil(jnp.log2(jnp.maximum(norm1, 1e-30) / _THETA13)), 0, max_squarings)
    a = a / (2.0 ** s).astype(a.dtype)[..., None, None]
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u_inner = a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
    u = a @ (u_inner + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v_inner = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
    v = v_inner + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = _np_linalg.solve(v - u, v + u)
    for k in range(int(max_squarings)):
        r = jnp.where((k < s)[..., None, None], r @ r, r)
    return r


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """(expm(A), L(A, E)), the Frechet derivative of expm at A in direction E, from the
    exponential of the block matrix [[A, E], [0, A]] (Higham 2008, 3.2)."""
    a, e = promote_inexact(A, E)
    n = a.shape[-1]
    zero = jnp.zeros_like(a)
    big = jnp.concatenate([jnp.concatenate([a, e], axis=-1),
                           jnp.concatenate([zero, a], axis=-1)], axis=-2)
    out = expm(big)
    frechet = out[..., :n, n:]
    if compute_expm:
        return out[..., :n, :n], frechet
    return frechet


def funm(A, func, disp=True):
    """func applied to a diagonalizable matrix through its eigendecomposition (for real A,
    the real part: func should be real on the real axis)."""
    a = promote_inexact(A)[0]
    w, v = _np_linalg.eig(a)
    out = v @ (func(w)[..., :, None] * _np_linalg.inv(v))
    if a.dtype.kind == "f":
        return jnp.real(out)
    return out


def sqrtm(A, blocksize=1):
    """The principal square root of a diagonalizable matrix (complex, as JAX's)."""
    a = promote_inexact(A)[0]
    w, v = _np_linalg.eig(a)
    return v @ (jnp.sqrt(w)[..., :, None] * _np_linalg.inv(v))


def schur(a, output="real"):
    """(t, z) with a = z @ t @ z^H, z unitary and t upper triangular ('complex') or upper
    quasi-triangular with a 2x2 block per complex pair ('real'). Through the
    eigendecomposition: z is an orthonormal basis (QR) of the eigenvectors, real and
    imaginary parts of each complex pair spanning a real invariant plane (LAPACK lists a
    pair together, positive imaginary part first). So a must be diagonalizable, and the
    eigenvalues come in numpy.linalg.eig's order; SciPy's QR iteration has neither limit."""
    a = promote_inexact(a)[0]
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    w, v = _np_linalg.eig(a)
    if output == "complex" or a.dtype.kind == "c":
        z, _r = lax_linalg.qr(v, False)
        return jnp.triu(_mH(z) @ a.astype(z.dtype) @ z), z
    basis = jnp.where(jnp.imag(w)[..., None, :] < 0, jnp.imag(v), jnp.real(v))
    z, _r = lax_linalg.qr(basis, False)
    t = jnp.swapaxes(z, -1, -2) @ a @ z
    n = a.shape[-1]
    pair_start = (jnp.imag(w) > 0)[..., None, :]
    keep = jnp.triu(jnp.ones((n, n), dtype=bool)) | (jnp.eye(n, k=-1, dtype=bool) & pair_start)
    return jnp.where(keep, t, 0).astype(a.dtype), z


def rsf2csf(T, Z, check_finite=True):
    """(t, z): the complex Schur form of a real Schur form T with its basis Z (the 2x2
    blocks triangularised by a unitary change of basis, z = Z @ u)."""
    t_real, z_real = promote_inexact(T, Z)
    t, u = schur(t_real, "complex")
    return t, z_real.astype(u.dtype) @ u


def hessenberg(a, calc_q=False, overwrite_a=False, check_finite=True):
    """h (and q with calc_q) with a = q @ h @ q.H, h zero below its first subdiagonal, by
    Householder reflections."""
    a = promote_inexact(a)[0]
    n = a.shape[-1]
    h = a
    q = jnp.eye(n, dtype=a.dtype)
    rows = jnp.arange(n)
    for k in range(n - 2):
        x = jnp.where(rows > k, h[:, k], 0)
        alpha = jnp.linalg.norm(x)
        lead = h[k + 1, k]
        sign = jnp.where(jnp.real(lead) < 0, -1.0, 1.0).astype(a.dtype)
        v = x + (sign * alpha) * (rows == k + 1).astype(a.dtype)
        vnorm2 = jnp.real(jnp.sum(jnp.conj(v) * v))
        safe = jnp.where(vnorm2 == 0, 1.0, vnorm2).astype(a.dtype)
        beta = jnp.where(vnorm2 == 0, 0.0, 2.0).astype(a.dtype) / safe
        reflect = jnp.eye(n, dtype=a.dtype) - beta * jnp.outer(v, jnp.conj(v))
        h = reflect @ h @ reflect
        q = q @ reflect
    h = jnp.triu(h, -1)
    if calc_q:
        return h, q
    return h


# ---- special matrices ----------------------------------------------------------------------------

def block_diag(*arrs):
    """The block-diagonal matrix of the given 2-D (or lower rank) arrays."""
    if not arrs:
        return jnp.zeros((1, 0))
    mats = [jnp.atleast_2d(as_array(a)) for a in arrs]
    dtype = jnp.result_type(*mats)
    cols = sum(m.shape[1] for m in mats)
    rows = []
    left = 0
    for m in mats:
        right = cols - left - m.shape[1]
        rows.append(jnp.pad(m.astype(dtype), ((0, 0), (left, right))))
        left += m.shape[1]
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (default conj(c))."""
    c = jnp.ravel(as_array(c))
    r = jnp.conj(c) if r is None else jnp.ravel(as_array(r))
    vals = jnp.concatenate([jnp.flip(r[1:]), c])
    i = np.arange(c.shape[0])[:, None]
    j = np.arange(r.shape[0])[None, :]
    return vals[r.shape[0] - 1 + i - j]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (default zeros)."""
    c = jnp.ravel(as_array(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(as_array(r))
    vals = jnp.concatenate([c, r[1:]])
    i = np.arange(c.shape[0])[:, None]
    j = np.arange(r.shape[0])[None, :]
    return vals[i + j]


def circulant(c):
    """The circulant matrix with first column c."""
    c = jnp.ravel(as_array(c))
    n = c.shape[0]
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return c[(i - j) % n]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest first)."""
    a = jnp.ravel(promote_inexact(a)[0])
    n = a.shape[0]
    if n < 2:
        raise ValueError("companion: needs at least two coefficients")
    first = -a[1:] / a[0]
    below = jnp.eye(n - 2, n - 1, dtype=a.dtype)
    return jnp.concatenate([first[None, :], below], axis=0)


def fiedler(a):
    """The symmetric Fiedler matrix |a[i] - a[j]|."""
    a = jnp.ravel(as_array(a))
    return jnp.abs(a[:, None] - a[None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial a (highest coefficient first)."""
    a = np.asarray(a)
    if a.ndim != 1 or a.size < 2:
        raise ValueError("fiedler_companion: needs a 1-D array of at least two coefficients")
    if a[0] == 0:
        raise ValueError("fiedler_companion: the leading coefficient must not be 0")
    a = a / a[0]
    n = a.size - 1
    c = np.zeros((n, n), dtype=np.result_type(a.dtype, np.float32))
    c[0, 0] = -a[1]
    if n > 1:
        c[1, 0] = 1.0
    for t in range(0, n, 2):  # the 2x2 blocks down the diagonal
        if t + 1 < n:
            c[t, t + 1] = -a[t + 2]
        if t + 2 < n:
            c[t, t + 2] = 1.0
            c[t + 2, t + 1] = -a[t + 3]
        if t + 3 < n:
            c[t + 3, t + 1] = 1.0
    return jnp.asarray(c)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v = convolve(a, v, mode) for v of length n."""
    a = jnp.ravel(as_array(a))
    m = a.shape[0]
    if mode == "full":
        rows, offset = m + n - 1, 0
    elif mode == "same":
        rows, offset = max(m, n), (min(m, n) - 1) // 2
    elif mode == "valid":
        rows, offset = max(m, n) - min(m, n) + 1, min(m, n) - 1
    else:
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got "
                         f"{mode!r}")
    i = np.arange(rows)[:, None] + offset
    j = np.arange(n)[None, :]
    k = i - j
    inside = (k >= 0) & (k < m)
    padded = jnp.concatenate([a, jnp.zeros((1,), a.dtype)])
    return padded[np.where(inside, k, m)]


def dft(n, scale=None):
    """The n-point DFT matrix (scale None, 'n' or 'sqrtn')."""
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    if scale == "n":
        m = m / n
    elif scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale is not None:
        raise ValueError(f"dft: scale must be None, 'n' or 'sqrtn', got {scale!r}")
    return jnp.asarray(m.astype(np.complex64))


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix (n a power of two), Sylvester's construction."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of two, got {n}")
    h = np.array([[1]])
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def helmert(n, full=False):
    """The Helmert matrix of order n (without its first row unless full)."""
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    out = h / np.sqrt(d)[:, None]
    return jnp.asarray((out if full else out[1:]).astype(np.float32))


def hilbert(n):
    """The Hilbert matrix 1 / (i + j + 1)."""
    i = np.arange(n)
    return jnp.asarray((1.0 / (i[:, None] + i[None, :] + 1)).astype(np.float32))


def invhilbert(n, exact=False):
    """The inverse of the n x n Hilbert matrix (float32; exact integers as int64)."""
    out = np.empty((n, n), dtype=np.float64 if not exact else object)
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2)
    return jnp.asarray(out.astype(np.int64 if exact else np.float32))


def pascal(n, kind="symmetric", exact=True):
    """The Pascal matrix: 'symmetric', 'lower' or 'upper'."""
    i = np.arange(n)
    lower = np.array([[math.comb(r, c) for c in range(n)] for r in range(n)], dtype=np.int64)
    if kind == "lower":
        out = lower
    elif kind == "upper":
        out = lower.T
    elif kind == "symmetric":
        out = np.array([[math.comb(r + c, r) for c in i] for r in i], dtype=np.int64)
    else:
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return jnp.asarray(out if exact else out.astype(np.float32))


def invpascal(n, kind="symmetric", exact=True):
    """The inverse of pascal(n, kind)."""
    lower_inv = np.array([[(-1) ** (r + c) * math.comb(r, c) for c in range(n)]
                          for r in range(n)], dtype=np.int64)
    if kind == "lower":
        out = lower_inv
    elif kind == "upper":
        out = lower_inv.T
    elif kind == "symmetric":
        out = lower_inv.T @ lower_inv
    else:
        raise ValueError(f"invpascal: kind must be 'symmetric', 'lower' or 'upper', got "
                         f"{kind!r}")
    return jnp.asarray(out if exact else out.astype(np.float32))


def leslie(f, s):
    """The Leslie matrix: fecundities f on the first row, survivals s below the diagonal."""
    f, s = promote_inexact(f, s)
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ValueError(f"leslie: s must have one entry fewer than f, got {s.shape} and "
                         f"{f.shape}")
    below = s[..., :, None] * jnp.eye(n - 1, n, dtype=f.dtype)
    return jnp.concatenate([f[..., None, :], below], axis=-2)
