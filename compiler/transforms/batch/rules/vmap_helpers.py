"""Batching rules of the helpers batched code calls (runtime/vm/), so vmap nests: a
helper that counts `k` leading batch axes counts one more (`vm.shape(x, 1)` becomes
`vm.shape(x, 2)`); the helpers written in plain redraft.numpy batch through their source."""
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.runtime import vm
from redraft.compiler.transforms.runtime.vm import linalg as vm_linalg
from redraft.compiler.transforms.batch.rules.common import loop, loop_returning
from redraft.compiler.transforms.batch.batching import (NotStatic, defbatch, defbatch_source,
                                                        static_value)


def _k_plus_one(operand: str, k_param: str = "k", k_default: int = 1, result=bt.U):
    """Rule of a helper whose `k` counts the batch axes in front of `operand`."""
    def rule(b):
        if any(b.batched(n) for n in b.bound if n != operand):
            return loop(b)
        try:
            k = b.static(k_param, k_default)
        except NotStatic:
            return loop(b)
        if not b.batched(operand):
            return b.call, result
        return b.rebuild(**{k_param: k + 1}), result if result is bt.U else bt.B
    return rule


for _name in ("shape", "ndim", "size", "length"):
    defbatch(getattr(vm, _name), _k_plus_one("x"))
for _name in ("example_axes", "reversed_axes", "unit_axes", "shift_axis", "with_batch_shape"):
    # axis numbers of one outer example: its own leading axis is not counted
    defbatch(getattr(vm, _name), _k_plus_one("x", k_param="lead", k_default=0))
defbatch(vm.probe, _k_plus_one("x"))
defbatch(vm.flat_examples, _k_plus_one("x", result=bt.B))
defbatch(vm.rows, _k_plus_one("x", result=bt.B))
defbatch(vm.unrows, _k_plus_one("g", result=bt.B))
defbatch(vm.broadcast, _k_plus_one("x", k_default=0, result=bt.B))
defbatch(vm.unbroadcast, _k_plus_one("g", k_default=0, result=bt.B))


def _index(b):
    if b.batched("idx"):
        b.fail("an index known only at run time differs from example to example")
    return b.call, bt.U


def _convert(helper_name: str):
    """vm.convert(x, from, to, n, outer): x's batch type in this vmap joins `outer`."""
    def rule(b):
        if any(b.batched(n) for n in ("from_t", "to_t", "n", "outer")):
            return loop(b, "any")
        try:
            outer = static_value(b.arg("outer")) if b.has("outer") else ()
        except NotStatic:
            return loop(b, "any")
        t = b.type("x" if helper_name == "convert" else "g")
        return b.rebuild(outer=(t,) + tuple(outer)), t
    return rule


def _axis_size(b):
    """The mapped axis of an inner vmap, read from arguments batched by an outer one."""
    leaves_t = b.type("values")
    axes = b.static("axes") if b.is_static("axes") else None
    if axes is None or not isinstance(leaves_t, bt.Tuple) or b.batched("given"):
        return loop(b)
    shifted = tuple(a + 1 if bt.is_batched(t) and a >= 0 else a
                    for a, t in zip(axes, leaves_t.items))
    return b.rebuild(axes=shifted), bt.U


def _stack_examples(b):
    t = b.type("pieces")
    axis = b.static("axis", 0) if b.is_static("axis") else None
    if axis is None or not bt.is_array(bt.element(t)):
        return loop(b, "any")
    pieces = b.to_batched(b.arg("pieces"), t)
    return b.rebuild(pieces=pieces, axis=axis + 1 if axis >= 0 else axis), bt.B


def _move_axis(b):
    src, dst = (b.static(n) if b.is_static(n) else None for n in ("source", "destination"))
    if src is None or dst is None or b.batched("source") or b.batched("destination"):
        return loop(b, "any")
    shift = lambda a: a + 1 if a >= 0 else a
    return b.rebuild(source=shift(src), destination=shift(dst)), bt.B


def _any_example(b):
    """An inner batched while's `any` over its examples, per outer example: an array, so
    the inner loop runs as a batched while of the outer vmap."""
    from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref
    mask = b.arg("mask")
    axes = b.emit(ir.Call(vm_ref("example_axes"), (mask,)))
    return ir.Call(jnp_ref("any"), (mask,), (("axis", axes),)), bt.B


defbatch(vm.index, _index)
defbatch(vm.structure, lambda b: b.fail("axis or dimension numbers differ between examples"))
defbatch(vm.convert, _convert("convert"))
defbatch(vm.unconvert, _convert("unconvert"))
defbatch(vm.axis_size, _axis_size)
defbatch(vm.stack_examples, _stack_examples)
defbatch(vm.unstack_examples, loop_returning("any"))
defbatch(vm.move_axis, _move_axis)
defbatch(vm.move_leaves, _move_axis)
defbatch(vm.getitem, _k_plus_one("x", result=bt.TREE))
defbatch(vm.length_any, _k_plus_one("x"))
defbatch(vm.static_key, lambda b: (b.call, bt.U))  # its arrays stand in: nothing batched
defbatch(vm.ungetitem, loop_returning("any"))
defbatch(vm.index_add_unbatched, loop_returning("any"))
defbatch(vm.index_add_unbatched_bar, loop_returning("any"))
defbatch(vm.any_example, _any_example)
defbatch(vm.select_tree, loop_returning("any"))
defbatch(vm.take_example, loop_returning("any"))
defbatch(vm.rows_to_tree_jacobian, loop_returning("any"))
defbatch(vm.tree_jacobian_to_rows, loop_returning("any"))

for _fn in (vm.tree_index, vm.tree_stack, vm.tree_index_bar, vm.tree_unstack,
            vm.take_example_bar):
    defbatch(_fn, loop_returning("any"))
for _fn in (vm.as_index, vm.align, vm.align_pair, vm.align_to_shape, vm.align_update,
            vm.select, vm.take_examples,
            vm.dot, vm.matmul, vm.vdot, vm.outer, vm.inner, vm.dot_general,
            vm.dot_general_lhs_bar, vm.dot_general_rhs_bar, vm_linalg._scale,
            vm_linalg._cast_pair, vm_linalg._shifted, vm.is_array, vm.basis_rows,
            vm.columns_to_jacobian,
            vm.rows_to_jacobian, vm.tree_rows):
    defbatch_source(_fn)
