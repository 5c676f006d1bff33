"""Common-subexpression elimination: compute each pure expression once."""
from __future__ import annotations

from collections import ChainMap
from dataclasses import replace

import numpy as np

from redraft.compiler.ir.passes.common import (has_effects, is_fused, resolve, substitute,
                                               visible_params)
from redraft.compiler.ir.ssa import CONTROL_PRIMITIVES, Atom, Block, Eqn, Function, Literal, Value


class _Unhashable(Exception):
    """A parameter value that cannot be part of a key: the equation is left alone."""


def cse(fn: Function) -> Function:
    """Replace an equation by an earlier identical one.

    Expects verified IR. Guarantees: of two equations without regions or effects that apply
    the same primitive to the same operands (values by identity, literals by dtype, shape,
    weak type and bytes) with equal parameters and equal result types, only the first is
    kept and the second's results are renamed to the first's. An equation may be replaced by
    one of its own block or of an enclosing block (so loop-invariant repeats inside a region
    reuse the value computed outside), never by one in a sibling or nested region. Regions of
    `fused` equations are closed and start from an empty table.
    """
    return Function(fn.name, _block(fn.body, ChainMap(), {}), dict(fn.meta))


def _block(block: Block, table: ChainMap, subst: dict[int, Atom]) -> Block:
    eqns = []
    for eqn in block.eqns:
        eqn = substitute(eqn, subst)
        if eqn.regions:
            scope = ChainMap() if is_fused(eqn) else table
            eqn = replace(eqn, regions=[_block(r, scope.new_child(), subst)
                                        for r in eqn.regions])
        key = _key(eqn)
        if key is not None and key in table:
            subst.update((v.id, w) for v, w in zip(eqn.outs, table[key]))
            continue
        if key is not None:
            table[key] = eqn.outs
        eqns.append(eqn)
    return Block(block.params, eqns, [resolve(a, subst) for a in block.results])


def _key(eqn: Eqn):
    """What makes two equations compute the same values; None if `eqn` must stay."""
    if eqn.regions or eqn.prim in CONTROL_PRIMITIVES or has_effects(eqn) or not eqn.outs:
        return None
    try:
        params = _freeze(visible_params(eqn))
    except _Unhashable:
        return None
    ins = tuple(_atom_key(a) for a in eqn.ins)
    outs = tuple(v.aval for v in eqn.outs)
    return (eqn.prim, ins, params, outs)


def _atom_key(a: Atom):
    if isinstance(a, Value):
        return ("value", a.id)
    assert isinstance(a, Literal)
    return ("literal", a.aval, a.value.tobytes())


def _freeze(value):
    """A hashable stand-in for a parameter value that tells apart values of other types
    (so that 1, 1.0 and True never match one another)."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    try:
        hash(value)
    except TypeError:
        raise _Unhashable from None
    return (type(value).__name__, value)
