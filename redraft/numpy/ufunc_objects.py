"""jnp.ufunc and jnp.frompyfunc: a Python function of scalars as a NumPy-style ufunc, with
its methods reduce, accumulate, outer, at and reduceat.

As in JAX, calling it vectorizes the function over broadcast arguments (jnp.vectorize),
and each method is a loop of calls of it: reduce folds along an axis from the first
element (or `initial`), accumulate keeps every partial fold, at applies it at indexed
positions one index at a time (so repeated indices apply it again), reduceat folds
segments, outer calls it on every pair. The loops are lax loops and the calls vectorized
functions, so jit, grad and vmap go through them as through the user's function.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from redraft.compiler.primitives.control import fori_loop
from redraft.compiler.primitives.registry import defbatch_source
from redraft.numpy import shapes, ufuncs
from redraft.numpy.creation import asarray, full
from redraft.numpy.functional import vectorize
from redraft.numpy.indexing import take
from redraft.runtime.array import Array

__all__ = ["ufunc", "frompyfunc"]


class ufunc:  # noqa: N801 - JAX's name
    """`func` of `nin` arguments and `nout` results as a ufunc; `identity` is what reduce
    starts from when an axis is empty (None: it has no identity)."""

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity=None, call: Callable | None = None,
                 reduce: Callable | None = None, accumulate: Callable | None = None,
                 at: Callable | None = None, reduceat: Callable | None = None):
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs) if nargs is not None else self.nin
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call = call or vectorize(func)
        self._methods = {"reduce": reduce, "accumulate": accumulate, "at": at,
                         "reduceat": reduceat}

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None or where is not None:
            raise NotImplementedError(f"{self.__name__}: the out and where arguments of a "
                                      "ufunc call are not supported (nor are they in JAX)")
        return self._call(*args)

    # ---- reductions ------------------------------------------------------------------------

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs returning a single "
                             f"value ({self.__name__} takes {self.nin} and returns "
                             f"{self.nout})")

    def reduce(self, a, axis: int | None = 0, dtype=None, out=None, keepdims: bool = False,
               initial=None, where=None) -> Array:
        """Fold along `axis` (None: over the flattened array) with this binary function."""
        self._binary("reduce")
        if self._methods["reduce"] is not None:
            return self._methods["reduce"](a, axis=axis, dtype=dtype, keepdims=keepdims,
                                           initial=initial, where=where)
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        x = asarray(a)
        dtype = dtype if dtype is not None else _result_dtype(self._call, (x.dtype, x.dtype))
        if initial is None:
            initial = self.identity
        if where is not None and initial is None:
            raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                             "identity, so to use a where mask one has to specify 'initial'.")
        mask = None if where is None else shapes.broadcast_to(asarray(where), x.shape)
        if axis is None:
            final = (1,) * x.ndim if keepdims else ()
            x = shapes.ravel(x)
            mask = None if mask is None else shapes.ravel(mask)
            axis = 0
        else:
            axis = axis % x.ndim
            final = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
            x = shapes.moveaxis(x, axis, 0)
            mask = None if mask is None else shapes.moveaxis(mask, axis, 0)
        if x.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return full(final, initial, dtype)
        result = self._fold(x, mask, initial, dtype)
        return shapes.reshape(result, final) if keepdims else result

    def _fold(self, x: Array, mask, initial, dtype) -> Array:
        rows = x.astype(dtype)
        start = 1 if initial is None else 0
        first = rows[0] if initial is None else shapes.broadcast_to(
            asarray(initial).astype(dtype), rows.shape[1:])

        def step(i, acc):
            folded = self._call(acc, rows[i])
            return folded if mask is None else ufuncs.where(mask[i], folded, acc)

        return fori_loop(start, rows.shape[0], step, first)

    def accumulate(self, a, axis: int = 0, dtype=None, out=None) -> Array:
        """Every partial fold along `axis`: out[i] = f(out[i - 1], a[i]), out[0] = a[0]."""
        self._binary("accumulate")
        if self._methods["accumulate"] is not None:
            return self._methods["accumulate"](a, axis=axis, dtype=dtype)
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        x = asarray(a)
        dtype = dtype if dtype is not None else _result_dtype(self._call, (x.dtype, x.dtype))
        if x.size == 0:
            return full(x.shape, 0, dtype)
        axis = axis % x.ndim
        rows = shapes.moveaxis(x, axis, 0).astype(dtype)
        outs = [rows[0]]
        for i in range(1, rows.shape[0]):
            outs.append(self._call(outs[i - 1], rows[i]))
        return shapes.moveaxis(shapes.stack(outs), 0, axis)

    def reduceat(self, a, indices, axis: int = 0, dtype=None) -> Array:
        """Folds of the segments a[indices[i]:indices[i + 1]] along `axis` (the last runs
        to the end; where indices[i] >= indices[i + 1] the segment is a[indices[i]])."""
        self._binary("reduceat")
        if self._methods["reduceat"] is not None:
            return self._methods["reduceat"](a, indices, axis=axis, dtype=dtype)
        x, idx = asarray(a), asarray(indices)
        if x.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got {x.shape=}")
        if idx.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got {idx.shape=}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = axis % x.ndim
        out = take(x, idx, axis=axis)
        if dtype is not None:
            out = out.astype(dtype)
        bounds = shapes.concatenate([idx, full((1,), x.shape[axis], idx.dtype)])
        keep = tuple(d for d in range(out.ndim) if d != axis)
        starts = shapes.expand_dims(bounds[:-1], keep)
        ends = shapes.expand_dims(bounds[1:], keep)

        def step(i, acc):
            inside = (i > starts) & (i < ends)
            folded = self._call(acc, take(x, shapes.expand_dims(i, 0), axis=axis))
            return ufuncs.where(inside, folded, acc)

        return fori_loop(0, x.shape[axis], step, out)

    def outer(self, A, B) -> Array:  # noqa: N803 - NumPy's names
        """f on every pair: shape A.shape + B.shape."""
        self._binary("outer")
        x, y = asarray(A), asarray(B)
        rows = shapes.reshape(x, (x.size,) + (1,) * y.ndim)
        result = self._call(rows, shapes.reshape(y, (1,) + y.shape))
        return shapes.reshape(result, x.shape + y.shape)

    def at(self, a, indices, b=None, inplace: bool = True) -> Array:
        """A copy of `a` with f applied at `indices` (with the values `b` for a binary f),
        one index at a time, so a repeated index is updated again. (JAX's inplace is
        keyword-only; transforms read this source, which takes no keyword-only parameters.)"""
        if inplace:
            raise NotImplementedError("jax.numpy.ufunc.at does not support inplace=True; "
                                      "pass inplace=False to get the updated copy")
        if self._methods["at"] is not None:
            return self._methods["at"](a, indices) if b is None else self._methods["at"](
                a, indices, b)
        x = asarray(a)
        args = () if b is None else (asarray(b),)
        dtype = _result_dtype(self._call, (x.dtype,) + tuple(v.dtype for v in args))
        x = x.astype(dtype)
        args = tuple(v.astype(dtype) for v in args)
        index = indices if isinstance(indices, tuple) else (indices,)
        arrays = [asarray(i) for i in index if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*(i.shape for i in arrays)) if arrays else ()
        if not shape:
            return x.at[indices].set(self._update(x.at[indices].get(), args))
        count = int(np.prod(shape))
        flat = tuple(i if isinstance(i, slice) else shapes.ravel(shapes.broadcast_to(
            asarray(i), shape)) for i in index)
        if args:
            value = args[0]
            tail = value.shape[len(shape):] if value.ndim > len(shape) else ()
            args = (shapes.reshape(shapes.broadcast_to(value, shape + tail), (count,) + tail),)
        for k in range(count):
            where_k = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            x = x.at[where_k].set(self._update(x.at[where_k].get(), tuple(v[k] for v in args)))
        return x

    def _update(self, old, values: tuple):
        """f(old) for a unary f, f(old, values[0]) for a binary one."""
        if len(values) == 0:
            return self._call(old)
        return self._call(old, values[0])


@functools.lru_cache(maxsize=None)
def _result_dtype(call: Callable, arg_dtypes: tuple) -> np.dtype:
    """The dtype `call` gives ones of `arg_dtypes` (JAX's eval_shape on them): worked out
    once, in Python, so that transforms see a dtype, not a computation."""
    return np.dtype(asarray(call(*(full((), 1, d) for d in arg_dtypes))).dtype)



def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity=None) -> ufunc:
    """`func` as a ufunc (jnp.ufunc) of `nin` arguments and `nout` results."""
    return ufunc(func, nin, nout, identity=identity)


defbatch_source(frompyfunc)
