"""Batching rules of the helpers derivative code calls (runtime/ad.py), so that vmap(grad(f))
batches: simple ones by rule, the ones written in plain redraft.numpy through their source,
the rest by a loop over the examples."""

from redraft.compiler.core import ir
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import (
    as_array,
    elementwise,
    loop,
    loop_returning,
    same_type_of,
    shift,
    register_public_functions,
    static_or_none,
)
from redraft.compiler.transforms.batch.batching import defbatch
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref


def _probe(b, name: str) -> ir.Atom:
    """One example's worth of zeros in place of a batched shape-only argument."""
    a = b.arg(name)
    if not bt.is_batched(b.type(name)):
        return a
    return b.emit(ir.Call(vm_ref("probe"), (a, ir.Const(1))))


def _add(b):
    """ad.add(a, b): cotangents of one variable; both converted to the larger type."""
    x, y = b.call.args
    tx, ty = b.ctx.type_of(x), b.ctx.type_of(y)
    t = bt.join(tx, ty)
    if bt.is_array(t):
        return b.call, t  # same per-example shapes: broadcasting pairs the right axes
    x = b.ctx.convert(x, tx, t, b.out, b.origin)
    y = b.ctx.convert(y, ty, t, b.out, b.origin)
    return ir.Call(b.call.fn, (x, y)), t


def _grad_seed(b):
    return ir.Call(b.call.fn, (_probe(b, "out"),)), bt.U


def _basis(b):
    if b.batched("i"):
        return loop(b)
    return ir.Call(b.call.fn, (_probe(b, "x"), b.arg("i"))), bt.U


def _size(b):
    """One example's size (a pytree's: its leaves', each made batched)."""
    lead = static_or_none(b, "lead", 0)
    if lead is ...:
        return loop(b)
    x = b.to_batched(b.arg("x"), b.type("x"))
    return b.rebuild(x=x, lead=lead + 1), bt.U


def _shape_of(b):
    return ir.Call(vm_ref("shape"), (b.arg("x"), ir.Const(1))), bt.U


def _push(b):
    """push(tape, value): a tape of the join of the values pushed."""
    tape, value = b.call.args
    tt, tv = b.ctx.type_of(tape), b.ctx.type_of(value)
    elem = bt.join(tt.item if isinstance(tt, bt.Tape) else bt.U, tv)
    target = bt.tape(elem)
    tape = b.ctx.convert(tape, tt if isinstance(tt, bt.Tape) else bt.tape(bt.U), target, b.out,
                         b.origin)
    value = b.ctx.convert(value, tv, elem, b.out, b.origin)
    return ir.Call(b.call.fn, (tape, value)), target


def _tape_items(b):
    t = b.ctx.type_of(b.call.args[0])
    return b.call, bt.seq(t.item if isinstance(t, bt.Tape) else bt.element(t))


def _tape_from_items(b):
    return b.call, bt.tape(bt.element(b.ctx.type_of(b.call.args[0])))


def _index_add(b):
    """The cotangent of x[idx]: zeros like x with g added at idx, per example."""
    tx, ti, tg = b.type("x"), b.type("idx"), b.type("g")
    if bt.is_batched(ti):
        return loop(b)
    if bt.is_sequence(tx):
        return loop(b, "any")
    x, idx, g = b.arg("x"), b.arg("idx"), b.arg("g")
    from redraft.compiler.transforms.batch.rules.indexing import batched_index
    if not bt.is_batched(tx) or isinstance(tx, (bt.Dict, bt.Tree)):
        # x may be a container (of parameters, of running statistics): decided when it runs
        if bt.is_batched(tx):
            x = b.to_batched(x, tx)  # every leaf batched, as the result's type says
        return ir.Call(vm_ref("index_add_unbatched"), (
            x, idx, batched_index(b, idx), g, ir.Const(bt.is_batched(tg)),
            b.axis_size, ir.Const(bt.is_batched(tx)))), bt.TREE
    zeros = b.emit(ir.Call(ir.Ref(ad.zeros_like, "ad.zeros_like", ad), (x,)))
    if not bt.is_batched(tx):
        zeros = b.to_batched(zeros, bt.U)
    from redraft.compiler.transforms.batch.rules.indexing import batched_index
    new_idx = batched_index(b, idx)
    if bt.is_batched(tg):
        g = b.emit(ir.Call(vm_ref("align_update"), (g, zeros, new_idx)))
    from redraft.compiler.core import helpers
    from redraft.numpy import indexing as ix   # reads clamp: so does their transpose
    new_idx = b.emit(ir.Call(ir.Ref(ix.clamped_index_of, "jnp_indexing.clamped_index_of", ix),
                             (zeros, new_idx)))
    return ir.Call(ir.Ref(helpers.at_add, ".at.add"), (zeros, new_idx, g)), bt.B


def _attr_add(b):
    """The cotangent of `obj.name` with obj batched: every leaf batched, so obj and g are
    made so first (a field left unbatched, such as an int, would break that promise)."""
    if bt.is_batched(b.type("obj")) and not b.batched("name"):
        obj, name, g = b.call.args
        obj = b.to_batched(obj, b.ctx.type_of(obj))
        g = b.to_batched(g, b.ctx.type_of(g))
        return ir.Call(b.call.fn, (obj, name, g)), bt.TREE
    return loop(b, "any")


def _attr_tangent(b):
    """A field of a tangent object (zero where the field is static data): unbatched when
    neither object is, else read example by example."""
    if not any(bt.is_batched(b.ctx.type_of(a)) for a in b.call.args[:2]):
        return b.call, bt.U
    return loop(b, "any")


def _zip_tangent(b):
    rows = []
    for a in b.call.args:
        t = b.ctx.type_of(a)
        if bt.is_array(t):
            a = b.emit(ir.Call(jnp_ref("moveaxis"), (a, ir.Const(1), ir.Const(0))))
            t = bt.B
        else:
            t = bt.element(t)
        rows.append((a, t))
    return (ir.Call(b.call.fn, tuple(a for a, _ in rows)),
            bt.seq(bt.tup(t for _, t in rows)))


def _dict_values(b):
    return b.call, bt.seq(bt.TREE) if b.batched("d") else bt.U


def _unstack(b):
    axis = static_or_none(b, "axis", 0)
    if axis is ... or not bt.is_array(b.type("g")):
        return loop(b, "list")
    return b.rebuild(g=as_array(b, "g"), axis=shift(axis)), bt.seq(bt.B)


def _untranspose(b):
    axes = static_or_none(b, "axes")
    g = as_array(b, "g")
    if axes is ...:
        return loop(b)
    if axes is None:
        perm = b.emit(ir.Call(vm_ref("reversed_axes"), (g,)))
        return ir.Call(jnp_ref("transpose"), (g, perm)), bt.B
    return b.rebuild(g=g, axes=(0,) + shift(tuple(axes))), bt.B


def _split_like(b):
    axis = static_or_none(b, "axis", 0)
    t = b.type("arrays")
    every_item_batched = (isinstance(t, bt.Tuple) and all(bt.is_array(i) for i in t.items)) or (
        isinstance(t, bt.Seq) and bt.is_array(t.item))
    if axis is ... or axis is None or not every_item_batched or not b.batched("g"):
        return loop(b, "list")
    return b.rebuild(axis=shift(axis)), bt.seq(bt.B)


def _structure(b, a: ir.Atom) -> ir.Atom:
    """`a`, a run-time value of structure only, marked so that AD never differentiates it."""
    if isinstance(a, (ir.Const, ir.Ref)):
        return a
    return b.emit(ir.Call(vm_ref("structure"), (a,)))


def _dot_general_bar(helper: str, static: str, has_swap: bool):
    """The cotangents of dot_general's operands, per example: `vm.dot_general_lhs_bar`
    (dimension numbers may be known only at run time: they are plain Python values)."""
    def rule(b):
        if b.batched("dimension_numbers") or (has_swap and b.batched("swap_ans")):
            return loop(b)
        names = ("g", "lhs", "rhs")
        args = [as_array(b, n) for n in names]
        flags = [ir.Const(b.batched(n)) for n in names]
        extra = (_structure(b, b.arg("swap_ans", ir.Const(False))),) if has_swap else ()
        dims = _structure(b, b.arg("dimension_numbers"))
        call = ir.Call(vm_ref(helper), tuple(args[:3]) + (dims,) + extra + tuple(flags))
        batched = b.batched("g") or b.batched("lhs" if static == "rhs" else "rhs")
        return call, bt.B if batched else bt.U
    return rule


defbatch(ad.zeros_like, same_type_of("x"))
defbatch(ad.ones_like, same_type_of("x"))
defbatch(ad.add, _add)
defbatch(ad.grad_seed, _grad_seed)
defbatch(ad.basis, _basis)
defbatch(ad.size, _size)
defbatch(ad.tape_constant, same_type_of("value"))
defbatch(ad.shape_of, _shape_of)
defbatch(ad.push, _push)
defbatch(ad.tape_items, _tape_items)
defbatch(ad.tape_from_items, _tape_from_items)
defbatch(ad.index_add, _index_add)
def _container_like(b):
    """The items in value's container: a batched array value stacks them along axis 1 (its
    rows), a tuple holds them as they are; an unbatched value's kind is known only when the
    code runs, so that case goes example by example."""
    tv, ti = b.type("value"), b.type("items")
    if not bt.is_batched(tv) and not bt.is_batched(ti):
        return b.call, bt.U
    if tv is bt.B and isinstance(ti, bt.Tuple):
        flags = ir.Const(tuple(bt.is_batched(t) for t in ti.items))
        ref = ir.Ref(ad.container_like_batched, "ad.container_like_batched", ad)
        return ir.Call(ref, (b.arg("value"), b.arg("items"), flags, b.axis_size)), bt.B
    if isinstance(tv, bt.Tuple):
        return b.call, ti
    return loop(b, "any")


defbatch(ad.container_like, _container_like)  # the items, in value's container
# the items as `like`'s kind of sequence: example by example (a tuple of batched items and a
# batched array hold their batch axes in different places)
defbatch(ad.sequence_like, loop_returning("any"))
defbatch(ad.attr_add, _attr_add)
defbatch(ad.zip_tangent, _zip_tangent)
defbatch(ad.dict_values, _dict_values)
defbatch(ad.attr_tangent, _attr_tangent)
# Python containers and objects rebuilt around batched values: example by example
for _fn in (ad.dict_part, ad.unzip_spread, ad.sorted_like, ad.unsorted, ad.object_tangent,
            ad.object_items_bar, ad.dict_part_bar, ad.overwritten_bar):
    defbatch(_fn, loop_returning("any"))
defbatch(ad.unstack, _unstack)
defbatch(ad.untranspose, _untranspose)
defbatch(ad.split_like, _split_like)
defbatch(ad.safe_div, elementwise())
defbatch(ad.safe_mul, elementwise())
defbatch(ad.safe_log, elementwise())
defbatch(ad.pick_first, elementwise(static=("ties_first",)))
defbatch(ad.inside, elementwise())
defbatch(ad.dot_general_lhs_bar, _dot_general_bar("dot_general_lhs_bar", "lhs", True))
defbatch(ad.dot_general_rhs_bar, _dot_general_bar("dot_general_rhs_bar", "rhs", False))



def _standard_basis(b):
    """One example's basis: every example's is the same."""
    lead = static_or_none(b, "lead", 0)
    if lead is ... or not b.batched("x"):
        return b.call, bt.U
    x = b.to_batched(b.arg("x"), b.type("x"))
    return b.rebuild(x=x, lead=lead + 1), bt.U


def _jacobian_blocks(data: str, data_like: str, result_like: str):
    """Rule of jacobian_from_columns and its kin: one more batch axis in front of the leaves
    of each batched argument (`leads` counts them), an argument batched in part made
    batched in every leaf. `data` is the columns, rows or Jacobian argument; `data_like`
    and `result_like` say which of out, x ("both": a tree like out of trees like x) the
    data and the result are shaped like, so that the result's type is B where it is one
    array (TREE else)."""
    names = (data, "out", "x")

    def rule(b):
        leads = static_or_none(b, "leads", (0, 0, 0))
        if not any(b.batched(n) for n in names):
            return b.call, bt.U
        if leads is ...:
            return loop(b, "any")
        args = {n: b.to_batched(b.arg(n), b.type(n)) for n in names if b.batched(n)}
        new_leads = tuple(k + 1 if b.batched(n) else k for n, k in zip(names, leads))
        call = b.rebuild(leads=new_leads, **args)
        if not b.batched(data):  # the same Jacobian for every example
            return call, bt.U
        one = {n: b.type(n) is bt.B for n in names}
        out_array = one["out"] or (one[data] and data_like in ("out", "both"))
        x_array = one["x"] or (one[data] and data_like in ("x", "both"))
        array = {"out": out_array, "x": x_array, "both": out_array and x_array}[result_like]
        return call, bt.B if array else bt.TREE
    return rule


defbatch(ad.standard_basis, _standard_basis)
defbatch(ad.jacobian_from_columns, _jacobian_blocks("columns", "out", "both"))
defbatch(ad.jacobian_from_rows, _jacobian_blocks("rows", "x", "both"))
defbatch(ad.columns_of_jacobian, _jacobian_blocks("jac", "both", "out"))
defbatch(ad.rows_of_jacobian, _jacobian_blocks("jac", "both", "x"))


# every other public helper: through its source when Core can express it, else by a loop
# over the examples (a helper added later is covered the same way)
register_public_functions(ad)
