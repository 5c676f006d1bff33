"""Derivative rules of the helpers that batched code calls (vmap_helpers.py), so that grad of
a vmapped function differentiates its batched source. Helpers written in plain
redraft.numpy (vm.align, vm.select, vm.dot, ...) need none: AD reads their source."""
import redraft.numpy as jnp
from redraft.compiler.transforms import ad_helpers as ad
from redraft.compiler.transforms import vmap_helpers as vm
from redraft.compiler.transforms.registry import defjvp, defjvp_joint, defnondiff, defvjp

for _fn in (vm.shape, vm.ndim, vm.size, vm.length, vm.example_axes, vm.reversed_axes,
            vm.unit_axes, vm.shift_axis, vm.with_batch_shape, vm.index, vm.probe,
            vm.axis_size, vm.any_example):
    defnondiff(_fn, "it reads shapes or truth values, not values")

defjvp(vm.flat_examples, lambda x_dot, ans, x, k=1: vm.flat_examples(x_dot, k))
defvjp(vm.flat_examples, lambda g, ans, x, k=1: jnp.reshape(g, jnp.shape(x)))
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
defvjp(vm.stack_examples, lambda g, ans, pieces, axis=0: ad.unstack(g, axis))
defjvp(vm.move_axis, lambda x_dot, ans, x, source, destination:
       vm.move_axis(x_dot, source, destination))
defvjp(vm.move_axis, lambda g, ans, x, source, destination:
       vm.move_axis(g, destination, source))
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
