"""lax.scatter_sub: subtract update windows from an operand (scatter_add of the negated
updates, with its own derivative rules in compiler/transforms/rules/lax_composed.py)."""
from __future__ import annotations

from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS
from redraft.compiler.primitives.gather import scatter_add
from redraft.numpy.creation import asarray
from redraft.runtime.array import Array

__all__ = ["scatter_sub"]

_NEG = LAX_FUNCTIONS["neg"]


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """`operand` with the update windows subtracted at `scatter_indices` (repeated indices
    subtract each of theirs); out-of-bounds windows are dropped unless mode='clip'."""
    return scatter_add(operand, scatter_indices, _NEG(asarray(updates)), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)
