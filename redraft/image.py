"""redraft.image: resize and scale_and_translate, as jax.image offers them.

Every method but nearest resamples by a separable filter: for each spatial dimension a
weight matrix W (input size x output size) is built from the kernel evaluated at the
distance between each input pixel centre and the input-space position of each output pixel
centre (pixel i has its centre at i + 0.5), and the image is contracted with W along that
dimension. When downsampling with antialias, the kernel is widened by 1 / scale so that it
low-pass filters. Each output column of W is normalised to sum to one, and outputs whose
sample position falls outside the input get zero. Nearest neighbour picks, along each
resized dimension, input index floor((j + 0.5) * in / out), rounded as JAX rounds it.

The weights are redraft.numpy operations on scale and translation, so jit, grad (with
respect to the image, and to scale and translation in scale_and_translate) and vmap read
them like any other code.
"""
from __future__ import annotations

import enum
from typing import Sequence

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.runtime.array import Array

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

# a column of weights whose sum is this small is dropped rather than normalised (JAX's cut)
_TINY_SUM = 1000.0 * float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys, a = -0.5),
    CUBIC_PYTORCH (a = -0.75 with edge padding when antialias is off) and AREA (box)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a name stands for; unknown names raise ValueError."""
        if s not in _NAMES:
            raise ValueError(f'Unknown resize method "{s}"')
        return _NAMES[s]


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _triangle(x: Array) -> Array:
    """Linear interpolation's kernel: 1 - |x| on [-1, 1]."""
    return jnp.maximum(0.0, 1.0 - x)


def _lanczos(radius: float, x: Array) -> Array:
    """sinc(x) sinc(x / radius) for x <= radius, with its limit 1 near x = 0."""
    near_zero = x <= 1e-3
    safe_x = jnp.where(near_zero, 1.0, x)
    ratio = (radius * jnp.sin(np.pi * safe_x) * jnp.sin(np.pi * safe_x / radius)
             / (np.pi ** 2 * safe_x * safe_x))
    return jnp.where(x > radius, 0.0, jnp.where(near_zero, 1.0, ratio))


def _cubic(a: float, x: Array) -> Array:
    """Keys' cubic convolution kernel with parameter `a` (x >= 0), zero from x = 2 on."""
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))


def _kernel(method: ResizeMethod, x: Array) -> Array:
    """`method`'s kernel evaluated at the distances `x` (all >= 0)."""
    if method == ResizeMethod.LINEAR:
        return _triangle(x)
    if method == ResizeMethod.LANCZOS3:
        return _lanczos(3.0, x)
    if method == ResizeMethod.LANCZOS5:
        return _lanczos(5.0, x)
    if method == ResizeMethod.CUBIC:
        return _cubic(-0.5, x)
    return _cubic(-0.75, x)


# how far each kernel reaches, in input pixels (AREA's weights are overlaps, not a kernel)
_RADIUS = {ResizeMethod.LINEAR: 1, ResizeMethod.LANCZOS3: 3, ResizeMethod.LANCZOS5: 5,
           ResizeMethod.CUBIC: 2, ResizeMethod.CUBIC_PYTORCH: 2}


def _area_weights(in_size: int, out_size: int, inv_scale: Array, translation: Array,
                  dtype) -> Array:
    """How much of each output pixel's footprint, mapped back to the input, each input
    pixel covers: the overlap of [j, j + 1] with [(i - t) / s, (i + 1 - t) / s]."""
    left = jnp.arange(out_size, dtype=dtype) * inv_scale - translation * inv_scale
    right = left + inv_scale
    pixel = jnp.arange(in_size, dtype=dtype)[:, None]
    overlap = jnp.minimum(right[None, :], pixel + 1.0) - jnp.maximum(left[None, :], pixel)
    return jnp.maximum(0.0, overlap)


def _normalise(weights: Array) -> Array:
    """Columns scaled to sum to one; a column summing to (nearly) zero becomes zero."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    usable = jnp.abs(total) > _TINY_SUM
    return jnp.where(usable, weights / jnp.where(usable, total, 1.0), 0.0)


def _edge_clamp_matrix(in_size: int, pad: int) -> np.ndarray:
    """(in_size + 2 pad, in_size) one-hot rows: padded index p -> clip(p - pad, 0, in - 1),
    so a product moves the weight of off-image taps onto the edge pixels."""
    source = np.clip(np.arange(-pad, in_size + pad), 0, in_size - 1)
    return (source[:, None] == np.arange(in_size)[None, :]).astype(np.float32)


def _weight_matrix(in_size: int, out_size: int, scale: Array, translation: Array,
                   method: ResizeMethod, antialias: bool, edge_padding: bool) -> Array:
    """The (in_size, out_size) resampling matrix of one spatial dimension."""
    dtype = jnp.result_type(scale, translation)
    scale, translation = jnp.asarray(scale, dtype), jnp.asarray(translation, dtype)
    inv_scale = 1.0 / scale
    # input-space position of each output pixel centre, as an index (centres at i + 0.5);
    # the order of operations is JAX's, so that positions landing on a kink round alike
    sample = (jnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale
    sample = sample - 0.5
    if method == ResizeMethod.AREA:
        weights = _area_weights(in_size, out_size, inv_scale, translation, dtype)
    else:
        pad = _RADIUS[method] if edge_padding else 0
        taps = jnp.arange(-pad, in_size + pad, dtype=dtype)
        distance = jnp.abs(sample[None, :] - taps[:, None])
        if antialias:
            distance = distance / jnp.maximum(inv_scale, 1.0)
        weights = _kernel(method, distance)
        if edge_padding:
            clamp = jnp.asarray(_edge_clamp_matrix(in_size, pad), dtype)
            return _normalise(jnp.matmul(clamp.T, weights))
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], _normalise(weights), 0.0)


def _as_method(method) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"method must be a ResizeMethod or a string, got {method!r}")


def _as_shape(shape, image: Array) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(n) for n in shape)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")
    if any(n < 0 for n in shape):
        raise ValueError(f"shape must not have negative entries, got {shape}")
    return shape


def _inexact(x) -> Array:
    """`x` as an array of a floating (or complex) dtype: integers and bools become the
    default float, as jnp.sin would make them."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return x.astype(jnp.result_type(float))


def _contract(x: Array, weights: Array, axis: int) -> Array:
    """x with dimension `axis` replaced by its product with weights (in x out)."""
    letters = "abcdefghijklmnopqrstuvwxy"[:x.ndim]
    out = letters[:axis] + "z" + letters[axis + 1:]
    spec = letters + "," + letters[axis] + "z->" + out
    return jnp.einsum(spec, x, weights.astype(x.dtype))


def _scale_and_translate(x: Array, shape: tuple[int, ...], spatial_dims: Sequence[int],
                         scale, translation, method: ResizeMethod,
                         antialias: bool) -> Array:
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH
    for i, d in enumerate(spatial_dims):
        axis = d + x.ndim if d < 0 else d
        w = _weight_matrix(x.shape[axis], shape[axis], scale[i], translation[i], method,
                           antialias, edge_padding)
        x = _contract(x, w, axis)
    return x


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method, antialias: bool = True,
                        precision=lax.Precision.HIGHEST) -> Array:
    """Resample `image` to `shape` under the map x -> x * scale + translation on the given
    spatial dimensions (pixel centres at i + 0.5; the inverse map gives sample positions).

    Outputs whose sample position lies outside the input are zero. `method` is a
    ResizeMethod or its name; nearest is not supported here (as in JAX). `antialias`
    widens the kernel when downsampling. The result is floating point. `precision` is
    accepted as JAX's signature has it: redraft's contractions are always full float32.
    """
    x = jnp.asarray(image)
    shape = _as_shape(shape, x)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    spatial_dims = tuple(int(d) for d in spatial_dims)
    scale, translation = _inexact(scale), _inexact(translation)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale and translation must have one entry per spatial dimension "
                         f"({len(spatial_dims)}), got shapes {scale.shape} and "
                         f"{translation.shape}")
    for d in spatial_dims:
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"spatial dimension {d} is out of range for an image of rank "
                             f"{x.ndim}")
    return _scale_and_translate(_inexact(x), shape, spatial_dims, scale, translation,
                                method, antialias)


def _nearest_indices(in_size: int, out_size: int) -> Array:
    """floor((j + 0.5) * in / out) as JAX's compiled form computes it: in float32, by the
    factor in * (1 / out) rounded to float32 (XLA folds the division into it), which picks
    the lower neighbour where the exact quotient is an integer (10 -> 25: j = 2 gives 0)."""
    factor = jnp.float32(in_size) * (jnp.float32(1.0) / jnp.float32(out_size))
    centres = jnp.arange(out_size, dtype=jnp.float32) + 0.5
    return jnp.floor(centres * factor).astype(jnp.int32)


def _resize_nearest(x: Array, shape: tuple[int, ...]) -> Array:
    for axis in range(x.ndim):
        if x.shape[axis] != shape[axis]:
            x = jnp.take(x, _nearest_indices(x.shape[axis], shape[axis]), axis=axis)
    return x


def resize(image, shape: Sequence[int], method, antialias: bool = True,
           precision=lax.Precision.HIGHEST) -> Array:
    """`image` resampled to `shape` (one entry per dimension; batch and channel dimensions
    keep their size) by `method`, a ResizeMethod or its name.

    Nearest keeps the dtype; every other method returns floating point and, with
    `antialias`, low-pass filters when downsampling. Dimensions whose size is unchanged are
    left as they are (every kernel interpolates). `precision` is accepted as JAX's
    signature has it: redraft's contractions are always full float32.
    """
    x = jnp.asarray(image)
    shape = _as_shape(shape, x)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(x, shape)
    x = _inexact(x)
    spatial_dims = tuple(d for d in range(x.ndim) if x.shape[d] != shape[d])
    scale = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in spatial_dims]
    translation = [0.0] * len(spatial_dims)
    return _scale_and_translate(x, shape, spatial_dims, scale, translation, method,
                                antialias)
