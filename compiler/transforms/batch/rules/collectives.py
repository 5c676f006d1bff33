"""Batching rules of the collectives over a pmap axis inside vmapped code: each example's
values are combined with the same example's on the other devices, so the batch axis (at 0)
is carried along and axis arguments shift past it."""
from redraft.compiler.primitives import collectives as cl
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import as_array, loop, shift, static_or_none
from redraft.compiler.transforms.batch.batching import defbatch, defnotbatchable

from redraft import lax


def _carried(b):
    """psum and friends are elementwise across devices: the batch axis stays at 0."""
    return b.rebuild(x=as_array(b, "x")), bt.B


def _axis_shifted(param: str, default: int):
    def rule(b):
        value = static_or_none(b, param, default)
        if value is ... or value < 0:
            return loop(b)
        return b.rebuild(x=as_array(b, "x"), **{param: shift(value)}), bt.B
    return rule


for _op in (lax.psum, lax.pmean, lax.pmax, lax.pmin, lax.ppermute, lax.pshuffle):
    defbatch(_op, _carried)
defbatch(lax.all_gather, _axis_shifted("axis", 0))
defbatch(lax.psum_scatter, _axis_shifted("scatter_dimension", 0))


def _all_to_all(b):
    """Both axes move past the batch axis (negative ones would need the example's rank)."""
    axes = (static_or_none(b, "split_axis"), static_or_none(b, "concat_axis"))
    if any(a is ... or a is None or a < 0 for a in axes):
        return loop(b)
    split, concat = axes
    return b.rebuild(x=as_array(b, "x"), split_axis=shift(split),
                     concat_axis=shift(concat)), bt.B


defbatch(lax.all_to_all, _all_to_all)
for _op, _why in ((lax.axis_index, "it takes an axis name, never an array"),
                  (lax.axis_size, "it takes an axis name, never an array"),
                  (cl.inverse_perm, "it reverses static pairs, never arrays")):
    defnotbatchable(_op, _why)
