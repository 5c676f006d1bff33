"""pure_callback: a side-effect-free Python function called from array code, as in JAX.

Eagerly it is called at once. In a compiled function it runs when the compiled code runs:
each result leaf is recorded as a host call (the `random_sample` primitive, which exists to
run named host functions from compiled code and compiles to a call back into Python), so the
callback sees each run's values as NumPy arrays. Under vmap it is called once per example
(vmap_method 'sequential'). It has no derivative: JAX raises on differentiating it, and so
does redraft (wrap it in custom_jvp/custom_vjp to give it one).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from redraft.runtime.array import Array, wrap_host
from redraft.runtime.pytree import tree_flatten, tree_unflatten
from redraft.runtime.staged import StagedBuf

__all__ = ["pure_callback", "effects_barrier"]

_NAMES = itertools.count(1)
_VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")


def _staged(leaves: list) -> bool:
    return any(isinstance(v, Array) and type(v._buf) is StagedBuf for v in leaves)


def _checked(value: Any, spec: Any, what: str) -> np.ndarray:
    """value as a NumPy array of spec's shape and dtype, or a TypeError naming the
    mismatch (JAX checks the callback's results against result_shape_dtypes too)."""
    out = np.asarray(value)
    shape, dtype = tuple(spec.shape), np.dtype(spec.dtype)
    if out.shape != shape:
        raise TypeError(f"pure_callback: {what} has shape {out.shape}, but "
                        f"result_shape_dtypes declares {shape}")
    if out.dtype != dtype:
        if np.can_cast(out.dtype, dtype, "same_kind"):
            out = out.astype(dtype)
        else:
            raise TypeError(f"pure_callback: {what} has dtype {out.dtype}, but "
                            f"result_shape_dtypes declares {dtype}")
    return out


def _host_results(callback: Callable, spec_leaves: list, spec_tree, args, kwargs) -> list:
    results = callback(*args, **kwargs)
    leaves, tree = tree_flatten(results)
    if tree != spec_tree:
        raise TypeError(f"pure_callback: the callback returned {tree}, but "
                        f"result_shape_dtypes has the structure {spec_tree}")
    return [_checked(v, s, f"result {k}") for k, (v, s) in enumerate(zip(leaves, spec_leaves))]


def pure_callback(callback: Callable, result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """`callback(*args, **kwargs)`, whose results have the shapes and dtypes of the pytree
    `result_shape_dtypes` (ShapeDtypeStructs or arrays); the callback must be pure."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {_VMAP_METHODS[1:]}, "
                         f"got {vmap_method!r}")
    spec_leaves, spec_tree = tree_flatten(result_shape_dtypes)
    arg_leaves, arg_tree = tree_flatten((args, kwargs))
    if not _staged(arg_leaves):
        host_args, host_kwargs = tree_unflatten(
            arg_tree, [np.asarray(v) if isinstance(v, Array) else v for v in arg_leaves])
        outs = _host_results(callback, spec_leaves, spec_tree, host_args, host_kwargs)
        return tree_unflatten(spec_tree, [wrap_host(o, False) for o in outs])
    return _staged_call(callback, spec_leaves, spec_tree, arg_leaves, arg_tree)


def _staged_call(callback, spec_leaves, spec_tree, arg_leaves, arg_tree):
    """Record one host call per result leaf; each reruns the (pure) callback and keeps its
    leaf. Non-array arguments stay Python values, fixed in the recorded call."""
    from redraft.compiler.primitives.random import SAMPLERS, random_sample
    slots = [k for k, v in enumerate(arg_leaves) if isinstance(v, Array)]
    operands = tuple(arg_leaves[k] for k in slots)
    base = f"pure_callback {getattr(callback, '__name__', 'fn')} #{next(_NAMES)}"
    outs = []
    for index, spec in enumerate(spec_leaves):
        name = f"{base} result {index}"

        def host(*values, _index=index):
            leaves = list(arg_leaves)
            for slot, value in zip(slots, values):
                leaves[slot] = value
            args, kwargs = tree_unflatten(arg_tree, leaves)
            return _host_results(callback, spec_leaves, spec_tree, args, kwargs)[_index]

        SAMPLERS[name] = host
        outs.append(random_sample(name, operands, tuple(spec.shape), spec.dtype))
    return tree_unflatten(spec_tree, outs)


def effects_barrier() -> None:
    """Wait until every effect issued so far has run. redraft runs effects (debug.print,
    debug.callback) synchronously, in the call that issues them, so they have all run when
    this is reached: there is nothing to wait for."""
    return None


def _register_rules() -> None:
    from redraft.compiler.primitives.registry import defrefuse
    from redraft.compiler.transforms.batch.batching import defbatch_loop
    defbatch_loop(pure_callback, "calls the callback once per example", returns="any")
    defrefuse(pure_callback, "pure callbacks have no derivative: give the function that calls "
                             "it rules with redraft.custom_jvp or custom_vjp, as in JAX")


_register_rules()
