"""Elementwise equations, reductions, `fused` loop nests and iota, lowered as loop nests.

A single elementwise equation is a nest over its output shape. A `fused` equation (made by
the fusion pass, or by `group_elementwise` below when that pass has not run) is ONE nest:
its region's equations are evaluated on registers per element and only its results touch
memory; trailing reductions accumulate in registers or into the output. A fused equation
this backend cannot emit as one nest (a non-elementwise equation in its body, a reduction
whose operand is not the full iteration space) is lowered equation by equation instead,
which has the same values.
"""
from __future__ import annotations

import numpy as np
from redraft.compiler.ir.ssa import Eqn, Literal, Value, fused_p
from redraft.compiler.primitives import reductions as red

from . import elementwise
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


# ---- grouping elementwise equations into fused nests (when no fusion pass ran) --------------

def group_elementwise(block):
    """A copy of `block` whose runs of same-shape elementwise equations (and reductions of
    their results) are `fused` equations, so each run is one loop nest. Equations that do
    not read a run's values may move before it; effects keep their order."""
    from redraft.compiler.ir.ssa import Block
    readers = _readers(block)
    eqns: list[Eqn] = []
    group: list[tuple[int, Eqn]] = []

    def flush():
        if len(group) == 1:
            eqns.append(group[0][1])
        elif group:
            eqns.append(_make_fused(group, readers))
        group.clear()

    for index, eqn in enumerate(block.eqns):
        eqn = _regroup_regions(eqn)
        if _joins(eqn, [e for _, e in group]):
            group.append((index, eqn))
            continue
        produced = {v.id for _, e in group for v in e.outs}
        if _reads(eqn) & produced or _is_elementwise(eqn):
            flush()
            if _is_elementwise(eqn):
                group.append((index, eqn))
                continue
        eqns.append(eqn)
    flush()
    return Block(block.params, eqns, block.results)


def _is_elementwise(eqn: Eqn) -> bool:
    return eqn.prim in ELEMENTWISE and len(eqn.outs) == 1


def _joins(eqn: Eqn, group: list) -> bool:
    if not group:
        return False
    shape = tuple(group[0].outs[0].aval.shape)
    reduced = {e.outs[0].id for e in group if e.prim.name in REDUCTIONS}
    if _is_elementwise(eqn):
        return tuple(eqn.outs[0].aval.shape) == shape and not (_reads(eqn) & reduced)
    if eqn.prim.name in REDUCTIONS:
        x = eqn.ins[0]
        produced = {v.id for e in group for v in e.outs} - reduced
        return (isinstance(x, Value) and x.id in produced and tuple(x.aval.shape) == shape
                and not (eqn.prim.name in ("reduce_max", "reduce_min") and 0 in shape))
    return False


def _reads(eqn: Eqn) -> set:
    """Ids of the values an equation reads, its regions' free values included."""
    ids = {a.id for a in eqn.ins if isinstance(a, Value)}
    for region in eqn.regions:
        for e in region.eqns:
            ids |= _reads(e)
        ids |= {a.id for a in region.results if isinstance(a, Value)}
    return ids


def _readers(block) -> dict:
    """For each value id, the indices of the equations of `block` that read it (the
    block's results count as index len(eqns))."""
    readers: dict[int, set[int]] = {}
    for k, eqn in enumerate(block.eqns):
        for vid in _reads(eqn):
            readers.setdefault(vid, set()).add(k)
    for a in block.results:
        if isinstance(a, Value):
            readers.setdefault(a.id, set()).add(len(block.eqns))
    return readers


def _make_fused(group: list, readers: dict) -> Eqn:
    """A `fused` equation computing `group`; values read outside it become its outputs."""
    from redraft.compiler.ir.ssa import Block
    members = {index for index, _ in group}
    eqns = [e for _, e in group]
    produced = {v.id: v for e in eqns for v in e.outs}
    ins, params, rename = [], [], {}
    for e in eqns:
        for a in e.ins:
            if isinstance(a, Value) and a.id not in produced and a.id not in rename:
                rename[a.id] = Value(a.aval)
                ins.append(a)
                params.append(rename[a.id])
    inner = {vid: Value(v.aval) for vid, v in produced.items()}
    rename.update(inner)
    body = [Eqn(e.prim, [rename.get(a.id, a) if isinstance(a, Value) else a for a in e.ins],
                [inner[v.id] for v in e.outs], dict(e.params), [], e.origin) for e in eqns]
    outs = [v for e in eqns for v in e.outs
            if e.prim.name in REDUCTIONS or readers.get(v.id, set()) - members]
    kind = "reduce" if any(e.prim.name in REDUCTIONS for e in eqns) else "map"
    region = Block(params, body, [inner[v.id] for v in outs])
    shape = tuple(eqns[0].outs[0].aval.shape)
    return Eqn(fused_p, ins, outs, {"shape": shape, "kind": kind}, [region], eqns[-1].origin)


def _regroup_regions(eqn: Eqn) -> Eqn:
    if not eqn.regions or eqn.prim is fused_p:
        return eqn
    return Eqn(eqn.prim, eqn.ins, eqn.outs, eqn.params,
               [group_elementwise(r) for r in eqn.regions], eqn.origin)
