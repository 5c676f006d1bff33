"""Reductions over axes, arg-reductions, cumulative scans and sorting."""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis, check_dtype_kind
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules

FAMILY = "reductions"


def _reduce(name: str, impl, kinds: str = "biufc", what: str = "a numeric operand"
            ) -> Primitive:
    """A reduction `x -> y` over the static `axes` (sorted, non-negative)."""
    prim = Primitive(name, FAMILY)
    impl_rules[prim] = impl

    def abstract_eval(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        check_dtype_kind(x.dtype, kinds, f"lax.{name}", what)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    abstract_eval_rules[prim] = abstract_eval
    return prim


def _typed(np_fn):
    def impl(x, *, axes):
        return np.asarray(np_fn(x, axis=axes)).astype(x.dtype, copy=False)
    return impl


def _identity(dtype: np.dtype, largest: bool):
    """The identity of max (the smallest value) or min (the largest), as in XLA."""
    if dtype.kind == "f":
        return -np.inf if largest else np.inf
    if dtype.kind == "b":
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


def _reduce_max(x, *, axes):
    return np.max(x, axis=axes, initial=_identity(x.dtype, True))


def _reduce_min(x, *, axes):
    return np.min(x, axis=axes, initial=_identity(x.dtype, False))


reduce_sum_p = _reduce("reduce_sum", _typed(np.sum))
reduce_prod_p = _reduce("reduce_prod", _typed(np.prod))
reduce_max_p = _reduce("reduce_max", _reduce_max, "biuf", "a real operand")
reduce_min_p = _reduce("reduce_min", _reduce_min, "biuf", "a real operand")
reduce_and_p = _reduce("reduce_and", lambda x, *, axes: np.all(x, axis=axes), "b")
reduce_or_p = _reduce("reduce_or", lambda x, *, axes: np.any(x, axis=axes), "b")

# The reductions a fused loop nest may end in: the one list the fusion pass, the verifier
# and both backends read.
FUSIBLE_REDUCTIONS = frozenset({reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p,
                                reduce_and_p, reduce_or_p})


def _arg(name: str, np_fn) -> Primitive:
    prim = Primitive(name, FAMILY, WeakRule.NEVER)

    def impl(x, *, axis: int, index_dtype):
        if x.shape[axis] == 0:
            raise ValueError(f"{name} of an empty axis has no answer")
        if x.dtype.kind == "f":  # NaN wins, as in JAX
            nan = np.isnan(x)
            if nan.any():
                return np.where(nan.any(axis=axis), np.argmax(nan, axis=axis),
                                np_fn(np.where(nan, 0, x), axis=axis)).astype(index_dtype)
        return np_fn(x, axis=axis).astype(index_dtype)

    def abstract_eval(x: ShapedArray, *, axis: int, index_dtype) -> ShapedArray:
        check_dtype_kind(x.dtype, "biuf", f"lax.{name}", "a real operand")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, np.dtype(index_dtype), False)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    return prim


argmax_p = _arg("argmax", np.argmax)
argmin_p = _arg("argmin", np.argmin)


def _cumulative(name: str, np_fn) -> Primitive:
    prim = Primitive(name, FAMILY)

    def impl(x, *, axis: int, reverse: bool = False):
        if reverse:
            return np.flip(np_fn(np.flip(x, axis), axis=axis), axis).astype(x.dtype)
        return np_fn(x, axis=axis).astype(x.dtype)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = lambda x, *, axis, reverse=False: x
    return prim


cumsum_p = _cumulative("cumsum", np.cumsum)
cumprod_p = _cumulative("cumprod", np.cumprod)
cummax_p = _cumulative("cummax", np.maximum.accumulate)
cummin_p = _cumulative("cummin", np.minimum.accumulate)

sort_p = Primitive("sort", FAMILY)
impl_rules[sort_p] = lambda x, *, dimension: np.sort(x, axis=dimension, kind="stable")
abstract_eval_rules[sort_p] = lambda x, *, dimension: x

argsort_p = Primitive("argsort", FAMILY, WeakRule.NEVER)
impl_rules[argsort_p] = lambda x, *, dimension, descending=False: (
    _argsort_descending(x, dimension) if descending
    else np.argsort(x, axis=dimension, kind="stable").astype(np.int32))
abstract_eval_rules[argsort_p] = lambda x, *, dimension, descending=False: ShapedArray(
    x.shape, dtypes.int32, False)


def _argsort_descending(x, dimension):
    """Stable descending order: equal keys keep their original order."""
    n = x.shape[dimension]
    flipped = np.flip(x, dimension)
    order = np.flip(np.argsort(flipped, axis=dimension, kind="stable"), dimension)
    return (n - 1 - order).astype(np.int32)


# ---- the lax functions ----------------------------------------------------------------------

def _reducer(prim: Primitive):
    def fn(operand, axes) -> Array:
        x = as_array(operand)
        axes = canonical_axes(axes, x.ndim, f"lax.{prim.name}")
        abstract_eval_rules[prim](ShapedArray(x.shape, x.dtype, x._weak), axes=axes)
        return bind(prim, x, axes=axes)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"lax.{prim.name}(operand, axes): reduce over `axes`."
    return fn


reduce_sum = _reducer(reduce_sum_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_and = _reducer(reduce_and_p)
reduce_or = _reducer(reduce_or_p)


def argmax(operand, axis: int, index_dtype=np.int32) -> Array:
    x = as_array(operand)
    axis = canonical_axis(axis, x.ndim, "lax.argmax")
    abstract_eval_rules[argmax_p](ShapedArray(x.shape, x.dtype), axis=axis,
                                  index_dtype=np.dtype(index_dtype))
    return bind(argmax_p, x, axis=axis, index_dtype=np.dtype(index_dtype))


def argmin(operand, axis: int, index_dtype=np.int32) -> Array:
    x = as_array(operand)
    axis = canonical_axis(axis, x.ndim, "lax.argmin")
    abstract_eval_rules[argmin_p](ShapedArray(x.shape, x.dtype), axis=axis,
                                  index_dtype=np.dtype(index_dtype))
    return bind(argmin_p, x, axis=axis, index_dtype=np.dtype(index_dtype))


def _cumulative_fn(prim: Primitive):
    def fn(operand, axis: int = 0, reverse: bool = False) -> Array:
        x = as_array(operand)
        axis = canonical_axis(axis, x.ndim, f"lax.{prim.name}")
        return bind(prim, x, axis=axis, reverse=bool(reverse))
    fn.__name__ = fn.__qualname__ = prim.name
    return fn


cumsum = _cumulative_fn(cumsum_p)
cumprod = _cumulative_fn(cumprod_p)
cummax = _cumulative_fn(cummax_p)
cummin = _cumulative_fn(cummin_p)


def sort(operand, dimension: int = -1) -> Array:
    x = as_array(operand)
    return bind(sort_p, x, dimension=canonical_axis(dimension, x.ndim, "lax.sort"))


def argsort(operand, dimension: int = -1, descending: bool = False) -> Array:
    x = as_array(operand)
    return bind(argsort_p, x, dimension=canonical_axis(dimension, x.ndim, "lax.argsort"),
                descending=bool(descending))
