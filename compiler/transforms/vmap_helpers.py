"""Helpers that batched code calls, spelled `vm.<name>` in generated source.

The helpers live in three files: vmap_shapes.py (shapes and axes per example, batch sizes,
broadcasting, alignment, selection), vmap_trees.py (values of any structure: conversions,
one example, scan steps) and vmap_linalg.py (products and Jacobians per example). This
module gathers them under one name, `vm`.
"""
from redraft.compiler.transforms.vmap_linalg import (basis_rows, columns_to_jacobian,  # noqa
                                                     dot, dot_general, dot_general_lhs_bar,
                                                     dot_general_rhs_bar, inner, is_array,
                                                     matmul, outer, rows_to_jacobian, vdot)
from redraft.compiler.transforms.vmap_shapes import (align, align_pair,  # noqa
                                                     align_to_shape,
                                                     align_update, any_example, as_index,
                                                     axis_size, broadcast, example_axes,
                                                     flat_examples, getitem, index,
                                                     index_add_unbatched, index_add_unbatched_bar,
                                                     length,
                                                     length_any, move_axis, move_leaves,
                                                     ndim, probe, reversed_axes, rows,
                                                     select, select_tree, shape, shift_axis,
                                                     size, stack_examples, structure,
                                                     take_examples, unbroadcast, ungetitem,
                                                     unit_axes, unrows, with_batch_shape)
from redraft.compiler.transforms.vmap_trees import (convert, take_example,  # noqa
                                                    take_example_bar, tree_index,
                                                    tree_index_bar, tree_stack, tree_unstack,
                                                    unconvert)
