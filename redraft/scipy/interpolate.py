"""redraft.scipy.interpolate, as jax.scipy.interpolate: RegularGridInterpolator.

Values on a rectilinear grid (each axis's coordinates strictly increasing) are interpolated
at query points, linearly (a weighted sum over the 2^d corners of the cell holding the point)
or by the nearest grid point. A point outside the grid gets `fill_value` (NaN by default),
or, with fill_value=None, the extrapolation of its edge cell. The interpolator is a pytree
(grid, values and fill value its leaves), so it passes into jit, grad and vmap.
"""
from __future__ import annotations

from itertools import product

import numpy as np

import redraft.numpy as jnp
from redraft.numpy.promotion import promote_inexact
from redraft.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim: int):
    """The query points as one (..., ndim) array: from a tuple of coordinate arrays (one per
    grid axis, broadcast together) or an array whose last axis is the grid's."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        shape = ()
        for c in xi:
            shape = np.broadcast_shapes(shape, jnp.shape(c))
        return jnp.stack([jnp.broadcast_to(c, shape).astype(float) for c in xi], axis=-1)
    xi = jnp.asarray(xi)
    if xi.ndim == 1:
        xi = xi.reshape(-1, ndim)
    return xi


class RegularGridInterpolator:
    """Interpolation of `values` on the grid `points` (one 1-D array per leading axis of
    values; values may have more trailing axes, interpolated alike)."""

    __redraft_source_call__ = True  # transforms read __call__ as they read a user's model's

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=np.nan):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("bounds_error=True cannot be checked in compiled code "
                                      "(as in JAX); points outside the grid get fill_value")
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        (values,) = promote_inexact(values)
        if fill_value is not None:
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method: str | None = None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        lead = xi.shape[:-1]
        flat = xi.reshape(-1, ndim)
        cells, fractions = self._locate(flat)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            result = self._nearest(cells, fractions)
        if self.fill_value is not None:
            outside = jnp.zeros((flat.shape[0],), dtype=bool)
            for axis in range(ndim):
                g = self.grid[axis]
                outside = outside | (flat[:, axis] < g[0]) | (flat[:, axis] > g[-1])
            mask = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return result.reshape(lead + self.values.shape[ndim:])

    def _locate(self, flat):
        """Per grid axis: each point's cell (the index of its lower corner, edge cells for
        points outside) and its fraction of the way across."""
        cells, fractions = [], []
        for axis in range(len(self.grid)):
            g, x = self.grid[axis], flat[:, axis]
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            cells.append(i)
            fractions.append((x - g[i]) / (g[i + 1] - g[i]))
        return cells, fractions

    def _linear(self, cells, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        total = jnp.asarray(0.0)
        for upper in product((False, True), repeat=len(cells)):  # the cell's corners
            corner = tuple(i + 1 if up else i for up, i in zip(upper, cells))
            weight = jnp.asarray(1.0)
            for up, t in zip(upper, fractions):
                weight = weight * (t if up else 1 - t)
            total = total + self.values[corner] * weight[trailing]
        return total

    def _nearest(self, cells, fractions):
        nearest = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(cells, fractions))
        return self.values[nearest]


register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values, r.fill_value), (r.method, r.bounds_error)),
    lambda aux, children: RegularGridInterpolator(children[0], children[1], aux[0], aux[1],
                                                  children[2]),
)
