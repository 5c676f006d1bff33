"""Batching rules of the helpers that lax control flow lowers to (compiler/frontend/
control_flow.py): fori_loop, while_loop, cond, switch, scan and map are Core loops and
branches by then, so a batched predicate or index becomes a batched `if`/`while` (both
branches run, selected per example); scans index and stack behind the batch axis."""
import operator

from redraft.compiler.core import helpers, ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import elementwise, loop_returning
from redraft.compiler.transforms.batch.batching import defbatch, defnotbatchable
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref

from redraft import lax


def _clamp_index(b):
    """lax.switch's branch index, per example: an int array, clipped into range."""
    index, n = b.call.args
    last = b.emit(ir.Call(ir.Ref(operator.sub, "-"), (n, ir.Const(1))))
    as_int = b.emit(ir.Call(vm_ref("as_index"), (index,)))
    return ir.Call(jnp_ref("clip"), (as_int, ir.Const(0), last)), bt.B


def _scan_length(b):
    xs, length = b.call.args
    one = b.emit(ir.Call(vm_ref("take_example"), (xs, ir.Const(b.ctx.type_of(xs)),
                                                  ir.Const(0))))
    return ir.Call(b.call.fn, (one, length)), bt.U


def _tree_index(b):
    xs, i = b.call.args
    if bt.is_batched(b.ctx.type_of(i)):
        return loop_returning("any")(b)
    t = b.ctx.type_of(xs)
    return ir.Call(vm_ref("tree_index"), (xs, ir.Const(t), i)), t


def _tree_stack(b):
    ys, reverse = b.call.args
    if bt.is_batched(b.ctx.type_of(reverse)):
        return loop_returning("any")(b)
    t = b.ctx.type_of(ys)
    elem = bt.element(t)
    ys = b.ctx.convert(ys, t, bt.seq(elem), b.out, b.origin)
    return ir.Call(vm_ref("tree_stack"), (ys, ir.Const(elem), reverse)), elem


defbatch(helpers.equals, elementwise())
defbatch(helpers.clamp_index, _clamp_index)
defbatch(helpers.scan_length, _scan_length)
defbatch(helpers.scan_indices, lambda b: b.fail("a scan's length differs between examples"))
defbatch(helpers.tree_index, _tree_index)
defbatch(helpers.tree_stack, _tree_stack)
defbatch(helpers.tree_index_add, loop_returning("any"))
defbatch(helpers.tree_unstack, loop_returning("list of trees"))  # a scan's ys may be tuples

_LOWERED = ("the frontend lowers lax.{} to Core loops and branches, which vmap batches; a "
            "call that reaches vmap passed functions the frontend could not see (pass them "
            "directly in the call)")
for _name in ("fori_loop", "while_loop", "cond", "switch", "scan", "map"):
    defnotbatchable(getattr(lax, _name), _LOWERED.format(_name))
