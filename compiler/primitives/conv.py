"""conv_general_dilated: XLA's general convolution, a cross-correlation (no kernel flip).

The primitive works in a canonical layout that `dimension_numbers` maps onto the arrays:
lhs (batch N, features C, spatial...), rhs (out features O, in features I, spatial...),
result (N, O, spatial...). A ConvDimensionNumbers holds, for each of lhs, rhs and result,
the array axis of each canonical axis. Spatial axis i uses window_strides[i], padding[i],
lhs_dilation[i] (transposed convolution) and rhs_dilation[i] (atrous convolution).

Groups: with feature_group_count G, lhs features and rhs out features split into G equal
contiguous groups and group g of the output sees only group g of the input. With
batch_group_count B, the lhs batch splits into B contiguous groups and rhs out features into
B groups; out feature group b convolves lhs batch group b. At most one of them exceeds 1.

As a family file it also declares the lax functions' jvp and vjp rules and their batching
(compiler/primitives/registry.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive
from redraft.compiler.primitives.checks import check_same_dtypes
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.shape import rev, transpose
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import (defbatch_loop, defjvp, defstatic, defvjp,
                                                  lad, lax, names_convenience,
                                                  names_primitive)

FAMILY = "conv"

PADDING_NAMES = ("SAME", "SAME_LOWER", "VALID")


class ConvDimensionNumbers(NamedTuple):
    """Array axes of (batch, feature, spatial...) for lhs and result, (out, in, spatial...)
    for rhs. Spatial axes are listed in the order window_strides and padding refer to."""
    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


conv_general_dilated_p = Primitive("conv_general_dilated", FAMILY)


# ---- dimension numbers and padding ---------------------------------------------------------

def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, strings like ('NHWC', 'HWIO', 'NHWC'), or a
    ConvDimensionNumbers) as a ConvDimensionNumbers of integer axes."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution needs lhs and rhs of equal rank, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(a) for a in spec)
                                      for spec in dimension_numbers))
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers must be None, a ConvDimensionNumbers "
                        f"or three strings, got {dimension_numbers!r}")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"convolution dimension_numbers must be strings, got "
                        f"{dimension_numbers!r}")
    for spec in dimension_numbers:
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers {tuple(dimension_numbers)}: "
                            f"{spec!r} has {len(spec)} letters for arrays of rank "
                            f"{len(lhs_shape)}")
    return _specs_from_strings(*dimension_numbers)


def _specs_from_strings(lhs: str, rhs: str, out: str) -> ConvDimensionNumbers:
    """Axes from layout strings; spatial axes are ordered as they appear in `rhs`."""
    for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if any(spec.count(c) != 1 for c in pair) or len(set(spec)) != len(spec):
            raise TypeError(f"convolution layout {spec!r} must hold each of "
                            f"{pair[0]!r} and {pair[1]!r} once and no letter twice")
    spatial = [c for c in rhs if c not in "OI"]
    if set(lhs) - set("NC") != set(spatial) or set(out) - set("NC") != set(spatial):
        raise TypeError(f"convolution layouts {(lhs, rhs, out)} do not share the same "
                        "spatial letters")

    def spec_of(layout: str, pair: str) -> tuple[int, ...]:
        return (layout.index(pair[0]), layout.index(pair[1])) + tuple(
            layout.index(c) for c in spatial)

    return ConvDimensionNumbers(spec_of(lhs, "NC"), spec_of(rhs, "OI"), spec_of(out, "NC"))


def dilate_dim(size: int, dilation: int) -> int:
    """Size of an axis of `size` elements with `dilation - 1` zeros between neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> tuple[tuple[int, int], ...]:
    """Explicit (lo, hi) pads for 'SAME', 'SAME_LOWER' or 'VALID', as XLA computes them.

    'SAME' makes the output size ceil(in / stride); an odd total goes to the high side
    ('SAME') or the low side ('SAME_LOWER').
    """
    name = padding.upper() if isinstance(padding, str) else padding
    if name not in PADDING_NAMES:
        raise ValueError(f"unknown padding {padding!r}; expected one of {PADDING_NAMES} or a "
                         "sequence of (low, high) pairs")
    if name == "VALID":
        return ((0, 0),) * len(in_shape)
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if name == "SAME" else (large, small))
    return tuple(pads)


# ---- abstract evaluation ---------------------------------------------------------------------

def _conv_abstract(lhs: ShapedArray, rhs: ShapedArray, *, window_strides, padding,
                   lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count,
                   batch_group_count, preferred_element_type=None) -> ShapedArray:
    check_same_dtypes([lhs.dtype, rhs.dtype], "conv_general_dilated")
    out_dtype = _result_dtype(lhs.dtype, preferred_element_type)
    _check_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    n_spatial = lhs.ndim - 2
    _check_window(n_spatial, window_strides, padding, lhs_dilation, rhs_dilation)
    lhs_c = tuple(lhs.shape[a] for a in lhs_spec)
    rhs_c = tuple(rhs.shape[a] for a in rhs_spec)
    _check_groups(lhs_c, rhs_c, feature_group_count, batch_group_count, lhs.shape, rhs.shape)
    canonical = _canonical_out_shape(lhs_c, rhs_c, window_strides, padding, lhs_dilation,
                                     rhs_dilation, batch_group_count)
    shape = tuple(canonical[i] for i in np.argsort(out_spec))
    return ShapedArray(shape, out_dtype, lhs.weak_type and rhs.weak_type)


def _result_dtype(dtype: np.dtype, preferred) -> np.dtype:
    """The result dtype: `preferred_element_type` if it may hold `dtype`'s products."""
    if preferred is None:
        return np.dtype(dtype)
    preferred = np.dtype(preferred)
    kinds_ok = {"b": "biuf", "i": "iuf", "u": "iuf", "f": "f", "c": "c"}[dtype.kind]
    if preferred.kind not in kinds_ok or (
            preferred.kind == dtype.kind and preferred.itemsize < dtype.itemsize):
        raise TypeError(f"conv_general_dilated: preferred_element_type {preferred.name} is "
                        f"incompatible with inputs of dtype {dtype.name} (it must be of the "
                        "same kind and no narrower, or floating for integer inputs)")
    return preferred


def _check_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> None:
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"conv_general_dilated: lhs and rhs must have equal rank, got shapes "
                        f"{lhs_shape} and {rhs_shape}")
    if len(lhs_shape) < 2:
        raise TypeError(f"conv_general_dilated: operands need a batch and a feature axis, got "
                        f"shapes {lhs_shape} and {rhs_shape}")
    axes = tuple(range(len(lhs_shape)))
    for name, spec in zip(("lhs", "rhs", "out"), dimension_numbers):
        if tuple(sorted(spec)) != axes:
            raise TypeError(f"conv_general_dilated: {name}_spec {tuple(spec)} is not a "
                            f"permutation of the {len(axes)} axes")


def _check_window(n_spatial: int, window_strides, padding, lhs_dilation,
                  rhs_dilation) -> None:
    named = (("window_strides", window_strides), ("padding", padding),
             ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation))
    for name, value in named:
        if len(value) != n_spatial:
            raise TypeError(f"conv_general_dilated: {name} {tuple(value)} needs one entry per "
                            f"spatial dimension ({n_spatial})")
    for name, value in named[:1] + named[2:]:
        if any(v < 1 for v in value):
            raise ValueError(f"conv_general_dilated: {name} {tuple(value)} must be positive")


def _check_groups(lhs_c, rhs_c, feature_groups: int, batch_groups: int, lhs_shape,
                  rhs_shape) -> None:
    """lhs_c and rhs_c are the shapes in canonical order (N, C, ...) and (O, I, ...)."""
    where = f"for lhs shape {lhs_shape} and rhs shape {rhs_shape}"
    if feature_groups < 1 or batch_groups < 1:
        raise ValueError(f"conv_general_dilated: feature_group_count {feature_groups} and "
                         f"batch_group_count {batch_groups} must be positive")
    if feature_groups > 1 and batch_groups > 1:
        raise ValueError("conv_general_dilated: at most one of feature_group_count and "
                         f"batch_group_count may exceed 1, got {feature_groups} and "
                         f"{batch_groups}")
    (batch, features), (out_features, in_features) = lhs_c[:2], rhs_c[:2]
    if features % feature_groups or features // feature_groups != in_features:
        raise ValueError(f"conv_general_dilated: lhs feature size {features} divided by "
                         f"feature_group_count {feature_groups} must equal the rhs input "
                         f"feature size {in_features}, {where}")
    if batch % batch_groups:
        raise ValueError(f"conv_general_dilated: batch_group_count {batch_groups} must "
                         f"divide the lhs batch size {batch}, {where}")
    for name, count in (("feature_group_count", feature_groups),
                        ("batch_group_count", batch_groups)):
        if out_features % count:
            raise ValueError(f"conv_general_dilated: {name} {count} must divide the rhs "
                             f"output feature size {out_features}, {where}")


def _canonical_out_shape(lhs_c, rhs_c, window_strides, padding, lhs_dilation, rhs_dilation,
                         batch_group_count: int) -> tuple[int, ...]:
    """Result shape in canonical order (N, O, spatial...)."""
    spatial = []
    for size, k, stride, (lo, hi), ld, rd in zip(lhs_c[2:], rhs_c[2:], window_strides,
                                                  padding, lhs_dilation, rhs_dilation):
        padded = dilate_dim(size, ld) + lo + hi
        if padded < 0:
            raise ValueError(f"conv_general_dilated: padding {tuple(padding)} removes more "
                             f"than the lhs spatial sizes {tuple(lhs_c[2:])} hold")
        window = dilate_dim(k, rd)
        spatial.append((padded - window) // stride + 1 if padded >= window else 0)
    return (lhs_c[0] // batch_group_count, rhs_c[0]) + tuple(spatial)


abstract_eval_rules[conv_general_dilated_p] = _conv_abstract


# ---- eager implementation: im2col and one batched matrix product ---------------------------

def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    x = np.transpose(lhs, lhs_spec)
    w = np.transpose(rhs, rhs_spec)
    canonical = _canonical_out_shape(x.shape, w.shape, window_strides, padding, lhs_dilation,
                                     rhs_dilation, batch_group_count)
    if 0 in canonical or 0 in w.shape:  # nothing to compute, or empty sums
        out = np.zeros(canonical, out_dtype)
    else:
        x = _pad_spatial(_dilate_spatial(x, lhs_dilation), padding)
        patches = _patches(x, w.shape[2:], window_strides, rhs_dilation, canonical[2:])
        work_dtype = out_dtype if preferred_element_type is not None else x.dtype
        out = _grouped_product(patches.astype(work_dtype, copy=False),
                               w.astype(work_dtype, copy=False), feature_group_count,
                               batch_group_count)
    return np.transpose(out, np.argsort(out_spec)).astype(out_dtype, copy=False)


def _dilate_spatial(x: np.ndarray, dilation) -> np.ndarray:
    """Insert `d - 1` zeros between neighbouring elements of each spatial axis."""
    if all(d == 1 for d in dilation):
        return x
    shape = x.shape[:2] + tuple(dilate_dim(s, d) for s, d in zip(x.shape[2:], dilation))
    out = np.zeros(shape, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in dilation)] = x
    return out


def _pad_spatial(x: np.ndarray, padding) -> np.ndarray:
    """Zero-pad the spatial axes; negative padding crops."""
    crop = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(padding))
    x = x[(slice(None), slice(None)) + crop]
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    return np.pad(x, widths) if any(lo or hi for lo, hi in widths) else x


def _patches(x: np.ndarray, kernel, strides, rhs_dilation, out_spatial) -> np.ndarray:
    """A view of shape (N, C, *out_spatial, *kernel): the input under every window."""
    axes = tuple(range(2, x.ndim))
    windows = np.lib.stride_tricks.sliding_window_view(
        x, [dilate_dim(k, d) for k, d in zip(kernel, rhs_dilation)], axis=axes)
    spatial = tuple(slice(0, (n - 1) * s + 1, s) for n, s in zip(out_spatial, strides))
    taps = tuple(slice(None, None, d) for d in rhs_dilation)
    return windows[(slice(None), slice(None)) + spatial + taps]


def _grouped_product(patches: np.ndarray, w: np.ndarray, feature_groups: int,
                     batch_groups: int) -> np.ndarray:
    """Contract patches (N, C, *P, *K) with w (O, C/G, *K) per group: (N/B, O, *P)."""
    n_spatial = w.ndim - 2
    batch, features = patches.shape[:2]
    out_spatial = patches.shape[2:2 + n_spatial]
    groups = batch_groups * feature_groups
    per_batch, per_feature = batch // batch_groups, features // feature_groups
    out_per_group = w.shape[0] // groups
    taps = int(np.prod(w.shape[2:], dtype=np.int64)) * per_feature
    positions = per_batch * int(np.prod(out_spatial, dtype=np.int64))
    # (B, Nb, G, Cg, *P, *K) -> (B, G, Nb, *P, Cg, *K) -> (B, G, Nb*P, Cg*K)
    p = patches.reshape((batch_groups, per_batch, feature_groups, per_feature)
                        + patches.shape[2:])
    spatial_axes = tuple(range(4, 4 + n_spatial))
    kernel_axes = tuple(range(4 + n_spatial, 4 + 2 * n_spatial))
    p = p.transpose((0, 2, 1) + spatial_axes + (3,) + kernel_axes)
    p = p.reshape(batch_groups, feature_groups, positions, taps)
    k = w.reshape(batch_groups, feature_groups, out_per_group, taps).transpose(0, 1, 3, 2)
    if p.dtype.kind == "b":
        out = np.matmul(p.astype(np.int32), k.astype(np.int32)) != 0
    else:
        out = np.matmul(p, k)  # (B, G, Nb*P, Og)
    out = out.reshape((batch_groups, feature_groups, per_batch) + out_spatial
                      + (out_per_group,))
    out = out.transpose((2, 0, 1, 3 + n_spatial) + tuple(range(3, 3 + n_spatial)))
    return out.reshape((per_batch, w.shape[0]) + out_spatial)


impl_rules[conv_general_dilated_p] = _conv_impl


# ---- the lax functions ---------------------------------------------------------------------

def _int_tuple(values, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise TypeError(f"conv_general_dilated: {name} must be a sequence of integers, got "
                        f"{values!r}") from None


def _explicit_padding(padding, lhs_c, rhs_c, window_strides, lhs_dilation, rhs_dilation):
    """(lo, hi) pairs from a padding name or from user pairs."""
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("conv_general_dilated: padding names are not supported with "
                             f"lhs_dilation {lhs_dilation}; give explicit (low, high) pairs "
                             "or use conv_transpose")
        windows = [dilate_dim(k, d) for k, d in zip(rhs_c[2:], rhs_dilation)]
        return padtype_to_pads(lhs_c[2:], windows, window_strides, padding)
    try:
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError("conv_general_dilated: padding must be 'SAME', 'SAME_LOWER', "
                         f"'VALID' or a sequence of (low, high) pairs, got {padding!r}") from None


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None,
                         preferred_element_type=None) -> Array:
    """lax.conv_general_dilated: XLA's general n-d convolution (a cross-correlation).

    `precision` is accepted for compatibility; the host computes at the inputs' precision.
    """
    lhs, rhs = strict_operands("conv_general_dilated", (lhs, rhs))
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n_spatial = lhs.ndim - 2
    ones = (1,) * n_spatial
    lhs_dilation = ones if lhs_dilation is None else _int_tuple(lhs_dilation, "lhs_dilation")
    rhs_dilation = ones if rhs_dilation is None else _int_tuple(rhs_dilation, "rhs_dilation")
    window_strides = _int_tuple(window_strides, "window_strides")
    lhs_c = tuple(lhs.shape[a] for a in dnums.lhs_spec)
    rhs_c = tuple(rhs.shape[a] for a in dnums.rhs_spec)
    pads = _explicit_padding(padding, lhs_c, rhs_c, window_strides, lhs_dilation,
                             rhs_dilation)
    pet = None if preferred_element_type is None else dtypes.check_dtype_arg(
        preferred_element_type)
    params = dict(window_strides=window_strides, padding=pads, lhs_dilation=lhs_dilation,
                  rhs_dilation=rhs_dilation, dimension_numbers=dnums,
                  feature_group_count=int(feature_group_count),
                  batch_group_count=int(batch_group_count), preferred_element_type=pet)
    _conv_abstract(ShapedArray(lhs.shape, lhs.dtype, lhs._weak),
                   ShapedArray(rhs.shape, rhs.dtype, rhs._weak), **params)
    return bind(conv_general_dilated_p, lhs, rhs, **params)


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None,
         preferred_element_type=None) -> Array:
    """lax.conv: conv_general_dilated in NCHW/OIHW layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides: Sequence[int], padding,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision=None,
                              preferred_element_type=None) -> Array:
    """lax.conv_with_general_padding: conv_general_dilated in NCHW/OIHW layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _conv_transpose_padding(k: int, s: int, padding) -> tuple[int, int]:
    """Padding of the dilated input that undoes a forward conv's 'SAME'/'VALID' padding."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"conv_transpose: unknown padding {padding!r}; expected 'SAME', "
                         "'VALID' or (low, high) pairs")
    return lo, total - lo


def conv_transpose(lhs, rhs, strides: Sequence[int], padding,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None,
                   preferred_element_type=None) -> Array:
    """lax.conv_transpose: a fractionally strided convolution (input dilated by `strides`).

    String padding is that of the forward convolution being transposed; explicit pairs pad
    the dilated input. `transpose_kernel` flips the spatial axes and swaps the kernel's
    in/out feature axes, giving the gradient of the forward convolution.
    """
    lhs, rhs = as_array(lhs), as_array(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError(f"conv_transpose: need lhs and rhs of equal rank >= 2, got shapes "
                        f"{lhs.shape} and {rhs.shape}")
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError(f"conv_transpose has no default layout for rank {lhs.ndim}; "
                             "pass dimension_numbers")
        dimension_numbers = _TRANSPOSE_LAYOUTS[lhs.ndim]
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n_spatial = lhs.ndim - 2
    rhs_dilation = (1,) * n_spatial if rhs_dilation is None else tuple(rhs_dilation)
    kernel = [rhs.shape[a] for a in dnums.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = tuple(_conv_transpose_padding(dilate_dim(k, d), s, padding)
                     for k, d, s in zip(kernel, rhs_dilation, strides))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, dnums.rhs_spec[2:])
        perm = list(range(rhs.ndim))
        o_axis, i_axis = dnums.rhs_spec[:2]
        perm[o_axis], perm[i_axis] = i_axis, o_axis
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * n_spatial, pads, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


names_primitive(conv_general_dilated, conv_general_dilated_p)
for _fn in (conv, conv_with_general_padding, conv_transpose):
    names_convenience(_fn, conv_general_dilated_p)

# ---- derivatives: a convolution is bilinear; each operand's cotangent is the convolution's
# transpose in it (lad.conv_lhs_bar, lad.conv_rhs_bar) -------------------------------------------


def _conv_jvp_lhs(lhs_dot, ans, lhs, rhs, window_strides, padding, lhs_dilation,
                  rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    """conv_general_dilated is bilinear: its tangent in lhs is the conv of lhs_dot."""
    return lax.conv_general_dilated(lhs_dot, rhs, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers, feature_group_count,
                                    batch_group_count)


def _conv_jvp_rhs(rhs_dot, ans, lhs, rhs, window_strides, padding, lhs_dilation,
                  rhs_dilation, dimension_numbers, feature_group_count, batch_group_count):
    return lax.conv_general_dilated(lhs, rhs_dot, window_strides, padding, lhs_dilation,
                                    rhs_dilation, dimension_numbers, feature_group_count,
                                    batch_group_count)


def _conv_vjp_lhs(g, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_lhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                            dimension_numbers, feature_group_count, batch_group_count)


def _conv_vjp_rhs(g, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count):
    return lad.conv_rhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                            dimension_numbers, feature_group_count, batch_group_count)


defjvp(conv_general_dilated_p, _conv_jvp_lhs, _conv_jvp_rhs)
defvjp(conv_general_dilated_p, _conv_vjp_lhs, _conv_vjp_rhs)
defjvp(conv,
       lambda lhs_dot, ans, lhs, rhs, window_strides, padding, precision=None,
       preferred_element_type=None: lax.conv(lhs_dot, rhs, window_strides, padding),
       lambda rhs_dot, ans, lhs, rhs, window_strides, padding, precision=None,
       preferred_element_type=None: lax.conv(lhs, rhs_dot, window_strides, padding))
defvjp(conv,
       lambda g, ans, lhs, rhs, window_strides, padding, precision=None,
       preferred_element_type=None: lad.conv_lhs_bar(g, lhs, rhs, window_strides, padding),
       lambda g, ans, lhs, rhs, window_strides, padding, precision=None,
       preferred_element_type=None: lad.conv_rhs_bar(g, lhs, rhs, window_strides, padding))
defjvp(conv_with_general_padding,
       lambda lhs_dot, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation:
       lax.conv_with_general_padding(lhs_dot, rhs, window_strides, padding, lhs_dilation,
                                     rhs_dilation),
       lambda rhs_dot, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation:
       lax.conv_with_general_padding(lhs, rhs_dot, window_strides, padding, lhs_dilation,
                                     rhs_dilation))
defvjp(conv_with_general_padding,
       lambda g, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation:
       lad.conv_lhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation),
       lambda g, ans, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation:
       lad.conv_rhs_bar(g, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation))


def _conv_transpose_jvp_lhs(lhs_dot, ans, lhs, rhs, strides, padding, rhs_dilation,
                            dimension_numbers, transpose_kernel):
    return lax.conv_transpose(lhs_dot, rhs, strides, padding, rhs_dilation, dimension_numbers,
                              transpose_kernel)


def _conv_transpose_jvp_rhs(rhs_dot, ans, lhs, rhs, strides, padding, rhs_dilation,
                            dimension_numbers, transpose_kernel):
    return lax.conv_transpose(lhs, rhs_dot, strides, padding, rhs_dilation, dimension_numbers,
                              transpose_kernel)


def _conv_transpose_vjp_lhs(g, ans, lhs, rhs, strides, padding, rhs_dilation,
                            dimension_numbers, transpose_kernel):
    """conv_transpose is conv_general_dilated with the input dilated by `strides` and the
    kernel possibly flipped: the lhs cotangent of that convolution."""
    p = lad.conv_transpose_params(lhs, rhs, strides, padding, rhs_dilation, dimension_numbers)
    kernel = lad.conv_transpose_kernel(rhs, dimension_numbers, transpose_kernel, lhs)
    return lad.conv_lhs_bar(g, lhs, kernel, p[0], p[1], p[2], p[3], p[4])


def _conv_transpose_vjp_rhs(g, ans, lhs, rhs, strides, padding, rhs_dilation,
                            dimension_numbers, transpose_kernel):
    """The kernel cotangent, mapped back through the flip (which is its own transpose)."""
    p = lad.conv_transpose_params(lhs, rhs, strides, padding, rhs_dilation, dimension_numbers)
    kernel = lad.conv_transpose_kernel(rhs, dimension_numbers, transpose_kernel, lhs)
    kernel_bar = lad.conv_rhs_bar(g, lhs, kernel, p[0], p[1], p[2], p[3], p[4])
    return lad.conv_transpose_kernel(kernel_bar, dimension_numbers, transpose_kernel, lhs)


defjvp(conv_transpose, _conv_transpose_jvp_lhs, _conv_transpose_jvp_rhs)
defvjp(conv_transpose, _conv_transpose_vjp_lhs, _conv_transpose_vjp_rhs)

defstatic(conv_general_dilated_p, "window_strides", "padding", "lhs_dilation", "rhs_dilation",
          "dimension_numbers", "feature_group_count", "batch_group_count", "precision",
          "preferred_element_type")
defstatic(conv, "window_strides", "padding", "precision", "preferred_element_type")
defstatic(conv_with_general_padding, "window_strides", "padding", "lhs_dilation",
          "rhs_dilation", "precision", "preferred_element_type")
defstatic(conv_transpose, "strides", "padding", "rhs_dilation", "dimension_numbers",
          "transpose_kernel", "precision", "preferred_element_type")

# ---- batching ------------------------------------------------------------------------------------

for _fn in (conv_general_dilated, conv, conv_with_general_padding, conv_transpose):
    defbatch_loop(_fn, "no vectorised rule yet: batched by a loop over the examples")
