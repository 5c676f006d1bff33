"""Batching rules of indexing: `x[i]` of a batched array indexes behind the batch axis
(`x[:, i]`), containers of batched values index as containers, batched indices gather per
example, and `x.at[i].set(v)` updates every example at the same place."""
import operator

from redraft.compiler.core import helpers, ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import as_array, loop, shift
from redraft.compiler.transforms.batch.batching import NotStatic, defbatch
from redraft.compiler.transforms.batch.vmap_refs import vm_ref

import redraft.numpy as jnp

GETITEM = ir.Ref(operator.getitem, "[]")


def batched_index(b, idx: ir.Atom) -> ir.Atom:
    """The index of the batched array for per-example index `idx`: `(slice(None),) + idx`
    in the source when static, `vm.index(idx)` otherwise."""
    try:
        value = b.static_atom(idx)
    except NotStatic:
        return b.emit(ir.Call(vm_ref("index"), (idx,)))
    if isinstance(value, (int, slice, type(None), type(Ellipsis))) or (
            isinstance(value, tuple) and all(isinstance(v, (int, slice, type(None),
                                                             type(Ellipsis))) for v in value)):
        items = value if isinstance(value, tuple) else (value,)
        return ir.Const((slice(None),) + items)
    return b.emit(ir.Call(vm_ref("index"), (idx,)))


def _getitem(b):
    x, idx = b.call.args
    tx, ti = b.ctx.type_of(x), b.ctx.type_of(idx)
    try:
        key = b.static_atom(idx)
    except NotStatic:
        key = ...
    if isinstance(tx, bt.CONTAINERS) or (isinstance(tx, bt.Tree) and isinstance(key, str)):
        if bt.is_batched(ti):
            return loop(b)
        if key is not ...:
            return b.call, bt.item(tx, key)
        # a key known only at run time may read any item: all items take one type first
        x = b.ctx.convert(x, tx, bt.uniform(tx), b.out, b.origin)
        return ir.Call(b.call.fn, (x, idx)), bt.element(tx)
    if isinstance(tx, bt.Tree) and not bt.is_batched(ti):  # a container or an array: at run time
        return ir.Call(vm_ref("getitem"), (x, idx)), bt.TREE
    if not bt.is_batched(ti):
        return ir.Call(GETITEM, (x, batched_index(b, idx))), bt.B
    if not bt.is_batched(tx) and bt.is_array(ti):
        return b.call, bt.B  # x[i] with i an index array per example: one gather
    if bt.is_array(tx) and bt.is_array(ti):
        return ir.Call(vm_ref("take_examples"), (x, idx)), bt.B
    return loop(b)


defbatch(operator.getitem, _getitem)


def _at_update(b):
    """x.at[idx].set(v) and friends, idx the same for every example."""
    x, idx, *rest = b.call.args
    if bt.is_batched(b.ctx.type_of(idx)):
        return loop(b)
    xt = b.ctx.type_of(x)
    xb = b.to_batched(x, xt) if not bt.is_batched(xt) else x
    new_idx = batched_index(b, idx)
    args = [xb, new_idx]
    for v in rest:
        vt = b.ctx.type_of(v)
        if bt.is_batched(vt):
            v = b.emit(ir.Call(vm_ref("align_update"), (v, xb, new_idx)))
        args.append(v)
    return ir.Call(b.call.fn, tuple(args)), bt.B


for _fn in helpers.AT_UPDATES.values():
    defbatch(_fn, _at_update)


def _take(b):
    if b.batched("indices") or b.batched("mode") or b.batched("fill_value"):
        return loop(b)
    x = as_array(b, "a")
    axis = b.static("axis", None) if b.is_static("axis") else ...
    if axis is ...:
        return loop(b)
    if axis is None:
        return b.rebuild(a=b.emit(ir.Call(vm_ref("flat_examples"), (x,))), axis=1), bt.B
    return b.rebuild(a=x, axis=shift(axis)), bt.B


defbatch(jnp.take, _take)
