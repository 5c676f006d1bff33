"""Batching rules of shape operations: shapes gain the batch size in front, axes shift past
the batch axis, sequences of arrays (stack, concatenate) have their unbatched items
broadcast first, and shape queries see the per-example value."""
import numpy as np
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import (
    as_array,
    axis_arg,
    axis_op,
    loop,
    loop_returning,
    shift,
    static_or_none,
)
from redraft.compiler.transforms.batch.batching import defbatch
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref

import redraft.numpy as jnp
from redraft.compiler.primitives import shape

# ---- shape queries: the per-example value's ------------------------------------------------


def _query(helper: str, operand: str):
    def rule(b):
        t = b.type(operand)
        if not bt.is_array(t):
            return b.call, bt.U  # the length/shape of a tuple of batched values
        if helper == "length" and isinstance(t, bt.Tree):  # a container or an array
            return ir.Call(vm_ref("length_any"), (b.arg(operand), ir.Const(1))), bt.U
        return ir.Call(vm_ref(helper), (b.arg(operand), ir.Const(1))), bt.U
    return rule


def _size(b):
    if not bt.is_array(b.type("a")):
        return b.call, bt.U
    axis = static_or_none(b, "axis")
    if axis is None:
        return ir.Call(vm_ref("size"), (b.arg("a"), ir.Const(1))), bt.U
    dims = b.emit(ir.Call(vm_ref("shape"), (b.arg("a"), ir.Const(1))))
    return ir.Call(_getitem(), (dims, b.arg("axis"))), bt.U


def _getitem():
    from redraft.compiler.transforms.common import GETITEM
    return GETITEM


defbatch(jnp.shape, _query("shape", "a"))
defbatch(jnp.ndim, _query("ndim", "a"))
defbatch(jnp.size, _size)
defbatch(np.shape, _query("shape", "a"))
defbatch(np.ndim, _query("ndim", "a"))
defbatch(np.size, _query("size", "a"))
defbatch(len, _query("length", "obj"))

# ---- reshaping ------------------------------------------------------------------------------


def _with_batch(b, x: ir.Atom, shape: ir.Atom) -> ir.Atom:
    return b.emit(ir.Call(vm_ref("with_batch_shape"), (x, shape)))


def _column_major(b) -> bool:
    """order='F' (or a run-time order): the batch axis would join the column-major order,
    so such a reshape goes example by example."""
    return b.has("order") and static_or_none(b, "order") != "C"


def _reshape(b):
    if b.batched("shape") or b.batched("newshape") or _column_major(b):
        return loop(b)
    x = as_array(b, "a")
    name = "shape" if b.has("shape") else "newshape"
    return b.rebuild(a=x, **{name: _with_batch(b, x, b.arg(name))}), bt.B


def _ravel(b):
    if _column_major(b):
        return loop(b)
    x = as_array(b, "a")
    return ir.Call(vm_ref("flat_examples"), (x,)), bt.B


def _broadcast_to(b):
    if b.batched("shape"):
        return loop(b)
    x = as_array(b, "array")
    x = b.emit(ir.Call(vm_ref("align_to_shape"), (x, b.arg("shape"))))
    return b.rebuild(array=x, shape=_with_batch(b, x, b.arg("shape"))), bt.B


def _transpose(b):
    if b.batched("axes"):
        return loop(b)
    x = as_array(b, "a")
    axes = static_or_none(b, "axes")
    if axes is None:
        return b.rebuild(a=x, axes=b.emit(ir.Call(vm_ref("reversed_axes"), (x,)))), bt.B
    if axes is ...:
        return loop(b)
    return b.rebuild(a=x, axes=(0,) + shift(tuple(axes))), bt.B


def _squeeze(b):
    x = as_array(b, "a")
    axis = static_or_none(b, "axis")
    if axis is None:  # every size-1 per-example axis, never the batch axis
        return b.rebuild(a=x, axis=b.emit(ir.Call(vm_ref("unit_axes"), (x,)))), bt.B
    return b.rebuild(a=x, axis=axis_arg(b, "axis", x)), bt.B


defbatch(jnp.reshape, _reshape)
defbatch(jnp.ravel, _ravel)
defbatch(jnp.broadcast_to, _broadcast_to)
defbatch(jnp.transpose, _transpose)
defbatch(jnp.permute_dims, _transpose)
defbatch(jnp.squeeze, _squeeze)
defbatch(jnp.swapaxes, axis_op("a", "axis1", "axis2"))
defbatch(jnp.moveaxis, axis_op("a", "source", "destination"))
defbatch(jnp.expand_dims, axis_op("a", "axis"))
def _flip(b):
    """flip(m, axis): its axes shifted past the batch axis; no axis (every axis of m) is
    every per-example axis, never the batch axis."""
    if b.batched("axis"):
        return loop(b)
    operand = as_array(b, "m")
    if b.has("axis"):
        axis = axis_arg(b, "axis", operand)
    else:
        axis = b.emit(ir.Call(vm_ref("example_axes"), (operand,)))
    return b.rebuild(m=operand, axis=axis), bt.B


defbatch(jnp.flip, _flip)
defbatch(jnp.roll, lambda b: loop(b) if static_or_none(b, "axis") is None
         or b.batched("shift") else axis_op("a", "axis")(b))
defbatch(jnp.diff, axis_op("a", "axis", defaults=(-1,)))
defbatch(jnp.repeat, lambda b: loop(b) if static_or_none(b, "axis") is None
         or b.batched("repeats") else axis_op("a", "axis")(b))
defbatch(jnp.fliplr, lambda b: (ir.Call(jnp_ref("flip"), (as_array(b, "m"), ir.Const(2))),
                                bt.B))
defbatch(jnp.flipud, lambda b: (ir.Call(jnp_ref("flip"), (as_array(b, "m"), ir.Const(1))),
                                bt.B))
for _name in ("triu", "tril"):
    defbatch(getattr(jnp, _name), axis_op("m"))  # the last two axes, batched or not

# ---- sequences of arrays -------------------------------------------------------------------


def _items_batched(b, name: str) -> ir.Atom:
    """The sequence argument with every item batched (unbatched ones broadcast)."""
    t = b.type(name)
    if not bt.is_sequence(t):
        return None
    return b.to_batched(b.arg(name), t)


def _stack(b):
    axis = static_or_none(b, "axis", 0)
    if axis is ... or b.batched("dtype"):
        return loop(b)
    if bt.is_array(b.type("arrays")):  # stacking the rows of one per-example array
        moved = ir.Call(jnp_ref("moveaxis"), (b.arg("arrays"), ir.Const(1),
                                              ir.Const(shift(axis))))
        return moved, bt.B
    items = _items_batched(b, "arrays")
    return b.rebuild(arrays=items, axis=shift(axis)), bt.B


def _concatenate(b):
    axis = static_or_none(b, "axis", 0)
    if axis is ... or axis is None or bt.is_array(b.type("arrays")):
        return loop(b)
    items = _items_batched(b, "arrays")
    return b.rebuild(arrays=items, axis=shift(axis)), bt.B


def _fixed_axis_stack(axis: int, fn_name: str):
    """hstack/vstack/...: batch each item, then stack along a fixed per-example axis after
    making items at least `axis + 1`-dimensional, as the NumPy function does."""
    def rule(b):
        return loop(b)
    return rule


defbatch(jnp.stack, _stack)
defbatch(jnp.concatenate, _concatenate)
defbatch(jnp.concat, _concatenate)
for _name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
    defbatch(getattr(jnp, _name), _fixed_axis_stack(0, _name))

# ---- lax: the shape family's rules that are code over the call (the family file,
# compiler/primitives/shape.py, declares the others). Each rewrites a static argument in its
# own way and falls back to a loop where it is not static: reshape and broadcast_in_dim put
# the batch size in front of a shape read at run time (vm.with_batch_shape), transpose puts
# axis 0 in front of its permutation, concatenate batches each item of its sequence, pad
# adds a zero padding for the batch axis, slice bounds it in full. ----------------------------


def _lax_reshape(b):
    if b.has("dimensions") and static_or_none(b, "dimensions") is not None:
        return loop(b)
    x = as_array(b, "operand")
    return b.rebuild(operand=x, new_sizes=_with_batch(b, x, b.arg("new_sizes"))), bt.B


def _lax_transpose(b):
    permutation = static_or_none(b, "permutation")
    if permutation is ... or any(b.batched(n) for n in b.bound if n != "operand"):
        return loop(b)
    return b.rebuild(operand=as_array(b, "operand"),
                     permutation=(0,) + shift(tuple(permutation))), bt.B


def _broadcast_in_dim(b):
    dims = static_or_none(b, "broadcast_dimensions")
    if dims is ... or b.batched("shape"):
        return loop(b)
    x = as_array(b, "operand")
    return b.rebuild(operand=x, shape=_with_batch(b, x, b.arg("shape")),
                     broadcast_dimensions=(0,) + shift(tuple(dims))), bt.B


def _lax_concatenate(b):
    dim = static_or_none(b, "dimension")
    if dim is ... or bt.is_array(b.type("operands")):
        return loop(b)
    return b.rebuild(operands=_items_batched(b, "operands"), dimension=shift(dim)), bt.B


def _lax_pad(b):
    config = static_or_none(b, "padding_config")
    if config is ... or b.batched("padding_value"):
        return loop(b)
    return b.rebuild(operand=as_array(b, "operand"),
                     padding_config=((0, 0, 0),) + tuple(tuple(c) for c in config)), bt.B


def _lax_slice(b):
    start, limit = static_or_none(b, "start_indices"), static_or_none(b, "limit_indices")
    strides = static_or_none(b, "strides")
    if ... in (start, limit, strides):
        return loop(b)
    x = as_array(b, "operand")
    repl = {"operand": x, "start_indices": (0,) + tuple(start),
            "limit_indices": b.emit(ir.Call(vm_ref("with_batch_shape"),
                                            (x, ir.Const(tuple(limit)))))}
    if strides is not None:
        repl["strides"] = (1,) + tuple(strides)
    return b.rebuild(**repl), bt.B


defbatch(shape.reshape_p, _lax_reshape)
defbatch(shape.transpose_p, _lax_transpose)
defbatch(shape.broadcast_in_dim_p, _broadcast_in_dim)
defbatch(shape.concatenate_p, _lax_concatenate)
defbatch(shape.pad_p, _lax_pad)
defbatch(shape.slice_p, _lax_slice)
for _name in ("tile", "append", "insert", "delete", "rot90", "diag", "diagflat",
              "ediff1d", "kron", "cross", "select", "take_along_axis", "searchsorted",
              "convolve", "correlate", "allclose", "array_equal", "array_equiv", "vecdot"):
    if hasattr(jnp, _name):
        defbatch(getattr(jnp, _name), loop_returning("array"))
for _name in ("split", "array_split", "hsplit", "vsplit", "dsplit", "broadcast_arrays",
              "meshgrid"):
    if hasattr(jnp, _name):
        defbatch(getattr(jnp, _name), loop_returning("list"))
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    defbatch(getattr(jnp, _name), loop_returning("any"))
