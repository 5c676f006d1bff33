"""Derivative rules of the jnp.linalg functions written on the factorisations (det,
slogdet, eigvals, the norms) and of jnp.imag. The factorisations' own rules (lax.linalg) are
in their family file, compiler/primitives/factorizations.py; lax.fft's in fft.py.
"""
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lah
from redraft.compiler.primitives.registry import defjvp, defvjp

import redraft.numpy as jnp

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
