"""Reductions over windows and over axes with a user's computation, and the shape helpers
of windows and convolutions (reduce_window, reduce, conv_general_shape_tuple, ...).

`reduce_window` pads the operand with the initial value (base dilation as interior padding),
takes one strided slice per window offset and folds them with the computation; `reduce`
folds an axis in halves. Both are compositions of lax primitives, so the transforms read
them like a user's function and jit lowers them. As in XLA the computation must be
associative and commutative, and the initial value its identity (lax.add with 0, lax.max
with -inf); the monoids lax.add, mul, max, min (and and/or on bools) use the reduction
primitives directly. The computation must be one known by name (lax.add, mul, max, min,
bitwise and/or/xor, their jnp and operator twins): the transforms cannot follow a function
value through library code, so any other callable is refused with a TypeError.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from redraft.compiler.primitives.conv import (ConvDimensionNumbers, _conv_transpose_padding,
                                              _specs_from_strings, conv_dimension_numbers,
                                              dilate_dim, padtype_to_pads)
from redraft.compiler.primitives.checks import canonical_axes
from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS, convert_element_type
from redraft.compiler.primitives.elementwise import select as _select
from redraft.compiler.primitives.reductions import (reduce_and, reduce_max, reduce_min,
                                                    reduce_or, reduce_prod, reduce_sum)
from redraft.compiler.primitives.shape import broadcast_in_dim, concatenate, pad, reshape
from redraft.compiler.primitives.shape import slice as slice_static
from redraft.lax.computations import XOR as _XOR
from redraft.lax.computations import combine as _combine
from redraft.lax.computations import kind_of as _kind
from redraft.numpy.creation import asarray
from redraft.runtime.array import Array

_gt, _lt, _eq = (LAX_FUNCTIONS[n] for n in ("gt", "lt", "eq"))

__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce", "reduce_xor",
           "padtype_to_pads", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose_shape_tuple", "conv_general_permutations"]

# kind -> (the reduction primitive's name, the dtype kinds it applies to)
_MONOIDS = {"add": ("sum", "iufc"), "mul": ("prod", "iufc"), "max": ("max", "biuf"),
            "min": ("min", "biuf"), "and": ("and", "b"), "or": ("or", "b")}


# ---- static plans --------------------------------------------------------------------------

def _per_axis(values, ndim: int, default: int, name: str) -> tuple[int, ...]:
    if values is None:
        return (default,) * ndim
    values = tuple(int(v) for v in values)
    if len(values) != ndim:
        raise TypeError(f"lax.reduce_window: {name} {values} needs one entry per axis of the "
                        f"rank-{ndim} operand")
    return values


def _window_pads(shape, window, strides, padding, base, dilation) -> tuple:
    if isinstance(padding, str):
        dilated = tuple(dilate_dim(d, b) for d, b in zip(shape, base))
        effective = tuple(dilate_dim(w, r) for w, r in zip(window, dilation))
        return padtype_to_pads(dilated, effective, strides, padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(pads) != len(shape):
        raise TypeError(f"lax.reduce_window: padding {pads} needs one (low, high) pair per "
                        f"axis of the rank-{len(shape)} operand")
    return pads


def _window_plan(shape, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
    """(pad config, [(starts, limits)] per window offset, strides) of reduce_window."""
    ndim = len(shape)
    window = _per_axis(window_dimensions, ndim, 1, "window_dimensions")
    strides = _per_axis(window_strides, ndim, 1, "window_strides")
    base = _per_axis(base_dilation, ndim, 1, "base_dilation")
    dilation = _per_axis(window_dilation, ndim, 1, "window_dilation")
    if any(v < 1 for v in window + strides + base + dilation):
        raise ValueError("lax.reduce_window: window sizes, strides and dilations must be "
                         "positive")
    pads = _window_pads(shape, window, strides, padding, base, dilation)
    out = _window_out_shape(shape, window, strides, pads, base, dilation)
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(pads, base))
    offsets = []
    for flat in range(int(np.prod(window, dtype=np.int64))):
        offset = np.unravel_index(flat, window)
        starts = tuple(int(o) * r for o, r in zip(offset, dilation))
        limits = tuple(s + (m - 1) * st + 1 if m else s
                       for s, m, st in zip(starts, out, strides))
        offsets.append((starts, limits))
    return config, offsets, strides, out


def _window_out_shape(shape, window, strides, pads, base, dilation) -> tuple[int, ...]:
    out = []
    for d, w, s, (lo, hi), b, r in zip(shape, window, strides, pads, base, dilation):
        padded = dilate_dim(d, b) + lo + hi
        effective = dilate_dim(w, r)
        out.append(0 if padded < effective else (padded - effective) // s + 1)
    return tuple(out)


def _monoid(kind: str, dtype: np.dtype) -> str | None:
    """The reduction primitive of a known monoid computation on this dtype, or None."""
    found = _MONOIDS.get(kind)
    if found is None or dtype.kind not in found[1]:
        return None
    return found[0]


def _halvings(shape: tuple[int, ...], axes: tuple[int, ...]):
    """The folds of `reduce`: per step (axis, first half's bounds, second half's bounds,
    leftover bounds or None)."""
    steps, shape = [], list(shape)
    for axis in axes:
        while shape[axis] > 1:
            n = shape[axis]
            half = n // 2
            lo = _bounds(shape, axis, 0, half)
            hi = _bounds(shape, axis, half, 2 * half)
            rest = _bounds(shape, axis, 2 * half, n) if n % 2 else None
            steps.append((lo, hi, rest, axis, half))
            shape[axis] = half + (n % 2)
    return steps


def _bounds(shape, axis: int, start: int, limit: int):
    starts = tuple(start if d == axis else 0 for d in range(len(shape)))
    limits = tuple(limit if d == axis else s for d, s in enumerate(shape))
    return starts, limits


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _has_empty_axis(shape: tuple[int, ...], axes: tuple[int, ...]) -> bool:
    return any(shape[a] == 0 for a in axes)


# ---- reduce_window ---------------------------------------------------------------------------

def reduce_window(operand, init_value, computation: Callable, window_dimensions: Sequence[int],
                  window_strides: Sequence[int], padding, base_dilation=None,
                  window_dilation=None) -> Array:
    """Reduce each window of `operand` with `computation` (lax.add, lax.max, ...), starting
    from `init_value`; `padding` is 'SAME', 'VALID' or (low, high) pairs per axis."""
    x = asarray(operand)
    init = convert_element_type(init_value, x.dtype)
    config, offsets, strides, out_shape = _window_plan(
        x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    kind = _kind(computation, "lax.reduce_window")
    padded = pad(x, init, config)
    out = broadcast_in_dim(init, out_shape, ())
    for starts, limits in offsets:
        out = _combine(kind, out, slice_static(padded, starts, limits, strides))
    return out


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding,
                              base_dilation=None, window_dilation=None) -> tuple[int, ...]:
    """The shape `reduce_window` gives for these windows (padding as (low, high) pairs)."""
    return _window_plan(tuple(operand_shape), window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)[3]


# ---- reduce over axes ------------------------------------------------------------------------

def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]) -> Array:
    """Reduce `operands` over `dimensions` with `computation`, starting from `init_values`."""
    x = asarray(operands)
    init = convert_element_type(init_values, x.dtype)
    axes = canonical_axes(dimensions, x.ndim, "lax.reduce")
    kind = _kind(computation, "lax.reduce")
    known = _monoid(kind, x.dtype)
    if known is not None:
        return _combine(kind, init, _reduce_monoid(known, x, axes))
    if _has_empty_axis(x.shape, axes):
        return broadcast_in_dim(init, _reduced_shape(x.shape, axes), ())
    for lo, hi, rest, axis, half in _halvings(x.shape, axes):
        folded = _combine(kind, slice_static(x, lo[0], lo[1]), slice_static(x, hi[0], hi[1]))
        if rest is None:
            x = folded
        else:
            x = concatenate([folded, slice_static(x, rest[0], rest[1])], axis)
    return _combine(kind, init, reshape(x, _reduced_shape(x.shape, axes)))


def _reduce_monoid(known: str, x: Array, axes: tuple[int, ...]) -> Array:
    if known == "sum":
        return reduce_sum(x, axes)
    if known == "prod":
        return reduce_prod(x, axes)
    if known == "max":
        return reduce_max(x, axes)
    if known == "min":
        return reduce_min(x, axes)
    if known == "and":
        return reduce_and(x, axes)
    return reduce_or(x, axes)


def reduce_xor(operand, axes: Sequence[int]) -> Array:
    """The bitwise exclusive or of `operand`'s elements over `axes` (bool or integer)."""
    x = asarray(operand)
    zero = convert_element_type(0, x.dtype)
    return reduce(x, zero, _XOR, axes)


# ---- convolution shapes ----------------------------------------------------------------------

def conv_general_permutations(dimension_numbers):
    """(lhs, rhs, out) permutations putting each operand in NC.../OI.../NC... order, from a
    ConvDimensionNumbers or layout strings such as ('NHWC', 'HWIO', 'NHWC')."""
    if not isinstance(dimension_numbers, ConvDimensionNumbers):
        if (not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3
                or not all(isinstance(s, str) for s in dimension_numbers)):
            raise TypeError("conv_general_permutations needs a ConvDimensionNumbers or three "
                            f"layout strings, got {dimension_numbers!r}")
        dimension_numbers = _specs_from_strings(*dimension_numbers)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    return tuple(lhs_spec), tuple(rhs_spec), tuple(out_spec)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The NC... shape of a convolution of NC... `lhs_shape` with OI... `rhs_shape`."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"conv_shape_tuple: {len(pads)} pads for {len(lhs_shape) - 2} spatial "
                        "axes")
    spatial = []
    for d, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads):
        padded = d + lo + hi
        spatial.append(max(0, (padded - k) // s + 1))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def _in_spec_order(lhs_shape, rhs_shape, dimension_numbers):
    """(lhs shape, rhs shape) permuted into (N, C, spatial...) / (O, I, spatial...) order,
    and the permutation that puts an output in that order."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dn)
    return (tuple(lhs_shape[i] for i in lhs_perm), tuple(rhs_shape[i] for i in rhs_perm),
            out_perm)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding,
                             dimension_numbers) -> tuple[int, ...]:
    """The output shape of conv_general_dilated without dilation, in the out spec's order."""
    lhs_trans, rhs_trans, out_perm = _in_spec_order(lhs_shape, rhs_shape, dimension_numbers)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding)
    return tuple(out_trans[out_perm.index(i)] for i in range(len(out_trans)))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding,
                               dimension_numbers) -> tuple[int, ...]:
    """The output shape of conv_transpose (with `padding` 'SAME', 'VALID' or pairs)."""
    lhs_trans, rhs_trans, out_perm = _in_spec_order(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_trans[2:], window_strides)]
    spatial = []
    for d, k, s, (lo, hi) in zip(lhs_trans[2:], rhs_trans[2:], window_strides, padding):
        spatial.append(max(0, dilate_dim(d, s) + lo + hi - k + 1))
    out_trans = (lhs_trans[0], rhs_trans[0], *spatial)
    return tuple(out_trans[out_perm.index(i)] for i in range(len(out_trans)))


# ---- derivatives of reduce_window (compositions, read by the transforms for higher orders) ----

def _placements(padded_shape, offsets, strides, out_shape) -> list:
    """Per window offset, the pad config that puts an output-shaped array back at the
    positions its slice of the padded operand read (the slice's transpose)."""
    configs = []
    for starts, _ in offsets:
        config = []
        for d, lo, n, st in zip(padded_shape, starts, out_shape, strides):
            used = 0 if n == 0 else 1 + (n - 1) * st
            config.append((lo, d - lo - used, st - 1 if n > 1 else 0))
        configs.append(tuple(config))
    return configs


def _unpad_config(config) -> tuple:
    """The negated low/high padding of `config` (interior padding is stepped over apart)."""
    return tuple((-lo, -hi, 0) for lo, hi, _ in config)


def _unpad_slice(shape, config):
    """(starts, limits, strides) taking the operand's own elements from an un-padded,
    still base-dilated array of `shape`."""
    return (0,) * len(shape), tuple(shape), tuple(i + 1 for _, _, i in config)


def _padded_shape(shape, config) -> tuple[int, ...]:
    return tuple(lo + hi + (d - 1) * (i + 1) + 1 if d else lo + hi
                 for d, (lo, hi, i) in zip(shape, config))


def _unpad(g: Array, config) -> Array:
    """The transpose of pad(x, 0, config) applied to g (lax.pad's operand cotangent)."""
    zero = convert_element_type(0, g.dtype)
    wide = pad(g, zero, _unpad_config(config))
    starts, limits, strides = _unpad_slice(wide.shape, config)
    return slice_static(wide, starts, limits, strides)


def _window_choice(kind: str, padded: Array, init: Array, out_shape, offsets, strides) -> Array:
    """For max/min: the offset number of the element each window's result is (the first of
    equal ones), or -1 where the initial value is."""
    best = broadcast_in_dim(init, out_shape, ())
    choice = broadcast_in_dim(convert_element_type(-1, np.int32), out_shape, ())
    for k, (starts, limits) in enumerate(offsets):
        cur = slice_static(padded, starts, limits, strides)
        better = _gt(cur, best) if kind == "max" else _lt(cur, best)
        best = _select(better, cur, best)
        choice = _select(better, convert_element_type(k, np.int32), choice)
    return choice


def _others_product(padded: Array, init: Array, offsets, strides, skip: int) -> Array:
    """init times the product of every window slice but number `skip`."""
    out = init
    for k, (starts, limits) in enumerate(offsets):
        if k != skip:
            out = _combine("mul", out, slice_static(padded, starts, limits, strides))
    return out


def reduce_window_jvp(operand, operand_dot, init_value, kind: str, window_dimensions,
                      window_strides, padding, base_dilation=None, window_dilation=None) -> Array:
    """The tangent of reduce_window(operand, init_value, <kind>, ...) along operand_dot."""
    x, t = asarray(operand), asarray(operand_dot)
    init = convert_element_type(init_value, x.dtype)
    config, offsets, strides, out_shape = _window_plan(
        x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    zero = convert_element_type(0, t.dtype)
    padded_dot = pad(t, zero, config)
    out = broadcast_in_dim(zero, out_shape, ())
    if kind == "add":
        for starts, limits in offsets:
            out = _combine("add", out, slice_static(padded_dot, starts, limits, strides))
        return out
    padded = pad(x, init, config)
    if kind == "mul":
        for k, (starts, limits) in enumerate(offsets):
            part = slice_static(padded_dot, starts, limits, strides)
            out = out + part * _others_product(padded, init, offsets, strides, k)
        return out
    if kind == "max" or kind == "min":
        choice = _window_choice(kind, padded, init, out_shape, offsets, strides)
        for k, (starts, limits) in enumerate(offsets):
            part = slice_static(padded_dot, starts, limits, strides)
            out = _select(_eq(choice, convert_element_type(k, np.int32)), part, out)
        return out
    return out  # and/or/xor: bitwise, no derivative


def reduce_window_vjp(g, operand, init_value, kind: str, window_dimensions, window_strides,
                      padding, base_dilation=None, window_dilation=None) -> Array:
    """The cotangent of reduce_window's operand for the output cotangent g (the transpose of
    reduce_window_jvp in operand_dot)."""
    x, g = asarray(operand), asarray(g)
    init = convert_element_type(init_value, x.dtype)
    config, offsets, strides, out_shape = _window_plan(
        x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    padded_shape = _padded_shape(x.shape, config)
    places = _placements(padded_shape, offsets, strides, out_shape)
    zero = convert_element_type(0, g.dtype)
    wide = broadcast_in_dim(zero, padded_shape, ())
    if kind == "add":
        for place in places:
            wide = wide + pad(g, zero, place)
        return _unpad(wide, config)
    padded = pad(x, init, config)
    if kind == "mul":
        for k, place in enumerate(places):
            wide = wide + pad(g * _others_product(padded, init, offsets, strides, k), zero,
                              place)
        return _unpad(wide, config)
    if kind == "max" or kind == "min":
        choice = _window_choice(kind, padded, init, out_shape, offsets, strides)
        for k, place in enumerate(places):
            picked = _select(_eq(choice, convert_element_type(k, np.int32)), g, zero)
            wide = wide + pad(picked, zero, place)
        return _unpad(wide, config)
    return _unpad(wide, config)  # and/or/xor: bitwise, no derivative


def kind_name(computation, op: str) -> str:
    """The known computation's name (redraft/lax/computations.py), for the rules."""
    return _kind(computation, op)


def reduce_axes(shape: tuple[int, ...], dimensions) -> tuple[int, ...]:
    """lax.reduce's dimensions as sorted non-negative axes (for its derivative rules)."""
    return canonical_axes(dimensions, len(shape), "lax.reduce")
