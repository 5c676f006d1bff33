"""Derivative rules of the helpers that lax control flow lowers to (core/helpers.py)."""
from redraft.compiler.core import helpers
from redraft.compiler.primitives.registry import defjvp, defnondiff, defstatic, defvjp

defjvp(helpers.tree_index, lambda xs_dot, ans, xs, i: helpers.tree_index(xs_dot, i))
defvjp(helpers.tree_index, lambda ct, ans, xs, i: helpers.tree_index_add(xs, i, ct))
defjvp(helpers.tree_index_add, lambda g_dot, ans, xs, i, g: helpers.tree_index_add(xs, i, g_dot),
       argnames=("g",))
defvjp(helpers.tree_index_add, lambda ct, ans, xs, i, g: helpers.tree_index(ct, i),
       argnames=("g",))
defstatic(helpers.tree_index_add, "xs")
defjvp(helpers.tree_stack, lambda ys_dot, ans, ys, reverse: helpers.tree_stack(ys_dot, reverse))
defvjp(helpers.tree_stack, lambda ct, ans, ys, reverse: helpers.tree_unstack(ct, ys, reverse))
defjvp(helpers.tree_unstack, lambda stacked_dot, ans, stacked, ys, reverse:
       helpers.tree_unstack(stacked_dot, ys, reverse))
defvjp(helpers.tree_unstack, lambda ct, ans, stacked, ys, reverse:
       helpers.tree_stack(ct, reverse))
defstatic(helpers.tree_unstack, "ys")
for _op in (helpers.equals, helpers.clamp_index, helpers.scan_length, helpers.scan_indices):
    defnondiff(_op, "an integer or a range, not a differentiable value")
defstatic(helpers.tree_index, "i")
defstatic(helpers.tree_index_add, "i")
