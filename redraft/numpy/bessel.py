"""The modified Bessel function I0 and the Kaiser window built on it."""
from __future__ import annotations

from redraft.lax.special import bessel_i0e
from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["i0", "kaiser"]


def i0(x) -> Array:
    """The modified Bessel function of the first kind of order 0, elementwise (real x)."""
    x = jnp.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 is defined here for real arguments only, got a complex array")
    if x.dtype.kind not in "fc":
        x = x.astype(jnp.float32)
    return jnp.exp(jnp.abs(x)) * bessel_i0e(x)


def kaiser(M: int, beta) -> Array:
    """The Kaiser window of M points with shape parameter beta."""
    if M < 1:
        return jnp.zeros((0,), jnp.float32)
    if M == 1:
        return jnp.ones((1,), jnp.float32)
    beta = jnp.asarray(beta, dtype=jnp.float32)
    n = jnp.arange(M, dtype=jnp.float32)
    alpha = (M - 1) / 2.0
    ratio = (n - alpha) / alpha
    return i0(beta * jnp.sqrt(jnp.clip(1 - ratio * ratio, 0, None))) / i0(beta)
