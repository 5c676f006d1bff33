"""multivariate_normal: mean + F z for standard normal z and a factor F with F F^T = cov.

The factor comes from NumPy's LAPACK (Cholesky by default, or an SVD or eigendecomposition),
where JAX calls its own LAPACK build, so samples agree with JAX's to the rounding of the
factorisation (a few ulp, in float32, or float64 with x64 on) for 'cholesky'. 'svd' and 'eigh'
factors are unique only up to the signs of their columns, which two LAPACK builds may choose
differently: those samples have JAX's distribution but need not equal its numbers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from redraft.random.basic import (KeyLike, Shape, _check_shape, _normal,
                                  _sample, _sampler, _shape, _single_key)
from redraft.random.continuous import float_dtype

__all__ = ["multivariate_normal"]

_METHODS = ("svd", "eigh", "cholesky")


def _array_dtype(value: Any) -> np.dtype:
    return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype


def multivariate_normal(key: KeyLike, mean: Any, cov: Any, shape: Shape | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """Samples of N(mean, cov): shape (*shape, n) where mean has shape (..., n) and cov
    (..., n, n); `shape` defaults to the broadcast of their batch shapes."""
    words = _single_key("multivariate_normal", key)
    if method not in _METHODS:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean_shape, cov_shape = tuple(np.shape(mean)), tuple(np.shape(cov))
    if len(mean_shape) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{len(mean_shape)}")
    if len(cov_shape) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{len(cov_shape)}")
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov_shape}.")
    for value in (mean, cov):
        if _array_dtype(value).kind not in "biuf":
            raise TypeError(f"multivariate_normal: mean and cov must be real, got "
                            f"{_array_dtype(value)}")
    default = _array_dtype(mean) if _array_dtype(mean).kind == "f" else None
    dtype = float_dtype("multivariate_normal", dtype if dtype is not None else default)
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean_shape[:-1], cov_shape[:-2]))
    else:
        shape = _shape("multivariate_normal", shape)
        _check_shape("normal", shape, mean_shape[:-1], cov_shape[:-2])
    out_shape = shape + (n,)
    return _sample("multivariate_normal", out_shape, dtype, words, mean=mean, cov=cov,
                   shape=shape, dtype=dtype.name, method=method)


def _factor(cov: np.ndarray, method: str) -> np.ndarray:
    """F with F F^T = cov (NaN where cov is not positive definite, as JAX's Cholesky)."""
    if method == "cholesky":
        try:
            return np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            return _cholesky_or_nan(cov)
    if method == "svd":
        u, s, _ = np.linalg.svd(cov)
        return u * np.sqrt(s[..., None, :])
    w, v = np.linalg.eigh(cov)
    with np.errstate(invalid="ignore"):
        return v * np.sqrt(w[..., None, :])


def _cholesky_or_nan(cov: np.ndarray) -> np.ndarray:
    """Batched Cholesky where matrices that are not positive definite give NaN factors."""
    flat = cov.reshape(-1, *cov.shape[-2:])
    out = np.empty_like(flat)
    for i, matrix in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            out[i] = np.nan
    return out.reshape(cov.shape)


@_sampler("multivariate_normal")
def _multivariate_normal_host(words: np.ndarray, mean: Any, cov: Any, shape: tuple[int, ...],
                              dtype: str, method: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    work = np.dtype(np.float64 if dtype == np.float64 else np.float32)  # float16: in float32
    mean = np.asarray(mean).astype(work)
    cov = np.asarray(cov).astype(work)
    n = mean.shape[-1]
    factor = _factor(cov, method)
    z = _normal(words, shape + (n,), dtype).astype(work)
    product = np.einsum("...ij,...j->...i", factor, z)
    return (mean + product).astype(dtype)
