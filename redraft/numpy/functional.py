"""Functions applied over arrays: vectorize and apply_along_axis (through vmap),
apply_over_axes, piecewise, fromfunction."""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "fromfunction"]


# vectorize and apply_along_axis are built on vmap, a transform several layers above the
# numpy API; redraft/vmap.py installs it here at import (any import of redraft runs it).
_TRANSFORMS: dict = {}


def install_vmap(vmap: Callable) -> None:
    """Called once by redraft.vmap with the vmap these functions batch through."""
    _TRANSFORMS["vmap"] = vmap


def _vmap():
    return _TRANSFORMS["vmap"]


def vectorize(pyfunc: Callable, *, excluded=frozenset(), signature: str | None = None):
    """pyfunc applied elementwise over broadcast arguments (through vmap over each axis).
    Core-dimension signatures ('(n),(n)->()') are not supported yet."""
    if signature is not None:
        raise NotImplementedError("vectorize(signature=...) is not supported yet")

    @functools.wraps(pyfunc)
    def wrapped(*args):
        arrays = [jnp.asarray(a) if i not in excluded else a for i, a in enumerate(args)]
        batched = [i for i, a in enumerate(arrays) if i not in excluded]
        shape = jnp.broadcast_shapes(*[arrays[i].shape for i in batched]) if batched else ()
        for i in batched:
            arrays[i] = jnp.broadcast_to(arrays[i], shape)
        fun = pyfunc
        in_axes = tuple(0 if i in batched else None for i in range(len(arrays)))
        for _ in range(len(shape)):
            fun = _vmap()(fun, in_axes=in_axes)
        return fun(*arrays)

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs) -> Array:
    """func1d applied to every 1-D slice of arr along axis (through vmap)."""
    arr = jnp.asarray(arr)
    axis = axis % arr.ndim
    fun = functools.partial(func1d, *args, **kwargs) if args or kwargs else func1d
    moved = jnp.moveaxis(arr, axis, -1)
    for _ in range(arr.ndim - 1):
        fun = _vmap()(fun)
    out = fun(moved)
    out = jnp.asarray(out)
    extra = out.ndim - (arr.ndim - 1)
    return jnp.moveaxis(out, tuple(range(arr.ndim - 1, out.ndim)),
                        tuple(range(axis, axis + extra))) if extra else out


def apply_over_axes(func: Callable, a, axes) -> Array:
    """func(a, axis) applied axis after axis, keeping the reduced axes."""
    a = jnp.asarray(a)
    for axis in np.atleast_1d(axes):
        b = func(a, int(axis))
        a = b if b.ndim == a.ndim else jnp.expand_dims(b, int(axis))
    return a


def piecewise(x, condlist, funclist, *args, **kw) -> Array:
    """funclist[k](x) where condlist[k] holds (a constant instead of a function gives that
    value); one extra function is the default where no condition holds."""
    x = jnp.asarray(x)
    conds = [jnp.asarray(c) for c in (condlist if isinstance(condlist, (list, tuple))
                                      else [condlist])]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: {n} conditions need {n} or {n + 1} functions, got "
                         f"{len(funclist)}")
    out = jnp.zeros_like(x)
    if len(funclist) == n + 1:
        default = funclist[-1]
        out = jnp.broadcast_to(jnp.asarray(default(x, *args, **kw) if callable(default)
                                           else default, x.dtype), x.shape)
    for cond, f in zip(conds, funclist[:n]):
        value = f(x, *args, **kw) if callable(f) else f
        out = jnp.where(cond, jnp.asarray(value).astype(x.dtype), out)
    return out


def fromfunction(function: Callable, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for the index grids of an array of `shape`."""
    dtype = jnp.result_type(float) if dtype is float else np.dtype(dtype)
    grids = jnp.meshgrid(*[jnp.arange(d, dtype=dtype) for d in shape], indexing="ij")
    return function(*grids, **kwargs)
