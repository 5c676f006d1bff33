"""Shape primitives: views where the index map allows it, copies into place otherwise.

broadcast_in_dim, transpose, squeeze, slice, rev, basic getitem and (mostly) reshape make
views of their operand's buffer (views.py); concatenate, pad and dynamic_update_slice write
their operands into a fresh array; dynamic_slice is a view at a clamped run-time offset.
"""
from __future__ import annotations

from llvmlite import ir
from redraft.compiler.ir.ssa import Eqn, Value

from .gather import UPDATE_PRIMS, emit_gather, emit_scatter, has_index_array
from .loops import copy
from .module import FunctionLowering, lowering
from .types import I64, Unsupported, check_dtype, i64, is_signed
from .views import View


@lowering("reshape")
def lower_reshape(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    shape = tuple(eqn.params["new_sizes"])
    view = x.reshape(shape)
    if view is None:  # not expressible as strides: copy into row-major order first
        view = L.dest(eqn.outs[0])
        copy(L.cx, x, view.reshape(x.shape))
    L.bind(eqn.outs[0], view)


@lowering("squeeze")
def lower_squeeze(L: FunctionLowering, eqn: Eqn) -> None:
    L.bind(eqn.outs[0], L.read(eqn.ins[0]).squeeze(tuple(eqn.params["dimensions"])))


@lowering("broadcast_in_dim")
def lower_broadcast_in_dim(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    L.bind(eqn.outs[0], x.broadcast_in_dim(tuple(eqn.params["shape"]),
                                           tuple(eqn.params["broadcast_dimensions"])))


@lowering("transpose")
def lower_transpose(L: FunctionLowering, eqn: Eqn) -> None:
    L.bind(eqn.outs[0], L.read(eqn.ins[0]).transpose(tuple(eqn.params["permutation"])))


@lowering("slice")
def lower_slice(L: FunctionLowering, eqn: Eqn) -> None:
    p = eqn.params
    shape = tuple(eqn.outs[0].aval.shape)
    L.bind(eqn.outs[0], L.read(eqn.ins[0]).slice(tuple(p["start_indices"]),
                                                 tuple(p["strides"]), shape))


@lowering("rev")
def lower_rev(L: FunctionLowering, eqn: Eqn) -> None:
    L.bind(eqn.outs[0], L.read(eqn.ins[0]).rev(tuple(eqn.params["dimensions"])))


@lowering("getitem")
def lower_getitem(L: FunctionLowering, eqn: Eqn) -> None:
    spec = tuple(eqn.params["spec"])
    if has_index_array(spec, eqn.ins[1:]):
        emit_gather(L, L.read(eqn.ins[0]), spec, eqn.ins[1:], eqn.outs[0])
        return
    view, _ = _indexed_view(L, L.read(eqn.ins[0]), tuple(eqn.params["spec"]), eqn.ins[1:],
                            tuple(eqn.outs[0].aval.shape), clamp=True)
    L.bind(eqn.outs[0], view)


def _indexed_view(L: FunctionLowering, x: View, spec: tuple, dynamic: list, shape: tuple,
                  clamp: bool) -> tuple[View, ir.Value | None]:
    """The view `x[spec]` for basic entries and scalar integer index operands, and (when
    not clamping) an i1 telling whether every dynamic index was in range. Negative indices
    wrap; reads clamp into range; updates out of range are dropped (JAX's rules)."""
    static, terms, axis = [], [], 0
    for entry in spec:
        if entry[0] == "array":
            a = dynamic[entry[1]]
            if tuple(a.aval.shape) != ():
                raise Unsupported("indexing with an index array (gather)")
            static.append(("int", 0))
            terms.append((a, axis))
        elif entry[0] == "bool":
            raise Unsupported("boolean mask indexing")
        else:
            static.append(entry)
        if entry[0] != "none":
            axis += 1
    view = x.getitem(tuple(static), shape)
    if view is None:
        raise Unsupported("getitem spec")
    if not terms or x.const is not None:
        return view, None
    b = L.b
    offset, ok = i64(0), ir.Constant(ir.IntType(1), 1)
    for a, axis in terms:
        n = i64(x.shape[axis])
        index = _as_i64(L, a)
        index = b.select(b.icmp_signed("<", index, i64(0)), b.add(index, n), index)
        inside = b.and_(b.icmp_signed(">=", index, i64(0)), b.icmp_signed("<", index, n))
        ok = b.and_(ok, inside)
        if clamp:
            index = b.select(b.icmp_signed("<", index, i64(0)), i64(0), index)
            top = i64(max(x.shape[axis] - 1, 0))
            index = b.select(b.icmp_signed(">", index, top), top, index)
        else:
            index = b.select(inside, index, i64(0))
        offset = b.add(offset, b.mul(index, i64(x.strides[axis])))
    base = b.gep(view.base, [offset], inbounds=True, source_etype=_elem(view))
    return View(base, view.dtype, view.shape, view.strides, view.offset), ok


def _as_i64(L: FunctionLowering, a) -> ir.Value:
    value = L.scalar(a)
    if value.type.width >= 64:
        return value
    if is_signed(check_dtype(a.aval.dtype)):
        return L.b.sext(value, I64)
    return L.b.zext(value, I64)


@lowering("index_update")
def lower_index_update(L: FunctionLowering, eqn: Eqn) -> None:
    from . import elementwise
    x, y = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    out = eqn.outs[0]
    mode = eqn.params["mode"]
    spec = tuple(eqn.params["spec"])
    scatter = has_index_array(spec, eqn.ins[2:])
    operands = [(a, L.read(a)) for a in eqn.ins]
    # the values and indices are read while x is written: never over a buffer they live in
    reusable = [] if _shares_buffer(L, eqn.ins[0], eqn.ins[1:]) else [(eqn.ins[0], x)]
    dest = L.dest(out, reusable, operands)
    if dest != x:
        copy(L.cx, x, dest)
    if scatter:
        L.views[out.id] = dest
        emit_scatter(L, dest, y, spec, eqn.ins[2:], mode)
        return
    target_shape = _target_shape(x, spec, eqn.ins[2:])
    target, ok = _indexed_view(L, dest, spec, eqn.ins[2:], target_shape, clamp=False)
    L.views[out.id] = dest
    if target.size == 0:
        return
    b = L.b
    with b.if_then(ok if ok is not None else ir.Constant(ir.IntType(1), 1)):
        if mode == "set":
            copy(L.cx, y, target)
            return
        prim = UPDATE_PRIMS[mode]
        dtype = target.dtype

        def body(bb, regs):
            return [elementwise.lower(bb, prim, regs, [dtype, dtype], dtype, {})]

        from .loops import Nest, NestInput, NestOutput, emit_nest
        emit_nest(L.cx, Nest(target.shape, [NestInput(target), NestInput(
            y.broadcast_to(target.shape))], [NestOutput(target, target)], body))


def _shares_buffer(L: FunctionLowering, x, others: list) -> bool:
    """Whether operand `x` lives in the same buffer as one of `others`."""
    if not isinstance(x, Value):
        return False
    owner = L.live.find(x.id)
    return any(isinstance(a, Value) and L.live.find(a.id) == owner for a in others)


def _target_shape(x: View, spec: tuple, dynamic: list) -> tuple[int, ...]:
    """Shape of x[spec] when every index operand is a scalar."""
    import numpy as np
    probe = np.broadcast_to(np.empty((), np.bool_), x.shape)
    index = []
    for entry in spec:
        kind = entry[0]
        if kind == "slice":
            index.append(slice(entry[1], entry[2] if entry[2] >= 0 else None, entry[3]))
        elif kind in ("int", "array"):
            if kind == "array" and tuple(dynamic[entry[1]].aval.shape) != ():
                raise Unsupported("index_update with an index array (scatter)")
            index.append(0)
        elif kind == "none":
            index.append(None)
        else:
            raise Unsupported("boolean mask update")
    return probe[tuple(index)].shape


@lowering("concatenate")
def lower_concatenate(L: FunctionLowering, eqn: Eqn) -> None:
    dim = eqn.params["dimension"]
    dest = L.dest(eqn.outs[0])
    at = 0
    for a in eqn.ins:
        part = L.read(a)
        start = tuple(at if d == dim else 0 for d in range(dest.ndim))
        copy(L.cx, part, dest.slice(start, (1,) * dest.ndim, part.shape))
        at += part.shape[dim]
    L.views[eqn.outs[0].id] = dest


@lowering("pad")
def lower_pad(L: FunctionLowering, eqn: Eqn) -> None:
    x, value = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    dest = L.dest(eqn.outs[0])
    copy(L.cx, value, dest)
    x_start, x_shape, d_start, d_step = pad_placement(x.shape, dest.shape,
                                                      eqn.params["padding_config"])
    if all(x_shape):
        part = x.slice(x_start, (1,) * x.ndim, x_shape)
        copy(L.cx, part, dest.slice(d_start, d_step, x_shape))
    L.views[eqn.outs[0].id] = dest


def pad_placement(shape: tuple, out_shape: tuple, padding_config) -> tuple[tuple, ...]:
    """Where `pad` puts its operand: (start, shape) of the part of the operand that lands
    in the output (negative padding crops it), and (start, step) of that part in the
    output (interior padding spaces it out). A zero in the shape: nothing lands."""
    x_start, x_shape, d_start, d_step = [], [], [], []
    for n, out_n, (lo, _hi, interior) in zip(shape, out_shape, padding_config):
        step = interior + 1
        first = 0 if lo >= 0 else (-lo + step - 1) // step
        last = n - 1
        while last >= first and lo + last * step >= out_n:
            last -= 1
        count = max(0, last - first + 1)
        x_start.append(first if count else 0)
        x_shape.append(count)
        d_start.append(lo + first * step if count else 0)
        d_step.append(step)
    return tuple(x_start), tuple(x_shape), tuple(d_start), tuple(d_step)


def _dynamic_view(L: FunctionLowering, x: View, starts: list, sizes: tuple) -> View:
    """x[starts : starts + sizes] with starts clamped into range at run time."""
    if x.const is not None:
        return View.constant(x.const, x.dtype, sizes)
    b = L.b
    offset = i64(x.offset)
    for d, (a, size) in enumerate(zip(starts, sizes)):
        dtype = check_dtype(a.aval.dtype)
        s = L.scalar(a)
        s = b.sext(s, I64) if is_signed(dtype) and s.type.width < 64 else (
            b.zext(s, I64) if s.type.width < 64 else s)
        hi = i64(x.shape[d] - size)
        s = b.select(b.icmp_signed("<", s, i64(0)), i64(0), s)
        s = b.select(b.icmp_signed(">", s, hi), hi, s)
        offset = b.add(offset, b.mul(s, i64(x.strides[d])))
    base = b.gep(x.base, [offset], inbounds=True, source_etype=_elem(x))
    return View(base, x.dtype, tuple(sizes), x.strides, 0)


def _elem(x: View):
    from .types import memory_type
    return memory_type(x.dtype)


@lowering("dynamic_slice")
def lower_dynamic_slice(L: FunctionLowering, eqn: Eqn) -> None:
    x = L.read(eqn.ins[0])
    L.bind(eqn.outs[0], _dynamic_view(L, x, eqn.ins[1:], tuple(eqn.params["slice_sizes"])))


@lowering("dynamic_update_slice")
def lower_dynamic_update_slice(L: FunctionLowering, eqn: Eqn) -> None:
    x, update = L.read(eqn.ins[0]), L.read(eqn.ins[1])
    out = eqn.outs[0]
    operands = [(a, L.read(a)) for a in eqn.ins]
    dest = L.dest(out, [(eqn.ins[0], x)], operands)
    if dest != x:
        copy(L.cx, x, dest)
    if update.size:
        copy(L.cx, update, _dynamic_view(L, dest, eqn.ins[2:], update.shape))
    L.views[out.id] = dest

