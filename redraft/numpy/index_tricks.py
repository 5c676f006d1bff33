"""Index helpers: r_, c_, s_, index_exp, mgrid, ogrid, ix_, indices, the *_indices
functions, unravel_index and ravel_multi_index."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ix_", "indices", "diag_indices",
           "diag_indices_from", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "mask_indices", "unravel_index", "ravel_multi_index"]

s_ = np.s_
index_exp = np.index_exp


def _slice_values(s: slice) -> Array:
    """The values of a start:stop:step slice, or of start:stop:Nj (N points, ends included)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return jnp.linspace(start, s.stop, int(abs(step)))
    return jnp.arange(start, s.stop, step)


class _Concatenator:
    """r_ and c_: slices and arrays concatenated along an axis."""

    def __init__(self, axis: int, min_ndim: int, trans1d: int) -> None:
        self.axis, self.min_ndim, self.trans1d = axis, min_ndim, trans1d

    def __getitem__(self, key) -> Array:
        items = key if isinstance(key, tuple) else (key,)
        axis, min_ndim, trans1d = self.axis, self.min_ndim, self.trans1d
        if items and isinstance(items[0], str):
            spec = [int(v) for v in items[0].split(",")]
            axis = spec[0]
            if len(spec) > 1:
                min_ndim = spec[1]
            if len(spec) > 2:
                trans1d = spec[2]
            items = items[1:]
        parts = []
        for item in items:
            part = _slice_values(item) if isinstance(item, slice) else jnp.asarray(item)
            if part.ndim < min_ndim:
                ones = (1,) * (min_ndim - part.ndim)
                shape = part.shape + ones if trans1d == 0 else ones + part.shape
                if trans1d == -1 or trans1d >= part.ndim:
                    shape = ones + part.shape if trans1d == -1 else shape
                part = part.reshape(shape)
            parts.append(part)
        return jnp.concatenate(parts, axis=axis)

    def __len__(self) -> int:
        return 0


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


class _Grid:
    """mgrid (dense) and ogrid (open) coordinate grids from slices."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        grids = jnp.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return grids if self.sparse else jnp.stack(grids)


mgrid = _Grid(False)
ogrid = _Grid(True)


def ix_(*args) -> tuple[Array, ...]:
    """Open-mesh index arrays: args[k] reshaped to lie along axis k."""
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError("ix_: arguments must be one-dimensional")
        if a.dtype == np.bool_:
            a = jnp.asarray(np.nonzero(np.asarray(a))[0])
        out.append(a.reshape((1,) * k + (a.shape[0],) + (1,) * (n - k - 1)))
    return tuple(out)


def indices(dimensions, dtype=None, sparse: bool = False):
    """The index grid of an array of shape `dimensions` (stacked, or open with sparse)."""
    dtype = jnp.result_type(int) if dtype is None else np.dtype(dtype)
    axes = [jnp.arange(d, dtype=dtype) for d in dimensions]
    grids = jnp.meshgrid(*axes, indexing="ij", sparse=sparse)
    if sparse:
        return tuple(grids)
    return jnp.stack(grids) if grids else jnp.zeros((0,), dtype)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """Indices of the main diagonal of an n x ... x n array."""
    i = jnp.arange(n)
    return (i,) * ndim


def diag_indices_from(arr) -> tuple[Array, ...]:
    arr = jnp.asarray(arr)
    if arr.ndim < 2 or len(set(arr.shape)) != 1:
        raise ValueError("diag_indices_from: all dimensions of the input must be equal")
    return diag_indices(arr.shape[0], arr.ndim)


def _mask_positions(mask: np.ndarray) -> tuple[Array, Array]:
    rows, cols = np.nonzero(mask)
    index = jnp.result_type(int)  # int32, int64 with x64 on
    return jnp.asarray(rows.astype(index)), jnp.asarray(cols.astype(index))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle of an (n, m) array."""
    return _mask_positions(np.tri(n, m, k, dtype=bool))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle of an (n, m) array."""
    return _mask_positions(~np.tri(n, m, k - 1, dtype=bool))


def tril_indices_from(arr, k: int = 0) -> tuple[Array, Array]:
    shape = jnp.shape(arr)
    if len(shape) != 2:
        raise ValueError("tril_indices_from: input array must be two-dimensional")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k: int = 0) -> tuple[Array, Array]:
    shape = jnp.shape(arr)
    if len(shape) != 2:
        raise ValueError("triu_indices_from: input array must be two-dimensional")
    return triu_indices(shape[0], k, shape[1])


def mask_indices(n: int, mask_func, k: int = 0, *, size=None) -> tuple[Array, Array]:
    """Indices where mask_func(ones((n, n)), k) is non-zero (e.g. mask_func=jnp.triu)."""
    mask = np.asarray(mask_func(jnp.ones((n, n), jnp.int32), k)) != 0
    return _mask_positions(mask)


def unravel_index(indices, shape) -> tuple[Array, ...]:
    """Flat indices into arrays of shape `shape` as one index array per axis (negative
    indices count from the end; out-of-range ones are clipped, as in JAX)."""
    idx = jnp.asarray(indices)
    total = int(np.prod(shape))
    idx = jnp.where(idx < 0, idx + total, idx)
    idx = jnp.clip(idx, 0, max(total - 1, 0))
    out = []
    for d in reversed(tuple(shape)):
        out.append(idx % d)
        idx = idx // d
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C") -> Array:
    """Per-axis indices into an array of shape `dims` as flat indices ('wrap' or 'clip' out of
    range ones; 'raise' checks concrete indices)."""
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    idx = [jnp.asarray(i) for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError("ravel_multi_index: one index array per dimension is needed")
    fixed = []
    for i, d in zip(idx, dims):
        if mode == "raise":
            values = np.asarray(i)
            if values.size and (values.min() < 0 or values.max() >= d):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
            fixed.append(i)
        elif mode == "wrap":
            fixed.append(i % d)
        elif mode == "clip":
            fixed.append(jnp.clip(i, 0, d - 1))
        else:
            raise ValueError(f"ravel_multi_index: invalid mode {mode!r}")
    order_pairs = list(zip(fixed, dims))
    if order == "F":
        order_pairs = order_pairs[::-1]
    flat = jnp.zeros(jnp.broadcast_shapes(*[jnp.shape(i) for i in fixed]), jnp.int32)
    for i, d in order_pairs:
        flat = flat * d + i
    return flat
