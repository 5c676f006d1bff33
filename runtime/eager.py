"""Eager execution: apply a primitive to concrete Arrays with its `impl` rule.

`impl_rules[prim]` takes host NumPy buffers and static keyword parameters and returns a
NumPy array (or a tuple of them for multiple-result primitives). `bind` wraps the result
into immutable Arrays with the primitive's weak-type rule.

Eager arithmetic on small arrays costs mostly Python overhead, so `bind` avoids per-call
list building for one operand, and `unary_binder` / `binary_binder` give the NumPy layer
closures specialised to one primitive (impl and weak rule looked up once, no keywords).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from redraft.runtime.array import Array, wrap_host
from redraft.runtime.staged import StagedBuf

impl_rules: dict[object, Callable] = {}

_ndarray = np.ndarray


def bind(prim, *args: Array, **params):
    """Run `prim` on Arrays `args` now; returns an Array (or a tuple for multi-result ones)."""
    try:
        impl = impl_rules[prim]
    except KeyError:
        raise NotImplementedError(f"primitive {prim.name} has no eager implementation") from None
    if len(args) == 1:
        bufs, weaks = (args[0]._buf,), (args[0]._weak,)
    else:
        bufs, weaks = [a._buf for a in args], [a._weak for a in args]
    for buf in bufs:
        if type(buf) is StagedBuf:  # compiling: record the operation instead of running it
            return buf.builder.stage(prim, args, params)
    try:
        out = impl(*bufs, **params)
    except (ValueError, TypeError, IndexError):
        _explain(prim, args, params)
        raise
    weak = prim.result_weak(weaks, params)
    if prim.multiple_results:
        return tuple(wrap_host(np.asarray(o), weak) for o in out)
    return wrap_host(out if type(out) is _ndarray else np.asarray(out), weak)


def unary_binder(prim) -> Callable[[Array], Array]:
    """`x -> bind(prim, x)` for a single-result primitive without parameters, made cheap."""
    impl, weak_if_weak = _fixed_arity_rule(prim, 1)

    def run(x: Array) -> Array:
        if type(x._buf) is not _ndarray:
            return bind(prim, x)
        try:
            out = impl(x._buf)
        except (ValueError, TypeError, IndexError):
            _explain(prim, (x,), {})
            raise
        if type(out) is not _ndarray:
            out = np.asarray(out)  # NumPy returns scalars for 0-d results
        result = Array()  # wrap_host, inlined on this hot path
        result._buf = out
        result._weak = weak_if_weak and x._weak
        return result

    return run


def binary_binder(prim, otherwise: Callable[[object, object], Array]) -> Callable:
    """`(x, y) -> bind(prim, x, y)` for two Arrays of one dtype, made cheap (the hot path of
    eager arithmetic); any other operands go to `otherwise(x, y)`, which must promote them."""
    impl, weak_if_weak = _fixed_arity_rule(prim, 2)

    def run(x, y, /) -> Array:
        if type(x) is not Array or type(y) is not Array:
            return otherwise(x, y)
        xbuf, ybuf = x._buf, y._buf
        if xbuf.dtype != ybuf.dtype:
            return otherwise(x, y)
        if type(xbuf) is not _ndarray or type(ybuf) is not _ndarray:
            return bind(prim, x, y)
        try:
            out = impl(xbuf, ybuf)
        except (ValueError, TypeError, IndexError):
            _explain(prim, (x, y), {})
            raise
        if type(out) is not _ndarray:
            out = np.asarray(out)
        result = Array()  # wrap_host, inlined on this hot path
        result._buf = out
        result._weak = weak_if_weak and x._weak and y._weak
        return result

    return run


def _fixed_arity_rule(prim, arity: int) -> tuple[Callable, bool]:
    """(impl, weak_if_weak) for a binder: without parameters every weak rule is either
    "weak iff all operands are weak" or "never weak", so one probe tells which."""
    if prim.multiple_results:
        raise ValueError(f"primitive {prim.name} has several results; use bind")
    if prim not in impl_rules:
        raise NotImplementedError(f"primitive {prim.name} has no eager implementation")
    return impl_rules[prim], prim.result_weak([True] * arity, {})


def _explain(prim, args, params) -> None:
    """Re-raise a failure of NumPy inside `impl` as the primitive's own, clearer error."""
    from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
    rule = abstract_eval_rules.get(prim)
    if rule is not None:
        rule(*(ShapedArray(a.shape, a.dtype, a._weak) for a in args), **params)
