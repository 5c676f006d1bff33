"""Eager execution: apply a primitive to concrete Arrays with its `impl` rule.

`impl_rules[prim]` takes host NumPy buffers and static keyword parameters and returns a
NumPy array (or a tuple of them for multiple-result primitives). `bind` wraps the result
into immutable Arrays with the primitive's weak-type rule.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from redraft.runtime.array import Array, wrap_host

impl_rules: dict[object, Callable] = {}


def bind(prim, *args: Array, **params):
    """Run `prim` on Arrays `args` now; returns an Array (or a tuple for multi-result ones)."""
    try:
        impl = impl_rules[prim]
    except KeyError:
        raise NotImplementedError(f"primitive {prim.name} has no eager implementation") from None
    try:
        out = impl(*[a._buf for a in args], **params)
    except (ValueError, TypeError, IndexError):
        _explain(prim, args, params)
        raise
    weak = prim.result_weak([a._weak for a in args], params)
    if prim.multiple_results:
        return tuple(wrap_host(np.asarray(o), weak) for o in out)
    return wrap_host(out if type(out) is np.ndarray else np.asarray(out), weak)


def _explain(prim, args, params) -> None:
    """Re-raise a failure of NumPy inside `impl` as the primitive's own, clearer error."""
    from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
    rule = abstract_eval_rules.get(prim)
    if rule is not None:
        rule(*(ShapedArray(a.shape, a.dtype, a._weak) for a in args), **params)
