"""Discrete families: geometric (one uniform draw), poisson (Knuth's product of uniforms for
small rates, Hormann's transformed rejection for large ones), binomial (inversion for small
means, Hormann's BTRS rejection for large ones) and multinomial (binomials in turn).

The rejection samplers loop until every element is accepted, drawing all elements' candidates
from one key per round, exactly as JAX's while loops do, so the samples are JAX's bits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from redraft.random import xla_math
from redraft.random.basic import (KeyLike, Shape, _dtype, _result_shape, _sample, _sampler,
                                  _single_key, _uniform)
from redraft.random.continuous import is_constant

__all__ = ["geometric"]


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    return _dtype(name, dtype, np.dtype(np.int32), "iu", "an int dtype")


def _probabilities(name: str, p: Any) -> Any:
    """p as an inexact array (integers become float32, as JAX promotes them)."""
    dtype = p.dtype if hasattr(p, "dtype") else np.asarray(p).dtype
    if dtype.kind not in "biuf":
        raise TypeError(f"{name}: p must be a real number or array, got dtype {dtype}")
    return p


def geometric(key: KeyLike, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Geometric samples (trials until the first success, >= 1) of success probability p:
    floor(log(u) / log(1 - p)) + 1."""
    words = _single_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    p = _probabilities("geometric", p)
    shape = _result_shape("geometric", shape, p)
    return _sample("geometric", shape, dtype, words, p=p, shape=shape, dtype=dtype.name)


@_sampler("geometric")
def _geometric_host(words: np.ndarray, p: Any, shape: tuple[int, ...], dtype: str
                    ) -> np.ndarray:
    p_arr = np.asarray(p)
    float_dtype = p_arr.dtype if p_arr.dtype.kind == "f" and p_arr.dtype.itemsize <= 4 \
        else np.dtype(np.float32)
    u = _uniform(words, shape, float_dtype, 0., 1.)
    u = np.where(u == 0, float_dtype.type(1), u)
    log_u = xla_math.log(u).astype(float_dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        if is_constant(p):  # XLA folds log1p(-p) (by the C library) and divides by multiplying
            log_q = xla_math.log1p_folded(-float_dtype.type(p)).astype(float_dtype)
            ratio = log_u * (float_dtype.type(1) / log_q)
        else:
            log_q = xla_math.log1p(-p_arr.astype(float_dtype)).astype(float_dtype)
            ratio = log_u / np.broadcast_to(log_q, shape)
        g = np.floor(ratio) + float_dtype.type(1)
        return g.astype(np.dtype(dtype))
