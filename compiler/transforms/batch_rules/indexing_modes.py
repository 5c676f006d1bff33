"""Batching of the out-of-bounds-aware indexing forms (redraft/numpy/indexing.py): a loop
over the examples, each indexing with its own (possibly batched) index; the values are those
of the unbatched calls."""
from redraft.compiler.transforms.batching import defbatch_loop
from redraft.numpy import indexing as ix

for _op in (ix.at_get_mode, ix.at_set_mode, ix.at_add_mode, ix.at_update_mode):
    defbatch_loop(_op, "the index is rewritten per example (modes clip/fill/drop)")
defbatch_loop(ix.clamped_index_of, "clamps each example's index")
