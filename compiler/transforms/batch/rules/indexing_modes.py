"""Batching of the out-of-bounds-aware indexing forms (redraft/numpy/indexing.py): a loop
over the examples, each indexing with its own (possibly batched) index; the values are those
of the unbatched calls."""
from redraft.compiler.transforms.batch.batching import defbatch_loop, defbatch_source
from redraft.numpy import indexing as ix

for _op in (ix.at_get_mode, ix.at_set_mode, ix.at_add_mode, ix.at_update_mode):
    defbatch_loop(_op, "the index is rewritten per example (modes clip/fill/drop)")
defbatch_loop(ix.clamped_index_of, "clamps each example's index")
for _op in (ix.transpose_read_mode, ix.transpose_update_mode):
    defbatch_source(_op)   # a mode name in, a mode name out: plain Python
