"""lax.scatter_sub: subtract update windows from an operand (scatter_add of the negated
updates, with its own derivative rules in compiler/transforms/rules/lax_composed.py); and
lax.scatter_apply: a function applied at the scattered positions, once per time each is
named (as XLA's scatter applies it once per update)."""
from __future__ import annotations

from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS
from typing import Callable

import numpy as np

from redraft.compiler.primitives.control import while_loop
from redraft.compiler.primitives.gather import scatter_add
from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.numpy.creation import asarray, full, zeros
from redraft.numpy.reductions import max as array_max
from redraft.numpy.ufuncs import where
from redraft.runtime.array import Array

__all__ = ["scatter_sub", "scatter_apply"]

_NEG = LAX_FUNCTIONS["neg"]


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """`operand` with the update windows subtracted at `scatter_indices` (repeated indices
    subtract each of theirs); out-of-bounds windows are dropped unless mode='clip'."""
    return scatter_add(operand, scatter_indices, _NEG(asarray(updates)), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def scatter_apply(operand, scatter_indices, func: Callable, dimension_numbers,
                  update_shape=(), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode=None) -> Array:
    """`operand` with the elementwise `func` applied at every position the scatter names,
    as many times as it names it (XLA applies it once per update); `update_shape` is the
    shape of the updates such a scatter would take. The positions are counted with a
    scatter_add of ones, and round k applies `func` where the count exceeds k. (JAX's
    options after dimension_numbers are keyword-only; transforms read this function's
    source, which takes no keyword-only parameters, so here they may also come by position.)
    """
    x = asarray(operand)
    counts = scatter_add(zeros(x.shape, np.int32), scatter_indices,
                         full(update_shape, 1, np.int32), dimension_numbers,
                         indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)
    rounds = array_max(counts) if x.size else 0

    def more(state):
        return state[0] < rounds

    def apply_once(state):
        k, y = state
        return k + 1, where(counts > k, func(y), y)

    return while_loop(more, apply_once, (0, x))[1]


defsource_derivative(scatter_apply, "scatter_add, where and the user's function in a while_loop")
defbatch_source(scatter_apply)
