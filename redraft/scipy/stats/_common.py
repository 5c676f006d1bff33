"""Helpers shared by the distributions: promotion to a float type and standardising x."""
from __future__ import annotations

from redraft.numpy.promotion import promote_inexact
from redraft.runtime.array import Array

import redraft.numpy as jnp


# One function per arity, each promoting pairwise: transformed code cannot call *args
# functions yet, and the AD rules of promote_inexact cover its one- and two-operand forms.

def promote1(x) -> Array:
    """x as an inexact array (float32 for ints)."""
    return promote_inexact(x)[0]


def promote2(x, y) -> tuple[Array, Array]:
    """x and y promoted together to one inexact dtype."""
    x, y = promote_inexact(x, y)
    return x, y


def promote3(x, y, z) -> tuple[Array, Array, Array]:
    x, y = promote_inexact(x, y)
    x, z = promote_inexact(x, z)
    y, z = promote_inexact(y, z)
    return x, y, z


def promote4(x, y, z, w) -> tuple[Array, Array, Array, Array]:
    x, y, z = promote3(x, y, z)
    x, w = promote_inexact(x, w)
    y, z = promote_inexact(y, w)[0], promote_inexact(z, w)[0]
    return x, y, z, w


def promote5(x, y, z, w, v) -> tuple[Array, Array, Array, Array, Array]:
    x, y, z, w = promote4(x, y, z, w)
    x, v = promote_inexact(x, v)
    y, z, w = promote_inexact(y, v)[0], promote_inexact(z, v)[0], promote_inexact(w, v)[0]
    return x, y, z, w, v


def standardized(x, loc, scale) -> tuple[Array, Array]:
    """((x - loc) / scale, scale) in a common float dtype."""
    x, loc, scale = promote3(x, loc, scale)
    return jnp.divide(jnp.subtract(x, loc), scale), scale


def nan_unless(condition, value) -> Array:
    """value where condition holds, nan elsewhere."""
    return jnp.where(condition, value, jnp.nan)
