"""Constant folding: evaluate at compile time what depends only on literals, and drop the
algebraic identities that are exact for every input."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from redraft.compiler.ir.passes.common import (has_effects, is_elementwise, resolve, substitute,
                                              visible_params)
from redraft.compiler.ir.ssa import CONTROL_PRIMITIVES, Atom, Block, Eqn, Function, Literal, Value
from redraft.compiler.primitives.linalg import dot_general_p
from redraft.compiler.primitives.shape import broadcast_in_dim_p, transpose_p
from redraft.compiler.primitives.elementwise import convert_element_type_p, mul_p, sub_p
from redraft.runtime.eager import eager_impl, impl_rules

MAX_FOLD_ELEMENTS = 100_000  # a larger result is computed at run time, not stored in the IR
MAX_GROWN_ELEMENTS = 1_024  # a result larger than its operands (a broadcast, an iota) is
#                             folded only up to this size: computing it is cheaper than storing


def fold(fn: Function) -> Function:
    """Constant folding and exact identities, in every block.

    Expects verified IR. Guarantees: an equation that is neither control flow nor effectful,
    whose operands are all literals and whose results are small (MAX_FOLD_ELEMENTS, or
    MAX_GROWN_ELEMENTS when they outgrow the operands), is replaced by literal results
    computed by its `impl` rule (an equation whose rule raises is kept, so the error happens
    at run time); `mul x 1` (not complex: inf*(1+0j) has a NaN part) and
    `convert_element_type` to x's own type are replaced by x when the type (weak type
    included) is unchanged; so are `x - 0` and a transpose by the identity permutation.
    A literal operand of an elementwise equation whose elements are all equal becomes a
    scalar literal when another operand already has the result's shape, and so does a
    value broadcast from one such literal (the zero accumulators of gradients are then a
    register, not an array written and read from memory; `x + 0` itself stays, since
    `-0.0 + 0.0` is `+0.0`). A transpose that swaps the free axes of a
    product (`(A @ B).T`) becomes the product of the operands swapped (`B.T @ A.T`), so the
    product is written in the layout its readers want (the original product is left for
    dce when nothing else reads it). Every other equation and every value's type is unchanged.
    """
    return Function(fn.name, _block(fn.body, {}), dict(fn.meta))


def _block(block: Block, subst: dict[int, Atom]) -> Block:
    eqns = []
    products: dict[int, Eqn] = {}  # value id -> the dot_general that computes it
    splats: dict[int, Literal] = {}  # value id -> the one value a broadcast fills it with
    for eqn in block.eqns:
        eqn = substitute(eqn, subst)
        if eqn.regions:
            eqn = replace(eqn, regions=[_block(r, subst) for r in eqn.regions])
        if eqn.prim is transpose_p:
            eqn = _swapped_product(eqn, products)
        elif is_elementwise(eqn.prim):
            eqn = _scalar_literals(eqn, splats)
        if eqn.prim is dot_general_p:
            products[eqn.outs[0].id] = eqn
        elif eqn.prim is broadcast_in_dim_p and _uniform(eqn.ins[0]):
            splats[eqn.outs[0].id] = _scalar(eqn.ins[0], eqn.outs[0])
        replacement = _constant(eqn)
        if replacement is None:
            replacement = _identity(eqn)
        if replacement is None:
            eqns.append(eqn)
        else:
            subst.update((v.id, r) for v, r in zip(eqn.outs, replacement))
    return Block(block.params, eqns, [resolve(a, subst) for a in block.results])


def _constant(eqn: Eqn) -> list[Literal] | None:
    """The literal results of `eqn` if it can and should be evaluated now."""
    if eqn.prim in CONTROL_PRIMITIVES or has_effects(eqn) or eqn.prim not in impl_rules:
        return None
    if not all(isinstance(a, Literal) for a in eqn.ins) or not _small(eqn):
        return None
    try:
        with np.errstate(all="ignore"):
            result = eager_impl(eqn.prim)(*(a.value for a in eqn.ins), **visible_params(eqn))
    except Exception:  # noqa: BLE001 - the error belongs to run time, where it is reported
        return None
    results = list(result) if eqn.prim.multiple_results else [result]
    literals = [_literal(r, v) for r, v in zip(results, eqn.outs)]
    if len(results) != len(eqn.outs) or any(lit is None for lit in literals):
        return None
    return literals


def _small(eqn: Eqn) -> bool:
    out_size = sum(v.aval.size for v in eqn.outs)
    in_size = sum(a.aval.size for a in eqn.ins)
    return out_size <= MAX_FOLD_ELEMENTS and (out_size <= in_size
                                              or out_size <= MAX_GROWN_ELEMENTS)


def _literal(result, out: Value) -> Literal | None:
    value = np.asarray(result, dtype=out.aval.dtype)
    if value.shape != out.aval.shape:
        return None
    return Literal(value, out.aval)


def _scalar_literals(eqn: Eqn, splats: dict[int, Literal]) -> Eqn:
    """`eqn` with each uniform array literal, and each value a broadcast of one fills
    (`zeros_like` of a large array: too large to fold into a literal), replaced by its one
    value as a 0-d literal, when another operand keeps the result's shape."""
    shape = eqn.outs[0].aval.shape

    def splat(a: Atom) -> bool:
        return isinstance(a, Value) and a.id in splats

    if not any(a.aval.shape == shape and not _uniform(a) and not splat(a) for a in eqn.ins):
        return eqn
    ins = [splats[a.id] if splat(a) else _scalar(a, a) if _uniform(a) and a.aval.ndim else a
           for a in eqn.ins]
    return replace(eqn, ins=ins)


def _scalar(a: Literal, like: Atom) -> Literal:
    """The one value of the uniform literal `a` as a 0-d literal of `like`'s type."""
    value = a.value.reshape(-1)[:1].reshape(()).astype(like.aval.dtype)
    return Literal(value, replace(like.aval, shape=()))


def _uniform(a: Atom) -> bool:
    """A literal with at least one element, all of them equal (bit for bit)."""
    if not isinstance(a, Literal) or a.value.size == 0:
        return False
    flat = a.value.reshape(-1)
    if flat.dtype.kind not in "biuf":
        return False
    return bool(np.all(flat.view(f"u{flat.itemsize}") == flat[:1].view(f"u{flat.itemsize}"))) \
        if flat.dtype.kind == "f" else bool(np.all(flat == flat[0]))


def _swapped_product(eqn: Eqn, products: dict[int, Eqn]) -> Eqn:
    """`transpose (dot_general a b)` as `dot_general b a` when the permutation only swaps
    the two groups of free axes (batch axes stay in front); else `eqn` unchanged."""
    x = eqn.ins[0]
    product = products.get(x.id) if isinstance(x, Value) else None
    if product is None:
        return eqn
    (lc, rc), (lb, rb) = product.params["dimension_numbers"]
    lhs, rhs = product.ins
    n_batch = len(lb)
    n_left = lhs.aval.ndim - len(lc) - n_batch
    n_right = rhs.aval.ndim - len(rc) - n_batch
    start = n_batch + n_left
    swap = (tuple(range(n_batch)) + tuple(range(start, start + n_right))
            + tuple(range(n_batch, start)))
    if tuple(eqn.params["permutation"]) != swap:
        return eqn
    params = dict(product.params, dimension_numbers=((rc, lc), (rb, lb)))
    return Eqn(dot_general_p, [rhs, lhs], eqn.outs, params, [], eqn.origin)


def _identity(eqn: Eqn) -> list[Atom] | None:
    """[x] when `eqn` is `mul x 1`, `x - 0`, an identity transpose or a conversion of x to
    its own type."""
    if eqn.prim is mul_p:
        x = _other_operand_if(eqn.ins, 1)
    elif eqn.prim is sub_p:
        x = eqn.ins[0] if _is_constant(eqn.ins[1], 0) and eqn.ins[0].aval.dtype.kind in "iuf" \
            else None
    elif eqn.prim is convert_element_type_p:
        x = eqn.ins[0]
    elif eqn.prim is transpose_p:
        permutation = tuple(eqn.params["permutation"])
        x = eqn.ins[0] if permutation == tuple(range(len(permutation))) else None
    else:
        return None
    if x is None or x.aval != eqn.outs[0].aval:
        return None
    return [x]


def _other_operand_if(ins: list[Atom], constant: int) -> Atom | None:
    """The operand beside a literal that equals `constant` everywhere (real types only)."""
    for k, a in enumerate(ins):
        other = ins[1 - k]
        if _is_constant(a, constant) and other.aval.dtype.kind in "biuf":
            return other
    return None


def _is_constant(a: Atom, constant: int) -> bool:
    return (isinstance(a, Literal) and a.value.dtype.kind in "biuf"
            and bool(np.all(a.value == constant)))
