"""Derivative rules of the array helpers in runtime/lad.py that the structural lax families'
rules call (each again with rules, so derivatives of derivatives work), and of the indexed
updates x.at[idx].op(v).

Every rule is written with lax operations that have rules themselves. Where a derivative
would need a division that fails at zeros, it is computed otherwise. The lax functions' own
rules are in their family files (compiler/primitives/shape.py, gather.py, conv.py,
linalg.py, reductions.py, ...); the helpers' rules sit above them, as the helpers do.
"""
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.core import helpers
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lad
from redraft.compiler.primitives.registry import (defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp)

# ---- helpers of the shape family's rules (compiler/primitives/shape.py) ----------------------

defjvp(lad.pad_bar, lambda g_dot, ans, g, padding_config: lad.pad_bar(g_dot, padding_config))
defvjp(lad.pad_bar, lambda ct, ans, g, padding_config: lax.pad(ct, 0.0, padding_config))
defjvp(lad.dynamic_index_bar, lambda g_dot, ans, g, operand, index, axis, keepdims:
       lad.dynamic_index_bar(g_dot, operand, index, axis, keepdims))
defvjp(lad.dynamic_index_bar, lambda ct, ans, g, operand, index, axis, keepdims:
       lax.dynamic_index_in_dim(ct, index, axis, keepdims))
defstatic(lad.dynamic_index_bar, "operand", "index")

# ---- helpers: shifts, recurrences, gathers along an axis -----------------------------------------

defjvp(lad.shift, lambda x_dot, ans, x, axis, reverse, fill=0.0: lad.shift(x_dot, axis, reverse))
defvjp(lad.shift, lambda g, ans, x, axis, reverse, fill=0.0: lad.shift(g, axis, not reverse))
# h[i] = a[i] h[i-1] + b[i]: linear in b; in a, h_dot[i] = a[i] h_dot[i-1] + a_dot[i] h[i-1].
# The transpose in b is the recurrence run the other way with a shifted by one.
defjvp(lad.linear_recurrence,
       lambda a_dot, ans, a, b, axis, reverse: lad.linear_recurrence(
           a, a_dot * lad.shift(ans, axis, reverse), axis, reverse),
       lambda b_dot, ans, a, b, axis, reverse: lad.linear_recurrence(a, b_dot, axis, reverse))
defvjp(lad.linear_recurrence,
       lambda g, ans, a, b, axis, reverse: ad.unbroadcast(lad.shift(ans, axis, reverse)
       * lad.linear_recurrence(lad.shift(a, axis, not reverse), g, axis, not reverse), a),
       lambda g, ans, a, b, axis, reverse: ad.unbroadcast(lad.linear_recurrence(
           lad.shift(a, axis, not reverse), g, axis, not reverse), b))
defjvp(lad.take_along, lambda x_dot, ans, x, indices, axis: lad.take_along(x_dot, indices, axis))
defvjp(lad.take_along, lambda g, ans, x, indices, axis: lad.take_along_bar(g, x, indices, axis))
defjvp(lad.take_along_bar, lambda g_dot, ans, g, x, indices, axis:
       lad.take_along_bar(g_dot, x, indices, axis))
defvjp(lad.take_along_bar, lambda ct, ans, g, x, indices, axis: lad.take_along(ct, indices, axis))
defstatic(lad.take_along, "indices")
defstatic(lad.take_along_bar, "x", "indices")

# ---- convolutions -------------------------------------------------------------------------------


def _lhs_bar_jvp_g(g_dot, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_lhs_bar(g_dot, lhs, rhs, window_strides, padding, lhs_dilation,
                            rhs_dilation, dimension_numbers, feature_group_count,
                            batch_group_count)


def _lhs_bar_jvp_rhs(rhs_dot, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                     rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_lhs_bar(g, lhs, rhs_dot, window_strides, padding, lhs_dilation,
                            rhs_dilation, dimension_numbers, feature_group_count,
                            batch_group_count)


def _lhs_bar_vjp_g(ct, ans, g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    """conv_lhs_bar is the transpose of the conv in lhs, so its own transpose is the conv."""
    return lax.conv_general_dilated(ct, rhs, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers, feature_group_count,
                                    batch_group_count)


def _lhs_bar_vjp_rhs(ct, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                     rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    """<ct, lhs_bar(g, rhs)> = <conv(ct, rhs), g>: in rhs, the rhs cotangent with lhs = ct."""
    return lad.conv_rhs_bar(g, ct, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                            dimension_numbers, feature_group_count, batch_group_count)


def _rhs_bar_jvp_g(g_dot, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_rhs_bar(g_dot, lhs, rhs, window_strides, padding, lhs_dilation,
                            rhs_dilation, dimension_numbers, feature_group_count,
                            batch_group_count)


def _rhs_bar_jvp_lhs(lhs_dot, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                     rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_rhs_bar(g, lhs_dot, rhs, window_strides, padding, lhs_dilation,
                            rhs_dilation, dimension_numbers, feature_group_count,
                            batch_group_count)


def _rhs_bar_vjp_g(ct, ans, g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    return lax.conv_general_dilated(lhs, ct, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers, feature_group_count,
                                    batch_group_count)


def _rhs_bar_vjp_lhs(ct, ans, g, lhs, rhs, window_strides, padding, lhs_dilation,
                     rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_lhs_bar(g, lhs, ct, window_strides, padding, lhs_dilation, rhs_dilation,
                            dimension_numbers, feature_group_count, batch_group_count)


defjvp(lad.conv_lhs_bar, _lhs_bar_jvp_g, None, _lhs_bar_jvp_rhs)
defvjp(lad.conv_lhs_bar, _lhs_bar_vjp_g, None, _lhs_bar_vjp_rhs)
defstatic(lad.conv_lhs_bar, "lhs")
defjvp(lad.conv_rhs_bar, _rhs_bar_jvp_g, _rhs_bar_jvp_lhs)
defvjp(lad.conv_rhs_bar, _rhs_bar_vjp_g, _rhs_bar_vjp_lhs)
defstatic(lad.conv_rhs_bar, "rhs")

defjvp(lad.conv_transpose_kernel, lambda rhs_dot, ans, rhs, dimension_numbers, transpose_kernel,
       lhs=None: lad.conv_transpose_kernel(rhs_dot, dimension_numbers, transpose_kernel, lhs))
defvjp(lad.conv_transpose_kernel, lambda ct, ans, rhs, dimension_numbers, transpose_kernel,
       lhs=None: lad.conv_transpose_kernel(ct, dimension_numbers, transpose_kernel, lhs))
defstatic(lad.conv_transpose_kernel, "lhs")

# ---- indexed updates x.at[idx].op(v) (set, add and get have rules in rules/shapes.py) ------------
# multiply, divide (by the product of a repeated index's values) and min/max accumulate over
# repeated indices like scatter_mul/min/max; power is exact for unique indices (it repeats).

defjvp(helpers.at_subtract, lambda x_dot, ans, x, idx, v: x_dot,
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].add(-v_dot),
       argnames=("x", "v"))
defjvp_joint(helpers.at_subtract, lambda x_dot, v_dot, ans, x, idx, v:
             x_dot.at[idx].add(-v_dot), ("x", "v"))
defvjp(helpers.at_subtract, lambda g, ans, x, idx, v: g,
       lambda g, ans, x, idx, v: ad.unbroadcast(-ad.updated_part(g, idx), v),
       argnames=("x", "v"))
defjvp(helpers.at_multiply, lambda x_dot, ans, x, idx, v: x_dot.at[idx].multiply(v),
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].add(
           v_dot * lad.at_multiply_others(x, idx, v)), argnames=("x", "v"))
defvjp(helpers.at_multiply, lambda g, ans, x, idx, v: g.at[idx].multiply(v),
       lambda g, ans, x, idx, v: ad.unbroadcast(
           ad.updated_part(g, idx) * lad.at_multiply_others(x, idx, v), v),
       argnames=("x", "v"))
defjvp(helpers.at_divide, lambda x_dot, ans, x, idx, v: x_dot.at[idx].divide(v),
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].add(-v_dot * ans[idx] / v),
       argnames=("x", "v"))
defvjp(helpers.at_divide, lambda g, ans, x, idx, v: g.at[idx].divide(v),
       lambda g, ans, x, idx, v: ad.unbroadcast(-ad.updated_part(g, idx) * ans[idx] / v, v),
       argnames=("x", "v"))
defjvp(helpers.at_power,
       lambda x_dot, ans, x, idx, v: x_dot * jnp.ones_like(ans).at[idx].set(
           v * x[idx] ** (v - 1)),
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].set(
           v_dot * ans[idx] * ad.safe_log(x[idx])), argnames=("x", "v"))
defvjp(helpers.at_power,
       lambda g, ans, x, idx, v: g * jnp.ones_like(ans).at[idx].set(v * x[idx] ** (v - 1)),
       lambda g, ans, x, idx, v: ad.unbroadcast(
           ad.updated_part(g, idx) * ans[idx] * ad.safe_log(x[idx]), v),
       argnames=("x", "v"))
for _op in (helpers.at_min, helpers.at_max):  # contributors equal to the result share it
    defjvp(_op, lambda x_dot, ans, x, idx, v: x_dot * lad.at_extremum_weights(ans, x, idx, v)[0],
           lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].add(
               v_dot * lad.at_extremum_weights(ans, x, idx, v)[1]), argnames=("x", "v"))
    defvjp(_op, lambda g, ans, x, idx, v: g * lad.at_extremum_weights(ans, x, idx, v)[0],
           lambda g, ans, x, idx, v: ad.unbroadcast(
               ad.updated_part(g, idx) * lad.at_extremum_weights(ans, x, idx, v)[1], v),
           argnames=("x", "v"))

# ---- not differentiable --------------------------------------------------------------------------

for _op in (lad.inverse_permutation, lad.broadcast_in_dim_sum_axes, lad.slice_padding,
            lad.negated_padding, lad.shift_padding, lad.reduced_axes_last, lad.permuted_shape,
            lad.argsort_inverse, lad.cumulative_source, lad.gather_to_scatter_dnums,
            lad.scatter_to_gather_dnums, lad.scatter_slice_sizes, lad.gather_bar_mode,
            lad.scatter_bar_mode, lad.conv_params, lad.conv_transpose_dnums,
            lad.conv_transpose_params):
    defnondiff(_op, "computes static parameters or integer indices from shapes and values")
defnondiff(lax.conv_dimension_numbers, "computes static dimension numbers from shapes")
for _op in (lad.scatter_winners, lad.scatter_extremum_weights, lad.at_extremum_weights):
    defnondiff(_op, "piecewise constant weights")
