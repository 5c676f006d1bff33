"""lax.ragged_dot: a matrix product whose rows come in consecutive groups, each group
multiplied by its own right-hand matrix (a mixture of experts' layer).

Row i of lhs [m, k] belongs to the group g with offsets[g] <= i < offsets[g + 1], offsets
the running sums of group_sizes [G]; rows past the last group give zeros, as in JAX. Each
row picks its group's product out of the G products with a one-hot mask, so the result is
an einsum and a select: derivatives and batching go through those, and group_sizes (integers)
carry none.
"""
from __future__ import annotations

from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.numpy.creation import arange, asarray
from redraft.numpy.einsum import einsum
from redraft.numpy.reductions import cumsum
from redraft.runtime.array import Array

__all__ = ["ragged_dot"]


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None) -> Array:
    """lhs [m, k] times rhs [G, k, n] by groups of rows: rows of group g (group_sizes[g] of
    them, in order) are multiplied by rhs[g]; [m, n]."""
    x, w, sizes = asarray(lhs), asarray(rhs), asarray(group_sizes)
    if group_offset is not None:
        raise NotImplementedError("lax.ragged_dot: group_offset is not supported (JAX's CPU "
                                  "lowering does not take it either)")
    _check_shapes(x.shape, w.shape, sizes.shape)
    ends = cumsum(sizes)
    rows = arange(x.shape[0])
    # row i is in group g when ends[g-1] <= i < ends[g]
    member = (rows[None, :] < ends[:, None]) & (rows[None, :] >= (ends - sizes)[:, None])
    products = einsum("mk,gkn->gmn", x, w, precision=precision,
                      preferred_element_type=preferred_element_type)
    return einsum("gm,gmn->mn", member.astype(products.dtype), products)


def _check_shapes(lhs: tuple, rhs: tuple, sizes: tuple) -> None:
    if len(lhs) != 2 or len(rhs) != 3 or len(sizes) != 1:
        raise TypeError(f"lax.ragged_dot takes lhs [m, k], rhs [g, k, n] and group_sizes [g]; "
                        f"got shapes {lhs}, {rhs} and {sizes}")
    if lhs[1] != rhs[1] or rhs[0] != sizes[0]:
        raise TypeError(f"lax.ragged_dot: lhs {lhs} and rhs {rhs} must agree in k, and rhs's "
                        f"{rhs[0]} groups with group_sizes {sizes}")


defsource_derivative(ragged_dot, "einsum and a one-hot mask")
defbatch_source(ragged_dot)
