"""Derivative rules of the helpers that derivative code itself calls, so that it can be
differentiated again (grad of grad, jacfwd of jacrev)."""
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.transforms.runtime import ad, vm
from redraft.compiler.primitives.registry import (defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp, defzeros)

defjvp(ad.unbroadcast, lambda g_dot, ans, g, x: ad.unbroadcast(g_dot, x))
defvjp(ad.unbroadcast, lambda ct, ans, g, x: ad.broadcast_like(ct, g))
defjvp(ad.broadcast_like, lambda t_dot, out, t, ans: ad.broadcast_like(t_dot, ans))
defvjp(ad.broadcast_like, lambda ct, out, t, ans: ad.unbroadcast(ct, t))
defjvp(ad.unsum, lambda g_dot, ans, g, x, axis=None, keepdims=False, where=None:
       ad.unsum(g_dot, x, axis, keepdims, where))
defvjp(ad.unsum, lambda ct, ans, g, x, axis=None, keepdims=False, where=None:
       jnp.sum(ct, axis=axis, keepdims=keepdims, where=where))
defnondiff(ad.mean_count, "a count of elements")
defnondiff(ad.abs_slope, "piecewise constant (complex curvature of |x| is not followed)")
defjvp(ad.abs_tangent, lambda t_dot, ans, t, x: ad.abs_tangent(t_dot, x), argnames=("t",))
defvjp(ad.abs_tangent, lambda ct, ans, t, x: ct * ad.abs_slope(x), argnames=("t",))
defstatic(ad.abs_tangent, "x")
defnondiff(ad.clip_slope, "piecewise constant")
defjvp(ad.add, lambda a_dot, ans, a, b: a_dot, lambda b_dot, ans, a, b: b_dot)
defjvp_joint(ad.add, lambda a_dot, b_dot, ans, a, b: ad.add(a_dot, b_dot), ("a", "b"))
defvjp(ad.add, lambda ct, ans, a, b: ct, lambda ct, ans, a, b: ct)

defjvp(ad.safe_div,
       lambda g_dot, ans, g, d, zero=None: ad.safe_div(g_dot, d, zero),
       lambda d_dot, ans, g, d, zero=None: ad.safe_div(-g * d_dot, d * d, zero))
defvjp(ad.safe_div,
       lambda ct, ans, g, d, zero=None: ad.unbroadcast(ad.safe_div(ct, d, zero), g),
       lambda ct, ans, g, d, zero=None: ad.unbroadcast(ad.safe_div(-ct * g, d * d, zero), d))
defjvp(ad.safe_mul,
       lambda g_dot, ans, g, f, zero=None: ad.safe_mul(g_dot, f, zero),
       lambda f_dot, ans, g, f, zero=None: ad.safe_mul(g, f_dot, zero))
defvjp(ad.safe_mul,
       lambda ct, ans, g, f, zero=None: ad.unbroadcast(ad.safe_mul(ct, f, zero), g),
       lambda ct, ans, g, f, zero=None: ad.unbroadcast(ad.safe_mul(g, ct, zero), f))
defstatic(ad.safe_div, "zero")
defstatic(ad.safe_mul, "zero")
# what safe_mul/safe_div zero stays zero in their own derivatives (grad of grad)
defzeros(ad.safe_div,
         lambda ct, ans, g, d, zero=None: ad.zero_mask(zero, ct),
         lambda ct, ans, g, d, zero=None: ad.zero_mask(zero, ct))
defzeros(ad.safe_mul,
         lambda ct, ans, g, f, zero=None: ad.zero_mask(zero, ct),
         lambda ct, ans, g, f, zero=None: ad.zero_mask(zero, ct))
defjvp(ad.log1p_exp, lambda x_dot, ans, x: x_dot * ad.sigmoid(x))
defvjp(ad.log1p_exp, lambda g, ans, x: g * ad.sigmoid(x))
defjvp(ad.sigmoid, lambda x_dot, ans, x: x_dot * (ans * (1.0 - ans)))
defvjp(ad.sigmoid, lambda g, ans, x: g * (ans * (1.0 - ans)))
defjvp(ad.safe_log, lambda x_dot, ans, x: ad.safe_div(x_dot, x))
defvjp(ad.safe_log, lambda ct, ans, x: ad.safe_div(ct, x))

defjvp(ad.index_add, lambda g_dot, ans, x, idx, g: ad.index_add(x, idx, g_dot),
       argnames=("g",))
defvjp(ad.index_add, lambda ct, ans, x, idx, g: ct[idx], argnames=("g",))
defjvp(ad.updated_part, lambda g_dot, ans, g, idx: ad.updated_part(g_dot, idx))
defvjp(ad.updated_part, lambda ct, ans, g, idx: jnp.zeros_like(g).at[idx].add(ct))
defjvp(ad.container_like, lambda items_dot, ans, value, items:
       ad.container_like(value, items_dot), argnames=("items",))
defvjp(ad.container_like, lambda ct, ans, value, items: ad.container_like(items, ct),
       argnames=("items",))
defjvp(ad.attr_add, lambda g_dot, ans, obj, name, g: ad.attr_add(obj, name, g_dot),
       argnames=("g",))
defvjp(ad.attr_add, lambda ct, ans, obj, name, g: ad.attr_tangent(obj, ct, name),
       argnames=("g",))
defjvp(ad.attr_tangent, lambda obj_dot_dot, ans, obj, obj_dot, name:
       ad.attr_tangent(obj, obj_dot_dot, name), argnames=("obj_dot",))
defvjp(ad.attr_tangent, lambda ct, ans, obj, obj_dot, name: ad.attr_add(obj, name, ct),
       argnames=("obj_dot",))
defstatic(ad.attr_tangent, "obj", "name")

for _op in (ad.zeros_like, ad.grad_seed, ad.ones_like, ad.basis, ad.standard_basis,
            ad.size, ad.pick_first,
            ad.inside, ad.zero_mask, ad.zero_mask_or, ad.zero_mask_and,
            ad.unbroadcast_zero_mask, ad.zero_indicator, ad.indicator_zero,
            ad.set_survivors):
    defnondiff(_op, "its value does not depend on its argument's value")
defnondiff(ad.tape_constant, "no parameter feeds it: a loop's index or counter")

defstatic(ad.unbroadcast, "x")
defstatic(ad.broadcast_like, "ans")  # its parameter `ans` gives only a shape
defstatic(ad.unsum, "x")
defstatic(ad.index_add, "x", "idx")
defstatic(ad.updated_part, "idx")
defstatic(ad.attr_add, "obj")
defstatic(ad.container_like, "value")
defstatic(ad.split_like, "arrays")
defstatic(ad.unarray, "obj")
defstatic(ad.take_bar, "a", "indices")
defstatic(ad.cotangent_astype, "x")
defstatic(ad.reverse_cumsum, "a")
defstatic(ad.stack_jacobian, "out", "x")
defstatic(ad.dot_general_lhs_bar, "lhs")
defstatic(ad.dot_general_rhs_bar, "rhs")
defstatic(ad.dot_lhs_bar, "a")
defstatic(ad.dot_rhs_bar, "b")
defstatic(ad.matmul_lhs_bar, "a")
defstatic(ad.matmul_rhs_bar, "b")
defnondiff(ad.argext_mask, "piecewise constant in its arguments")
defnondiff(ad.custom_vjp_tangent, "it raises: forward mode has no tangent to give")

defjvp(ad.stack_jacobian, lambda rows_dot, ans, rows, out, x, rows_first=True:
       ad.stack_jacobian(rows_dot, out, x, rows_first))
defvjp(ad.stack_jacobian, lambda ct, ans, rows, out, x, rows_first=True:
       ad.unstack_jacobian(ct, rows, out, x, rows_first))
# a Jacobian read from batched columns (rows) and back: linear maps, each the other's transpose
for _op in (ad.jacobian_from_columns, ad.columns_of_jacobian, ad.jacobian_from_rows,
            ad.rows_of_jacobian):
    defstatic(_op, "out", "x", "leads")
defjvp(ad.jacobian_from_columns, lambda c_dot, ans, columns, out, x, leads=(0, 0, 0):
       ad.jacobian_from_columns(c_dot, out, x, leads))
defvjp(ad.jacobian_from_columns, lambda ct, ans, columns, out, x, leads=(0, 0, 0):
       ad.columns_of_jacobian(ct, out, x, leads))
defjvp(ad.columns_of_jacobian, lambda j_dot, ans, jac, out, x, leads=(0, 0, 0):
       ad.columns_of_jacobian(j_dot, out, x, leads))
defvjp(ad.columns_of_jacobian, lambda ct, ans, jac, out, x, leads=(0, 0, 0):
       ad.jacobian_from_columns(ct, out, x, leads))
defjvp(ad.jacobian_from_rows, lambda r_dot, ans, rows, out, x, leads=(0, 0, 0):
       ad.jacobian_from_rows(r_dot, out, x, leads))
defvjp(ad.jacobian_from_rows, lambda ct, ans, rows, out, x, leads=(0, 0, 0):
       ad.rows_of_jacobian(ct, out, x, leads))
defjvp(ad.rows_of_jacobian, lambda j_dot, ans, jac, out, x, leads=(0, 0, 0):
       ad.rows_of_jacobian(j_dot, out, x, leads))
defvjp(ad.rows_of_jacobian, lambda ct, ans, jac, out, x, leads=(0, 0, 0):
       ad.jacobian_from_rows(ct, out, x, leads))
defstatic(vm.rows_to_tree_jacobian, "out", "x")
defjvp(vm.rows_to_tree_jacobian, lambda rows_dot, ans, rows, out, x:
       vm.rows_to_tree_jacobian(rows_dot, out, x))
defvjp(vm.rows_to_tree_jacobian, lambda ct, ans, rows, out, x:
       vm.tree_jacobian_to_rows(ct, rows))
defstatic(vm.tree_jacobian_to_rows, "rows")
defjvp(vm.tree_jacobian_to_rows, lambda ct_dot, ans, ct, rows:
       vm.tree_jacobian_to_rows(ct_dot, rows))
defvjp(vm.tree_jacobian_to_rows, lambda g, ans, ct, rows: vm.tree_jacobian_to_rows(g, ct))
defjvp(ad.push,
       lambda tape_dot, ans, tape, value: ad.push(tape_dot, ad.zeros_like(value)),
       lambda value_dot, ans, tape, value: ad.push(ad.zeros_like(tape), value_dot))
defjvp_joint(ad.push, lambda tape_dot, value_dot, ans, tape, value: ad.push(tape_dot, value_dot),
             ("tape", "value"))
defvjp(ad.push, lambda ct, ans, tape, value: ct[1], lambda ct, ans, tape, value: ct[0])
defjvp(ad.tape_items, lambda tape_dot, ans, tape: ad.tape_items(tape_dot))
defvjp(ad.tape_items, lambda ct, ans, tape: ad.tape_from_items(ct))
defjvp(ad.tape_from_items, lambda items_dot, ans, items: ad.tape_from_items(items_dot))
defvjp(ad.tape_from_items, lambda ct, ans, items: ad.tape_items(ct))
defjvp(ad.split_like, lambda g_dot, ans, g, arrays, axis=0: ad.split_like(g_dot, arrays, axis))
defvjp(ad.split_like, lambda ct, ans, g, arrays, axis=0: jnp.concatenate(ct, axis))
defstatic(ad.split_like, "axis")  # (an axis read back from a reverse-mode tape: lax.tile)
defjvp(ad.unstack, lambda g_dot, ans, g, axis=0: ad.unstack(g_dot, axis))
defvjp(ad.unstack, lambda ct, ans, g, axis=0: jnp.stack(ct, axis))
defjvp(ad.unarray, lambda g_dot, ans, g, obj: ad.unarray(g_dot, obj))
defvjp(ad.unarray, lambda ct, ans, g, obj: jnp.array(ct))
defjvp(ad.untranspose, lambda g_dot, ans, g, axes=None: ad.untranspose(g_dot, axes))
defvjp(ad.untranspose, lambda ct, ans, g, axes=None: jnp.transpose(ct, axes))
defjvp(ad.take_bar, lambda g_dot, ans, g, a, indices, axis=None, mode=None:
       ad.take_bar(g_dot, a, indices, axis, mode))
defvjp(ad.take_bar, lambda ct, ans, g, a, indices, axis=None, mode=None:
       jnp.take(ct, indices, axis=axis, mode=mode, fill_value=0))
defjvp(ad.cotangent_astype, lambda g_dot, ans, g, x: ad.cotangent_astype(g_dot, x))
defvjp(ad.cotangent_astype, lambda ct, ans, g, x: ad.cotangent_astype(ct, g))
defjvp(ad.tangent_astype, lambda t_dot, ans, t, dtype: ad.tangent_astype(t_dot, dtype))
defvjp(ad.tangent_astype, lambda ct, ans, t, dtype: ad.cotangent_astype(ct, t))
defstatic(ad.tangent_astype, "dtype")
defjvp(ad.reverse_cumsum, lambda g_dot, ans, g, a, axis=None: ad.reverse_cumsum(g_dot, a, axis))
defvjp(ad.reverse_cumsum, lambda ct, ans, g, a, axis=None: jnp.cumsum(ct, axis))
# Core calls dot_general_lhs_bar with swap_ans=False only (True is internal to rhs_bar).
defjvp(ad.dot_general_lhs_bar,
       lambda g_dot, ans, g, lhs, rhs, dimension_numbers, swap_ans=False:
       ad.dot_general_lhs_bar(g_dot, lhs, rhs, dimension_numbers, swap_ans),
       lambda rhs_dot, ans, g, lhs, rhs, dimension_numbers, swap_ans=False:
       ad.dot_general_lhs_bar(g, lhs, rhs_dot, dimension_numbers, swap_ans),
       argnames=("g", "rhs"))
defvjp(ad.dot_general_lhs_bar,
       lambda ct, ans, g, lhs, rhs, dimension_numbers, swap_ans=False:
       lax.dot_general(ct, rhs, dimension_numbers),
       lambda ct, ans, g, lhs, rhs, dimension_numbers, swap_ans=False:
       ad.dot_general_rhs_bar(g, ct, rhs, dimension_numbers),
       argnames=("g", "rhs"))
defvjp(ad.dot_general_rhs_bar,
       lambda ct, ans, g, lhs, rhs, dimension_numbers:
       lax.dot_general(lhs, ct, dimension_numbers),
       lambda ct, ans, g, lhs, rhs, dimension_numbers:
       ad.dot_general_lhs_bar(g, lhs, ct, dimension_numbers),
       argnames=("g", "lhs"))
defjvp(ad.dot_general_rhs_bar,
       lambda g_dot, ans, g, lhs, rhs, dimension_numbers:
       ad.dot_general_rhs_bar(g_dot, lhs, rhs, dimension_numbers),
       lambda lhs_dot, ans, g, lhs, rhs, dimension_numbers:
       ad.dot_general_rhs_bar(g, lhs_dot, rhs, dimension_numbers))
defjvp(ad.dot_lhs_bar,
       lambda g_dot, ans, g, a, b: ad.dot_lhs_bar(g_dot, a, b),
       lambda b_dot, ans, g, a, b: ad.dot_lhs_bar(g, a, b_dot), argnames=("g", "b"))
defvjp(ad.dot_lhs_bar,
       lambda ct, ans, g, a, b: jnp.dot(ct, b),
       lambda ct, ans, g, a, b: ad.dot_rhs_bar(g, ct, b), argnames=("g", "b"))
defjvp(ad.dot_rhs_bar,
       lambda g_dot, ans, g, a, b: ad.dot_rhs_bar(g_dot, a, b),
       lambda a_dot, ans, g, a, b: ad.dot_rhs_bar(g, a_dot, b), argnames=("g", "a"))
defvjp(ad.dot_rhs_bar,
       lambda ct, ans, g, a, b: jnp.dot(a, ct),
       lambda ct, ans, g, a, b: ad.dot_lhs_bar(g, a, ct), argnames=("g", "a"))
defjvp(ad.matmul_lhs_bar,
       lambda g_dot, ans, g, a, b: ad.matmul_lhs_bar(g_dot, a, b),
       lambda b_dot, ans, g, a, b: ad.matmul_lhs_bar(g, a, b_dot), argnames=("g", "b"))
defvjp(ad.matmul_lhs_bar,
       lambda ct, ans, g, a, b: ad.unbroadcast(jnp.matmul(ct, b), g),
       lambda ct, ans, g, a, b: ad.matmul_rhs_bar(g, ct, b), argnames=("g", "b"))
defjvp(ad.matmul_rhs_bar,
       lambda g_dot, ans, g, a, b: ad.matmul_rhs_bar(g_dot, a, b),
       lambda a_dot, ans, g, a, b: ad.matmul_rhs_bar(g, a_dot, b), argnames=("g", "a"))
defvjp(ad.matmul_rhs_bar,
       lambda ct, ans, g, a, b: ad.unbroadcast(jnp.matmul(a, ct), g),
       lambda ct, ans, g, a, b: ad.matmul_lhs_bar(g, a, ct), argnames=("g", "a"))
