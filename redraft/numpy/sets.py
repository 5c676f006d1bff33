"""Set operations on arrays: isin, intersect1d, union1d, setdiff1d, setxor1d. The results
of the last four have data-dependent sizes, so outside jit they are computed on concrete
values; `size=` (as in JAX) fixes the size, padding with fill_value."""
from __future__ import annotations

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["isin", "intersect1d", "union1d", "setdiff1d", "setxor1d"]


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Array:
    """Elementwise: whether each element occurs in test_elements."""
    element = jnp.asarray(element)
    tests = jnp.ravel(jnp.asarray(test_elements))
    found = jnp.any(element[..., None] == tests, axis=-1)
    return jnp.logical_not(found) if invert else found


def _sized(values: Array, size, fill_value) -> Array:
    if size is None:
        return values
    n = values.shape[0]
    if n >= size:
        return values[:size]
    fill = values[0] if fill_value is None and n else (0 if fill_value is None else fill_value)
    return jnp.concatenate([values, jnp.full((size - n,), fill, values.dtype)])


def _concrete_sorted_unique(a) -> np.ndarray:
    return np.unique(np.asarray(jnp.ravel(jnp.asarray(a))))


def union1d(ar1, ar2, *, size=None, fill_value=None) -> Array:
    """The sorted distinct values in either array."""
    both = jnp.concatenate([jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))])
    return jnp.unique(both, size=size, fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False,
                *, size=None, fill_value=None):
    """The sorted distinct values in both arrays (and, optionally, where they first occur)."""
    a, b = _concrete_sorted_unique(ar1), _concrete_sorted_unique(ar2)
    common = np.intersect1d(a, b)
    values = _sized(jnp.asarray(common), size, fill_value)
    if not return_indices:
        return values
    flat1 = np.asarray(jnp.ravel(jnp.asarray(ar1)))
    flat2 = np.asarray(jnp.ravel(jnp.asarray(ar2)))
    i1 = np.array([np.flatnonzero(flat1 == v)[0] for v in common], np.int32)
    i2 = np.array([np.flatnonzero(flat2 == v)[0] for v in common], np.int32)
    return values, _sized(jnp.asarray(i1), size, 0), _sized(jnp.asarray(i2), size, 0)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None) -> Array:
    """The sorted distinct values of ar1 that are not in ar2."""
    a = _concrete_sorted_unique(ar1)
    keep = ~np.asarray(isin(jnp.asarray(a), ar2))
    return _sized(jnp.asarray(a[keep]), size, fill_value)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None) -> Array:
    """The sorted distinct values in exactly one of the arrays."""
    a, b = _concrete_sorted_unique(ar1), _concrete_sorted_unique(ar2)
    only_a = a[~np.asarray(isin(jnp.asarray(a), jnp.asarray(b)))]
    only_b = b[~np.asarray(isin(jnp.asarray(b), jnp.asarray(a)))]
    return _sized(jnp.asarray(np.sort(np.concatenate([only_a, only_b]))), size, fill_value)
