"""Helpers that derivative rules of lax and redraft.numpy functions call (`lad.shift(...)`).

Three kinds; rules/lax_elementwise.py, rules/lax_structure.py and rules/jnp_extra.py
register them:

- static helpers compute parameters from shapes and static arguments (a permutation, a
  padding config, dimension numbers) or piecewise-constant masks; they are marked not
  differentiable;
- array helpers (`shift`, `linear_recurrence`, `take_along`, `conv_lhs_bar`, ...) have
  their own jvp and vjp rules, written again with these helpers and lax functions, so
  derivative code can be differentiated to any order;
- `prod_others` is a Core function with no rules: the AD transforms its source like user
  code, and every operation in it has rules.
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives import conv as conv_prims
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis
from redraft.compiler.primitives.gather import (GatherDimensionNumbers, GatherScatterMode,
                                                ScatterDimensionNumbers)
from redraft.runtime.convert import as_array

# ---- elementwise ---------------------------------------------------------------------------------

_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def polygamma(n: int, x):
    """psi^(n)(x) for n >= 1: (-1)^(n+1) n! zeta(n + 1, x), by shifting x up past 10 with
    the recurrence, then the asymptotic series of the Hurwitz zeta function. Accurate for
    x > -10 away from the poles at non-positive integers."""
    n = int(n)
    if n < 1:
        raise ValueError(f"polygamma helper needs n >= 1 (n = 0 is lax.digamma), got {n}")
    x = as_array(x)
    s = n + 1
    z = x
    acc = jnp.zeros_like(x)
    for _ in range(20):
        small = z < 10.0
        acc = acc + jnp.where(small, jnp.power(jnp.where(small, z, 1.0), -s), 0.0)
        z = jnp.where(small, z + 1.0, z)
    tail = jnp.power(z, 1 - s) / (s - 1) + 0.5 * jnp.power(z, -s)
    rising = float(s)  # s (s + 1) ... (s + 2j - 2), the rising factorial of length 2j - 1
    for j, b in enumerate(_BERNOULLI, start=1):
        if j > 1:
            rising *= (s + 2 * j - 3) * (s + 2 * j - 2)
        tail = tail + b / math.factorial(2 * j) * rising * jnp.power(z, -s - 2 * j + 1)
    sign = 1.0 if n % 2 == 1 else -1.0
    return (sign * math.factorial(n) * (acc + tail)).astype(x.dtype)


def trunc_quotient(x, y):
    """x / y rounded toward zero (what lax.rem's derivative in y needs); piecewise constant."""
    q = lax.div(x, y)
    return lax.mul(lax.sign(q), lax.floor(lax.abs(q)))


def clamp_weights(lo, x, hi):
    """(d clamp/d lo, d clamp/d x, d clamp/d hi) as 0/1 masks, broadcast to the result."""
    x = as_array(x)
    below = jnp.less(x, lo)
    above = jnp.greater(x, hi)
    one = jnp.ones((), x.dtype)
    zero = jnp.zeros((), x.dtype)
    w_lo = jnp.where(below, one, zero)
    w_hi = jnp.where(above & ~below, one, zero)
    w_x = jnp.where(below | above, zero, one)
    return w_lo, w_x, w_hi


def is_inexact(x) -> bool:
    return as_array(x).dtype.kind in "fc"


def drops_imaginary(g, x) -> bool:
    """Whether a complex cotangent flows back to a real operand (keep its real part)."""
    return as_array(g).dtype.kind == "c" and as_array(x).dtype.kind != "c"


def complex_like(g, x):
    """g cast to x's (complex) dtype: the cotangent of lax.real."""
    return lax.convert_element_type(g, as_array(x).dtype)


# ---- static parameters ---------------------------------------------------------------------------

def inverse_permutation(permutation) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(permutation))


def broadcast_in_dim_sum_axes(operand, shape, broadcast_dimensions) -> tuple[int, ...]:
    """Axes of a broadcast_in_dim result that its cotangent must be summed over."""
    in_shape = np.shape(operand)
    kept = {dst: in_shape[src] for src, dst in enumerate(broadcast_dimensions)}
    return tuple(axis for axis, size in enumerate(shape)
                 if axis not in kept or (kept[axis] == 1 and size != 1))


def slice_padding(operand, start_indices, limit_indices, strides, out) -> tuple:
    """The padding config that puts a slice's cotangent back where the slice came from."""
    shape, out_shape = np.shape(operand), np.shape(out)
    strides = (1,) * len(shape) if strides is None else tuple(strides)
    config = []
    for d, lo, n, st in zip(shape, start_indices, out_shape, strides):
        used = 0 if n == 0 else 1 + (n - 1) * st
        config.append((int(lo), int(d - lo - used), int(st - 1) if n > 1 else 0))
    return tuple(config)


def negated_padding(padding_config) -> tuple:
    return tuple((-int(lo), -int(hi), 0) for lo, hi, _ in padding_config)


def shift_padding(ndim: int, axis: int, reverse: bool, amount: int = 1) -> tuple:
    """Config of a pad that shifts `amount` places along `axis`, keeping the size."""
    config = [(0, 0, 0)] * ndim
    config[axis] = (-amount, amount, 0) if reverse else (amount, -amount, 0)
    return tuple(config)


def reduced_axes_last(x, axes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(permutation moving `axes` to the end, shape with them merged into one axis)."""
    shape = np.shape(x)
    axes = tuple(sorted(int(a) % len(shape) for a in axes)) if shape else ()
    kept = tuple(a for a in range(len(shape)) if a not in axes)
    merged = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    return kept + axes, tuple(shape[a] for a in kept) + (merged,)


def permuted_shape(x, permutation) -> tuple[int, ...]:
    shape = np.shape(x)
    return tuple(shape[p] for p in permutation)


def argsort_inverse(operand, dimension: int):
    """For each sorted position, where its element came from; and the inverse (where each
    element went), as int32 arrays (sort is stable, so ties keep their order)."""
    order = lax.argsort(operand, dimension)
    return order, lax.argsort(order, dimension)


def cumulative_source(operand, ans, axis: int, reverse: bool):
    """For cummax/cummin: the index along `axis` of the element each result equals (the
    latest record so far; ties take the later element)."""
    x = as_array(operand)
    axis = canonical_axis(axis, x.ndim, "cumulative")
    n = x.shape[axis]
    positions = lax.broadcasted_iota(np.int32, x.shape, axis)
    record = jnp.equal(x, ans)
    if reverse:
        return lax.cummin(jnp.where(record, positions, n - 1), axis, reverse=True)
    return lax.cummax(jnp.where(record, positions, 0), axis)


# ---- shifts and linear recurrences ---------------------------------------------------------------

def shift(x, axis: int, reverse: bool, fill=0.0):
    """x moved one place along `axis` (toward higher indices; lower if `reverse`), with
    `fill` in the vacated slot: y[i] = x[i - 1], y[0] = fill."""
    x = as_array(x)
    axis = canonical_axis(axis, x.ndim, "shift")
    if x.shape[axis] == 0:
        return x
    fill_value = as_array(np.asarray(fill, x.dtype))
    return lax.pad(x, fill_value, shift_padding(x.ndim, axis, reverse))


def linear_recurrence(a, b, axis: int, reverse: bool):
    """h[i] = a[i] * h[i - 1] + b[i] along `axis`, h[-1] = 0 (from the end if `reverse`).

    A Hillis-Steele scan over the affine maps h -> a h + b: log2(n) steps of
    multiplications and shifts, no division, so zeros in `a` are harmless."""
    a, b = as_array(a), as_array(b)
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    axis = canonical_axis(axis, len(shape), "linear_recurrence")
    n = shape[axis] if shape else 1
    one = as_array(np.asarray(1, a.dtype))
    zero = as_array(np.asarray(0, b.dtype))
    step = 1
    while step < n:
        config = shift_padding(len(shape), axis, reverse, step)
        a_prev, b_prev = lax.pad(a, one, config), lax.pad(b, zero, config)
        a, b = lax.mul(a, a_prev), lax.add(lax.mul(a, b_prev), b)
        step *= 2
    return b


# ---- gathering along an axis ---------------------------------------------------------------------

def _along_axis_index(shape, indices, axis: int) -> tuple:
    """The NumPy index of take_along_axis: `indices` on `axis`, broadcast iotas elsewhere."""
    idx_shape = np.shape(indices)
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(indices)
        else:
            view = [1] * len(shape)
            view[d] = shape[d] if idx_shape[d] != 1 else 1
            index.append(lax.broadcasted_iota(np.int32, tuple(view), d))
    return tuple(index)


def take_along(x, indices, axis):
    """jnp.take_along_axis(x, indices, axis) (axis None: along the flattened x)."""
    return jnp.take_along_axis(x, indices, axis)


def take_along_bar(g, x, indices, axis, mode=None):
    """The cotangent of take_along_axis(x, indices, axis, mode): g added back at the
    indices (clamped with mode 'clip'; out-of-bounds ones, filled reads, dropped)."""
    x = as_array(x)
    if axis is None:
        flat = take_along_bar(g, jnp.reshape(x, (x.size,)), indices, 0, mode)
        return jnp.reshape(flat, x.shape)
    axis = canonical_axis(axis, x.ndim, "take_along_axis")
    zeros = jnp.zeros(x.shape, as_array(g).dtype)
    index = _along_axis_index(x.shape, as_array(indices), axis)
    return zeros.at[index].add(g, mode="clip" if mode == "clip" else "drop")


# ---- gather and scatter --------------------------------------------------------------------------

def gather_to_scatter_dnums(dn) -> ScatterDimensionNumbers:
    """The scatter that adds a gather's cotangent back into the operand."""
    return ScatterDimensionNumbers(
        update_window_dims=tuple(dn.offset_dims),
        inserted_window_dims=tuple(dn.collapsed_slice_dims),
        scatter_dims_to_operand_dims=tuple(dn.start_index_map),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=tuple(dn.start_indices_batching_dims))


def scatter_to_gather_dnums(dn) -> GatherDimensionNumbers:
    """The gather that reads a scatter's cotangent at the updated windows."""
    return GatherDimensionNumbers(
        offset_dims=tuple(dn.update_window_dims),
        collapsed_slice_dims=tuple(dn.inserted_window_dims),
        start_index_map=tuple(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        start_indices_batching_dims=tuple(dn.scatter_indices_batching_dims))


def scatter_slice_sizes(operand, updates, dn) -> tuple[int, ...]:
    """The window of each update, as gather slice sizes (1 on inserted/batching axes)."""
    sizes = iter(np.shape(updates)[d] for d in dn.update_window_dims)
    absent = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return tuple(1 if axis in absent else next(sizes) for axis in range(np.ndim(operand)))


def gather_bar_mode(mode) -> GatherScatterMode:
    """A gather that clamps (CLIP, PROMISE_IN_BOUNDS) transposes to a clamping scatter."""
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                      else mode)
    return GatherScatterMode.FILL_OR_DROP if mode is GatherScatterMode.FILL_OR_DROP else (
        GatherScatterMode.CLIP)


def scatter_bar_mode(mode) -> GatherScatterMode:
    """A scatter that drops (FILL_OR_DROP, PROMISE_IN_BOUNDS) transposes to a filling gather."""
    mode = GatherScatterMode.from_any(mode)
    return GatherScatterMode.CLIP if mode is GatherScatterMode.CLIP else (
        GatherScatterMode.FILL_OR_DROP)


def scatter_winners(operand, scatter_indices, updates, dimension_numbers, mode):
    """1.0 where an update of lax.scatter lands in the result (the last write of repeated
    indices wins; dropped updates lose), else 0.0; shaped like `updates`."""
    updates = as_array(updates)
    ids = jnp.reshape(jnp.arange(updates.size, dtype=np.int32), updates.shape)
    board = jnp.full(np.shape(operand), -1, np.int32)
    board = lax.scatter(board, scatter_indices, ids, dimension_numbers, mode=mode)
    back = lax.gather(board, scatter_indices, scatter_to_gather_dnums(dimension_numbers),
                      scatter_slice_sizes(operand, updates, dimension_numbers),
                      mode=scatter_bar_mode(mode), fill_value=-2)
    return jnp.where(jnp.equal(back, ids), 1.0, 0.0).astype(updates.dtype)


def scatter_extremum_weights(ans, operand, scatter_indices, updates, dimension_numbers, mode):
    """For scatter_min/max: (operand weight, updates weight), the share of the derivative
    each contributor gets (contributors equal to the result share it equally)."""
    operand, updates = as_array(operand), as_array(updates)
    gather_dn = scatter_to_gather_dnums(dimension_numbers)
    sizes = scatter_slice_sizes(operand, updates, dimension_numbers)
    at_updates = lax.gather(ans, scatter_indices, gather_dn, sizes,
                            mode=scatter_bar_mode(mode), fill_value=np.nan)
    hit_operand = jnp.where(jnp.equal(operand, ans), 1.0, 0.0).astype(operand.dtype)
    hit_updates = jnp.where(jnp.equal(updates, at_updates), 1.0, 0.0).astype(updates.dtype)
    count = lax.scatter_add(hit_operand, scatter_indices, hit_updates, dimension_numbers,
                            mode=mode)
    count = jnp.maximum(count, 1.0)
    at_count = lax.gather(count, scatter_indices, gather_dn, sizes,
                          mode=scatter_bar_mode(mode), fill_value=1.0)
    return hit_operand / count, hit_updates / at_count


def at_multiply_others(x, idx, v):
    """For x.at[idx].multiply(v): for each update, x times every other update of its
    position (d ans / d v), without dividing by v, so an update of 0 gets it right."""
    x = jnp.asarray(x)
    v = jnp.broadcast_to(jnp.asarray(v).astype(x.dtype), jnp.shape(x[idx]))
    zero = jnp.equal(v, 0)
    nonzero = jnp.where(zero, 1, v).astype(x.dtype)
    product = x.at[idx].multiply(nonzero)
    zeros = jnp.zeros(x.shape, np.int32).at[idx].add(zero.astype(np.int32))
    at_product = product.at[idx].get(mode="fill", fill_value=0)
    at_zeros = zeros.at[idx].get(mode="fill", fill_value=0)
    return jnp.where(zero, jnp.where(at_zeros == 1, at_product, 0),
                     jnp.where(at_zeros == 0, at_product / nonzero, 0))


def at_extremum_weights(ans, x, idx, v):
    """For x.at[idx].min(v) / .max(v): (x weight, v weight), the derivative's share of each
    contributor equal to the result (ties share equally); v's weight is shaped like x[idx]."""
    x = as_array(x)
    ans = as_array(ans)
    at_idx = ans[idx]
    hit_x = jnp.where(jnp.equal(x, ans), 1.0, 0.0).astype(x.dtype)
    hit_v = jnp.where(jnp.equal(v, at_idx), 1.0, 0.0).astype(x.dtype)
    hit_v = jnp.broadcast_to(hit_v, jnp.broadcast_shapes(hit_v.shape, at_idx.shape))
    count = jnp.maximum(hit_x.at[idx].add(hit_v), 1.0)
    return hit_x / count, hit_v / count[idx]


# ---- dynamic slices ------------------------------------------------------------------------------

def dynamic_index_bar(g, operand, index, axis: int, keepdims: bool):
    """The cotangent of lax.dynamic_index_in_dim: g written into zeros at `index`."""
    x = as_array(operand)
    axis = canonical_axis(axis, x.ndim, "dynamic_index_in_dim")
    g = as_array(g)
    if not keepdims:
        g = lax.expand_dims(g, (axis,))
    starts = [0] * x.ndim
    starts[axis] = index
    return lax.dynamic_update_slice(jnp.zeros(x.shape, g.dtype), g, starts)


# ---- convolution ---------------------------------------------------------------------------------

def conv_params(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                dimension_numbers=None, feature_group_count=1, batch_group_count=1) -> dict:
    """conv_general_dilated's arguments in the explicit form the primitive stores."""
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = conv_prims.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    lhs_dilation = (1,) * n if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * n if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    window_strides = tuple(int(s) for s in window_strides)
    lhs_c = tuple(lhs_shape[a] for a in dnums.lhs_spec)
    rhs_c = tuple(rhs_shape[a] for a in dnums.rhs_spec)
    pads = conv_prims._explicit_padding(padding, lhs_c, rhs_c, window_strides, lhs_dilation,
                                        rhs_dilation)
    return dict(window_strides=window_strides, padding=pads, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dnums,
                feature_group_count=int(feature_group_count),
                batch_group_count=int(batch_group_count))


def _split_axis(x, axis: int, groups: int):
    """Axis `axis` of size groups * k becomes two axes (groups, k)."""
    shape = list(np.shape(x))
    shape[axis:axis + 1] = [groups, shape[axis] // groups]
    return lax.reshape(x, tuple(shape))


def _merge_axis(x, src: int, dst: int):
    """Axis `src` folded into axis `dst` (numbered without `src`), `src` the major part."""
    shape = list(np.shape(x))
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    size = shape[src]
    del shape[src]
    shape[dst] *= size
    return lax.reshape(x, tuple(shape), perm)


def _dilated(sizes, dilation) -> list[int]:
    return [conv_prims.dilate_dim(s, d) for s, d in zip(sizes, dilation)]


def conv_lhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                 dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    """The cotangent of conv_general_dilated's lhs: g convolved with the spatially reversed
    kernel, in/out features swapped, strides and lhs dilation exchanged."""
    p = conv_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                    dimension_numbers, feature_group_count, batch_group_count)
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    groups, batch_groups = p["feature_group_count"], p["batch_group_count"]
    g = as_array(g)
    kernel = as_array(rhs)
    lhs_shape, rhs_shape = np.shape(lhs), kernel.shape
    if groups > 1 or batch_groups > 1:
        kernel = _split_axis(kernel, rhs_spec[0], max(groups, batch_groups))
        kernel = _merge_axis(kernel, rhs_spec[0], rhs_spec[1])
        groups = max(groups, batch_groups)
    t_rhs_spec = (rhs_spec[1], rhs_spec[0]) + tuple(rhs_spec[2:])
    dnums = conv_prims.ConvDimensionNumbers(tuple(out_spec), t_rhs_spec, tuple(lhs_spec))
    lhs_sizes = _dilated([lhs_shape[a] for a in lhs_spec[2:]], p["lhs_dilation"])
    rhs_sizes = _dilated([rhs_shape[a] for a in rhs_spec[2:]], p["rhs_dilation"])
    out_sizes = _dilated([g.shape[a] for a in out_spec[2:]], p["window_strides"])
    pads = []
    for (lo, _), li, ri, oi in zip(p["padding"], lhs_sizes, rhs_sizes, out_sizes):
        before = ri - lo - 1
        pads.append((before, li + ri - 1 - oi - before))
    out = lax.conv_general_dilated(g, lax.rev(kernel, tuple(rhs_spec[2:])), p["lhs_dilation"],
                                   tuple(pads), p["window_strides"], p["rhs_dilation"],
                                   dnums, groups, 1)
    if batch_groups > 1:
        out = _split_axis(out, lhs_spec[1], batch_groups)
        out = _merge_axis(out, lhs_spec[1], lhs_spec[0])
    return out


def conv_rhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                 dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    """The cotangent of conv_general_dilated's rhs: lhs convolved with g, batch and feature
    axes exchanged (feature groups become batch groups and back)."""
    p = conv_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                    dimension_numbers, feature_group_count, batch_group_count)
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    g = as_array(g)
    x = as_array(lhs)
    rhs_shape = np.shape(rhs)
    groups, batch_groups = p["batch_group_count"], p["feature_group_count"]

    def swapped(spec):
        return (spec[1], spec[0]) + tuple(spec[2:])

    dnums = conv_prims.ConvDimensionNumbers(swapped(lhs_spec), swapped(out_spec),
                                            swapped(rhs_spec))
    lhs_sizes = _dilated([x.shape[a] for a in lhs_spec[2:]], p["lhs_dilation"])
    rhs_sizes = _dilated([rhs_shape[a] for a in rhs_spec[2:]], p["rhs_dilation"])
    out_sizes = _dilated([g.shape[a] for a in out_spec[2:]], p["window_strides"])
    pads = []
    for (lo, _), li, ri, oi in zip(p["padding"], lhs_sizes, rhs_sizes, out_sizes):
        pads.append((lo, oi - li + ri - lo - 1))
    return lax.conv_general_dilated(x, g, p["rhs_dilation"], tuple(pads), p["lhs_dilation"],
                                    p["window_strides"], dnums, groups, batch_groups)


def conv_transpose_kernel(rhs, dimension_numbers, transpose_kernel: bool, lhs=None):
    """The kernel conv_transpose hands to conv_general_dilated (flipped and with in/out
    features swapped when `transpose_kernel`); the map is its own inverse."""
    rhs = as_array(rhs)
    if not transpose_kernel:
        return rhs
    dnums = conv_transpose_dnums(lhs if lhs is not None else rhs, rhs, dimension_numbers)
    flipped = lax.rev(rhs, tuple(dnums.rhs_spec[2:]))
    perm = list(range(rhs.ndim))
    o_axis, i_axis = dnums.rhs_spec[:2]
    perm[o_axis], perm[i_axis] = i_axis, o_axis
    return lax.transpose(flipped, tuple(perm))


def conv_transpose_dnums(lhs, rhs, dimension_numbers):
    shape = np.shape(lhs)
    if dimension_numbers is None:
        dimension_numbers = conv_prims._TRANSPOSE_LAYOUTS[len(shape)]
    return conv_prims.conv_dimension_numbers(shape, np.shape(rhs), dimension_numbers)


def conv_transpose_params(lhs, rhs, strides, padding, rhs_dilation=None,
                          dimension_numbers=None) -> tuple:
    """(window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers) of the
    conv_general_dilated that lax.conv_transpose runs."""
    dnums = conv_transpose_dnums(lhs, rhs, dimension_numbers)
    n = len(np.shape(lhs)) - 2
    rhs_dilation = (1,) * n if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    kernel = [np.shape(rhs)[a] for a in dnums.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = tuple(conv_prims._conv_transpose_padding(conv_prims.dilate_dim(k, d), s,
                                                        padding)
                     for k, d, s in zip(kernel, rhs_dilation, strides))
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    return (1,) * n, pads, tuple(int(s) for s in strides), rhs_dilation, dnums


def pad_bar(g, padding_config):
    """The cotangent of lax.pad's operand: the padding cut off (negative padding, which
    cropped the operand, becomes zeros) and interior padding stepped over."""
    g = as_array(g)
    zero = as_array(np.asarray(0, g.dtype))
    unpadded = lax.pad(g, zero, negated_padding(padding_config))
    strides = tuple(int(interior) + 1 for _, _, interior in padding_config)
    return lax.slice(unpadded, (0,) * g.ndim, unpadded.shape, strides)


# ---- products over axes --------------------------------------------------------------------------

def prod_others(x, axes):
    """For each element, the product of the other elements reduced with it over `axes`
    (what a product's derivative needs), from exclusive cumulative products: no division,
    so zeros are fine. A Core function without rules of its own: the AD differentiates its
    source, and every operation in it has division-free rules."""
    layout = reduced_axes_last(x, axes)
    flat = lax.reshape(lax.transpose(x, layout[0]), layout[1])
    before = shift(lax.cumprod(flat, -1), -1, False, 1.0)
    after = shift(lax.cumprod(flat, -1, True), -1, True, 1.0)
    moved = lax.reshape(before * after, permuted_shape(x, layout[0]))
    return lax.transpose(moved, inverse_permutation(layout[0]))


# ---- static parameters of redraft.numpy functions ------------------------------------------------

def refuse_if(condition, what: str, value):
    """`value`, unless `condition`: then the rules do not cover the call `what`."""
    if condition:
        raise NotImplementedError(f"derivatives of {what} are not implemented")
    return value


def reduction_axes(a, axis) -> tuple[int, ...]:
    """jnp's `axis` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    return canonical_axes(axis, np.ndim(a), "reduction")


def degrees_of_freedom(a, axis, ddof) -> float:
    """The divisor of var/std: the number of reduced elements less `ddof`."""
    shape = np.shape(a)
    count = int(np.prod([shape[i] for i in reduction_axes(a, axis)], dtype=np.int64))
    return float(count - ddof)


def flat_if_none(a, axis) -> tuple[int, ...]:
    """The shape jnp's cumulative and sorting functions work in: flat when axis is None."""
    return (int(np.size(a)),) if axis is None else tuple(np.shape(a))


def axis_or_zero(axis) -> int:
    return 0 if axis is None else axis


def negated(shift_amount):
    """-shift for jnp.roll's int or tuple shifts."""
    if isinstance(shift_amount, (tuple, list)):
        return tuple(-int(s) for s in shift_amount)
    return -int(shift_amount)


def tile_layout(a, reps) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape splitting each tiled axis into (reps, size), the reps axes to sum over)."""
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    shape = tuple(np.shape(a))
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    split = tuple(n for pair in zip(reps, shape) for n in pair)
    return split, tuple(range(0, 2 * ndim, 2))


def tensordot_axes(a, b, axes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """jnp.tensordot's `axes` (an int or a pair) as two tuples of non-negative axes."""
    a_ndim, b_ndim = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return tuple(range(a_ndim - n, a_ndim)), tuple(range(n))
    a_axes, b_axes = axes
    a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
    return (tuple(int(i) % a_ndim for i in a_axes), tuple(int(i) % b_ndim for i in b_axes))


def tensordot_bar_spec(a, b, axes, which: int) -> tuple:
    """(axes, permutation): the cotangent of tensordot's operand `which` (0: a, 1: b) is
    transpose(tensordot(g, b, axes), perm) or transpose(tensordot(a, g, axes), perm)."""
    a_axes, b_axes = tensordot_axes(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    n_a = len(a_free)
    if which == 0:  # g's b-free axes against b's free axes: (a free..., b contracted sorted)
        g_axes = tuple(range(n_a, n_a + len(b_free)))
        contracted = sorted(range(len(b_axes)), key=lambda k: b_axes[k])
        order = a_free + [a_axes[k] for k in contracted]
        return (g_axes, tuple(b_free)), inverse_permutation(order)
    g_axes = tuple(range(n_a))  # a's free axes against g's a-free axes: (a contracted sorted..)
    contracted = sorted(range(len(a_axes)), key=lambda k: a_axes[k])
    order = [b_axes[k] for k in contracted] + b_free
    return (tuple(a_free), g_axes), inverse_permutation(order)


def inner_axes(a, b) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """jnp.inner as a tensordot: the last axis of each."""
    return ((max(np.ndim(a) - 1, 0),), (max(np.ndim(b) - 1, 0),))


def euclidean_norm_axis(x, ord, axis):
    """`axis` after checking that the norm is the Euclidean/Frobenius one (the only one
    with rules here)."""
    ndim_reduced = np.ndim(x) if axis is None else (
        1 if isinstance(axis, (int, np.integer)) else len(axis))
    if ord is None or ord == "fro" or (ord == 2 and ndim_reduced == 1):
        return axis
    raise NotImplementedError(f"derivatives of jnp.linalg.norm(ord={ord!r}) over "
                              f"{ndim_reduced} axes are not implemented; only the Euclidean "
                              "and Frobenius norms")


# ---- embedding cotangents: diagonals, repeats ----------------------------------------------------

def diagonal_bar(g, a, offset=0, axis1=0, axis2=1):
    """The cotangent of jnp.diagonal: g written on that diagonal of zeros shaped like a."""
    a = as_array(a)
    g = as_array(g)
    axis1, axis2 = canonical_axis(axis1, a.ndim, "diagonal"), canonical_axis(axis2, a.ndim,
                                                                              "diagonal")
    moved_shape = tuple(d for i, d in enumerate(a.shape) if i not in (axis1, axis2)) + (
        a.shape[axis1], a.shape[axis2])
    n = g.shape[-1]
    rows = jnp.arange(n, dtype=np.int32) + max(-offset, 0)
    cols = jnp.arange(n, dtype=np.int32) + max(offset, 0)
    moved = jnp.zeros(moved_shape, g.dtype).at[..., rows, cols].set(g)
    return jnp.moveaxis(moved, (-2, -1), (axis1, axis2))


def trace_bar(g, a, offset=0, axis1=0, axis2=1):
    """The cotangent of jnp.trace: g on every element of the diagonal."""
    a = as_array(a)
    length = jnp.diagonal(jnp.zeros(a.shape, np.float32), offset, axis1, axis2).shape[-1]
    g = as_array(g)
    spread = jnp.broadcast_to(jnp.expand_dims(g, -1), g.shape + (length,))
    return diagonal_bar(spread, a, offset, axis1, axis2)


def repeat_bar(g, a, repeats, axis=None):
    """The cotangent of jnp.repeat: each repeated block summed back into its source."""
    a = as_array(a)
    g = as_array(g)
    if axis is None:
        return jnp.reshape(repeat_bar(g, jnp.reshape(a, (a.size,)), repeats, 0), a.shape)
    axis = canonical_axis(axis, a.ndim, "repeat")
    n = a.shape[axis]
    sources = jnp.repeat(jnp.arange(n, dtype=np.int32), repeats, total_repeat_length=None)
    moved = jnp.moveaxis(g, axis, 0)
    out = jnp.zeros((n,) + moved.shape[1:], g.dtype).at[sources].add(moved)
    return jnp.moveaxis(out, 0, axis)


# ---- einsum with one or two operands -------------------------------------------------------------

def _einsum_parts(subscripts: str, n_operands: int) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise NotImplementedError("derivatives of einsum with '...' are not implemented")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != n_operands:
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(terms)} operands, got "
                         f"{n_operands}")
    if "->" not in spec:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, output


def _einsum_bar(g, subscripts: str, target, other, target_first: bool):
    """Cotangent of `target` in einsum(subscripts, target, other) (other None: unary). A
    label repeated in target's term (a trace 'ii', a diagonal 'iij') reads only the places
    where its axes' indices agree: the cotangent lies there, zero elsewhere."""
    terms, output = _einsum_parts(subscripts, 1 if other is None else 2)
    t_term = terms[0] if target_first else terms[1]
    o_term = None if other is None else (terms[1] if target_first else terms[0])
    available = output + (o_term or "")
    labels = "".join(dict.fromkeys(t_term))  # target's labels, each once
    kept = "".join(c for c in labels if c in available)
    if other is None:
        partial = jnp.einsum(f"{output}->{kept}", g)
    else:
        partial = jnp.einsum(f"{output},{o_term}->{kept}", g, other)
    target_shape = np.shape(target)
    sizes = {c: target_shape[t_term.index(c)] for c in labels}
    view = tuple(sizes[c] if c in kept else 1 for c in labels)
    spread = jnp.broadcast_to(jnp.reshape(partial, view), tuple(sizes[c] for c in labels))
    if len(labels) == len(t_term):
        return spread
    return _on_diagonals(spread, labels, t_term, target_shape)


def _on_diagonals(values, labels: str, term: str, shape: tuple):
    """An array of `shape` (axes labelled by `term`, labels repeating) holding
    values[labels] where every repeated label's axes have one index, zero elsewhere."""
    rank = len(term)

    def index(axis: int):
        view = [1] * rank
        view[axis] = shape[axis]
        return jnp.reshape(jnp.arange(shape[axis]), view)

    first = {c: term.index(c) for c in labels}
    on = jnp.ones((1,) * rank, bool)
    for axis, c in enumerate(term):
        if axis != first[c]:
            on = on & (index(axis) == index(first[c]))
    read = values[tuple(index(first[c]) for c in labels)]
    return jnp.where(on, read, jnp.zeros((), values.dtype))


def einsum_x_bar(g, subscripts, x, y=None):
    """The cotangent of einsum's first operand (x is used for its shape only)."""
    return _einsum_bar(g, subscripts, x, y, True)


def einsum_y_bar(g, subscripts, x, y):
    """The cotangent of einsum's second operand (y is used for its shape only)."""
    return _einsum_bar(g, subscripts, y, x, False)
