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
    """pyfunc applied over broadcast arguments (through vmap over each loop axis). With a
    generalised-ufunc `signature` such as '(m,n),(n)->(m)', each argument's trailing axes
    are the core axes pyfunc sees; the leading ones broadcast and are looped over."""
    ins, outs = _parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args):
        arrays = [jnp.asarray(a) if i not in excluded else a for i, a in enumerate(args)]
        batched = [i for i, a in enumerate(arrays) if i not in excluded]
        cores = _core_shapes(ins, [arrays[i].shape for i in batched], pyfunc)
        loops = [arrays[i].shape[:arrays[i].ndim - len(c)] for i, c in zip(batched, cores)]
        shape = jnp.broadcast_shapes(*loops) if batched else ()
        # a new list, not one written over: each argument broadcast to the loop shape
        core_of = dict(zip(batched, cores))
        arrays = [jnp.broadcast_to(a, shape + core_of[i]) if i in core_of else a
                  for i, a in enumerate(arrays)]
        fun = pyfunc
        in_axes = tuple(0 if i in batched else None for i in range(len(arrays)))
        for _ in range(len(shape)):
            fun = _vmap()(fun, in_axes=in_axes)
        result = fun(*arrays)
        if outs is not None:
            _check_outputs(result, outs, len(shape))
        return result

    return wrapped


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    import re
    text = signature.replace(" ", "")
    group = r"\((?:\w+(?:,\w+)*)?\)"
    if not re.fullmatch(rf"{group}(?:,{group})*->{group}(?:,{group})*", text):
        raise ValueError(f"not a valid gufunc signature: {signature!r}")
    sides = text.split("->")
    return [[tuple(d for d in g.strip("()").split(",") if d) for g in re.findall(group, side)]
            for side in sides]


def _core_shapes(ins, arg_shapes: list, pyfunc) -> list[tuple[int, ...]]:
    """The core shape of each argument (given by its shape, so that transforms see a
    function of shapes only) under signature inputs `ins` (all () without one), checking
    that every core dimension name has one size."""
    if ins is None:
        return [()] * len(arg_shapes)
    if len(ins) != len(arg_shapes):
        raise TypeError(f"wrong number of positional arguments: expected {len(ins)}, got "
                        f"{len(arg_shapes)} (vectorize of {getattr(pyfunc, '__name__', pyfunc)})")
    sizes: dict[str, int] = {}
    shapes = []
    for dims, shape in zip(ins, arg_shapes):
        if len(shape) < len(dims):
            raise ValueError(f"input with shape {shape} does not have enough dimensions "
                             f"for its core dimensions {dims}")
        core = shape[len(shape) - len(dims):]
        for name, size in zip(dims, core):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                 f"{sizes[name]} vs {size}")
        shapes.append(tuple(core))
    return shapes


def _check_outputs(result, outs: list[tuple[str, ...]], loop_rank: int) -> None:
    """The function returned as many outputs as the signature names, each of its core rank
    (behind the `loop_rank` loop axes)."""
    results = (result,) if len(outs) == 1 else result
    if len(outs) > 1 and (not isinstance(result, tuple) or len(result) != len(outs)):
        raise ValueError(f"vectorize: the function must return a tuple of {len(outs)} "
                         "outputs, as its signature says")
    for r, dims in zip(results, outs):
        if jnp.ndim(r) - loop_rank != len(dims):
            raise ValueError(f"vectorize: an output has rank {jnp.ndim(r) - loop_rank}, but "
                             f"its core dimensions {dims} say {len(dims)}")


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
