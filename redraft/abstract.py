"""Shapes without values: `ShapeDtypeStruct` and `eval_shape`, as in JAX.

`eval_shape(f, *args)` stages `f` for the arguments' shapes and dtypes (the compiler's
abstract interpretation, as jit does before it compiles) and returns the result's shapes and
dtypes, without running any arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from redraft.runtime.array import Array, wrap_host
from redraft.runtime.pytree import tree_map


@dataclass(frozen=True)
class ShapeDtypeStruct:
    """A stand-in for an array: its shape and dtype (and whether it is weakly typed)."""
    shape: tuple
    dtype: Any
    weak_type: bool = False

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        object.__setattr__(self, "dtype", np.dtype(dtype))
        object.__setattr__(self, "weak_type", bool(weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _placeholder(x) -> Any:
    """An array of x's shape and dtype that takes no memory (a broadcast zero)."""
    if isinstance(x, ShapeDtypeStruct) or (hasattr(x, "shape") and hasattr(x, "dtype")
                                           and not isinstance(x, (Array, np.ndarray))):
        zero = np.zeros((), dtype=np.dtype(x.dtype))
        return wrap_host(np.broadcast_to(zero, tuple(x.shape)),
                         bool(getattr(x, "weak_type", False)))
    return x


def eval_shape(fun: Callable, *args, **kwargs) -> Any:
    """The shapes and dtypes of `fun(*args, **kwargs)` as a pytree of ShapeDtypeStruct.

    Arguments may be arrays, Python numbers or ShapeDtypeStructs (anything with .shape and
    .dtype); keyword arguments are passed through as Python values."""
    from functools import partial

    from redraft.compiler import driver
    target = partial(fun, **kwargs) if kwargs else fun
    concrete = tree_map(_placeholder, args)
    ir_fn, out_treedef = driver.stage(_as_function(target), (tuple(concrete),), set())
    structs = [ShapeDtypeStruct(r.aval.shape, r.aval.dtype, r.aval.weak_type)
               for r in ir_fn.results]
    return out_treedef.unflatten(structs)


def _as_function(target: Callable) -> Callable:
    """A plain function calling `target` (the stager reads a function's source)."""
    def staged(args):
        return target(*args)
    return staged


def typeof(x: Any) -> ShapeDtypeStruct:
    """The abstract type (shape, dtype, weak type) of an array or Python number."""
    from redraft.runtime.convert import as_array
    a = x if isinstance(x, Array) else as_array(x)
    return ShapeDtypeStruct(a.shape, a.dtype, bool(getattr(a, "_weak", False)))
