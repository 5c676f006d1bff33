"""Sorting with companions and the k largest or smallest: sort (of one array or of several
ordered by their first num_keys), sort_key_val, top_k, approx_max_k and approx_min_k.

Each takes a stable order of the keys (lax.argsort) and gathers along that axis
(take_along_axis), so derivatives flow to the gathered values through the gather's rules
and the indices carry none. On the CPU, JAX's approx_max_k/approx_min_k are exact; so are
these.
"""
from __future__ import annotations

from redraft.compiler.primitives.checks import canonical_axis
from redraft.compiler.primitives.reductions import argsort
from redraft.compiler.primitives.reductions import sort as sort_one
from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.compiler.primitives.shape import slice as slice_static
from redraft.numpy.creation import asarray
from redraft.numpy.indexing import take_along_axis
from redraft.runtime.array import Array

__all__ = ["sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k"]


def _first_k(shape: tuple[int, ...], axis: int, k: int, op: str):
    """(axis, starts, limits) of the first k entries along `axis`."""
    axis = canonical_axis(axis, len(shape), op)
    k = int(k)
    if not 0 <= k <= shape[axis]:
        raise ValueError(f"{op}: k={k} must be within [0, {shape[axis]}] for axis {axis} of "
                         f"shape {shape}")
    starts = (0,) * len(shape)
    limits = tuple(k if d == axis else s for d, s in enumerate(shape))
    return axis, starts, limits


def _pair_axis(keys_shape: tuple[int, ...], values_shape: tuple[int, ...],
               dimension: int) -> int:
    if keys_shape != values_shape:
        raise TypeError(f"lax.sort_key_val: keys of shape {keys_shape} and values of shape "
                        f"{values_shape} must have one shape")
    return canonical_axis(dimension, len(keys_shape), "lax.sort_key_val")


def _check_real(dtype, ndim: int, op: str) -> None:
    if dtype.kind not in "biuf":
        raise TypeError(f"{op} needs real operands, got {dtype.name}")
    if ndim == 0:
        raise TypeError(f"{op} needs an operand of rank >= 1")


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """One array sorted along `dimension` (the sort primitive), or a tuple or list of arrays
    of one shape permuted alike, ordered lexicographically by the first `num_keys` of them
    (stable: ties keep their order, which an unstable sort may also do); a tuple comes
    back, as JAX gives it."""
    if not isinstance(operand, (tuple, list)):
        if num_keys != 1:
            raise ValueError(f"lax.sort: num_keys={num_keys} needs a tuple of operands")
        return sort_one(operand, dimension)
    operands = [asarray(x) for x in operand]
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"lax.sort: num_keys={num_keys} must be in [1, {len(operands)}], the "
                         "number of operands")
    shape = operands[0].shape
    if any(x.shape != shape for x in operands):
        raise TypeError("lax.sort: the operands must have one shape, got "
                        f"{[x.shape for x in operands]}")
    axis = canonical_axis(dimension, len(shape), "lax.sort")
    # the lexicographic order: stable sorts by each key from the last to the first (a radix
    # sort's passes), so ties of keys[0] are ordered by keys[1] and so on
    order = argsort(operands[num_keys - 1], axis)
    for k in range(num_keys - 2, -1, -1):
        step = argsort(take_along_axis(operands[k], order, axis), axis)
        order = take_along_axis(order, step, axis)
    return tuple(take_along_axis(x, order, axis) for x in operands)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Array, Array]:
    """`keys` sorted along `dimension`, and `values` permuted the same way (stable)."""
    k, v = asarray(keys), asarray(values)
    axis = _pair_axis(k.shape, v.shape, dimension)
    order = argsort(k, axis)
    return take_along_axis(k, order, axis), take_along_axis(v, order, axis)


def top_k(operand, k: int) -> tuple[Array, Array]:
    """The k largest entries along the last axis, largest first, and their int32 indices
    (of equal entries, the lower index comes first)."""
    x = asarray(operand)
    _check_real(x.dtype, x.ndim, "lax.top_k")
    axis, starts, limits = _first_k(x.shape, -1, k, "lax.top_k")
    order = slice_static(argsort(x, axis, True), starts, limits)
    return take_along_axis(x, order, axis), order


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True
                 ) -> tuple[Array, Array]:
    """The k largest entries along `reduction_dimension` and their indices (exact)."""
    x = asarray(operand)
    _check_real(x.dtype, x.ndim, "lax.approx_max_k")
    _check_recall(recall_target, "lax.approx_max_k")
    axis, starts, limits = _first_k(x.shape, reduction_dimension, k, "lax.approx_max_k")
    order = slice_static(argsort(x, axis, True), starts, limits)
    return take_along_axis(x, order, axis), order


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True
                 ) -> tuple[Array, Array]:
    """The k smallest entries along `reduction_dimension` and their indices (exact)."""
    x = asarray(operand)
    _check_real(x.dtype, x.ndim, "lax.approx_min_k")
    _check_recall(recall_target, "lax.approx_min_k")
    axis, starts, limits = _first_k(x.shape, reduction_dimension, k, "lax.approx_min_k")
    order = slice_static(argsort(x, axis), starts, limits)
    return take_along_axis(x, order, axis), order


def _check_recall(recall_target: float, op: str) -> None:
    if not 0 < float(recall_target) <= 1:
        raise ValueError(f"{op}: recall_target {recall_target} must be in (0, 1]")


defsource_derivative(sort, "the sort primitive (one array), argsort and take_along_axis")
defbatch_source(sort)
