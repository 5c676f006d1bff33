"""Batching of lax's compositions (redraft/lax/slicing.py, windows.py, scans.py,
sorting.py) and of the helpers their derivative rules call: vmap reads their source, which
is written on lax functions with batching rules of their own. The shape helpers take no
arrays and cannot be batched."""
from redraft import lax
from redraft.compiler.transforms.batch.batching import defbatch_source, defnotbatchable
from redraft.compiler.transforms.ad.rules import lax_composed as rules
from redraft.lax import slicing, windows

for _fn in (lax.slice_in_dim, lax.index_in_dim, lax.dynamic_slice_in_dim,
            lax.dynamic_update_slice_in_dim, lax.dynamic_update_index_in_dim, lax.split,
            lax.collapse, lax.broadcast_to_rank, lax.tile, lax.full, lax.full_like,
            lax.reciprocal, lax.batch_matmul, lax.reduce_window, lax.reduce, lax.reduce_xor,
            lax.associative_scan, lax.cumlogsumexp, lax.sort_key_val, lax.top_k,
            lax.approx_max_k, lax.approx_min_k,
            slicing.slice_in_dim_padding, slicing.index_in_dim_bar, slicing.tile_bar,
            windows.reduce_window_jvp, windows.reduce_window_vjp, windows.kind_name,
            windows.reduce_axes, rules.reduce_tangent, rules.reduce_cotangent,
            rules.cumlogsumexp_tangent, rules.cumlogsumexp_cotangent, rules.scan_tangent,
            rules.scan_cotangent):
    defbatch_source(_fn)

for _fn in (lax.broadcast_shapes, lax.padtype_to_pads, lax.conv_general_permutations,
            lax.conv_general_shape_tuple, lax.conv_shape_tuple, lax.conv_transpose_shape_tuple,
            lax.reduce_window_shape_tuple):
    defnotbatchable(_fn, "shape arithmetic on static ints: it takes no arrays")
defnotbatchable(lax.dtype, "its result is a dtype, the same for every example: read x.dtype")
for _fn in (lax.bessel_i0e, lax.bessel_i1e, rules.bessel_i1e_slope):
    defbatch_source(_fn)
for _fn in (lax.scatter_sub, rules.scatter_sub_updates_bar):
    defbatch_source(_fn)
