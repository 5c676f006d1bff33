"""cond / while / for as LLVM branches and loops, and debug_print as a call into Python.

Branch results and loop state live in the equation's result buffers: each branch writes its
results there (straight from the equation that computes them, when it can), and a loop's
parameters are views of its state buffers. A loop body's result is computed in place into
its state buffer when nothing later in the body reads the old value and the equation reads
it pointwise; otherwise it is copied there at the end of the body, through a temporary when
results and parameters overlap (as in a swap).

A `for` loop whose state is all arrays of one shape, with a body of elementwise work only,
is interchanged with the element loop: one nest over the elements runs the whole `for` per
element in registers (`for i in range(10): x -= 0.1 * x` reads and writes x once).
"""
from __future__ import annotations

from collections import Counter

import numpy as np
from llvmlite import ir
from redraft.compiler.ir.ssa import Block, Eqn, Literal, Value

from . import elementwise
from .callbacks import OperandSpec, PrintSite, register_print
from .elementwise import COST, ELEMENTWISE
from .loops import Nest, NestInput, NestOutput, copy, emit_nest, for_range
from .module import FunctionLowering, lowering
from .types import (
    I1,
    I32,
    I64,
    PTR,
    VOID,
    check_dtype,
    constant,
    declare,
    i64,
    is_float,
    is_signed,
    lanes_of,
    splat,
)
from .views import View

ASSUMED_TRIPS = 8   # trip count assumed for dynamic loop bounds when estimating cost


def _truth(b: ir.IRBuilder, value: ir.Value, dtype: np.dtype) -> ir.Value:
    if value.type == I1:
        return value
    if is_float(dtype):
        return b.fcmp_unordered("!=", value, constant(dtype, 0.0))
    return b.icmp_unsigned("!=", value, constant(dtype, 0))


def _predicate(L: FunctionLowering, a) -> ir.Value:
    return _truth(L.b, L.scalar(a), check_dtype(a.aval.dtype))


# ---- cond ----------------------------------------------------------------------------------

@lowering("cond")
def lower_cond(L: FunctionLowering, eqn: Eqn) -> None:
    b = L.b
    pred = _predicate(L, eqn.ins[0])
    dests = [L.dest(v) for v in eqn.outs]
    fn = b.function
    arms = [fn.append_basic_block(L.cx.unique("cond.then")),
            fn.append_basic_block(L.cx.unique("cond.else"))]
    join = fn.append_basic_block(L.cx.unique("cond.join"))
    b.cbranch(pred, arms[0], arms[1])
    for region, arm in zip(eqn.regions, arms):
        b.position_at_end(arm)
        lower_region_into(L, region, [], dests)
        b.branch(join)
    b.position_at_end(join)
    for v, d in zip(eqn.outs, dests):
        L.views[v.id] = d


def lower_region_into(L: FunctionLowering, region: Block, params: list[View],
                      dests: list[View]) -> None:
    """Lower `region` so that its results end up in `dests`."""
    counts = Counter(r.id for r in region.results if isinstance(r, Value))
    defined = {v.id for e in region.eqns for v in e.outs}
    for r, d in zip(region.results, dests):
        if isinstance(r, Value) and r.id in defined and counts[r.id] == 1 and (
                r.id not in L.dests):
            L.dests[r.id] = d
    L.lower_block(region, params)
    for r, d in zip(region.results, dests):
        src = L.read(r)
        if src != d:
            copy(L.cx, src, d)


# ---- while -----------------------------------------------------------------------------------

def _carried(L: FunctionLowering, eqn: Eqn, inits: list,
             unread: frozenset[int] = frozenset()) -> list[View]:
    """The loop's state buffers, holding the initial values (but those in `unread`)."""
    dests = [L.dest(v) for v in eqn.outs]
    for k, (a, d) in enumerate(zip(inits, dests)):
        src = L.read(a)
        if src != d and k not in unread:
            copy(L.cx, src, d)
    return dests


def _rows_written_before_read(eqn: Eqn) -> frozenset[int]:
    """The carried values of a for loop from 0 to n whose initial value is never seen:
    iteration i writes row i of an (n, ...) buffer (a scan's stacked outputs, AD's tape)
    and nothing else reads the buffer in the loop, so the state needs no copy of it."""
    lo, hi = eqn.ins[:2]
    if not (isinstance(lo, Literal) and isinstance(hi, Literal) and int(lo.value) == 0):
        return frozenset()
    region = eqn.regions[0]
    index, carried = region.params[0], region.params[1:]
    uses = Counter(a.id for e in region.eqns for a in _operands(e) if isinstance(a, Value))
    uses.update(a.id for a in region.results if isinstance(a, Value))
    found = set()
    for e in region.eqns:
        if e.prim.name != "dynamic_update_slice" or not isinstance(e.ins[0], Value):
            continue
        buf, update, starts = e.ins[0], e.ins[1], e.ins[2:]
        k = next((k for k, p in enumerate(carried) if p is buf), None)
        if (k is None or region.results[k] is not e.outs[0] or uses[buf.id] != 1
                or uses[e.outs[0].id] != 1 or starts[0] is not index
                or buf.aval.shape[0] != int(hi.value) or update.aval.shape[0] != 1
                or tuple(update.aval.shape[1:]) != tuple(buf.aval.shape[1:])
                or not all(isinstance(z, Literal) and int(z.value) == 0 for z in starts[1:])):
            continue
        found.add(k)
    return frozenset(found)


def _operands(eqn: Eqn):
    """What `eqn` reads: its operands and everything its regions read."""
    yield from eqn.ins
    for region in eqn.regions:
        for e in region.eqns:
            yield from _operands(e)
        yield from region.results


@lowering("while")
def lower_while(L: FunctionLowering, eqn: Eqn) -> None:
    b = L.b
    state = _carried(L, eqn, eqn.ins)
    cond_region, body_region = eqn.regions
    fn = b.function
    head = fn.append_basic_block(L.cx.unique("while.head"))
    body = fn.append_basic_block(L.cx.unique("while.body"))
    done = fn.append_basic_block(L.cx.unique("while.done"))
    b.branch(head)
    b.position_at_end(head)
    L.lower_block(cond_region, state)
    b.cbranch(_predicate(L, cond_region.results[0]), body, done)
    b.position_at_end(body)
    lower_loop_body(L, eqn, body_region, state, state)
    b.branch(head)
    b.position_at_end(done)
    for v, d in zip(eqn.outs, state):
        L.views[v.id] = d


def lower_loop_body(L: FunctionLowering, eqn: Eqn, region: Block, params: list[View],
                    state: list[View]) -> None:
    """One iteration: run `region`, then move its results into the state buffers."""
    results = region.results
    carried = region.params[len(region.params) - len(state):]
    for k, r in enumerate(results):
        if _in_place_ok(L, eqn, region, carried, k):
            L.dests[r.id] = state[k]
    L.lower_block(region, params)
    state_roots = {v.id for v in eqn.outs}
    staged, temps = [], []
    for k, r in enumerate(results):
        src = L.read(r)
        if src == state[k]:
            continue
        if isinstance(r, Value) and L.live.find(r.id) in state_roots:
            tmp, key = L.temporary(src.dtype, state[k].shape)
            copy(L.cx, src, tmp)
            src = tmp
            temps.append(key)
        staged.append((src, state[k]))
    for src, d in staged:
        copy(L.cx, src, d)
    for key in temps:
        L.ws.release(key)


def _in_place_ok(L: FunctionLowering, eqn: Eqn, region: Block, carried: list,
                 k: int) -> bool:
    """May result k be computed straight into state buffer k (see the module doc)?"""
    r = region.results[k]
    if not isinstance(r, Value) or not r.aval.shape:
        return False
    if sum(1 for x in region.results if isinstance(x, Value) and x.id == r.id) != 1:
        return False
    index = next((i for i, e in enumerate(region.eqns) if any(o.id == r.id for o in e.outs)),
                 None)
    if index is None:
        return False
    producer = region.eqns[index]
    root = eqn.outs[k].id
    aliases = {v.id for v in region.params if L.live.find(v.id) == root}
    aliases |= {v.id for e in region.eqns for v in e.outs if L.live.find(v.id) == root}
    if any(isinstance(x, Value) and x.id in aliases and j != k
           for j, x in enumerate(region.results)):
        return False
    from .nests import _reads
    if any(_reads(e) & aliases for e in region.eqns[index + 1:]):
        return False
    return _reads_pointwise(producer, aliases, carried[k], tuple(r.aval.shape))


def _reads_pointwise(e: Eqn, aliases: set, param: Value, shape: tuple) -> bool:
    """Does `e` read the old state only at the element it writes (or not at all)?"""
    from .nests import _reads
    if e.regions and e.prim.name != "fused" and _reads(e) & aliases:
        return False   # a branch or loop reading the old state while writing the new one
    reads = [a for a in e.ins if isinstance(a, Value) and a.id in aliases]
    if any(a.id != param.id for a in reads):
        return False
    if e.prim in ELEMENTWISE:
        return True   # same shape as the result, read at the same index
    if e.prim.name == "fused":
        return tuple(e.params.get("shape", ())) == shape
    if e.prim.name in ("dynamic_update_slice", "index_update"):
        return all(a is not e.ins[1] for a in reads) and (
            not isinstance(e.ins[1], Value) or e.ins[1].id not in aliases)
    return not reads


# ---- for ---------------------------------------------------------------------------------

@lowering("for")
def lower_for(L: FunctionLowering, eqn: Eqn) -> None:
    if _interchangeable(eqn):
        _lower_interchanged(L, eqn)
        return
    b = L.b
    lo, hi = (_index64(L, a) for a in eqn.ins[:2])
    state = _carried(L, eqn, eqn.ins[2:], _rows_written_before_read(eqn))
    region = eqn.regions[0]
    slot = L.cx.entry_alloca(I32)
    index_view = View.contiguous(slot, np.dtype(np.int32), ())

    def body(i, carried):
        b.store(b.trunc(i, I32), slot)
        # the loop being lowered, for products that pack a loop-invariant operand once
        loops = L.family_state.setdefault("for loops", [])
        loops.append((b.icmp_signed("==", i, lo), region))
        try:
            lower_loop_body(L, eqn, region, [index_view] + state, state)
        finally:
            loops.pop()
        return []

    for_range(b, lo, hi, 1, [], body, L.cx.unique("for"))
    for v, d in zip(eqn.outs, state):
        L.views[v.id] = d


def _index64(L: FunctionLowering, a) -> ir.Value:
    value = L.scalar(a)
    if value.type.width >= 64:
        return value
    signed = is_signed(check_dtype(a.aval.dtype))
    return L.b.sext(value, I64) if signed else L.b.zext(value, I64)


def _flat_body(region: Block) -> list[Eqn] | None:
    """The region's equations with `fused` ones opened up; None if anything else appears."""
    out = []
    for e in region.eqns:
        if e.prim.name == "fused":
            inner = _flat_body(e.regions[0])
            if inner is None or any(x.prim.name.startswith("reduce_") for x in inner):
                return None
            out.append(e)
        elif e.prim in ELEMENTWISE and len(e.outs) == 1:
            out.append(e)
        else:
            return None
    return out


def _interchangeable(eqn: Eqn) -> bool:
    region = eqn.regions[0]
    if not eqn.outs or _flat_body(region) is None:
        return False
    shape = tuple(eqn.outs[0].aval.shape)
    if not shape or any(tuple(v.aval.shape) != shape for v in eqn.outs):
        return False
    for e in _walk(region):
        for a in list(e.ins) + list(e.outs):
            if isinstance(a, Literal) and np.size(a.value) != 1:
                return False
            try:
                if np.broadcast_shapes(tuple(a.aval.shape), shape) != shape:
                    return False
            except ValueError:
                return False
    return all(isinstance(r, Value) or np.size(r.value) == 1 for r in region.results)


def _walk(block: Block):
    for e in block.eqns:
        yield e
        if e.prim.name == "fused":
            yield from _walk(e.regions[0])


def _free_values(region: Block) -> list[Value]:
    """Values the region reads but does not define (in order of first use)."""
    defined = {p.id for p in region.params}
    free: dict[int, Value] = {}

    def visit(block: Block) -> None:
        defined.update(p.id for p in block.params)
        for e in block.eqns:
            for a in e.ins:
                if isinstance(a, Value) and a.id not in defined:
                    free.setdefault(a.id, a)
            if e.prim.name == "fused":
                visit(e.regions[0])
            defined.update(v.id for v in e.outs)
        for a in block.results:
            if isinstance(a, Value) and a.id not in defined:
                free.setdefault(a.id, a)

    visit(region)
    return list(free.values())


def _lower_interchanged(L: FunctionLowering, eqn: Eqn) -> None:
    region = eqn.regions[0]
    shape = tuple(eqn.outs[0].aval.shape)
    n = len(eqn.outs)
    outer = _free_values(region)
    inputs = [L.read(a).broadcast_to(shape) for a in eqn.ins[2:]]
    inputs += [L.read(a).broadcast_to(shape) for a in outer]
    inputs += [L.read(a).broadcast_to(shape) for a in eqn.ins[:2]]
    pointwise = [(a, L.read(a)) for a in eqn.ins[2:]]
    operands = pointwise + [(a, L.read(a)) for a in outer]
    dests = [L.dest(v, pointwise, operands) for v in eqn.outs]
    bound_dtypes = [check_dtype(a.aval.dtype) for a in eqn.ins[:2]]
    dtypes = {check_dtype(v.aval.dtype) for e in _walk(region) for v in e.outs}

    def body(b, regs):
        lanes = max((lanes_of(r) for r in regs), default=0)
        state = [splat(b, r, lanes) if lanes and not lanes_of(r) else r for r in regs[:n]]
        env = {v.id: r for v, r in zip(outer, regs[n:n + len(outer)])}
        lo, hi = (_extend(b, r, t) for r, t in zip(regs[-2:], bound_dtypes))

        def step(i, carried):
            env[region.params[0].id] = b.trunc(i, I32)
            env.update({p.id: c for p, c in zip(region.params[1:], carried)})
            values = _evaluate(b, region, env)
            return [splat(b, v, lanes) if lanes and not lanes_of(v) else v for v in values]

        return for_range(b, lo, hi, 1, state, step, "interchanged")

    trips = _static_trips(eqn)
    cost = sum(COST.get(e.prim, 1) for e in _walk(region)) * trips
    emit_nest(L.cx, Nest(shape, [NestInput(v) for v in inputs],
                         [NestOutput(d, d) for d in dests], body, max(cost, 1),
                         tuple(dtypes)))
    for v, d in zip(eqn.outs, dests):
        L.views[v.id] = d


def _extend(b: ir.IRBuilder, value: ir.Value, dtype: np.dtype) -> ir.Value:
    if value.type.width >= 64:
        return value
    return b.sext(value, I64) if is_signed(dtype) else b.zext(value, I64)


def _static_trips(eqn: Eqn) -> int:
    lo, hi = eqn.ins[:2]
    if isinstance(lo, Literal) and isinstance(hi, Literal):
        return max(int(hi.value) - int(lo.value), 0)
    return ASSUMED_TRIPS


def _evaluate(b: ir.IRBuilder, block: Block, env: dict) -> list:
    """Registers of the block's results, evaluating elementwise and fused equations."""
    def value(a):
        if isinstance(a, Literal):
            return constant(check_dtype(a.aval.dtype), np.asarray(a.value).reshape(()))
        return env[a.id]

    for e in block.eqns:
        args = [value(a) for a in e.ins]
        if e.prim.name == "fused":
            inner = e.regions[0]
            env.update({p.id: v for p, v in zip(inner.params, args)})
            results = _evaluate(b, inner, env)
            env.update({o.id: v for o, v in zip(e.outs, results)})
            continue
        dts = [check_dtype(a.aval.dtype) for a in e.ins]
        params = {k: v for k, v in e.params.items() if not k.startswith("_")}
        env[e.outs[0].id] = elementwise.lower(b, e.prim, args, dts,
                                              check_dtype(e.outs[0].aval.dtype), params)
    return [value(r) for r in block.results]


# ---- debug_print -------------------------------------------------------------------------------

@lowering("debug_print")
def lower_print(L: FunctionLowering, eqn: Eqn) -> None:
    specs, bases = [], []
    for a in eqn.ins:
        view = L.read(a)
        weak = bool(a.aval.weak_type)
        if view.const is not None:
            specs.append(OperandSpec(view.dtype, view.shape, view.strides, 0, weak,
                                     view.const.item()))
            bases.append(None)
        else:
            specs.append(OperandSpec(view.dtype, view.shape, view.strides, view.offset, weak))
            bases.append(view.base)
    key = register_print(PrintSite(eqn.params["template"], tuple(specs)))
    b = L.b
    ctx = L.cx.entry_alloca(PTR, max(len(bases), 1), name="print.ctx")
    for k, base in enumerate(bases):
        b.store(base if base is not None else ir.Constant(PTR, None),
                b.gep(ctx, [i64(k)], source_etype=PTR))
    callback = declare(L.module, "redraft_print_callback", VOID, [I64, PTR])
    b.call(callback, [i64(key), ctx])
