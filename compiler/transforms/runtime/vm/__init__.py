"""Helpers that batched code calls, spelled `vm.<name>` in generated source.

The helpers live in three files: shapes.py (shapes and axes per example, batch sizes,
broadcasting, alignment, selection), trees.py (values of any structure: conversions,
one example, scan steps) and linalg.py (products and Jacobians per example). This
package gathers them under one name, `vm`, with the batch types (`vm.U`, `vm.B`,
`vm.Tuple(vm.U, vm.B)`, `vm.Seq`, `vm.Tape`, `vm.Dict`, `vm.Tree()`) that `convert` and its
kin take as constants.
"""
from redraft.compiler.transforms.batch.batch_types import (  # noqa
    B, U, Dict, Seq, Tape, Tree, Tuple)
from redraft.compiler.transforms.runtime.vm.linalg import (  # noqa
    basis_rows, columns_to_jacobian, dot, dot_general, dot_general_lhs_bar, dot_general_rhs_bar,
    inner, is_array, matmul, outer, rows_to_jacobian, rows_to_tree_jacobian,
    tree_jacobian_to_rows, vdot)
from redraft.compiler.transforms.runtime.vm.shapes import (  # noqa
    align, align_pair, align_to_shape, align_update, any_example, as_index, axis_size, broadcast,
    example_axes, flat_examples, getitem, index, index_add_unbatched, index_add_unbatched_bar,
    length, length_any, move_axis, move_leaves, ndim, probe, reversed_axes, rows, select,
    select_tree, shape, shift_axis, size, stack_examples, structure, take_examples, tree_rows,
    unbroadcast, ungetitem, unit_axes, unrows, unstack_examples, with_batch_shape)
from redraft.compiler.transforms.runtime.vm.trees import (  # noqa
    ExampleKey, convert, static_key, take_example, take_example_bar, tree_index, tree_index_bar,
    tree_stack, tree_unstack, unconvert)
