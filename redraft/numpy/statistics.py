"""Statistics of samples: covariance and correlation, histograms, digitize, interp,
bincount, trapezoid."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["cov", "corrcoef", "histogram_bin_edges", "histogram", "histogram2d",
           "histogramdd", "digitize", "interp", "bincount", "trapezoid"]


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None) -> Array:
    """The covariance matrix of the variables in the rows (rowvar) or columns of m (and y)."""
    x = jnp.atleast_2d(jnp.asarray(m))
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(float)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        y = jnp.atleast_2d(jnp.asarray(y)).astype(x.dtype)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = jnp.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = jnp.asarray(fweights).astype(x.dtype)
    if aweights is not None:
        aw = jnp.asarray(aweights).astype(x.dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = jnp.mean(x, axis=1)
        w_sum = float(n)
        fact = w_sum - ddof
        centred = x - avg[:, None]
        c = jnp.dot(centred, centred.T.conj()) / fact
    else:
        w_sum = jnp.sum(w)
        avg = jnp.sum(x * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * jnp.sum(w * jnp.asarray(aweights).astype(x.dtype)) / w_sum
        centred = x - avg[:, None]
        c = jnp.dot(centred * w, centred.T.conj()) / fact
    return jnp.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True) -> Array:
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = jnp.diag(c)
    stddev = jnp.sqrt(jnp.real(d))
    c = c / stddev[:, None] / stddev[None, :]
    return jnp.clip(c, -1, 1)


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Array:  # noqa: A002
    """The edges of `bins` equal bins over `range` (default: a's min and max), or `bins`
    itself when it is a sequence of edges."""
    a = jnp.ravel(jnp.asarray(a))
    if np.ndim(bins) == 1:
        return jnp.asarray(bins)
    dtype = a.dtype if np.issubdtype(a.dtype, np.inexact) else jnp.result_type(float)
    if range is None:
        lo, hi = jnp.min(a).astype(dtype), jnp.max(a).astype(dtype)
    else:
        lo, hi = jnp.asarray(range[0], dtype), jnp.asarray(range[1], dtype)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
    return jnp.linspace(lo, hi, int(bins) + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None,  # noqa: A002
              density=None) -> tuple[Array, Array]:
    """(counts, bin_edges): how many of a's values (or how much weight) fall in each bin;
    the last bin includes its right edge."""
    a = jnp.ravel(jnp.asarray(a))
    edges = histogram_bin_edges(a, bins, range, weights)
    n_bins = edges.shape[0] - 1
    index = jnp.searchsorted(edges, a, side="right") - 1
    index = jnp.where(a == edges[-1], n_bins - 1, index)
    inside = jnp.logical_and(index >= 0, index < n_bins)
    w = jnp.ones_like(a, dtype=edges.dtype) if weights is None else jnp.ravel(
        jnp.asarray(weights)).astype(edges.dtype)
    hits = (index[:, None] == jnp.arange(n_bins)[None, :]) & inside[:, None]
    counts = jnp.sum(jnp.where(hits, w[:, None], 0), axis=0)
    if density:
        counts = counts / jnp.sum(counts) / jnp.diff(edges)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Histogram of the N points of `sample` (N, D) in D dimensions: (counts, [edges])."""
    sample = jnp.asarray(sample)
    n, d = sample.shape
    bins = [bins] * d if np.ndim(bins) == 0 else list(bins)
    ranges = [None] * d if range is None else list(range)
    edges = [histogram_bin_edges(sample[:, i], bins[i], ranges[i]) for i in np.arange(d)]
    flat_index = jnp.zeros((n,), jnp.int32)
    inside = jnp.ones((n,), bool)
    sizes = []
    for i in np.arange(d):
        e = edges[i]
        k = e.shape[0] - 1
        idx = jnp.searchsorted(e, sample[:, i], side="right") - 1
        idx = jnp.where(sample[:, i] == e[-1], k - 1, idx)
        inside = inside & (idx >= 0) & (idx < k)
        flat_index = flat_index * k + jnp.clip(idx, 0, k - 1)
        sizes.append(k)
    total = int(np.prod(sizes))
    # as JAX's: unweighted counts are default ints, weighted ones the weights' float type
    w = jnp.ones((n,), int) if weights is None else jnp.asarray(weights).astype(
        jnp.result_type(edges[0].dtype, jnp.asarray(weights).dtype))
    hits = (flat_index[:, None] == jnp.arange(total)[None, :]) & inside[:, None]
    counts = jnp.sum(jnp.where(hits, w[:, None], 0), axis=0).reshape(tuple(sizes))
    if density:
        counts = counts.astype(edges[0].dtype)
        volume = edges[0][1:] - edges[0][:-1]
        for e in edges[1:]:
            volume = volume[..., None] * (e[1:] - e[:-1])
        counts = counts / jnp.sum(counts) / volume
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, x_edges, y_edges) of the points (x, y)."""
    counts, edges = histogramdd(jnp.stack([jnp.ravel(jnp.asarray(x)),
                                           jnp.ravel(jnp.asarray(y))], axis=1),
                                bins, range, weights, density)
    return counts, edges[0], edges[1]


def digitize(x, bins, right: bool = False, *, method=None) -> Array:
    """The bin index of each x: i with bins[i-1] <= x < bins[i] (or the other way round for
    decreasing bins; right=True closes bins on the right)."""
    x, bins = jnp.asarray(x), jnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be one-dimensional, got shape {bins.shape}")
    if bins.shape[0] == 0:
        return jnp.zeros(x.shape, jnp.int32)
    side = "left" if right else "right"
    increasing = jnp.searchsorted(bins, x, side=side)
    decreasing = bins.shape[0] - jnp.searchsorted(bins[::-1], x,
                                                  side="left" if side == "right" else "right")
    return jnp.where(bins[-1] >= bins[0], increasing, decreasing).astype(jnp.int32)


def interp(x, xp, fp, left=None, right=None, period=None) -> Array:
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp increasing)."""
    x, xp, fp = jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp)
    dtype = jnp.result_type(x, xp, fp, 1.0)
    x, xp, fp = x.astype(dtype), xp.astype(dtype), fp.astype(dtype)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right have no meaning with a period")
        x = x % period
        xp = xp % period
        order = jnp.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    i = jnp.clip(jnp.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    safe_dx = jnp.where(dx == 0, 1, dx)
    f = jnp.where(dx == 0, fp[i], fp[i - 1] + (delta / safe_dx) * (fp[i] - fp[i - 1]))
    if period is None:
        f = jnp.where(x < xp[0], fp[0] if left is None else left, f)
        f = jnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None) -> Array:
    """How often each non-negative integer occurs in x (or the weights summed per value);
    `length` fixes the result's size, as jit needs (otherwise max(x) + 1)."""
    x = jnp.ravel(jnp.asarray(x))
    if not np.issubdtype(x.dtype, np.integer):
        raise TypeError(f"bincount: x must be integers, got {x.dtype}")
    if length is None:
        length = max(int(jnp.max(x)) + 1 if x.shape[0] else 0, int(minlength))
    w = jnp.ones(x.shape, jnp.int32) if weights is None else jnp.ravel(jnp.asarray(weights))
    hits = x[:, None] == jnp.arange(length)[None, :]
    return jnp.sum(jnp.where(hits, w[:, None], 0), axis=0)


def trapezoid(y, x=None, dx=1.0, axis: int = -1) -> Array:
    """The integral of y (along axis) by the trapezoidal rule."""
    y = jnp.moveaxis(jnp.asarray(y), axis, -1)
    if not np.issubdtype(y.dtype, np.inexact):
        y = y.astype(float)
    if x is None:
        widths = dx
    else:
        x = jnp.asarray(x)
        widths = jnp.diff(x) if x.ndim == 1 else jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    return jnp.sum(widths * (y[..., 1:] + y[..., :-1]) / 2, axis=-1)
