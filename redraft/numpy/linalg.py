"""redraft.numpy.linalg: norms (more decompositions to come)."""
from __future__ import annotations

import numpy as np

from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

from redraft.numpy import reductions, ufuncs
from redraft.numpy.promotion import promote_inexact


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Array:  # noqa: A002
    """Vector and matrix norms, as numpy.linalg.norm."""
    x = promote_inexact(as_array(x))[0]
    if axis is None and ord is None:
        return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)) if x.dtype.kind == "c"
                                          else x * x, keepdims=keepdims))
    if axis is None:
        axis = tuple(range(x.ndim)) if x.ndim <= 2 else None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    mag = ufuncs.absolute(x)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return ufuncs.sqrt(reductions.sum(mag * mag, axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return reductions.max(mag, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return reductions.min(mag, axis=axes, keepdims=keepdims)
        if ord == 0:
            return reductions.sum(ufuncs.not_equal(mag, 0).astype(x.dtype), axis=axes,
                                  keepdims=keepdims)
        if ord == 1:
            return reductions.sum(mag, axis=axes, keepdims=keepdims)
        p = float(ord)
        return ufuncs.power(reductions.sum(ufuncs.power(mag, p), axis=axes,
                                           keepdims=keepdims), 1.0 / p)
    if len(axes) == 2:
        r, c = axes
        if ord in (None, "fro"):
            return ufuncs.sqrt(reductions.sum(mag * mag, axis=axes, keepdims=keepdims))
        if ord == 1:
            return reductions.max(reductions.sum(mag, axis=r, keepdims=True), axis=axes,
                                  keepdims=keepdims)
        if ord == np.inf:
            return reductions.max(reductions.sum(mag, axis=c, keepdims=True), axis=axes,
                                  keepdims=keepdims)
        raise NotImplementedError(f"matrix norm ord={ord!r} is not supported yet")
    raise ValueError(f"norm: axis {axis} must name one or two axes")
