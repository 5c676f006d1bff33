"""Prefix scans with an associative operation: associative_scan and cumlogsumexp.

associative_scan combines, in ceil(log2 n) rounds, each element with the one 2**r places
before it (Hillis and Steele's scan, O(n log n) work): slices, the computation and a
concatenation, so it is differentiable and batched through those, and compiled as they
are. `fn` must be a computation known by name (redraft/lax/computations.py); add, mul,
max and min are the cumulative primitives (cumsum, cumprod, cummax, cummin) themselves.
cumlogsumexp is the scan with a numerically stable log-add-exp.
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.primitives.checks import canonical_axis
from redraft.compiler.primitives.reductions import cummax, cummin, cumprod, cumsum
from redraft.compiler.primitives.shape import concatenate, rev
from redraft.compiler.primitives.shape import slice as slice_static
from redraft.lax.computations import combine, kind_of, logaddexp
from redraft.numpy.creation import asarray
from redraft.runtime.array import Array

__all__ = ["associative_scan", "cumlogsumexp"]



def _rounds(shape: tuple[int, ...], axis: int):
    """Per round r (offset 2**r < n): bounds of the head kept as it is, of the earlier
    elements and of the later elements they combine with."""
    n = shape[axis]
    rounds, offset = [], 1
    while offset < n:
        rounds.append((_bounds(shape, axis, 0, offset), _bounds(shape, axis, 0, n - offset),
                       _bounds(shape, axis, offset, n)))
        offset *= 2
    return rounds


def _bounds(shape, axis: int, start: int, limit: int):
    starts = tuple(start if d == axis else 0 for d in range(len(shape)))
    limits = tuple(limit if d == axis else s for d, s in enumerate(shape))
    return starts, limits


def _scan_axis(shape: tuple[int, ...], axis: int) -> int:
    if len(shape) == 0:
        raise ValueError("lax.associative_scan needs arrays of rank >= 1")
    return canonical_axis(axis, len(shape), "lax.associative_scan")


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0) -> Array:
    """Inclusive prefix scan of `elems` along `axis` with the associative `fn(earlier,
    later)` (lax.add, jnp.maximum, jnp.logaddexp, ...); `reverse` scans from the end."""
    x = asarray(elems)
    kind = kind_of(fn, "lax.associative_scan")
    axis = _scan_axis(x.shape, axis)
    if kind == "add":
        return cumsum(x, axis, reverse)
    if kind == "mul":
        return cumprod(x, axis, reverse)
    if kind == "max":
        return cummax(x, axis, reverse)
    if kind == "min":
        return cummin(x, axis, reverse)
    if kind == "logaddexp":
        return cumlogsumexp(x, axis, reverse)
    if reverse:
        x = rev(x, (axis,))
    for head, earlier, later in _rounds(x.shape, axis):
        combined = combine(kind, slice_static(x, earlier[0], earlier[1]),
                           slice_static(x, later[0], later[1]))
        x = concatenate([slice_static(x, head[0], head[1]), combined], axis)
    if reverse:
        x = rev(x, (axis,))
    return x


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False) -> Array:
    """log(cumsum(exp(operand))) along `axis`, computed stably."""
    x = asarray(operand)
    axis = _scan_axis(x.shape, axis)
    if reverse:
        x = rev(x, (axis,))
    for head, earlier, later in _rounds(x.shape, axis):
        combined = logaddexp(slice_static(x, earlier[0], earlier[1]),
                              slice_static(x, later[0], later[1]))
        x = concatenate([slice_static(x, head[0], head[1]), combined], axis)
    if reverse:
        x = rev(x, (axis,))
    return x
