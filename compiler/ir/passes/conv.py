"""Lower conv_general_dilated to one matrix product (im2col), so backends run it through
their dot_general kernel.

Expects: verified IR. Guarantees: every floating conv_general_dilated becomes

    x  = transpose(lhs) to N, C, spatial...      w = transpose(rhs) to O, I, kernel...
    xp = pad(x)                                   (padding; lhs dilation as interior padding)
    s_k = slice(xp, offset k * rhs_dilation, stride window_strides)   for each kernel offset k
    patches = concatenate(s_k as N, C, 1, out...) along axis 2 -> reshape N, C*K, P
        (or, when the kernel has more offsets K than the output positions P, one window
        slice per position, concatenated as N, C, K, P: same patches, fewer equations)
    y  = dot_general(patches, reshape(w, O, C*K)) -> N, P, O -> N, O, out... -> out layout

with the same values (the products are summed in another order). With G feature groups
(depthwise and grouped convolutions) the patches split as N, G, C/G*K, P and the weights as
G, O/G, C/G*K, and the product is batched over G; with B batch groups (the weight gradient
of a grouped convolution) the patches split as B, N/B, C*K, P and the weights as B, O/B,
C*K, batched over B.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value
from redraft.compiler.primitives.conv import conv_general_dilated_p
from redraft.compiler.primitives.linalg import dot_general_p
from redraft.compiler.primitives.shape import (concatenate_p, pad_p, reshape_p, slice_p,
                                               transpose_p)


def lower_conv(fn: Function) -> Function:
    _block(fn.body)
    return fn


def _block(block: Block) -> None:
    out: list[Eqn] = []
    for eqn in block.eqns:
        for region in eqn.regions:
            _block(region)
        if eqn.prim is conv_general_dilated_p and _lowerable(eqn):
            out.extend(_im2col(eqn))
        else:
            out.append(eqn)
    block.eqns = out


def _lowerable(eqn: Eqn) -> bool:
    p = eqn.params
    lhs, rhs = eqn.ins[0].aval, eqn.ins[1].aval
    return (p.get("preferred_element_type") is None and lhs.dtype.kind == "f"
            and lhs.size > 0 and rhs.size > 0 and eqn.outs[0].aval.size > 0)


class _Emitter:
    """Appends equations whose output types come from the primitives' own rules."""

    def __init__(self, origin):
        self.eqns: list[Eqn] = []
        self.origin = origin

    def __call__(self, prim, *ins, **params) -> Value:
        if _is_identity(prim, ins[0], params):
            return ins[0]
        return self.force(prim, *ins, **params).outs[0]

    def force(self, prim, *ins, **params) -> Eqn:
        """Append the equation even if it changes nothing (the last one must exist)."""
        aval = abstract_eval_rules[prim](*(a.aval for a in ins), **params)
        out = Value(ShapedArray(aval.shape, aval.dtype, False))
        self.eqns.append(Eqn(prim, list(ins), [out], params, [], self.origin))
        return self.eqns[-1]


def _is_identity(prim, x, params) -> bool:
    """A transpose, pad or reshape that would leave `x` as it is."""
    if prim is transpose_p:
        return tuple(params["permutation"]) == tuple(range(x.aval.ndim))
    if prim is pad_p:
        return all(c == (0, 0, 0) for c in params["padding_config"])
    if prim is reshape_p:
        return tuple(params["new_sizes"]) == x.aval.shape
    return False


def _patches_by_offset(emit: _Emitter, xp: Value, p: dict, kernel, spatial_out) -> Value:
    """(N, C, K, out...) as one strided slice per kernel offset (few offsets, many output
    positions: the forward convolution)."""
    n, c = xp.aval.shape[:2]
    columns = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        start = (0, 0) + tuple(k * d for k, d in zip(offset, p["rhs_dilation"]))
        limit = (n, c) + tuple(s + (m - 1) * st + 1 for s, m, st in
                               zip(start[2:], spatial_out, p["window_strides"]))
        piece = emit(slice_p, xp, start_indices=start, limit_indices=limit,
                     strides=(1, 1) + tuple(p["window_strides"]))
        columns.append(emit(reshape_p, piece, new_sizes=(n, c, 1) + tuple(spatial_out)))
    return columns[0] if len(columns) == 1 else emit(concatenate_p, *columns, dimension=2)


def _patches_by_position(emit: _Emitter, xp: Value, p: dict, kernel, spatial_out) -> Value:
    """(N, C, K, P) as one window slice per output position (a kernel larger than the
    output, as in the gradient with respect to a convolution's weights, where the output
    gradient is the kernel: 9 slices for a 3x3 filter instead of one per pixel)."""
    n, c = xp.aval.shape[:2]
    k_total = math.prod(kernel)
    columns = []
    for position in itertools.product(*(range(m) for m in spatial_out)):
        start = (0, 0) + tuple(q * st for q, st in zip(position, p["window_strides"]))
        limit = (n, c) + tuple(s + (k - 1) * d + 1 for s, k, d in
                               zip(start[2:], kernel, p["rhs_dilation"]))
        piece = emit(slice_p, xp, start_indices=start, limit_indices=limit,
                     strides=(1, 1) + tuple(p["rhs_dilation"]))
        columns.append(emit(reshape_p, piece, new_sizes=(n, c, k_total, 1)))
    return columns[0] if len(columns) == 1 else emit(concatenate_p, *columns, dimension=3)


def _grouped_product(emit: _Emitter, patches: Value, w: Value, patch_shape: tuple,
                     weight_shape: tuple, group_axis: int) -> Value:
    """The product of patches viewed as `patch_shape` (groups on `group_axis`, contracted
    on axis 2) and weights viewed as `weight_shape` (groups, outputs per group,
    contracted), batched over the groups: groups, rows, P, outputs per group."""
    lhs = emit(reshape_p, patches, new_sizes=patch_shape)
    rhs = emit(reshape_p, w, new_sizes=weight_shape)
    return emit(dot_general_p, lhs, rhs,
                dimension_numbers=(((2,), (2,)), ((group_axis,), (0,))),
                preferred_element_type=None)


def _im2col(eqn: Eqn) -> list[Eqn]:
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    emit = _Emitter(eqn.origin)
    x = emit(transpose_p, eqn.ins[0], permutation=tuple(lhs_spec))
    w = emit(transpose_p, eqn.ins[1], permutation=tuple(rhs_spec))
    n, c = x.aval.shape[:2]
    o = w.aval.shape[0]
    kernel = w.aval.shape[2:]
    canonical_out = tuple(eqn.outs[0].aval.shape[i] for i in out_spec)
    spatial_out = canonical_out[2:]
    zero = Literal(np.zeros((), x.aval.dtype), ShapedArray((), x.aval.dtype))
    config = ((0, 0, 0), (0, 0, 0)) + tuple(
        (lo, hi, d - 1) for (lo, hi), d in zip(p["padding"], p["lhs_dilation"]))
    xp = emit(pad_p, x, zero, padding_config=config)
    k_total, positions = math.prod(kernel), math.prod(spatial_out)
    if k_total <= positions:
        patches = _patches_by_offset(emit, xp, p, kernel, spatial_out)
    else:
        patches = _patches_by_position(emit, xp, p, kernel, spatial_out)
    groups, batch_groups = p["feature_group_count"], p["batch_group_count"]
    if groups > 1:
        y = _grouped_product(emit, patches, w, (n, groups, c // groups * k_total, positions),
                             (groups, o // groups, c // groups * k_total), group_axis=1)
        y = emit(transpose_p, y, permutation=(1, 0, 3, 2))   # N, G, O/G, P
    elif batch_groups > 1:
        y = _grouped_product(emit, patches, w, (batch_groups, n // batch_groups,
                                                c * k_total, positions),
                             (batch_groups, o // batch_groups, c * k_total), group_axis=0)
        y = emit(transpose_p, y, permutation=(1, 0, 3, 2))   # N/B, B, O/B, P
    else:
        patches = emit(reshape_p, patches, new_sizes=(n, c * k_total, positions))
        w2 = emit(reshape_p, w, new_sizes=(o, c * k_total))
        y = emit(dot_general_p, patches, w2, dimension_numbers=(((1,), (1,)), ((), ())),
                 preferred_element_type=None)
        y = emit(transpose_p, y, permutation=(0, 2, 1))
    y = emit(reshape_p, y, new_sizes=canonical_out)
    back = tuple(int(i) for i in np.argsort(out_spec))
    final = emit.force(transpose_p, y, permutation=back)
    final.outs = [eqn.outs[0]]  # the conv's own output value: its uses stay valid
    return emit.eqns
