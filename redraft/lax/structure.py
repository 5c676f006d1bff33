"""lax's structural conveniences: select_n, broadcast_like, empty, index_take,
optimization_barrier, stack and unstack, as JAX defines them.

Each is a composition of lax primitives (select, broadcast_in_dim, concatenate, reshape,
slice) or of redraft.numpy's indexing (index_take); their derivative rules are in
compiler/transforms/ad/rules/lax_special.py.

- select_n(which, *cases): a bool `which` picks cases[1] where True; an integer `which`
  picks cases[which]. Out-of-range integers are implementation-defined in JAX; here
  which < 0 picks cases[0] and which >= n picks cases[n - 1] (what JAX's CPU backend gives).
  JAX wants cases of one shape and `which` a scalar or of that shape; redraft accepts shapes
  that broadcast together (a superset: vmap batches some cases and not others that way).
- empty(shape, dtype): zeros. JAX leaves the values undefined; redraft's buffers are host
  memory that NumPy allocates, and zeros keep results reproducible.
- optimization_barrier(operand): its operand (a pytree), unchanged. XLA uses the barrier to
  keep operations from moving across it; redraft's passes never move operations past a use
  of their result, so the value passes through as it is.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from redraft.compiler.primitives.checks import broadcast_shapes, canonical_axis
from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS, convert_element_type, select
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.shape import broadcast_in_dim, concatenate, reshape, transpose
from redraft.lax.slicing import index_in_dim
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

__all__ = ["select_n", "broadcast_like", "empty", "index_take", "optimization_barrier",
           "stack", "unstack"]

_GE = LAX_FUNCTIONS["ge"]


def _check_select_n(which, cases) -> None:
    if not cases:
        raise ValueError("select_n() must have at least one case")
    if which.dtype.kind not in "biu":
        raise TypeError(f"select_n `which` must be boolean or integer type, got "
                        f"{which.dtype.name}")
    if len({c.dtype for c in cases}) > 1:
        raise TypeError(f"lax.select_n requires arguments to have the same dtypes, got "
                        f"{', '.join(c.dtype.name for c in cases)}")
    shapes = [tuple(c.shape) for c in cases]
    try:
        broadcast_shapes(tuple(which.shape), *shapes, op="select_n")
    except ValueError:
        raise TypeError(f"select_n cases must have the same shapes, and `which` a scalar or "
                        f"the cases' shape; got `which` shape {tuple(which.shape)} and cases "
                        f"{shapes}") from None
    if which.dtype.kind == "b" and len(cases) > 2:
        raise TypeError(f"select_n with a boolean `which` takes at most two cases, got "
                        f"{len(cases)}")


def select_n(which, *cases) -> Array:
    """cases[which] elementwise: `which` is bool (two cases at most) or an integer."""
    which = as_array(which)
    arrays = strict_operands("select_n", cases) if cases else []
    _check_select_n(which, arrays)
    if len(arrays) == 1:
        return broadcast_in_dim_like(arrays[0], which)
    if which.dtype.kind == "b":
        return select(which, arrays[1], arrays[0])
    out = arrays[0]
    for k in range(1, len(arrays)):
        out = select(_GE(which, k), arrays[k], out)
    return out


def broadcast_in_dim_like(x: Array, which: Array) -> Array:
    """x broadcast against `which` (one case: which only shapes the result)."""
    shape = broadcast_shapes(tuple(x.shape), tuple(which.shape), op="select_n")
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(x.shape), len(shape))))


def broadcast_like(arr, like_arr) -> Array:
    """arr broadcast (NumPy's trailing-axes rule) to the shape of like_arr."""
    x = as_array(arr)
    shape = tuple(np.shape(like_arr))
    if len(x.shape) > len(shape):
        raise ValueError(f"broadcast_like: cannot broadcast shape {tuple(x.shape)} to "
                         f"{shape}")
    lead = len(shape) - len(x.shape)
    for have, want in zip(x.shape, shape[lead:]):
        if have not in (1, want):
            raise ValueError(f"broadcast_like: cannot broadcast shape {tuple(x.shape)} to "
                             f"{shape}")
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def empty(shape, dtype, *, out_sharding=None) -> Array:
    """An array of `shape` and `dtype` (zeros: see the module's note)."""
    dtype = dtypes.check_dtype_arg(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    return broadcast_in_dim(convert_element_type(0, dtype), shape, ())


def _front_permutation(ndim: int, axes: Sequence[int]) -> tuple[int, ...]:
    """The transpose that brings `axes` to the front, in order, the others after them."""
    axes = tuple(canonical_axis(a, ndim, "lax.index_take") for a in axes)
    return axes + tuple(d for d in range(ndim) if d not in axes)


def _inverse(permutation: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(permutation))


def _points(shape: tuple, idxs, permutation: tuple[int, ...], n: int) -> tuple:
    """One index array per indexed axis, each taken modulo its axis's size (JAX's
    index_take wraps negative indices)."""
    points = []
    for k in range(n):
        i = as_array(idxs[k])
        size = shape[permutation[k]]
        points.append((i % size + size) % size)
    return tuple(points)


def index_take(src, idxs, axes: Sequence[int]) -> Array:
    """src at the points idxs[0][i], idxs[1][i], ... along `axes` (one index array per axis,
    taken modulo the axis's size), each with the other axes whole: shape (N, *others)."""
    x = as_array(src)
    permutation = _front_permutation(len(x.shape), axes)
    moved = transpose(x, permutation)
    return moved[_points(tuple(x.shape), idxs, permutation, len(axes))]


def index_take_scatter(base, updates, idxs, axes: Sequence[int]) -> Array:
    """base with `updates` added at the points index_take reads (its transpose)."""
    x = as_array(base)
    permutation = _front_permutation(len(x.shape), axes)
    moved = transpose(x, permutation)
    points = _points(tuple(x.shape), idxs, permutation, len(axes))
    return transpose(moved.at[points].add(updates), _inverse(permutation))


def optimization_barrier(operand):
    """operand (any pytree of arrays), unchanged: see the module's note."""
    return operand


def stack(operands: Sequence, axis: int = 0) -> Array:
    """The operands (one shape and dtype) joined along a new axis `axis`."""
    arrays = [as_array(o) for o in operands]
    if not arrays:
        raise ValueError("lax.stack needs at least one array")
    ndim = len(arrays[0].shape)
    axis = canonical_axis(axis, ndim + 1, "lax.stack")
    if len({a.dtype for a in arrays}) > 1:
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in arrays)}")
    pieces = [reshape(a, tuple(a.shape[:axis]) + (1,) + tuple(a.shape[axis:])) for a in arrays]
    return concatenate(pieces, axis)


def unstack(x, axis: int = 0) -> tuple[Array, ...]:
    """The slices of x along `axis`, as a tuple."""
    x = as_array(x)
    if not x.shape:
        raise ValueError(f"lax.unstack: axis {axis} is out of bounds for array of dimension 0")
    axis = canonical_axis(axis, len(x.shape), "lax.unstack")
    return tuple(index_in_dim(x, k, axis, False) for k in range(x.shape[axis]))
