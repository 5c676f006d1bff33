"""lax.conv_general_dilated_patches: the receptive field of every output position as the
features of that position, as JAX defines it.

It is one convolution (compiler/primitives/conv.py) with a kernel of ones and zeros that
copies each of the C input features at each of the S window offsets to its own output
feature, c * S + s (C feature groups of S outputs each), so the result has the layout and
padding of the convolution with a window of `filter_shape`. Its derivative rules
(compiler/transforms/ad/rules/lax_special.py) are the convolution's in lhs, with this kernel.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from redraft.compiler.primitives.conv import conv_dimension_numbers, conv_general_dilated
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

__all__ = ["conv_general_dilated_patches"]


def patches_kernel(lhs_shape: tuple, dtype, filter_shape: tuple, dimension_numbers):
    """(kernel, its ConvDimensionNumbers, feature groups) of the patch convolution: output
    feature c * S + s reads input feature c at window offset s (row-major in the window)."""
    filter_shape = tuple(int(d) for d in filter_shape)
    numbers = conv_dimension_numbers(lhs_shape, (1, 1) + filter_shape, dimension_numbers)
    channels = int(lhs_shape[numbers.lhs_spec[1]])
    size = math.prod(filter_shape)
    one_hot = np.broadcast_to(np.eye(size, dtype=dtype), (channels, size, size))
    canonical = one_hot.reshape((channels * size, 1) + filter_shape)  # (out, in, window...)
    kernel = np.transpose(canonical, tuple(int(i) for i in np.argsort(numbers.rhs_spec)))
    return np.ascontiguousarray(kernel), numbers, channels


def conv_general_dilated_patches(lhs, filter_shape: Sequence[int], window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None) -> Array:
    """The patches of `lhs` a convolution with a window of `filter_shape` reads, as output
    features (input feature major, window offsets row-major)."""
    x = as_array(lhs)
    kernel, numbers, channels = patches_kernel(tuple(x.shape), x.dtype, tuple(filter_shape),
                                               dimension_numbers)
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, numbers, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
