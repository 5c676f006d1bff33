"""Elementwise equations, reductions, `fused` loop nests and iota, lowered as loop nests.

A single elementwise equation is a nest over its output shape. A `fused` equation (made by
the fusion pass, compiler/ir/passes/fusion.py: the one place elementwise work is grouped;
IR that has not been through it is lowered equation by equation) is ONE nest:
its region's equations are evaluated on registers per element and only its results touch
memory; trailing reductions accumulate in registers or into the output. A fused equation
this backend cannot emit as one nest (a non-elementwise equation in its body, a reduction
whose operand is not the full iteration space) is lowered equation by equation instead,
which has the same values.
"""
from __future__ import annotations

import numpy as np
from redraft.compiler.ir.ssa import Eqn, Literal, Value
from redraft.compiler.primitives import reductions as red

from . import elementwise, special  # noqa: F401 (special: its rules join ELEMENTWISE)
from .elementwise import COST, ELEMENTWISE
from .loops import Nest, NestInput, NestOutput, emit_nest, reduce_kind
from .module import FunctionLowering, lowering
from .types import Unsupported, check_dtype, constant
from .views import View

REDUCTIONS = {p.name: p for p in red.FUSIBLE_REDUCTIONS}  # by name, as the lowerings key


def _public(params: dict) -> dict:
    return {k: v for k, v in params.items() if not k.startswith("_")}


# ---- single equations --------------------------------------------------------------------------

def lower_elementwise(L: FunctionLowering, eqn: Eqn) -> None:
    out = eqn.outs[0]
    shape = tuple(out.aval.shape)
    views = [L.read(a).broadcast_to(shape) for a in eqn.ins]
    dtypes = [check_dtype(a.aval.dtype) for a in eqn.ins]
    out_dtype = check_dtype(out.aval.dtype)
    params = _public(eqn.params)
    operands = [(a, L.read(a)) for a in eqn.ins]
    pointwise = [(a, v) for a, v in operands if tuple(a.aval.shape) == shape]
    dest = L.dest(out, pointwise, operands)

    def body(b, regs):
        return [elementwise.lower(b, eqn.prim, regs, dtypes, out_dtype, params)]

    emit_nest(L.cx, Nest(shape, [NestInput(v) for v in views], [NestOutput(dest, dest)], body,
                         COST.get(eqn.prim, 1), tuple(dtypes)))
    L.views[out.id] = dest


for _prim in ELEMENTWISE:
    lowering(_prim.name)(lower_elementwise)


def reduced_view(dest: View, shape: tuple[int, ...], axes) -> View:
    """`dest` (the reduced shape) seen over the operand's shape: stride 0 on `axes`."""
    strides, k = [], 0
    for d in range(len(shape)):
        if d in axes:
            strides.append(0)
        else:
            strides.append(dest.strides[k])
            k += 1
    return View(dest.base, dest.dtype, tuple(shape), tuple(strides), dest.offset)


@lowering(*REDUCTIONS)
def lower_reduction(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    axes = tuple(eqn.params["axes"])
    dtype = check_dtype(eqn.ins[0].aval.dtype)
    kind = reduce_kind(eqn.prim.name, dtype)
    if kind in ("max", "min") and x.size == 0:
        raise Unsupported("max/min of an empty array raises")
    out = eqn.outs[0]
    dest = L.dest(out)
    emit_nest(L.cx, Nest(x.shape, [NestInput(x)],
                         [NestOutput(reduced_view(dest, x.shape, axes), dest, kind)],
                         lambda b, regs: regs, 1, (dtype,)))
    L.views[out.id] = dest


@lowering("iota")
def lower_iota(L: FunctionLowering, eqn: Eqn) -> None:
    out = eqn.outs[0]
    shape = tuple(out.aval.shape)
    dtype = check_dtype(out.aval.dtype)
    dest = L.dest(out)
    index = View.constant(0, dtype, shape)
    emit_nest(L.cx, Nest(shape, [NestInput(index, eqn.params["dimension"])],
                         [NestOutput(dest, dest)], lambda b, regs: regs, 1, (dtype,)))
    L.views[out.id] = dest


# ---- fused ------------------------------------------------------------------------------------

@lowering("fused")
def lower_fused(L: FunctionLowering, eqn: Eqn) -> None:
    if id(eqn) in L.family_state.get("epilogues", ()):
        return  # lowered already, as a product's epilogue (epilogue.py)
    region = eqn.regions[0]
    shape = _iteration_shape(eqn)
    if shape is None or not _fusable(region, shape):
        _lower_unfused(L, eqn)
        return
    views, literal_inputs = fused_inputs(L, eqn, shape)
    outputs, results = _fused_outputs(L, eqn, shape)
    dtypes = {check_dtype(v.aval.dtype) for e in region.eqns for v in e.outs}
    cost = sum(COST.get(e.prim, 1) for e in region.eqns)
    if outputs:
        body = _fused_body(region, literal_inputs, results)
        emit_nest(L.cx, Nest(shape, [NestInput(v) for v in views], outputs, body, cost,
                             tuple(dtypes)))
    in_ids = {p.id: k for k, p in enumerate(region.params)}
    for out, r in zip(eqn.outs, region.results):
        if out.id not in L.views:  # a parameter or literal passed straight through
            L.bind_copy(out, L.read(eqn.ins[in_ids[r.id]]) if isinstance(r, Value) else
                        L.read(r))


def fused_inputs(L, eqn: Eqn, shape) -> tuple[list[View], dict]:
    """The operands over the iteration space, then the body's literal arrays that are not
    one repeated value (read like operands; `literal_inputs` maps id(literal) -> index).
    `L` is any backend's lowering with `read` (the CPU nests and the GPU kernels share it)."""
    views = [L.read(a).broadcast_to(shape) for a in eqn.ins]
    literal_inputs: dict[int, int] = {}
    for e in eqn.regions[0].eqns:
        for a in e.ins:
            if isinstance(a, Literal) and id(a) not in literal_inputs:
                view = L.read(a)
                if view.const is None:
                    literal_inputs[id(a)] = len(views)
                    views.append(view.broadcast_to(shape))
    return views, literal_inputs


def _fused_outputs(L: FunctionLowering, eqn: Eqn, shape) -> tuple[list[NestOutput], list]:
    """Where each computed result goes (stored, or reduced into its output), and the
    region values the body must return for them, in the same order."""
    region = eqn.regions[0]
    produced = {e.outs[0].id: e for e in region.eqns}
    operands = [(a, L.read(a)) for a in eqn.ins]
    pointwise = [(a, v) for (a, v), p in zip(operands, region.params)
                 if tuple(p.aval.shape) == shape]
    outputs, results = [], []
    for out, r in zip(eqn.outs, region.results):
        if not isinstance(r, Value) or r.id not in produced:
            continue
        e = produced[r.id]
        if e.prim.name in REDUCTIONS:
            dest = L.dest(out)
            kind = reduce_kind(e.prim.name, check_dtype(e.ins[0].aval.dtype))
            view = reduced_view(dest, shape, tuple(e.params["axes"]))
            outputs.append(NestOutput(view, dest, kind))
        else:
            full = tuple(out.aval.shape) == shape
            dest = L.dest(out, pointwise if full else None, operands)
            outputs.append(NestOutput(dest.broadcast_to(shape), dest))
        results.append(r)
        L.views[out.id] = dest
    return outputs, results


def _fused_body(region, literal_inputs: dict, results: list):
    """The nest body: the region's equations on registers (a reduction passes its operand
    through; the nest does the reducing)."""
    def body(b, regs):
        def lower(prim, args, dtypes, out_dtype, params):
            return elementwise.lower(b, prim, args, dtypes, out_dtype, params)
        return region_values(region, literal_inputs, results, regs, lower)

    return body


def region_values(region, literal_inputs: dict[int, int], results: list, regs: list,
                  lower) -> list:
    """The values of `results` for one element: the region's equations evaluated on `regs`
    (its inputs' registers, then those of the literals `literal_inputs` maps to a slot),
    each elementwise equation made by `lower(prim, args, dtypes, out_dtype, params)`. A
    reduction passes its operand through: the caller does the reducing. The CPU nests and
    the GPU kernels share it, each with its own scalar lowering."""
    in_ids = {p.id: k for k, p in enumerate(region.params)}
    env = {}

    def value(a):
        if isinstance(a, Literal):
            if id(a) in literal_inputs:
                return regs[literal_inputs[id(a)]]
            return constant(check_dtype(a.aval.dtype), np.asarray(a.value).flat[0])
        if a.id in in_ids:
            return regs[in_ids[a.id]]
        return env[a.id]

    for e in region.eqns:
        if e.prim.name in REDUCTIONS:
            env[e.outs[0].id] = value(e.ins[0])
            continue
        dts = [check_dtype(a.aval.dtype) for a in e.ins]
        env[e.outs[0].id] = lower(e.prim, [value(a) for a in e.ins], dts,
                                  check_dtype(e.outs[0].aval.dtype), _public(e.params))
    return [value(r) for r in results]


def _iteration_shape(eqn: Eqn) -> tuple[int, ...] | None:
    shape = eqn.params.get("shape")
    if shape is not None:
        return tuple(shape)
    shapes = [tuple(e.ins[0].aval.shape) if e.prim.name in REDUCTIONS else tuple(
        e.outs[0].aval.shape) for e in eqn.regions[0].eqns]
    if not shapes:
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _fusable(region, shape: tuple[int, ...]) -> bool:
    """Only elementwise equations, reductions of full-shape values that nothing else reads,
    and scalar literals."""
    reduced = set()
    for e in region.eqns:
        if any(isinstance(a, Value) and a.id in reduced for a in e.ins):
            return False
        if any(isinstance(a, Literal) and _broadcasts_to(a.aval.shape, shape) is False
               for a in e.ins):
            return False
        if e.prim.name in REDUCTIONS:
            if tuple(e.ins[0].aval.shape) != shape or not isinstance(e.ins[0], Value):
                return False
            if e.prim.name in ("reduce_max", "reduce_min") and 0 in shape:
                return False
            reduced.add(e.outs[0].id)
        elif e.prim not in ELEMENTWISE or len(e.outs) != 1:
            return False
        if any(a.aval.dtype.kind == "c" for a in list(e.ins) + e.outs):
            return False  # complex arithmetic: its equations run on the host one by one
        try:
            np.broadcast_shapes(tuple(e.outs[0].aval.shape), shape)
        except ValueError:
            return False
    results = [r for r in region.results if isinstance(r, Value)]
    return all(len(tuple(r.aval.shape)) <= len(shape) for r in results)


def _broadcasts_to(small, shape) -> bool:
    try:
        return np.broadcast_shapes(tuple(small), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def _lower_unfused(L: FunctionLowering, eqn: Eqn) -> None:
    region = eqn.regions[0]
    L.lower_block(region, [L.read(a) for a in eqn.ins])
    for out, r in zip(eqn.outs, region.results):
        L.bind_copy(out, L.read(r))


# ---- what an equation reads ---------------------------------------------------------------

def _reads(eqn: Eqn) -> set:
    """Ids of the values an equation reads, its regions' free values included."""
    ids = {a.id for a in eqn.ins if isinstance(a, Value)}
    for region in eqn.regions:
        for e in region.eqns:
            ids |= _reads(e)
        ids |= {a.id for a in region.results if isinstance(a, Value)}
    return ids
