"""An SSA function as a GPU program: kernels, and the host-side launch sequence.

Every array value lives in a device buffer (a `Slot`) and is read through a strided `View`:
shape primitives (broadcast_in_dim, reshape, squeeze, transpose, slice, rev, static
getitem) only make views. Fused nests, reductions, iota, dot_general and copies are kernels.
cond/while/for stay on the host: the launch sequence reads the predicate (one scalar
transfer) and launches the region's kernels; loop-carried values and results of regions
are contiguous buffers, rebound each iteration (arrays are immutable, so no copy).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from redraft.compiler.backend.llvm.loops import reduce_kind
from redraft.compiler.backend.llvm.nests import (REDUCTIONS, _broadcasts_to, _iteration_shape,
                                                fused_inputs, region_values)
from redraft.compiler.backend.llvm.shapes import pad_placement
from redraft.compiler.backend.llvm.types import Unsupported, check_dtype
from redraft.compiler.backend.llvm.views import View
from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value

from . import scalar
from .kernel import Kernel, Thread
from .kernels import (DynamicView, Point, Reduction, Slot, matmul, pointwise, reduce_kernel, scan,
                      split_count)


@dataclass
class Launch:
    kernel: Kernel
    args: list[Slot]
    fresh: list[Slot]          # written by the kernel: new buffers allocated first


@dataclass
class Cond:
    pred: View
    branches: list[tuple[list, list[Slot]]]     # (steps, result slots): then, else
    outs: list[Slot]


@dataclass
class While:
    inits: list[Slot]
    cond_params: list[Slot]
    cond_steps: list
    pred: View
    body_params: list[Slot]
    body_steps: list
    body_results: list[Slot]
    outs: list[Slot]


@dataclass
class For:
    lo: View
    hi: View
    index: Slot
    inits: list[Slot]
    params: list[Slot]
    steps: list
    results: list[Slot]
    outs: list[Slot]


@dataclass
class Program:
    name: str
    params: list[Slot]
    constants: list[tuple[Slot, np.ndarray]]
    steps: list
    results: list                 # Slot (contiguous, of the result's shape) or np.ndarray
    result_avals: list
    kernels: list[Kernel] = field(default_factory=list)


def build(fn: Function) -> Program:
    """The program for `fn` (raises Unsupported for what this backend does not lower)."""
    return _Lowering(fn).run()


def _shape(v) -> tuple[int, ...]:
    return tuple(v.aval.shape)


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


class _Lowering:
    def __init__(self, fn: Function):
        self.fn = fn
        self.views: dict[int, View] = {}
        self.kernels: list[Kernel] = []
        self.constants: list[tuple[Slot, np.ndarray]] = []
        self.steps: list = []

    def run(self) -> Program:
        params = []
        for p in self.fn.params:
            slot = self.new_slot(p)
            params.append(slot)
            self.views[p.id] = self.whole(slot, p)
        self.lower_block(self.fn.body)
        results = []
        for r in self.fn.results:
            if isinstance(r, Literal):
                results.append(np.array(r.value, dtype=r.aval.dtype))
            else:
                results.append(self.materialise(self.views[r.id], r))
        return Program(self.fn.name, params, self.constants, self.steps, results,
                       [r.aval for r in self.fn.results], self.kernels)

    # ---- buffers and views ----------------------------------------------------------------

    def new_slot(self, v) -> Slot:
        return Slot(check_dtype(v.aval.dtype), max(_size(_shape(v)), 1))

    @staticmethod
    def whole(slot: Slot, v) -> View:
        return View.contiguous(slot, slot.dtype, _shape(v))

    def read(self, a) -> View:
        if isinstance(a, Literal):
            dtype = check_dtype(a.aval.dtype)
            value = np.asarray(a.value, dtype)
            if value.size and np.all(value == value.flat[0]):
                return View.constant(value.flat[0], dtype, value.shape)
            slot = Slot(dtype, max(value.size, 1))
            self.constants.append((slot, np.ascontiguousarray(value)))
            return View.contiguous(slot, dtype, value.shape)
        return self.views[a.id]

    def scalar_view(self, a) -> View:
        """The view of a value the host or another kernel reads as a plain scalar (a
        run-time-indexed view is copied out first)."""
        view = self.read(a)
        if getattr(view, "terms", ()):
            return self.whole(self.materialise(view, a), a)
        return view

    def materialise(self, view: View, v) -> Slot:
        """A contiguous buffer of its own holding `view` (a copy kernel unless it is one)."""
        if (view.const is None and view.is_contiguous() and view.offset == 0
                and not getattr(view, "terms", ())
                and view.base.size == max(_size(view.shape), 1)):
            return view.base
        slot = self.new_slot(v)
        self.copy(view, self.whole(slot, v))
        return slot

    def copy(self, src: View, dest: View, fresh: bool = True) -> None:
        """A kernel writing `src` into `dest` (into a new buffer for dest's slot when
        `fresh`, into the slot's current buffer otherwise)."""
        shape = dest.shape
        self.launch(pointwise(self.name("copy"), shape, [src.broadcast_to(shape)], [dest],
                              lambda t, regs, p: regs), [dest.base] if fresh else [])

    def launch(self, kernel: Kernel, fresh: list[Slot]) -> None:
        self.kernels.append(kernel)
        self.steps.append(Launch(kernel, list(kernel.slots), fresh))

    def name(self, stem: str) -> str:
        return f"{self.fn.name}_{stem}{len(self.kernels)}"

    # ---- equations ------------------------------------------------------------------------

    def lower_block(self, block: Block) -> None:
        for eqn in block.eqns:
            rule = RULES.get(eqn.prim.name)
            if rule is None:
                if eqn.prim in scalar.lowered_primitives() or eqn.prim.name in REDUCTIONS:
                    rule = _lower_single
                else:
                    raise Unsupported(f"primitive {eqn.prim.name} (GPU backend)")
            rule(self, eqn)

    def region(self, block: Block, params: list[Slot]) -> tuple[list, list[Slot]]:
        """Lower `block` into its own step list; results as contiguous slots."""
        saved, self.steps = self.steps, []
        for p, slot in zip(block.params, params):
            self.views[p.id] = self.whole(slot, p)
        self.lower_block(block)
        results = [self.materialise(self.read(r), r) for r in block.results]
        steps, self.steps = self.steps, saved
        return steps, results


RULES: dict = {}


def rule(*names: str):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


# ---- kernels -------------------------------------------------------------------------------

def _body_fn(region: Block, literal_views: dict[int, int], results: list):
    """The region's equations on one element's registers (reductions pass their operand)."""
    def body(t: Thread, regs: list, point: Point) -> list:
        def lower(prim, args, dtypes, out_dtype, params):
            return scalar.lower(t.target, t.b, prim, args, dtypes, out_dtype, params)
        return region_values(region, literal_views, results, regs, lower)

    return body


@rule("fused")
def _lower_fused(L: _Lowering, eqn: Eqn) -> None:
    region = eqn.regions[0]
    shape = _iteration_shape(eqn)
    if shape is None or not _one_kernel(region, shape):
        _lower_unfused(L, eqn)
        return
    for v in list(eqn.outs) + list(region.params):
        check_dtype(v.aval.dtype)
    views, literal_views = fused_inputs(L, eqn, shape)
    produced = {e.outs[0].id: e for e in region.eqns}
    in_ids = {p.id: k for k, p in enumerate(region.params)}
    stored, reductions, results, red_results, fresh = [], [], [], [], []
    for out, r in zip(eqn.outs, region.results):
        if not isinstance(r, Value) or r.id not in produced:  # passed through
            L.views[out.id] = (L.read(eqn.ins[in_ids[r.id]]) if isinstance(r, Value)
                               else L.read(r))
            continue
        slot = L.new_slot(out)
        fresh.append(slot)
        dest = L.whole(slot, out)
        L.views[out.id] = dest
        e = produced[r.id]
        if e.prim.name in REDUCTIONS:
            dtype = check_dtype(e.ins[0].aval.dtype)
            reductions.append(Reduction(dest, reduce_kind(e.prim.name, dtype), dtype))
            red_results.append(r)
            axes = tuple(e.params["axes"])
        else:
            stored.append(dest.broadcast_to(shape))
            results.append(r)
    if not fresh:
        return
    if reductions and stored:
        raise Unsupported("a fused nest that both stores and reduces")
    if reductions:
        _reduce(L, shape, axes, views, reductions, _body_fn(region, literal_views, red_results))
        return
    L.launch(pointwise(L.name("fused"), shape, views, stored,
                       _body_fn(region, literal_views, results)), fresh)


def _reduce(L: _Lowering, shape, axes, views, reductions: list[Reduction], body) -> None:
    """One reduction kernel, or two passes (partials, then their reduction) when there are
    few outputs of many elements each."""
    chunks = split_count(shape, axes)
    if chunks == 1:
        L.launch(reduce_kernel(L.name("reduce"), shape, axes, views, reductions, body),
                 [r.dest.base for r in reductions])
        return
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    n_out = _size(kept)
    partials = []
    for r in reductions:
        slot = Slot(r.dtype, n_out * chunks)
        partials.append(Reduction(View.contiguous(slot, r.dtype, (n_out * chunks,)), r.kind,
                                  r.dtype))
    L.launch(reduce_kernel(L.name("partials"), shape, axes, views, partials, body, chunks),
             [p.dest.base for p in partials])
    second = [p.dest.reshape((n_out, chunks)) for p in partials]
    L.launch(reduce_kernel(L.name("reduce"), (n_out, chunks), (1,), second, reductions,
                           lambda t, regs, point: regs),
             [r.dest.base for r in reductions])


def _one_kernel(region: Block, shape: tuple[int, ...]) -> bool:
    """Whether the region is one kernel: elementwise equations over (a broadcast of)
    `shape`, and reductions, all over the same axes, of full-shape values nothing else
    reads."""
    reduced, axes = set(), set()
    for e in region.eqns:
        if any(isinstance(a, Value) and a.id in reduced for a in e.ins):
            return False
        if any(isinstance(a, Literal) and not _broadcasts_to(a.aval.shape, shape)
               for a in e.ins):
            return False
        if e.prim.name in REDUCTIONS:
            if _shape(e.ins[0]) != shape or not isinstance(e.ins[0], Value):
                return False
            if e.prim.name in ("reduce_max", "reduce_min") and 0 in shape:
                return False
            reduced.add(e.outs[0].id)
            axes.add(tuple(e.params["axes"]))
        elif e.prim not in scalar.lowered_primitives() or len(e.outs) != 1:
            return False
        elif not _broadcasts_to(_shape(e.outs[0]), shape):
            return False
    return len(axes) <= 1


def _lower_unfused(L: _Lowering, eqn: Eqn) -> None:
    region = eqn.regions[0]
    for p, a in zip(region.params, eqn.ins):
        L.views[p.id] = L.read(a)
    L.lower_block(region)
    for out, r in zip(eqn.outs, region.results):
        L.views[out.id] = L.read(r)


def _lower_single(L: _Lowering, eqn: Eqn) -> None:
    """One elementwise equation or reduction outside a fused nest, as its own nest."""
    from redraft.compiler.ir.ssa import fused_p
    params = [Value(a.aval) for a in eqn.ins]
    inner = Eqn(eqn.prim, list(params), [Value(v.aval) for v in eqn.outs], dict(eqn.params))
    is_red = eqn.prim.name in REDUCTIONS
    shape = _shape(eqn.ins[0]) if is_red else _shape(eqn.outs[0])
    fparams = {"shape": shape, "kind": "reduce" if is_red else "elementwise"}
    if is_red:
        fparams["axes"] = tuple(eqn.params["axes"])
    if not _one_kernel(Block(params, [inner], list(inner.outs)), shape):
        raise Unsupported(f"{eqn.prim.name} of these operands (GPU backend)")
    _lower_fused(L, Eqn(fused_p, list(eqn.ins), list(eqn.outs), fparams,
                        [Block(params, [inner], list(inner.outs))]))


@rule("cumsum", "cumprod", "cummax", "cummin")
def _lower_scan(L: _Lowering, eqn: Eqn) -> None:
    from redraft.compiler.backend.llvm.scans import BOOL_KIND, SCAN_KIND
    x = L.read(eqn.ins[0])
    dtype = check_dtype(eqn.ins[0].aval.dtype)
    kind = SCAN_KIND[eqn.prim.name]
    kind = BOOL_KIND[kind] if dtype.kind == "b" else kind
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    L.views[out.id] = dest
    if x.size == 0:
        return
    if x.const is not None:
        x = L.whole(L.materialise(x, eqn.ins[0]), eqn.ins[0])
    L.launch(scan(L.name("scan"), x, dest, eqn.params["axis"], kind, dtype,
                  bool(eqn.params.get("reverse", False))), [slot])


@rule("iota")
def _lower_iota(L: _Lowering, eqn: Eqn) -> None:
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    dim, dtype = eqn.params["dimension"], check_dtype(out.aval.dtype)

    def body(t, regs, point):
        d = point.digits()[dim]
        return [scalar.convert(t.b, d, np.dtype(np.int64), dtype)]
    L.launch(pointwise(L.name("iota"), _shape(out), [], [dest], body), [slot])
    L.views[out.id] = dest


@rule("dot_general")
def _lower_dot(L: _Lowering, eqn: Eqn) -> None:
    lhs, rhs = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    out = eqn.outs[0]
    dtype = check_dtype(out.aval.dtype)
    if dtype != check_dtype(eqn.ins[0].aval.dtype) or dtype.kind == "b":
        raise Unsupported("dot_general into another dtype, or of bool")
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    a = _as_rank3(L, lhs, list(lb), lf, list(lc), eqn.ins[0])
    b = _as_rank3(L, rhs, list(rb), list(rc), rf, eqn.ins[1])
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    c = dest.reshape((a.shape[0], a.shape[1], b.shape[2]))
    L.launch(matmul(L.name("dot"), a, b, c, dtype), [slot])
    L.views[out.id] = dest


def _as_rank3(L: _Lowering, view: View, g0: list, g1: list, g2: list, v) -> View:
    """`view` transposed to (g0, g1, g2) and each group merged into one axis (copied to a
    contiguous buffer first when the strides cannot express the merge)."""
    t = view.transpose(tuple(g0 + g1 + g2)) if view.const is None else view
    sizes = tuple(_size([view.shape[d] for d in g]) for g in (g0, g1, g2))
    merged = t.reshape(sizes) if t.const is None else None
    if merged is None:
        slot = Slot(t.dtype, max(t.size, 1))
        whole = View.contiguous(slot, t.dtype, t.shape)
        L.copy(t, whole)
        merged = whole.reshape(sizes)
    return merged


# ---- views -----------------------------------------------------------------------------------

@rule("reshape")
def _reshape(L: _Lowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    shape = tuple(eqn.params["new_sizes"])
    view = x.reshape(shape)
    if view is None:
        slot = L.new_slot(eqn.ins[0])
        whole = View.contiguous(slot, x.dtype, x.shape)
        L.copy(x, whole)
        view = whole.reshape(shape)
    L.views[eqn.outs[0].id] = view


@rule("squeeze")
def _squeeze(L, eqn):
    L.views[eqn.outs[0].id] = L.read(eqn.ins[0]).squeeze(tuple(eqn.params["dimensions"]))


@rule("broadcast_in_dim")
def _broadcast(L, eqn):
    L.views[eqn.outs[0].id] = L.read(eqn.ins[0]).broadcast_in_dim(
        tuple(eqn.params["shape"]), tuple(eqn.params["broadcast_dimensions"]))


@rule("transpose")
def _transpose(L, eqn):
    L.views[eqn.outs[0].id] = L.read(eqn.ins[0]).transpose(tuple(eqn.params["permutation"]))


@rule("slice")
def _slice(L, eqn):
    p = eqn.params
    L.views[eqn.outs[0].id] = L.read(eqn.ins[0]).slice(
        tuple(p["start_indices"]), tuple(p["strides"]), _shape(eqn.outs[0]))


@rule("rev")
def _rev(L, eqn):
    L.views[eqn.outs[0].id] = L.read(eqn.ins[0]).rev(tuple(eqn.params["dimensions"]))


@rule("getitem")
def _getitem(L, eqn):
    """Basic indexing is a view; scalar indices known only at run time add clamped terms
    to its offset (DynamicView)."""
    x = L.read(eqn.ins[0])
    static, terms, axis = [], [], 0
    for entry in tuple(eqn.params["spec"]):
        if entry[0] == "array":
            index = eqn.ins[1 + entry[1]]
            if _shape(index) != ():
                raise Unsupported("indexing with run-time indices (GPU backend): an index "
                                  "array (gather)")
            static.append(("int", 0))
            terms.append((L.scalar_view(index), x.shape[axis], x.strides[axis]))
        elif entry[0] == "bool":
            raise Unsupported("indexing with run-time indices (GPU backend): a mask")
        else:
            static.append(entry)
        if entry[0] != "none":
            axis += 1
    view = x.getitem(tuple(static), _shape(eqn.outs[0]))
    if view is None:
        raise Unsupported("indexing with run-time indices (GPU backend)")
    if terms and x.const is None:
        old = tuple(getattr(view, "terms", ()))
        view = DynamicView(view.base, view.dtype, view.shape, view.strides, view.offset,
                           view.const, old + tuple(terms))
    L.views[eqn.outs[0].id] = view


def _window(L: _Lowering, view: View, starts: list, sizes: tuple[int, ...]) -> View:
    """The window of `view` of shape `sizes` at run-time `starts`, each clamped into
    [0, dim - size] as lax's dynamic slices clamp (no wrapping of negative starts)."""
    terms = tuple((L.scalar_view(s), d - z + 1, stride, False)
                  for s, d, z, stride in zip(starts, view.shape, sizes, view.strides))
    return DynamicView(view.base, view.dtype, tuple(sizes), view.strides, view.offset,
                       view.const, tuple(getattr(view, "terms", ())) + terms)


@rule("dynamic_slice")
def _dynamic_slice(L: _Lowering, eqn: Eqn) -> None:
    """A window at run-time starts: a view (its offset computed where it is read)."""
    x = L.read(eqn.ins[0])
    if x.const is not None:
        raise Unsupported("dynamic_slice of a constant (GPU backend)")
    L.views[eqn.outs[0].id] = _window(L, x, list(eqn.ins[1:]), _shape(eqn.outs[0]))


@rule("dynamic_update_slice")
def _dynamic_update_slice(L: _Lowering, eqn: Eqn) -> None:
    """x with `update` written at run-time starts: x copied into a new buffer, then a
    kernel over the update's elements writing into the window."""
    x, update = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    L.copy(x, dest)
    L.views[out.id] = dest
    if update.size == 0:
        return
    target = _window(L, dest, list(eqn.ins[2:]), update.shape)
    L.launch(pointwise(L.name("update"), target.shape, [update], [target],
                       lambda t, regs, p: regs), [])


@rule("index_update")
def _index_update(L: _Lowering, eqn: Eqn) -> None:
    """x.at[spec].op(y) with a static spec: x copied into a new buffer, then a kernel over
    the indexed elements."""
    from redraft.compiler.backend.llvm.gather import UPDATE_PRIMS
    from redraft.compiler.backend.llvm.shapes import _target_shape
    spec = tuple(eqn.params["spec"])
    if len(eqn.ins) != 2 or any(entry[0] in ("array", "bool") for entry in spec):
        raise Unsupported("index_update with run-time indices (GPU backend)")
    x, y = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    L.copy(x, dest)
    L.views[out.id] = dest
    target = dest.getitem(spec, _target_shape(x, spec, []))
    if target is None:
        raise Unsupported("index_update spec (GPU backend)")
    if target.size == 0:
        return
    mode, dtype = eqn.params["mode"], dest.dtype
    ins = [y.broadcast_to(target.shape)]
    if mode == "set":
        body = lambda t, regs, p: regs  # noqa: E731
    else:
        prim = UPDATE_PRIMS[mode]
        ins.append(target)

        def body(t, regs, p):
            return [scalar.lower(t.target, t.b, prim, [regs[1], regs[0]], [dtype, dtype],
                                 dtype, {})]
    L.launch(pointwise(L.name("update"), target.shape, ins, [target], body), [])


@rule("pad")
def _pad(L: _Lowering, eqn: Eqn) -> None:
    """A kernel filling the padding value, then one copying the kept elements of x into
    their strided places (negative padding crops)."""
    x, value = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    L.views[out.id] = dest
    L.copy(value, dest)
    x_start, x_shape, d_start, d_step = pad_placement(x.shape, dest.shape,
                                                      eqn.params["padding_config"])
    if all(x_shape):
        part = x.slice(x_start, (1,) * x.ndim, x_shape)
        L.copy(part, dest.slice(d_start, d_step, x_shape), fresh=False)


@rule("concatenate")
def _concatenate(L, eqn):
    out = eqn.outs[0]
    slot = L.new_slot(out)
    dest = L.whole(slot, out)
    dim, at = eqn.params["dimension"], 0
    for k, a in enumerate(eqn.ins):
        part = L.read(a)
        start = tuple(at if d == dim else 0 for d in range(dest.ndim))
        L.copy(part, dest.slice(start, (1,) * dest.ndim, part.shape), fresh=k == 0)
        at += part.shape[dim]
    L.views[out.id] = dest


# ---- control flow on the host ----------------------------------------------------------------

def _slots_for(L: _Lowering, values) -> list[Slot]:
    return [L.new_slot(v) for v in values]


@rule("cond")
def _cond(L: _Lowering, eqn: Eqn) -> None:
    if len(eqn.regions) != 2 or len(eqn.ins) != 1:
        raise Unsupported("cond with operands or more than two branches (GPU backend)")
    pred = L.scalar_view(eqn.ins[0])
    branches = [L.region(r, []) for r in eqn.regions]
    outs = _slots_for(L, eqn.outs)
    L.steps.append(Cond(pred, branches, outs))
    for v, s in zip(eqn.outs, outs):
        L.views[v.id] = L.whole(s, v)


@rule("while")
def _while(L: _Lowering, eqn: Eqn) -> None:
    inits = [L.materialise(L.read(a), a) for a in eqn.ins]
    cond_region, body_region = eqn.regions
    cond_params = _slots_for(L, cond_region.params)
    cond_steps, (pred_slot,) = L.region(cond_region, cond_params)
    body_params = _slots_for(L, body_region.params)
    body_steps, body_results = L.region(body_region, body_params)
    outs = _slots_for(L, eqn.outs)
    pred = View.contiguous(pred_slot, pred_slot.dtype, ())
    L.steps.append(While(inits, cond_params, cond_steps, pred, body_params, body_steps,
                         body_results, outs))
    for v, s in zip(eqn.outs, outs):
        L.views[v.id] = L.whole(s, v)


@rule("for")
def _for(L: _Lowering, eqn: Eqn) -> None:
    lo, hi = L.scalar_view(eqn.ins[0]), L.scalar_view(eqn.ins[1])
    inits = [L.materialise(L.read(a), a) for a in eqn.ins[2:]]
    region = eqn.regions[0]
    params = _slots_for(L, region.params)
    steps, results = L.region(region, params)
    outs = _slots_for(L, eqn.outs)
    L.steps.append(For(lo, hi, params[0], inits, params[1:], steps, results, outs))
    for v, s in zip(eqn.outs, outs):
        L.views[v.id] = L.whole(s, v)


__all__ = ["Cond", "For", "Launch", "Program", "While", "build"]
