"""Cumulative scans (cumsum, cumprod, cummax, cummin) and argmax / argmin.

Both walk one axis in order, so they are a loop over that axis around a loop nest over the
other axes (vectorised along the last of them): a scan combines the previous result slice
with the current input slice, an arg-reduction keeps the best value and its index per
position. Index k reaches the nests through a stack slot, so they may run on threads.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from redraft.compiler.ir.ssa import Eqn
from redraft.compiler.primitives import elementwise as ew

from .elementwise import ELEMENTWISE
from .loops import Nest, NestInput, NestOutput, copy, emit_nest, for_range
from .module import FunctionLowering, lowering
from .types import Unsupported, check_dtype, i64, is_bool, is_float, memory_type
from .views import View

SCAN_KIND = {"cumsum": "add", "cumprod": "mul", "cummax": "max", "cummin": "min"}
BOOL_KIND = {"add": "or", "mul": "and", "max": "or", "min": "and"}


def _slice_at(view: View, axis: int, k: ir.Value, b: ir.IRBuilder) -> View:
    """view[..., k, ...] along `axis`, at a run-time k."""
    shape = view.shape[:axis] + view.shape[axis + 1:]
    strides = view.strides[:axis] + view.strides[axis + 1:]
    if view.const is not None:
        return View.constant(view.const, view.dtype, shape)
    offset = b.add(i64(view.offset), b.mul(k, i64(view.strides[axis])))
    base = b.gep(view.base, [offset], inbounds=True, source_etype=memory_type(view.dtype))
    return View(base, view.dtype, shape, strides, 0)


def _combine_rule(kind: str, dtype: np.dtype):
    prim = {"add": ew.add_p, "mul": ew.mul_p, "max": ew.max_p, "min": ew.min_p,
            "and": ew.and_p, "or": ew.or_p}[kind]

    def body(b, regs):
        return [ELEMENTWISE[prim](b, regs, [dtype, dtype], dtype, {})]
    return body


@lowering(*SCAN_KIND)
def lower_scan(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    axis, reverse = eqn.params["axis"], eqn.params.get("reverse", False)
    dtype = check_dtype(eqn.ins[0].aval.dtype)
    kind = SCAN_KIND[eqn.prim.name]
    kind = BOOL_KIND[kind] if is_bool(dtype) else kind
    dest = L.dest(eqn.outs[0])
    L.views[eqn.outs[0].id] = dest
    n = x.shape[axis]
    if n == 0 or x.size == 0:
        return
    b = L.b
    first = i64(n - 1 if reverse else 0)
    copy(L.cx, _slice_at(x, axis, first, b), _slice_at(dest, axis, first, b))
    body = _combine_rule(kind, dtype)

    def step(i, carried):
        k = b.sub(i64(n - 1), i) if reverse else i
        prev = b.add(k, i64(1)) if reverse else b.sub(k, i64(1))
        out = _slice_at(dest, axis, k, b)
        emit_nest(L.cx, Nest(out.shape, [NestInput(_slice_at(dest, axis, prev, b)),
                                         NestInput(_slice_at(x, axis, k, b))],
                             [NestOutput(out, out)], body, 1, (dtype,)))
        return []

    for_range(b, i64(1), i64(n), 1, [], step, L.cx.unique("scan"))


@lowering("argmax", "argmin")
def lower_arg_reduction(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    axis = eqn.params["axis"]
    dtype = check_dtype(eqn.ins[0].aval.dtype)
    index_dtype = check_dtype(eqn.params["index_dtype"])
    n = x.shape[axis]
    if n == 0:
        raise Unsupported("arg-reduction over an empty axis raises")
    dest = L.dest(eqn.outs[0])
    L.views[eqn.outs[0].id] = dest
    if dest.size == 0:
        return
    b = L.b
    best, key = L.temporary(dtype, dest.shape)
    copy(L.cx, _slice_at(x, axis, i64(0), b), best)
    copy(L.cx, View.constant(0, index_dtype, dest.shape), dest)
    slot = L.cx.entry_alloca(memory_type(index_dtype))
    k_view = View.contiguous(slot, index_dtype, ()).broadcast_to(dest.shape)
    greater = ">" if eqn.prim.name == "argmax" else "<"

    def body(bb, regs):
        value, best_value, best_index, k = regs
        if is_float(dtype):
            better = bb.fcmp_ordered(greater, value, best_value)
            nan_first = bb.and_(bb.fcmp_unordered("uno", value, value),
                                bb.fcmp_ordered("ord", best_value, best_value))
            better = bb.or_(better, nan_first)
        elif dtype.kind == "i":
            better = bb.icmp_signed(greater, value, best_value)
        else:
            better = bb.icmp_unsigned(greater, value, best_value)
        from .types import lanes_of, splat
        lanes = max(lanes_of(r) for r in regs)
        k = splat(bb, k, lanes) if lanes and not lanes_of(k) else k
        return [bb.select(better, value, best_value), bb.select(better, k, best_index)]

    def step(i, carried):
        b.store(b.trunc(i, memory_type(index_dtype)) if index_dtype.itemsize < 8 else i, slot)
        current = _slice_at(x, axis, i, b)
        emit_nest(L.cx, Nest(dest.shape, [NestInput(current), NestInput(best), NestInput(dest),
                                          NestInput(k_view)],
                             [NestOutput(best, best), NestOutput(dest, dest)], body, 2,
                             (dtype, index_dtype)))
        return []

    for_range(b, i64(1), i64(n), 1, [], step, L.cx.unique("arg"))
    L.ws.release(key)


