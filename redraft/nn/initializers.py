"""redraft.nn.initializers: functions `init(key, shape, dtype) -> Array` for weights, as in
jax.nn.initializers, drawn with redraft.random so that they give JAX's values for a key.

Variance scaling (Glorot, He, LeCun) divides `scale` by a fan computed from the shape: the
input and output axes times the receptive field (every other axis, for convolutions).
"""
from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

import numpy as np

import redraft.numpy as jnp
from redraft import random
from redraft.runtime.array import Array

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = .87962566103423978


class Initializer(Protocol):
    """An initializer: `init(key, shape, dtype=float32) -> Array`."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None) -> Array:
        ...


def _float_dtype(dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype is None else np.dtype(dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Array:
    """An array of zeros (the key is unused)."""
    return jnp.zeros(shape, _float_dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Array:
    """An array of ones (the key is unused)."""
    return jnp.ones(shape, _float_dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with `value`."""
    def init(key, shape, dtype=dtype):
        return jnp.full(shape, value, dtype=_float_dtype(dtype))
    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform in [0, scale)."""
    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """Normal with mean 0 and standard deviation `stddev`."""
    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """A standard normal truncated to [lower, upper], times `stddev`."""
    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev,
                                                                                   dtype)
    return init


def _axis_size(shape: tuple, axis) -> int:
    if isinstance(axis, int):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def compute_fans(shape: Sequence[int], in_axis=-2, out_axis=-1, batch_axis=()) -> tuple:
    """(fan_in, fan_out): the input and output sizes times the receptive field size."""
    shape = tuple(shape)
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"cannot compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with the default in_axis: give at least 2 dimensions "
                         "or an explicit in_axis")
    in_size = _axis_size(shape, in_axis)
    out_size = _axis_size(shape, out_axis)
    batch_size = _axis_size(shape, batch_axis)
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def variance_scaling(scale: float, mode: str, distribution: str, in_axis=-2, out_axis=-1,
                     batch_axis=(), dtype: Any = None) -> Initializer:
    """Samples of variance scale / n, n the fan chosen by `mode` ('fan_in', 'fan_out',
    'fan_avg', 'fan_geo_avg'), from `distribution` ('truncated_normal', 'normal',
    'uniform')."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = jnp.array(scale / denominator, dtype=dtype)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """Glorot and Bengio (2010), uniform: variance 2 / (fan_in + fan_out)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """Glorot and Bengio (2010), truncated normal: variance 2 / (fan_in + fan_out)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """LeCun (1998), uniform: variance 1 / fan_in."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """LeCun (1998), truncated normal: variance 1 / fan_in."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """He et al. (2015), uniform: variance 2 / fan_in."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype: Any = None) -> Initializer:
    """He et al. (2015), truncated normal: variance 2 / fan_in."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Uniformly distributed orthogonal matrices (orthonormal along the smaller side), the
    `column_axis` holding the columns."""
    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = tuple(np.delete(np.array(shape), column_axis))
        q = jnp.moveaxis(jnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1,
                     dtype: Any = None) -> Initializer:
    """Xiao et al. (2018): a convolution kernel, zero but at its spatial centre, where it is an
    orthogonal matrix (in_channels <= out_channels); for 3-, 4- and 5-d kernels."""
    def init(key, shape, dtype=dtype):
        dtype = _float_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("delta orthogonal initializer requires a 3D, 4D or 5D shape")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:], dtype)
        centre = tuple(d // 2 for d in shape[:-2])
        return jnp.zeros(shape, dtype).at[centre].set(matrix)
    return init
