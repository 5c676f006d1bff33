"""Epilogues: the elementwise nest that consumes a matrix product, run on each chunk of the
product's rows (or of its columns, for a product the threads split by columns) by the thread
that just computed it.

A product's result is usually read at once by one `fused` elementwise equation (bias and
tanh after a forward product, times tanh's derivative after a backward one, the SGD update
`w - lr * dw` after a weight gradient). Lowered on its own, that nest is a second pass over
the whole result after the product has finished: the result has left the caches by then
(a 1024 x 1024 gradient is 4 MB), and the pass is one more fork and join of the threads.
Run as the product's epilogue, each thread applies it to the rows it has just computed
(in its L2). The equation is lowered at the product, earlier than its place in the block:
that is sound when every other operand it reads already exists there (SSA: nothing between
can change them, and their buffers stay live until the equation's own position), and its
results get buffers of their own (never an operand's, whose readers between the product
and the equation must still see it). A product whose result only the epilogue reads is
written straight into one of the epilogue's results, which the epilogue then updates in
place (epilogue_dest).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from redraft.compiler.ir.ssa import Block, Eqn, Value, fused_p

from .elementwise import COST
from .loops import Nest, NestInput, NestOutput, emit_planned, emit_planned_columns, plan
from .module import FunctionLowering
from .nests import REDUCTIONS, _fusable, _fused_body, _fused_outputs, _iteration_shape, \
    fused_inputs
from .types import check_dtype
from .views import View


@dataclass
class Epilogue:
    """The consumer's nest, planned, and how it maps onto the product's chunks: by rows
    (axis 0 of the plan, `per_row` indices a row of the product) or, for a product split by
    columns, by columns (the plan kept as rows x columns)."""
    eqn: Eqn
    nest: Nest
    plan: object            # loops._Plan
    per_row: int            # nest axis-0 indices per row of the product
    columns: bool = False

    @property
    def bases(self) -> list[ir.Value]:
        """The base pointers the nest reads and writes (passed to the task in its ctx)."""
        return self.plan.bases


def take_epilogue(L: FunctionLowering, product: Eqn, dest: View, columns: int = 0
                  ) -> Epilogue | None:
    """The epilogue of `product` (a 2-D product whose result is `dest`, bound in L.views),
    its consumer now lowered, or None when no consumer qualifies. `columns`: the product
    is split by columns, in chunks that start on multiples of this many."""
    out = product.outs[0]
    shape = tuple(out.aval.shape)
    if len(shape) != 2 or dest.const is not None or dest.strides != (shape[1], 1):
        return None
    consumer = _consumer(L, product, out)
    if consumer is None or not _qualifies(L, consumer, shape):
        return None
    views, literal_inputs = fused_inputs(L, consumer, shape)
    region = consumer.regions[0]
    dtypes = tuple({check_dtype(v.aval.dtype) for e in region.eqns for v in e.outs})
    cost = sum(COST.get(e.prim, 1) for e in region.eqns)
    probe = [NestOutput(View.contiguous(dest.base, check_dtype(r.aval.dtype), shape), None)
             for r in region.results]
    probed = plan(Nest(shape, [NestInput(v) for v in views], probe, lambda b, regs: regs,
                       cost, dtypes), merge=not columns)
    per_row = _columns_map(probed, shape, columns) if columns else _rows_map(probed, shape)
    if per_row is None:
        return None
    outputs, results = _fused_outputs(L, consumer, shape)
    nest = Nest(shape, [NestInput(v) for v in views], outputs,
                _fused_body(region, literal_inputs, results), cost, dtypes)
    planned = plan(nest, merge=not columns)
    again = _columns_map(planned, shape, columns) if columns else _rows_map(planned, shape)
    if again != per_row:  # (outputs laid out as the probe's: cannot)
        raise AssertionError("epilogue outputs are not row-major")
    L.family_state.setdefault("epilogues", set()).add(id(consumer))
    return Epilogue(consumer, nest, planned, per_row, bool(columns))


def epilogue_dest(L: FunctionLowering, product: Eqn) -> View | None:
    """Where a 2-D product may write its result: into the result of its epilogue, when the
    product's result dies there (the SGD update `w - lr * (x.T @ g)` after a weight
    gradient). The epilogue then updates each element in place, and the product's 4 MB
    never take a buffer of their own, to be written back from the caches. None when the
    product has no qualifying epilogue, or its result is read elsewhere too."""
    out = product.outs[0]
    shape = tuple(out.aval.shape)
    if len(shape) != 2:
        return None
    consumer = _consumer(L, product, out)
    if consumer is None or not _qualifies(L, consumer, shape, pending=out.id):
        return None
    if L.live.last_use(out.id) != L.live.pos.get(id(consumer)):
        return None
    outputs = {v.id for v in L.out_values}
    for result in consumer.outs:
        if result.aval.shape != out.aval.shape or result.aval.dtype != out.aval.dtype:
            continue
        # a place given beforehand is the function's own output (fresh, read by nothing
        # else), never a loop's state or an `if`'s result, which may hold values that are
        # read between the product and its epilogue
        view = L.dests.get(result.id)
        if view is None:
            view = L.dests[result.id] = L.dest(result)
        elif result.id not in outputs:
            continue
        if view.const is None and view.strides == (shape[1], 1):
            return view
    return None


def emit_epilogue(b: ir.IRBuilder, epilogue: Epilogue, bases: list[ir.Value], lo: ir.Value,
                  hi: ir.Value) -> None:
    """The epilogue over rows lo..hi of the product (columns lo..hi for a product split by
    columns), with `bases` loaded in the task."""
    if epilogue.columns:
        emit_planned_columns(b, epilogue.nest, epilogue.plan, bases, lo, hi)
        return
    if epilogue.per_row != 1:
        lo, hi = (b.mul(x, ir.Constant(x.type, epilogue.per_row)) for x in (lo, hi))
    emit_planned(b, epilogue.nest, epilogue.plan, bases, lo, hi)


def _consumer(L: FunctionLowering, product: Eqn, out: Value) -> Eqn | None:
    """The first equation after `product` in its block that reads its result, if that is
    a `fused` elementwise equation."""
    where = _positions(L).get(id(product))
    if where is None:
        return None
    block, index = where
    for eqn in block.eqns[index + 1:]:
        if any(isinstance(a, Value) and a.id == out.id for a in eqn.ins):
            return eqn if eqn.prim is fused_p and eqn.params.get("kind") == "elementwise" \
                else None
        if any(_reads_in_regions(r, out.id) for r in eqn.regions):
            return None
    return None


def _reads_in_regions(block: Block, vid: int) -> bool:
    for eqn in block.eqns:
        if any(isinstance(a, Value) and a.id == vid for a in eqn.ins):
            return True
        if any(_reads_in_regions(r, vid) for r in eqn.regions):
            return True
    return any(isinstance(a, Value) and a.id == vid for a in block.results)


def _qualifies(L: FunctionLowering, eqn: Eqn, shape: tuple[int, ...],
               pending: int | None = None) -> bool:
    """An elementwise nest over exactly the product's shape, without reductions, whose
    results are all computed at that shape and whose other operands exist already (or are
    the value `pending`: the product's result, not yet placed)."""
    region = eqn.regions[0]
    if _iteration_shape(eqn) != shape or not _fusable(region, shape):
        return False
    produced = {e.outs[0].id: e for e in region.eqns}
    if any(e.prim.name in REDUCTIONS for e in region.eqns):
        return False
    if not region.results or any(
            not isinstance(r, Value) or r.id not in produced or tuple(r.aval.shape) != shape
            for r in region.results):
        return False
    if len({r.id for r in region.results}) != len(region.results):
        return False
    return all(not isinstance(a, Value) or a.id in L.views or a.id == pending
               for a in eqn.ins)


def _rows_map(planned, shape: tuple[int, ...]) -> int | None:
    """Nest axis-0 indices per product row: 1 if the plan kept (rows, columns), the row
    length if it merged them into one axis (then chunks of rows start on whole vectors
    only when a row is whole vectors); None otherwise."""
    m, n = shape
    if any(r is not None for r in planned.reduce):
        return None
    if list(planned.shape) == [m, n]:
        return 1
    if list(planned.shape) == [m * n] and planned.lanes and n % planned.lanes == 0:
        return n
    return None


def _columns_map(planned, shape: tuple[int, ...], start: int) -> int | None:
    """1 if the plan kept (rows, columns) and its vectors fit chunks of columns that start
    on multiples of `start` (no vector straddles two chunks); None otherwise."""
    if any(r is not None for r in planned.reduce) or list(planned.shape) != list(shape):
        return None
    return 1 if planned.lanes and start % planned.lanes == 0 else None


def _positions(L: FunctionLowering) -> dict[int, tuple[Block, int]]:
    """id(eqn) -> (its block, its index) for the blocks lowered equation by equation."""
    positions = L.family_state.get("block positions")
    if positions is None:
        positions = L.family_state["block positions"] = {}
        _index_block(L.fn.body, positions)
    return positions


def _index_block(block: Block, positions: dict) -> None:
    for k, eqn in enumerate(block.eqns):
        positions[id(eqn)] = (block, k)
        if eqn.prim is not fused_p:
            for region in eqn.regions:
                _index_block(region, positions)
