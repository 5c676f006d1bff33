"""Derivative rules of the helpers that batched code calls (runtime/vm/), so that grad of
a vmapped function differentiates its batched source. Helpers written in plain
redraft.numpy (vm.align, vm.select, vm.dot, ...) need none: AD reads their source."""
import numpy as np
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import vm
from redraft.compiler.primitives.registry import (defelementwise, defjvp, defjvp_joint,
                                                  defnondiff, defstatic, defvjp, defzeros)

import redraft.numpy as jnp

for _fn in (vm.structure, vm.shape, vm.ndim, vm.size, vm.length, vm.example_axes, vm.reversed_axes,
            vm.unit_axes, vm.shift_axis, vm.with_batch_shape, vm.index, vm.probe,
            vm.axis_size, vm.any_example):
    defnondiff(_fn, "it reads shapes or truth values, not values")

defnondiff(np.argsort, "integer-valued (the helpers sort axis numbers with it)")
for _fn in (np.shape, np.ndim, np.size):
    defnondiff(_fn, "it reads shapes, not values (helpers batched through their source)")

defjvp(vm.flat_examples, lambda x_dot, ans, x, k=1: vm.flat_examples(x_dot, k))
defvjp(vm.flat_examples, lambda g, ans, x, k=1: jnp.reshape(g, jnp.shape(x)))
defjvp(vm.rows, lambda x_dot, ans, x, k=1: vm.rows(x_dot, k))
defvjp(vm.rows, lambda g, ans, x, k=1: vm.unrows(g, k))
defjvp(vm.unrows, lambda g_dot, ans, g, k=1: vm.unrows(g_dot, k))
defvjp(vm.unrows, lambda ct, ans, g, k=1: vm.rows(ct, k))
defjvp(vm.broadcast, lambda x_dot, ans, x, n, k=0: vm.broadcast(x_dot, n, k))
defvjp(vm.broadcast, lambda g, ans, x, n, k=0: ad.unbroadcast(vm.unbroadcast(g, k), x))
defjvp(vm.unbroadcast, lambda g_dot, ans, g, k=0: vm.unbroadcast(g_dot, k))
defvjp(vm.unbroadcast, lambda ct, ans, g, k=0: vm.broadcast(ct, jnp.shape(g)[k], k))
defjvp(vm.convert, lambda x_dot, ans, x, from_t, to_t, n, outer=():
       vm.convert(x_dot, from_t, to_t, n, outer), argnames=("x",))
defvjp(vm.convert, lambda g, ans, x, from_t, to_t, n, outer=():
       vm.unconvert(g, from_t, to_t, n, outer), argnames=("x",))
defjvp(vm.unconvert, lambda g_dot, ans, g, from_t, to_t, n, outer=():
       vm.unconvert(g_dot, from_t, to_t, n, outer), argnames=("g",))
defvjp(vm.unconvert, lambda ct, ans, g, from_t, to_t, n, outer=():
       vm.convert(ct, from_t, to_t, n, outer), argnames=("g",))
defjvp(vm.stack_examples, lambda pieces_dot, ans, pieces, axis=0:
       vm.stack_examples(pieces_dot, axis))
defvjp(vm.stack_examples, lambda g, ans, pieces, axis=0:
       vm.unstack_examples(g, len(pieces), axis))
defjvp(vm.unstack_examples, lambda g_dot, ans, g, n, axis=0: vm.unstack_examples(g_dot, n, axis),
       argnames=("g",))
defvjp(vm.unstack_examples, lambda ct, ans, g, n, axis=0: vm.stack_examples(ct, axis),
       argnames=("g",))
defstatic(vm.unstack_examples, "n")
defnondiff(vm.length_any, "it reads shapes, not values")
defnondiff(vm.static_key, "a sort key: the strings and numbers of an item, its arrays stood in")
defjvp(vm.move_leaves, lambda x_dot, ans, x, source, destination:
       vm.move_leaves(x_dot, source, destination))
defvjp(vm.move_leaves, lambda g, ans, x, source, destination:
       vm.move_leaves(g, destination, source))
defjvp(vm.getitem, lambda x_dot, ans, x, idx, k=1: vm.getitem(x_dot, idx, k))
defvjp(vm.getitem, lambda g, ans, x, idx, k=1: vm.ungetitem(x, idx, g, k))
defjvp(vm.ungetitem, lambda g_dot, ans, x, idx, g, k=1: vm.ungetitem(x, idx, g_dot, k),
       argnames=("g",))
defvjp(vm.ungetitem, lambda ct, ans, x, idx, g, k=1: vm.getitem(ct, idx, k), argnames=("g",))
defjvp(vm.move_axis, lambda x_dot, ans, x, source, destination:
       vm.move_axis(x_dot, source, destination))
defvjp(vm.move_axis, lambda g, ans, x, source, destination:
       vm.move_axis(g, destination, source))
# vm.select is a batched `if`: the example's branch not taken gets a structural zero, kept
# zero through that branch's rules like jnp.where's (its source would hide that from AD)
defjvp(vm.select,
       lambda a_dot, ans, mask, a, b, a_batched, b_batched:
       vm.select(mask, a_dot, ad.zeros_like(ans), a_batched, True),
       lambda b_dot, ans, mask, a, b, a_batched, b_batched:
       vm.select(mask, ad.zeros_like(ans), b_dot, True, b_batched),
       argnames=("a", "b"))
defjvp_joint(vm.select, lambda a_dot, b_dot, ans, mask, a, b, a_batched, b_batched:
             vm.select(mask, a_dot, b_dot, a_batched, b_batched), ("a", "b"))
defvjp(vm.select,
       lambda g, ans, mask, a, b, a_batched, b_batched:
       ad.unbroadcast(vm.select(mask, g, ad.zeros_like(g), True, True), a),
       lambda g, ans, mask, a, b, a_batched, b_batched:
       ad.unbroadcast(vm.select(mask, ad.zeros_like(g), g, True, True), b),
       argnames=("a", "b"))
defzeros(vm.select,
         lambda g, ans, mask, a, b, a_batched, b_batched:
         vm.select(mask, ad.zeros_like(g), ad.ones_like(g), True, True) == 1,
         lambda g, ans, mask, a, b, a_batched, b_batched:
         vm.select(mask, ad.ones_like(g), ad.zeros_like(g), True, True) == 1,
         argnames=("a", "b"))
defstatic(vm.select, "mask", "a_batched", "b_batched")
# vm.index_add_unbatched is linear in g (the cotangent it places), and its bar in ct
defjvp(vm.index_add_unbatched, lambda g_dot, ans, x, idx, batched_idx, g, g_batched, n,
       x_batched=False: vm.index_add_unbatched(x, idx, batched_idx, g_dot, g_batched, n,
                                               x_batched), argnames=("g",))
defvjp(vm.index_add_unbatched, lambda ct, ans, x, idx, batched_idx, g, g_batched, n,
       x_batched=False: vm.index_add_unbatched_bar(ct, x, idx, batched_idx, g, g_batched, n,
                                                   x_batched), argnames=("g",))
defjvp(vm.index_add_unbatched_bar, lambda ct_dot, ans, ct, x, idx, batched_idx, g, g_batched,
       n, x_batched=False: vm.index_add_unbatched_bar(ct_dot, x, idx, batched_idx, g,
                                                      g_batched, n, x_batched),
       argnames=("ct",))
defvjp(vm.index_add_unbatched_bar, lambda h, ans, ct, x, idx, batched_idx, g, g_batched, n,
       x_batched=False: vm.index_add_unbatched(x, idx, batched_idx, h, g_batched, n,
                                               x_batched), argnames=("ct",))
defstatic(vm.index_add_unbatched, "x", "idx", "batched_idx", "g_batched", "n", "x_batched")
defstatic(vm.index_add_unbatched_bar, "x", "idx", "batched_idx", "g", "g_batched", "n",
          "x_batched")
defelementwise(vm.select)
defjvp(vm.select_tree,
       lambda a_dot, ans, mask, a, b: vm.select_tree(mask, a_dot, ad.zeros_like(b)),
       lambda b_dot, ans, mask, a, b: vm.select_tree(mask, ad.zeros_like(a), b_dot),
       argnames=("a", "b"))
defjvp_joint(vm.select_tree, lambda a_dot, b_dot, ans, mask, a, b:
             vm.select_tree(mask, a_dot, b_dot), ("a", "b"))
defvjp(vm.select_tree,
       lambda g, ans, mask, a, b: vm.select_tree(mask, g, ad.zeros_like(g)),
       lambda g, ans, mask, a, b: vm.select_tree(mask, ad.zeros_like(g), g),
       argnames=("a", "b"))
defjvp(vm.tree_index, lambda xs_dot, ans, xs, t, i: vm.tree_index(xs_dot, t, i),
       argnames=("xs",))
defvjp(vm.tree_index, lambda g, ans, xs, t, i: vm.tree_index_bar(xs, t, i, g),
       argnames=("xs",))
defjvp(vm.tree_index_bar, lambda g_dot, ans, xs, t, i, g: vm.tree_index_bar(xs, t, i, g_dot),
       argnames=("g",))
defvjp(vm.tree_index_bar, lambda ct, ans, xs, t, i, g: vm.tree_index(ct, t, i),
       argnames=("g",))
defjvp(vm.tree_stack, lambda ys_dot, ans, ys, t, reverse: vm.tree_stack(ys_dot, t, reverse),
       argnames=("ys",))
defvjp(vm.tree_stack, lambda g, ans, ys, t, reverse: vm.tree_unstack(g, ys, t, reverse),
       argnames=("ys",))
defjvp(vm.tree_unstack, lambda g_dot, ans, g, ys, t, reverse:
       vm.tree_unstack(g_dot, ys, t, reverse), argnames=("g",))
defvjp(vm.tree_unstack, lambda ct, ans, g, ys, t, reverse: vm.tree_stack(ct, t, reverse),
       argnames=("g",))
defjvp(vm.take_example, lambda x_dot, ans, x, t, k: vm.take_example(x_dot, t, k),
       argnames=("x",))
defvjp(vm.take_example, lambda g, ans, x, t, k: vm.take_example_bar(x, t, k, g),
       argnames=("x",))
defjvp(vm.take_example_bar, lambda g_dot, ans, x, t, k, g: vm.take_example_bar(x, t, k, g_dot),
       argnames=("g",))
defvjp(vm.take_example_bar, lambda ct, ans, x, t, k, g: vm.take_example(ct, t, k),
       argnames=("g",))
defstatic(vm.tree_index_bar, "xs")
defstatic(vm.tree_unstack, "ys")
defstatic(vm.take_example_bar, "x")
