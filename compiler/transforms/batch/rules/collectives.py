"""Batching rules of the collectives whose axis arguments shift past the batch axis
(all_gather, psum_scatter, all_to_all); psum and friends, which carry the batch axis along,
declare theirs in their family file (compiler/primitives/collectives.py)."""
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import as_array, loop, shift, static_or_none
from redraft.compiler.transforms.batch.batching import defbatch

from redraft import lax


def _axis_shifted(param: str, default: int):
    def rule(b):
        value = static_or_none(b, param, default)
        if value is ... or value < 0:
            return loop(b)
        return b.rebuild(x=as_array(b, "x"), **{param: shift(value)}), bt.B
    return rule


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
