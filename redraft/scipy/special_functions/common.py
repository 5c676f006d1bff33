"""Shared pieces of the special-function compositions: argument promotion and a fixed-length
series loop."""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.numpy.promotion import promote_inexact
from redraft.runtime.array import Array

EULER_GAMMA = 0.5772156649015329
TINY = 1e-30  # the modified Lentz method's stand-in for zero (float32 keeps 1 / TINY finite)


def real_float(name: str, x) -> Array:
    """x as a real floating array (integers become float32)."""
    out = promote_inexact(x)[0]
    if out.dtype.kind != "f":
        raise TypeError(f"{name} needs real floating-point arguments, got {out.dtype.name}")
    return out


def real_floats2(name: str, a, b) -> tuple[Array, Array]:
    """a and b promoted to one real floating dtype and broadcast against each other.
    (Fixed arities: the transforms read this source, and take no *args.)"""
    a, b = promote_inexact(a, b)
    a, b = real_float(name, a), real_float(name, b)
    return a + jnp.zeros_like(b), b + jnp.zeros_like(a)


def real_floats3(name: str, a, b, c) -> tuple[Array, Array, Array]:
    """As real_floats2, for three arguments."""
    a, b = real_floats2(name, a, b)
    a, c = real_floats2(name, a, c)
    b, c = real_floats2(name, b, c)
    return a, b, c


def real_floats4(name: str, a, b, c, d) -> tuple[Array, Array, Array, Array]:
    """As real_floats2, for four arguments."""
    a, b, c = real_floats3(name, a, b, c)
    a, d = real_floats2(name, a, d)
    b, d = real_floats2(name, b, d)
    c, d = real_floats2(name, c, d)
    return a, b, c, d


def counter(i, like: Array) -> Array:
    """The loop counter i as an array of like's dtype and shape."""
    return jnp.zeros_like(like) + i


def away_from_zero(v: Array) -> Array:
    """v, with magnitudes below TINY replaced by TINY (Lentz's guard against division by 0)."""
    return jnp.where(jnp.abs(v) < TINY, TINY, v)


def gamma_sign(x: Array) -> Array:
    """The sign of Gamma(x): +1 for x > 0 and on (-2k-2, -2k-1), -1 on (-2k-1, -2k)."""
    odd = jnp.remainder(jnp.floor(x), 2.0) == 1.0
    return jnp.where((x < 0) & odd, -1.0, 1.0)
