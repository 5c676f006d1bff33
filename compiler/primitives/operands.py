"""Operands of lax functions: JAX's strict dtype rule, then check and run a primitive."""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive
from redraft.compiler.primitives.checks import check_same_dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind


def strict_operands(name: str, args) -> list[Array]:
    """Arrays of one dtype: weak operands take the strong operands' dtype, as in JAX."""
    arrays = [as_array(a) for a in args]
    strong = {a.dtype for a in arrays if not a._weak}
    if len(strong) > 1:
        check_same_dtypes([a.dtype for a in arrays], name)
    if not strong:
        check_same_dtypes([a.dtype for a in arrays], name)
        return arrays
    (target,) = strong
    out = []
    for a in arrays:
        if a._weak and a.dtype != target:
            if not np.can_cast(a.dtype, target, "same_kind") and target.kind not in "fc":
                check_same_dtypes([a.dtype, target], name)
            a = wrap_host(a._buf.astype(target), False)
        out.append(a)
    return out


def apply(prim: Primitive, *args, **params) -> Array:
    """Check `args` against `prim`'s abstract rule, then run it eagerly."""
    arrays = strict_operands(prim.name, args)
    abstract_eval_rules[prim](*(ShapedArray(a.shape, a.dtype, a._weak) for a in arrays),
                              **params)
    return bind(prim, *arrays, **params)
