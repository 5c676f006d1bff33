"""Reverse-mode pieces of JAX's top level: fwd_and_bwd, float0 and checkpoint_policies.

fwd_and_bwd(f, argnums) splits reverse mode into a forward function returning the value and
residuals and a backward function taking residuals and a cotangent. redraft's reverse-mode
functions recompute what they need from the primal inputs, so the residuals are those
inputs (a pytree of arrays that can cross a jit boundary), and bwd is the vjp at them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["fwd_and_bwd", "float0", "checkpoint_policies"]

# The dtype of tangents and cotangents of integer and bool values (they have none): an empty
# structured dtype, as in JAX, so arrays of it hold no data.
float0 = np.dtype([("float0", np.void, 0)])


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """(fwd, bwd): fwd(*args) -> (fun(*args), residuals) (with has_aux, (out, residuals,
    aux)), and bwd(residuals, ct) -> the cotangents of the arguments `argnums` names (one,
    for an int argnums; a tuple otherwise). With jitted, both are jit-compiled."""
    from redraft.jit import jit
    from redraft.transforms import vjp
    single = isinstance(argnums, int)
    positions = (argnums,) if single else tuple(int(i) for i in argnums)

    def fwd(*args):
        for pos in positions:
            if not -len(args) <= pos < len(args):
                raise ValueError(f"fwd_and_bwd: argnums {pos} is out of range for "
                                 f"{len(args)} arguments")
        out = fun(*args)
        if has_aux:
            return out[0], args, out[1]
        return out, args

    def bwd(residuals, ct):
        _, pullback, *_ = vjp(fun, *residuals, has_aux=has_aux)
        cts = pullback(ct)
        return cts[positions[0]] if single else tuple(cts[pos] for pos in positions)

    if jitted:
        return jit(fwd), bwd
    return fwd, bwd


class _CheckpointPolicies:
    """Policies for checkpoint(policy=...): each says, for a primitive, whether its result
    may be saved for the backward pass. redraft's checkpoint keeps every value reverse mode
    reads (see redraft.annotations), so any policy gives the same values and derivatives;
    the policies are real predicates, usable on their own."""

    _DOTS = ("dot_general", "dot", "matmul", "conv_general_dilated")

    @staticmethod
    def everything_saveable(prim: Any, *_, **__) -> bool:
        return True

    @staticmethod
    def nothing_saveable(prim: Any, *_, **__) -> bool:
        return False

    @classmethod
    def dots_saveable(cls, prim: Any, *_, **__) -> bool:
        return getattr(prim, "name", str(prim)) in cls._DOTS

    checkpoint_dots = dots_saveable

    @classmethod
    def dots_with_no_batch_dims_saveable(cls, prim: Any, *_, **params) -> bool:
        if not cls.dots_saveable(prim):
            return False
        dims = params.get("dimension_numbers")  # ((contracting), (lhs batch, rhs batch))
        return dims is None or not dims[1][0]

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names: str) -> Callable:
        chosen = set(names)
        return lambda prim, *_, **params: params.get("name") in chosen

    @staticmethod
    def save_any_names_but_these(*names: str) -> Callable:
        excluded = set(names)
        return lambda prim, *_, **params: ("name" in params
                                           and params["name"] not in excluded)

    @staticmethod
    def save_anything_except_these_names(*names: str) -> Callable:
        excluded = set(names)
        return lambda prim, *_, **params: params.get("name") not in excluded

    @staticmethod
    def save_from_both_policies(first: Callable, second: Callable) -> Callable:
        return lambda prim, *args, **params: (first(prim, *args, **params)
                                              or second(prim, *args, **params))


checkpoint_policies = _CheckpointPolicies()
