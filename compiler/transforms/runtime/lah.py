"""Matrix helpers the derivative rules of the factorisations call (`lah.phi(x)`).

Plain redraft.numpy over the last two axes (any leading batch axes ride along), so the AD
transforms and vmap read their source as they read user code, and rules built from them
can be differentiated again.
"""
from __future__ import annotations

import redraft.numpy as jnp
from redraft import lax


def mT(x):
    """Each matrix transposed."""
    return jnp.swapaxes(x, -1, -2)


def mH(x):
    """Each matrix conjugate-transposed."""
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def sym(x):
    """The Hermitian part (x + x^H) / 2."""
    return (x + mH(x)) / 2


def eye_like(x):
    """The identity of the last axis' size, in x's dtype."""
    return jnp.eye(x.shape[-1], dtype=x.dtype)


def phi(x):
    """The lower triangle with its diagonal halved (Murray 2016's Phi)."""
    return jnp.tril(x) * (1 - 0.5 * eye_like(x))


def tri(x, lower, unit_diagonal):
    """The triangle a triangular solve reads (strict when its diagonal is taken as 1)."""
    k = -1 if unit_diagonal else 0
    if lower:
        return jnp.tril(x, k)
    return jnp.triu(x, -k)


def op(x, transpose_a, conjugate_a):
    """op(x) of a triangular solve: x, x^T, conj(x) or x^H."""
    if conjugate_a:
        x = jnp.conj(x)
    if transpose_a:
        x = mT(x)
    return x


def diag_part(x):
    """The diagonal of each square matrix, shape (..., n), as a masked sum (no gather)."""
    return jnp.sum(x * eye_like(x), axis=-1)


def diag_matrix(d):
    """Each vector of (..., n) as a diagonal matrix (..., n, n)."""
    return d[..., None] * jnp.eye(d.shape[-1], dtype=d.dtype)


def permutation_matrix(perm, dtype):
    """The one-hot matrix P with P @ x = x[perm] for each permutation of (..., m)."""
    return (perm[..., :, None] == jnp.arange(perm.shape[-1])).astype(dtype)


def lu_factors(lu):
    """(L, U) of packed square LU factors: unit-lower L, upper U."""
    return jnp.tril(lu, -1) + eye_like(lu), jnp.triu(lu)


def solve_upper_right(r, x):
    """x @ r^{-1} for upper-triangular r."""
    return lax.linalg.triangular_solve(r, x, left_side=False, lower=False)


def qr_jvp_tall(x_dot, q, r):
    """(dQ, dR) of the QR factors of a tall or square matrix (m >= n, reduced factors)."""
    dx_rinv = solve_upper_right(r, x_dot)
    c = mH(q) @ dx_rinv
    low = jnp.tril(c, -1)
    omega = low - mH(low)
    return q @ omega + (dx_rinv - q @ c), (c - omega) @ r


def qr_vjp_tall(g_q, g_r, q, r):
    """The cotangent of a tall or square matrix from those of its QR factors."""
    e = mT(q) @ g_q - g_r @ mT(r)
    g_c = jnp.tril(e - mT(e), -1) - e
    return lax.linalg.triangular_solve(r, g_q + q @ g_c, left_side=False, lower=False,
                                       transpose_a=True)


def inverse_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (eigh's derivative)."""
    eye = jnp.eye(w.shape[-1], dtype=w.dtype)
    return 1 / (eye + w[..., None, :] - w[..., :, None]) - eye


def svd_gaps(s):
    """F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal, 0 on it (equal values give 0)."""
    d = (s[..., None, :] + s[..., :, None]) * (s[..., None, :] - s[..., :, None])
    zero = (d == 0).astype(s.dtype)
    return 1 / (d + zero) - zero


def safe_reciprocal(s):
    """1 / s, with 0 where s is 0."""
    zero = (s == 0).astype(s.dtype)
    return 1 / (s + zero) - zero


def no_derivative(what):
    """Raised where a derivative would be silently wrong: `what` has none here."""
    raise NotImplementedError(f"{what} has no derivative in redraft (eigenvectors of a general "
                              "matrix have no unique normalisation); differentiate "
                              "jnp.linalg.eigvals, or eigh for Hermitian matrices")
