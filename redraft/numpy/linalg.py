"""redraft.numpy.linalg: decompositions, solves, inverses, determinants and norms.

Written on the factorisation primitives of redraft.lax.linalg (cholesky, triangular_solve,
lu, qr, eigh, svd, eig), so the AD transforms and vmap read these functions' source and
meet only primitives with rules; every function maps over leading batch axes as JAX's
does. det and slogdet carry their own rules (Giles 2008: d det = det tr(A^-1 dA)), so their
derivative does not go through LU's. Results are plain tuples in JAX's order (w, v), (u, s,
vh), (q, r), (sign, logabsdet).
"""
from __future__ import annotations

import numpy as np

import redraft.numpy.base as jnp
from redraft.compiler.primitives import factorizations as lax_linalg
from redraft.numpy import reductions, ufuncs
from redraft.numpy.promotion import promote_inexact
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array


def _inexact(a) -> Array:
    return promote_inexact(a)[0]


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _diag(x):
    """The diagonal of each square matrix, as a masked sum (compiles to one fused loop;
    jnp.diagonal gathers, which the LLVM backend does not lower)."""
    return reductions.sum(x * jnp.eye(x.shape[-1], dtype=x.dtype), axis=-1)


def _check_square(a, name):
    """`a`, once checked to be a stack of square matrices."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"jnp.linalg.{name}: expects square matrices in the last two axes "
                         f"(..., n, n), got shape {a.shape}")
    return a


# ---- factorisations ----------------------------------------------------------------------------

def cholesky(a, upper=False, symmetrize_input=True):
    """The lower (or upper) Cholesky factor; NaNs where a is not positive definite."""
    a = _inexact(a)
    a = _check_square(a, "cholesky")
    factor = lax_linalg.cholesky(a, symmetrize_input)
    if upper:
        return _mH(factor)
    return factor


def qr(a, mode="reduced"):
    """(q, r) with a = q @ r; mode 'reduced', 'complete' or 'r' (r alone)."""
    a = _inexact(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"jnp.linalg.qr: mode must be 'reduced', 'complete' or 'r', got "
                         f"{mode!r} ('raw' is not supported)")
    q, r = lax_linalg.qr(a, mode == "complete")
    if mode == "r":
        return r
    return q, r


def eigh(a, UPLO=None, symmetrize_input=True):
    """(eigenvalues ascending, eigenvectors as columns) of Hermitian matrices."""
    a = _inexact(a)
    a = _check_square(a, "eigh")
    v, w = lax_linalg.eigh(a, UPLO != "U", symmetrize_input)
    return w, v


def eigvalsh(a, UPLO="L", symmetrize_input=True):
    """The ascending eigenvalues of Hermitian matrices."""
    w, _v = eigh(a, UPLO, symmetrize_input)
    return w


def eig(a):
    """(eigenvalues, right eigenvectors) of general square matrices, complex."""
    a = _inexact(a)
    a = _check_square(a, "eig")
    w, v = lax_linalg.eig(a)
    return w, v


def eigvals(a):
    """The complex eigenvalues of general square matrices."""
    w, _v = eig(a)
    return w


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """(u, s, vh) with a = u @ diag(s) @ vh, s descending (s alone without compute_uv)."""
    a = _inexact(a)
    return lax_linalg.svd(a, full_matrices, compute_uv)


def svdvals(x):
    """The singular values, descending."""
    return svd(x, False, False)


# ---- solves and inverses -----------------------------------------------------------------------

def _permutation_matrix(perm, dtype):
    return (perm[..., :, None] == jnp.arange(perm.shape[-1])).astype(dtype)


def _lu_solve_matrix(lu, perm, b):
    """x with a @ x = b for the LU factors of a (b: (..., n, k))."""
    lower = jnp.tril(lu, -1) + jnp.eye(lu.shape[-1], dtype=lu.dtype)
    pb = _permutation_matrix(perm, b.dtype) @ b
    y = lax_linalg.triangular_solve(lower, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def solve(a, b):
    """x with a @ x = b (b a vector or a stack of matrices; batch axes broadcast)."""
    a, b = promote_inexact(a, b)
    a = _check_square(a, "solve")
    lu, _pivots, perm = lax_linalg.lu(a)
    if b.ndim == 1:  # NumPy 2 and the array API: only a 1-D b is a vector
        return _lu_solve_matrix(lu, perm, b[..., None])[..., 0]
    return _lu_solve_matrix(lu, perm, b)


def inv(a):
    """The inverse of each square matrix."""
    a = _inexact(a)
    a = _check_square(a, "inv")
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return solve(a, eye)


def _lu_sign(pivots, dtype):
    swaps = reductions.sum((pivots != jnp.arange(pivots.shape[-1])).astype(jnp.int32), axis=-1)
    return (1 - 2 * (swaps % 2)).astype(dtype)


def det(a):
    """The determinant of each square matrix (through LU; its derivative is Giles')."""
    a = _inexact(a)
    a = _check_square(a, "det")
    lu, pivots, _perm = lax_linalg.lu(a)
    diag = _diag(lu)
    return _lu_sign(pivots, a.dtype) * reductions.prod(diag, axis=-1)


def slogdet(a, method=None):
    """(sign, log|det|) of each square matrix (sign 0 and -inf for singular ones)."""
    a = _inexact(a)
    a = _check_square(a, "slogdet")
    lu, pivots, _perm = lax_linalg.lu(a)
    diag = _diag(lu)
    mag = ufuncs.absolute(diag)
    if a.dtype.kind == "c":
        unit = diag / jnp.where(mag == 0, 1, mag).astype(diag.dtype)  # 0 where diag is 0
    else:
        unit = ufuncs.sign(diag)
    sign = _lu_sign(pivots, a.dtype) * reductions.prod(unit, axis=-1)
    logdet = reductions.sum(ufuncs.log(mag), axis=-1)
    return sign, logdet


def _default_rtol(a, dtype):
    return 10 * max(a.shape[-2:]) * float(np.finfo(dtype).eps)


def pinv(a, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse; singular values below rtol * max(s) count as 0."""
    a = _inexact(a)
    u, s, vh = lax_linalg.svd(a, False, True)
    if rtol is None:
        rtol = _default_rtol(a, s.dtype)
    cutoff = rtol * reductions.max(s, axis=-1, keepdims=True)
    keep = s > cutoff
    s_inv = jnp.where(keep, 1 / jnp.where(keep, s, 1), 0).astype(a.dtype)
    return _mH(vh) @ (s_inv[..., :, None] * _mH(u))


def lstsq(a, b, rcond=None, numpy_resid=False):
    """(x, residuals, rank, s): the least-squares solution of a @ x = b by the SVD."""
    a, b = promote_inexact(a, b)
    if a.ndim != 2:
        raise ValueError(f"jnp.linalg.lstsq: a must be 2-D, got shape {a.shape}")
    vector = b.ndim == 1
    b2 = b[:, None] if vector else b
    u, s, vh = lax_linalg.svd(a, False, True)
    if rcond is None:
        rcond = float(np.finfo(s.dtype).eps) * max(a.shape)
    cutoff = rcond * reductions.max(s)
    keep = s > cutoff
    s_inv = jnp.where(keep, 1 / jnp.where(keep, s, 1), 0).astype(a.dtype)
    x = _mH(vh) @ (s_inv[:, None] * (_mH(u) @ b2))
    rank = reductions.sum(keep.astype(jnp.int32))
    resid = reductions.sum(ufuncs.absolute(b2 - a @ x) ** 2, axis=0)
    if vector:
        x = x[:, 0]
    return x, resid, rank, s


def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; n < 0 powers the inverse, n = 0 is I."""
    a = as_array(a)
    n = int(n)
    a = _check_square(a, "matrix_power")
    if n == 0:
        return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a = inv(a)
        n = -n
    result = a
    base = a
    n = n - 1
    while n > 0:
        if n % 2 == 1:
            result = result @ base
        base = base @ base
        n = n // 2
    return result


def matrix_rank(M, rtol=None, tol=None):
    """How many singular values exceed tol (default rtol * max(s))."""
    M = _inexact(M)
    if M.ndim < 2:
        return reductions.any(M != 0).astype(jnp.int32)
    s = lax_linalg.svd(M, False, False)
    if tol is None:
        if rtol is None:
            rtol = _default_rtol(M, s.dtype)
        tol = rtol * reductions.max(s, axis=-1, keepdims=True)
    return reductions.sum((s > tol).astype(jnp.int32), axis=-1)


def cond(x, p=None):
    """The condition number in norm p (None/2: the ratio of extreme singular values)."""
    x = _inexact(x)
    if p is None or p == 2:
        s = lax_linalg.svd(x, False, False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = lax_linalg.svd(x, False, False)
        return s[..., -1] / s[..., 0]
    return norm(x, p, (-2, -1)) * norm(inv(x), p, (-2, -1))


def tensorinv(a, ind=2):
    """The inverse of a reshaped into a square matrix at axis `ind`."""
    a = as_array(a)
    front, back = a.shape[:ind], a.shape[ind:]
    rows = int(np.prod(front))
    if rows != int(np.prod(back)):
        raise ValueError(f"jnp.linalg.tensorinv: shape {a.shape} split at {ind} is not square")
    return jnp.reshape(inv(jnp.reshape(a, (rows, rows))), back + front)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b."""
    a, b = promote_inexact(a, b)
    if axes is not None:
        order = [k for k in range(a.ndim) if k not in axes] + list(axes)
        a = jnp.transpose(a, order)
    x_shape = a.shape[b.ndim:]
    n = int(np.prod(x_shape))
    x = solve(jnp.reshape(a, (-1, n)), jnp.reshape(b, (-1,)))
    return jnp.reshape(x, x_shape)


def multi_dot(arrays, precision=None):
    """The product of a list of matrices (1-D ends as row and column vectors), left to right."""
    out = arrays[0]
    for k in range(1, len(arrays)):
        out = jnp.matmul(out, arrays[k])
    return out


# ---- array-API aliases -----------------------------------------------------------------------

def matmul(x1, x2, precision=None, preferred_element_type=None):
    """x1 @ x2."""
    return jnp.matmul(x1, x2)


def tensordot(x1, x2, axes=2, precision=None, preferred_element_type=None):
    """jnp.tensordot."""
    return jnp.tensordot(x1, x2, axes)


def outer(x1, x2):
    """The outer product of two vectors."""
    x1, x2 = as_array(x1), as_array(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"jnp.linalg.outer: takes 1-D arrays, got shapes {x1.shape} and "
                         f"{x2.shape}")
    return jnp.outer(x1, x2)


def cross(x1, x2, axis=-1):
    """The cross product of 3-vectors along `axis`."""
    x1, x2 = as_array(x1), as_array(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"jnp.linalg.cross: axis {axis} must have size 3, got shapes "
                         f"{x1.shape} and {x2.shape}")
    return jnp.cross(x1, x2, axis=axis)


def vecdot(x1, x2, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis`."""
    return jnp.vecdot(x1, x2, axis=axis)


def matrix_transpose(x):
    """Each matrix transposed (the last two axes swapped)."""
    x = as_array(x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.matrix_transpose: needs rank >= 2, got shape {x.shape}")
    return jnp.swapaxes(x, -1, -2)


def trace(x, offset=0, dtype=None):
    """The trace of each matrix (over the last two axes)."""
    return jnp.trace(x, offset, -2, -1, dtype)


def diagonal(x, offset=0):
    """The diagonal of each matrix (over the last two axes)."""
    return jnp.diagonal(x, offset, -2, -1)


# ---- norms -------------------------------------------------------------------------------------

def _euclidean_norm(x, axis, keepdims):
    """sqrt(sum |x|^2) over `axis` (None: every axis). Its own derivative rules
    (rules/linalg.py) are safe at 0; every other norm is differentiated through its source."""
    if x.dtype.kind == "c":
        return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis,
                                          keepdims=keepdims))
    return ufuncs.sqrt(reductions.sum(x * x, axis=axis, keepdims=keepdims))


def _matrix_norm_svd(x, ord, axes, keepdims):
    """ord 2, -2 and 'nuc' through the singular values of the matrices on `axes`."""
    nd = jnp.ndim(x)  # static: jnp.ndim carries no tangent
    r = axes[0] % nd
    c = axes[1] % nd
    moved = jnp.moveaxis(x, (r, c), (-2, -1))
    s = lax_linalg.svd(moved, False, False)
    if ord == 2:
        out = reductions.max(s, axis=-1)
    elif ord == -2:
        out = reductions.min(s, axis=-1)
    else:
        out = reductions.sum(s, axis=-1)
    if keepdims:
        out = jnp.expand_dims(out, (min(r, c), max(r, c)))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector and matrix norms, as numpy.linalg.norm (every ord)."""
    x = promote_inexact(jnp.asarray(x))[0]
    nd = jnp.ndim(x)
    if axis is None and ord is None:
        return _euclidean_norm(x, None, keepdims)
    if axis is None:
        if nd > 2:
            raise ValueError(f"jnp.linalg.norm: ord={ord!r} needs axis= for an array of rank "
                             f"{nd}")
        axis = tuple(range(nd))
    if isinstance(axis, (int, np.integer)):
        axes = (axis,)
    else:
        axes = tuple(axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"jnp.linalg.norm: axis {axis} must name one or two axes")


def _vector_norm(x, ord, axes, keepdims):
    if ord is None or ord == 2:
        return _euclidean_norm(x, axes, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"jnp.linalg.norm: ord={ord!r} is a matrix norm; a vector norm "
                         "takes a number")
    mag = ufuncs.absolute(x)
    if ord == np.inf:
        return reductions.max(mag, axis=axes, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(mag, axis=axes, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(ufuncs.not_equal(mag, 0).astype(mag.dtype), axis=axes,
                              keepdims=keepdims)
    if ord == 1:
        return reductions.sum(mag, axis=axes, keepdims=keepdims)
    p = float(ord)
    return ufuncs.power(reductions.sum(ufuncs.power(mag, p), axis=axes, keepdims=keepdims),
                        1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    r = axes[0]
    c = axes[1]
    if ord is None or ord == "fro":
        return _euclidean_norm(x, axes, keepdims)
    if ord in (2, -2, "nuc"):
        return _matrix_norm_svd(x, ord, axes, keepdims)
    mag = ufuncs.absolute(x)
    if ord == 1:
        return reductions.max(reductions.sum(mag, axis=r, keepdims=True), axis=axes,
                              keepdims=keepdims)
    if ord == -1:
        return reductions.min(reductions.sum(mag, axis=r, keepdims=True), axis=axes,
                              keepdims=keepdims)
    if ord == np.inf:
        return reductions.max(reductions.sum(mag, axis=c, keepdims=True), axis=axes,
                              keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(reductions.sum(mag, axis=c, keepdims=True), axis=axes,
                              keepdims=keepdims)
    raise ValueError(f"jnp.linalg.norm: invalid matrix norm ord={ord!r}")


def vector_norm(x, axis=None, keepdims=False, ord=2):
    """The vector norm over `axis` (None: over every element, flattened)."""
    x = as_array(x)
    if axis is None:
        out = norm(jnp.ravel(x), ord, 0)
        if keepdims:
            return jnp.reshape(out, (1,) * x.ndim)
        return out
    return norm(x, ord, axis, keepdims)


def matrix_norm(x, keepdims=False, ord="fro"):
    """The matrix norm of each matrix (over the last two axes)."""
    return norm(x, ord, (-2, -1), keepdims)
