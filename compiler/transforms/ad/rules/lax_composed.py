"""Derivative rules of lax's compositions: the one-axis slices, tile, split, full, square,
batch_matmul (redraft/lax/slicing.py), reduce_window and reduce (windows.py),
associative_scan and cumlogsumexp (scans.py), sort_key_val, top_k, approx_max_k and
approx_min_k (sorting.py). The shape helpers are marked not differentiable.

Rules that depend on the computation (reduce_window, reduce, associative_scan) look up its
name (redraft/lax/computations.py) and apply that monoid's derivative; the helpers below are
Core functions without rules of their own, differentiated from their source for higher
orders.
"""
import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lad
from redraft.compiler.primitives.registry import (defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp)
from redraft.lax import slicing, windows

# ---- one axis ----------------------------------------------------------------------------------

defjvp(lax.slice_in_dim, lambda operand_dot, ans, operand, start_index, limit_index, stride=1,
       axis=0: lax.slice_in_dim(operand_dot, start_index, limit_index, stride, axis))
defvjp(lax.slice_in_dim, lambda g, ans, operand, start_index, limit_index, stride=1, axis=0:
       lax.pad(g, 0.0, slicing.slice_in_dim_padding(jnp.shape(operand), start_index,
                                                     limit_index, stride, axis)))
defjvp(lax.index_in_dim, lambda operand_dot, ans, operand, index, axis=0, keepdims=True:
       lax.index_in_dim(operand_dot, index, axis, keepdims))
defvjp(lax.index_in_dim, lambda g, ans, operand, index, axis=0, keepdims=True:
       slicing.index_in_dim_bar(g, operand, index, axis, keepdims))
defjvp(lax.dynamic_slice_in_dim, lambda operand_dot, ans, operand, start_index, slice_size,
       axis=0: lax.dynamic_slice_in_dim(operand_dot, start_index, slice_size, axis))
defvjp(lax.dynamic_slice_in_dim, lambda g, ans, operand, start_index, slice_size, axis=0:
       lax.dynamic_update_slice_in_dim(jnp.zeros_like(operand), g, start_index, axis))
defstatic(lax.dynamic_slice_in_dim, "start_index")

defjvp(lax.dynamic_update_slice_in_dim,
       lambda operand_dot, ans, operand, update, start_index, axis:
       lax.dynamic_update_slice_in_dim(operand_dot, jnp.zeros_like(update), start_index, axis),
       lambda update_dot, ans, operand, update, start_index, axis:
       lax.dynamic_update_slice_in_dim(jnp.zeros_like(operand), update_dot, start_index, axis))
defjvp_joint(lax.dynamic_update_slice_in_dim,
             lambda operand_dot, update_dot, ans, operand, update, start_index, axis:
             lax.dynamic_update_slice_in_dim(operand_dot, update_dot, start_index, axis),
             ("operand", "update"))
defvjp(lax.dynamic_update_slice_in_dim,
       lambda g, ans, operand, update, start_index, axis:
       lax.dynamic_update_slice_in_dim(g, jnp.zeros_like(update), start_index, axis),
       lambda g, ans, operand, update, start_index, axis:
       lax.dynamic_slice_in_dim(g, start_index, jnp.shape(update)[axis], axis))
defstatic(lax.dynamic_update_slice_in_dim, "start_index")

defjvp(lax.dynamic_update_index_in_dim,
       lambda operand_dot, ans, operand, update, index, axis:
       lax.dynamic_update_index_in_dim(operand_dot, jnp.zeros_like(update), index, axis),
       lambda update_dot, ans, operand, update, index, axis:
       lax.dynamic_update_index_in_dim(jnp.zeros_like(operand), update_dot, index, axis))
defjvp_joint(lax.dynamic_update_index_in_dim,
             lambda operand_dot, update_dot, ans, operand, update, index, axis:
             lax.dynamic_update_index_in_dim(operand_dot, update_dot, index, axis),
             ("operand", "update"))
defvjp(lax.dynamic_update_index_in_dim,
       lambda g, ans, operand, update, index, axis:
       lax.dynamic_update_index_in_dim(g, jnp.zeros_like(update), index, axis),
       lambda g, ans, operand, update, index, axis:
       lax.reshape(lax.dynamic_index_in_dim(g, index, axis, True), jnp.shape(update)))
defstatic(lax.dynamic_update_index_in_dim, "index")

defjvp(lax.split, lambda operand_dot, ans, operand, sizes, axis=0:
       lax.split(operand_dot, sizes, axis))
defvjp(lax.split, lambda g, ans, operand, sizes, axis=0: jnp.concatenate(g, axis))

# ---- whole shapes ------------------------------------------------------------------------------

defjvp(lax.collapse, lambda operand_dot, ans, operand, start_dimension, stop_dimension=None:
       lax.collapse(operand_dot, start_dimension, stop_dimension))
defvjp(lax.collapse, lambda g, ans, operand, start_dimension, stop_dimension=None:
       lax.reshape(g, jnp.shape(operand)))
defjvp(lax.broadcast_to_rank, lambda x_dot, ans, x, rank: lax.broadcast_to_rank(x_dot, rank))
defvjp(lax.broadcast_to_rank, lambda g, ans, x, rank: lax.reshape(g, jnp.shape(x)))
defjvp(lax.tile, lambda operand_dot, ans, operand, reps: lax.tile(operand_dot, reps))
defvjp(lax.tile, lambda g, ans, operand, reps: slicing.tile_bar(g, operand, reps))
defjvp(lax.full, None, lambda fill_value_dot, ans, shape, fill_value, dtype=None:
       lax.full(shape, fill_value_dot, jnp.result_type(ans)))
defvjp(lax.full, None, lambda g, ans, shape, fill_value, dtype=None:
       ad.cotangent_astype(jnp.sum(g), fill_value))
defjvp(lax.full_like, None, lambda fill_value_dot, ans, x, fill_value, dtype=None, shape=None:
       lax.full(jnp.shape(ans), fill_value_dot, jnp.result_type(ans)))
defvjp(lax.full_like, None, lambda g, ans, x, fill_value, dtype=None, shape=None:
       ad.cotangent_astype(jnp.sum(g), fill_value))
defstatic(lax.full_like, "x")
defjvp(lax.reciprocal, lambda x_dot, ans, x: -(x_dot * ans * ans))
defvjp(lax.reciprocal, lambda g, ans, x: -(g * ans * ans))
defjvp(lax.batch_matmul,
       lambda lhs_dot, ans, lhs, rhs, precision=None: lax.batch_matmul(lhs_dot, rhs),
       lambda rhs_dot, ans, lhs, rhs, precision=None: lax.batch_matmul(lhs, rhs_dot))
defvjp(lax.batch_matmul,
       lambda g, ans, lhs, rhs, precision=None: lax.batch_matmul(g, jnp.swapaxes(rhs, -1, -2)),
       lambda g, ans, lhs, rhs, precision=None: lax.batch_matmul(jnp.swapaxes(lhs, -1, -2), g))

for _fn in (lax.dtype, lax.broadcast_shapes, lax.padtype_to_pads, lax.conv_general_permutations,
            lax.conv_general_shape_tuple, lax.conv_shape_tuple, lax.conv_transpose_shape_tuple,
            lax.reduce_window_shape_tuple):
    defnondiff(_fn, "shape arithmetic: its result is static ints, not an array")
defnondiff(lax.reduce_xor, "a bitwise reduction of integers or bools")

# ---- reduce_window and reduce -------------------------------------------------------------------

defjvp(lax.reduce_window, lambda operand_dot, ans, operand, init_value, computation,
       window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None:
       windows.reduce_window_jvp(operand, operand_dot, init_value,
                                 windows.kind_name(computation, "lax.reduce_window"),
                                 window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation))
defvjp(lax.reduce_window, lambda g, ans, operand, init_value, computation, window_dimensions,
       window_strides, padding, base_dilation=None, window_dilation=None:
       windows.reduce_window_vjp(g, operand, init_value,
                                 windows.kind_name(computation, "lax.reduce_window"),
                                 window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation))


def reduce_tangent(kind: str, x, x_dot, init, ans, dimensions):
    """The tangent of lax.reduce(x, init, <kind>, dimensions) along x_dot."""
    axes = windows.reduce_axes(jnp.shape(x), dimensions)
    if kind == "add":
        return lax.reduce_sum(x_dot, axes)
    if kind == "mul":
        return lax.reduce_sum(x_dot * lad.prod_others(x, axes), axes) * init
    if kind == "max" or kind == "min":
        return lax.reduce_sum(x_dot * ad.argext_mask(x, ans, axes, False), axes)
    return ad.zeros_like(ans)


def reduce_cotangent(kind: str, g, x, init, ans, dimensions):
    """The cotangent of lax.reduce's operand for the output cotangent g."""
    axes = windows.reduce_axes(jnp.shape(x), dimensions)
    if kind == "add":
        return ad.unsum(g, x, axes, False)
    if kind == "mul":
        return ad.unsum(g * init, x, axes, False) * lad.prod_others(x, axes)
    if kind == "max" or kind == "min":
        return ad.unsum(g, x, axes, False) * ad.argext_mask(x, ans, axes, False)
    return ad.zeros_like(x)


defjvp(lax.reduce, lambda operands_dot, ans, operands, init_values, computation, dimensions:
       reduce_tangent(windows.kind_name(computation, "lax.reduce"), operands, operands_dot,
                      init_values, ans, dimensions))
defvjp(lax.reduce, lambda g, ans, operands, init_values, computation, dimensions:
       reduce_cotangent(windows.kind_name(computation, "lax.reduce"), g, operands,
                        init_values, ans, dimensions))

# ---- scans -----------------------------------------------------------------------------------


def _logsumexp_coefficients(operand, ans, axis, reverse):
    """y[i] = logaddexp(y[i-1], x[i]), so y_dot[i] = a[i] y_dot[i-1] + b[i] x_dot[i] with
    a = exp(y[i-1] - y[i]) and b = exp(x[i] - y[i])."""
    a = jnp.exp(lad.shift(ans, axis, reverse, -np.inf) - ans)
    return a, jnp.exp(operand - ans)


def cumlogsumexp_tangent(operand, operand_dot, ans, axis, reverse):
    a, b = _logsumexp_coefficients(operand, ans, axis, reverse)
    return lad.linear_recurrence(a, b * operand_dot, axis, reverse)


def cumlogsumexp_cotangent(g, operand, ans, axis, reverse):
    """The transpose of the recurrence: run backwards with the coefficients shifted."""
    a, b = _logsumexp_coefficients(operand, ans, axis, reverse)
    return b * lad.linear_recurrence(lad.shift(a, axis, not reverse), g, axis, not reverse)


defjvp(lax.cumlogsumexp, lambda operand_dot, ans, operand, axis=0, reverse=False:
       cumlogsumexp_tangent(operand, operand_dot, ans, axis, reverse))
defvjp(lax.cumlogsumexp, lambda g, ans, operand, axis=0, reverse=False:
       cumlogsumexp_cotangent(g, operand, ans, axis, reverse))


def scan_tangent(kind: str, x, x_dot, ans, reverse, axis):
    """The tangent of associative_scan(<kind>, x) along x_dot (as lax.cumsum/cumprod/
    cummax/cummin/cumlogsumexp's rules give it)."""
    if kind == "add":
        return lax.cumsum(x_dot, axis, reverse)
    if kind == "mul":
        return lad.linear_recurrence(x, lad.shift(ans, axis, reverse, 1.0) * x_dot, axis,
                                     reverse)
    if kind == "max" or kind == "min":
        return lad.take_along(x_dot, lad.cumulative_source(x, ans, axis, reverse), axis)
    if kind == "logaddexp":
        return cumlogsumexp_tangent(x, x_dot, ans, axis, reverse)
    return ad.zeros_like(ans)


def scan_cotangent(kind: str, g, x, ans, reverse, axis):
    """The cotangent of associative_scan's elems for the output cotangent g."""
    if kind == "add":
        return lax.cumsum(g, axis, not reverse)
    if kind == "mul":
        return lad.shift(ans, axis, reverse, 1.0) * lad.linear_recurrence(
            lad.shift(x, axis, not reverse), g, axis, not reverse)
    if kind == "max" or kind == "min":
        return lad.take_along_bar(g, x, lad.cumulative_source(x, ans, axis, reverse), axis)
    if kind == "logaddexp":
        return cumlogsumexp_cotangent(g, x, ans, axis, reverse)
    return ad.zeros_like(x)


defjvp(lax.associative_scan, None, lambda elems_dot, ans, fn, elems, reverse=False, axis=0:
       scan_tangent(windows.kind_name(fn, "lax.associative_scan"), elems, elems_dot, ans,
                    reverse, axis))
defvjp(lax.associative_scan, None, lambda g, ans, fn, elems, reverse=False, axis=0:
       scan_cotangent(windows.kind_name(fn, "lax.associative_scan"), g, elems, ans, reverse,
                      axis))

# ---- sorting: gathers along an axis ------------------------------------------------------------

defjvp(lax.sort_key_val,
       lambda keys_dot, ans, keys, values, dimension=-1, is_stable=True: [
           lad.take_along(keys_dot, lax.argsort(keys, dimension), dimension),
           ad.zeros_like(ans[1])],
       lambda values_dot, ans, keys, values, dimension=-1, is_stable=True: [
           ad.zeros_like(ans[0]),
           lad.take_along(values_dot, lax.argsort(keys, dimension), dimension)])
defjvp_joint(lax.sort_key_val,  # (the two outputs' tangents, not a sum of two pairs)
             lambda keys_dot, values_dot, ans, keys, values, dimension=-1, is_stable=True: [
                 lad.take_along(keys_dot, lax.argsort(keys, dimension), dimension),
                 lad.take_along(values_dot, lax.argsort(keys, dimension), dimension)],
             ("keys", "values"))
defvjp(lax.sort_key_val,
       lambda g, ans, keys, values, dimension=-1, is_stable=True:
       lad.take_along_bar(g[0], keys, lax.argsort(keys, dimension), dimension),
       lambda g, ans, keys, values, dimension=-1, is_stable=True:
       lad.take_along_bar(g[1], values, lax.argsort(keys, dimension), dimension))
defjvp(lax.top_k, lambda operand_dot, ans, operand, k: (
    lad.take_along(operand_dot, ans[1], -1), ad.zeros_like(ans[1])))
defvjp(lax.top_k, lambda g, ans, operand, k: lad.take_along_bar(g[0], operand, ans[1], -1))
for _op in (lax.approx_max_k, lax.approx_min_k):
    defjvp(_op, lambda operand_dot, ans, operand, k, reduction_dimension=-1, recall_target=0.95,
           reduction_input_size_override=-1, aggregate_to_topk=True: (
               lad.take_along(operand_dot, ans[1], reduction_dimension),
               ad.zeros_like(ans[1])))
    defvjp(_op, lambda g, ans, operand, k, reduction_dimension=-1, recall_target=0.95,
           reduction_input_size_override=-1, aggregate_to_topk=True:
           lad.take_along_bar(g[0], operand, ans[1], reduction_dimension))

# ---- Bessel functions (redraft/lax/special.py) ---------------------------------------------------


def bessel_i1e_slope(x, ans):
    """d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 at x = 0 (where 1/x would be
    infinite: x is replaced by a stand-in there, as JAX does)."""
    tiny = jnp.abs(x) <= jnp.finfo(jnp.result_type(x)).eps
    safe = jnp.where(tiny, jnp.ones_like(x), x)
    slope = lax.bessel_i0e(safe) - ans * (jnp.sign(safe) + 1 / safe)
    return jnp.where(tiny, 0.5, slope)


defjvp(lax.bessel_i0e, lambda x_dot, ans, x: x_dot * (lax.bessel_i1e(x) - jnp.sign(x) * ans))
defvjp(lax.bessel_i0e, lambda g, ans, x: g * (lax.bessel_i1e(x) - jnp.sign(x) * ans))
defjvp(lax.bessel_i1e, lambda x_dot, ans, x: x_dot * bessel_i1e_slope(x, ans))
defvjp(lax.bessel_i1e, lambda g, ans, x: g * bessel_i1e_slope(x, ans))

# ---- jnp.polydiv's trimming reads values ------------------------------------------------------

from redraft.numpy import polynomial_roots  # noqa: E402

defnondiff(polynomial_roots.leading_zero_count, "counts zero coefficients: an int")

# ---- scatter_sub (redraft/lax/scatter_updates.py): scatter_add's rules, negated in the updates


def scatter_sub_updates_bar(g, operand, scatter_indices, updates, dimension_numbers,
                            indices_are_sorted, unique_indices, mode):
    """Minus g read at each update window (zero where the window was dropped)."""
    return -lax.gather(g, scatter_indices, lad.scatter_to_gather_dnums(dimension_numbers),
                       lad.scatter_slice_sizes(operand, updates, dimension_numbers),
                       unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                       mode=lad.scatter_bar_mode(mode), fill_value=0)


defjvp(lax.scatter_sub,
       lambda operand_dot, ans, operand, scatter_indices, updates, dimension_numbers,
       indices_are_sorted=False, unique_indices=False, mode=None: operand_dot,
       None,
       lambda updates_dot, ans, operand, scatter_indices, updates, dimension_numbers,
       indices_are_sorted=False, unique_indices=False, mode=None:
       lax.scatter_sub(jnp.zeros_like(ans), scatter_indices, updates_dot, dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode))
defjvp_joint(lax.scatter_sub,
             lambda operand_dot, updates_dot, ans, operand, scatter_indices, updates,
             dimension_numbers, indices_are_sorted=False, unique_indices=False, mode=None:
             lax.scatter_sub(operand_dot, scatter_indices, updates_dot, dimension_numbers,
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode),
             ("operand", "updates"))
defvjp(lax.scatter_sub,
       lambda g, ans, operand, scatter_indices, updates, dimension_numbers,
       indices_are_sorted=False, unique_indices=False, mode=None: g,
       None,
       lambda g, ans, operand, scatter_indices, updates, dimension_numbers,
       indices_are_sorted=False, unique_indices=False, mode=None:
       scatter_sub_updates_bar(g, operand, scatter_indices, updates, dimension_numbers,
                               indices_are_sorted, unique_indices, mode))
defstatic(lax.scatter_sub, "scatter_indices")
