"""Reductions over axes, arg-reductions, cumulative scans and sorting.

This family file owns everything about its operations, each keyed by its primitive: the
primitive with its impl and abstract eval, its lax function, its jvp and vjp rules and its
batching (compiler/primitives/registry.py). A rule needing a helper of the generated-code
library calls it as `ad.` or `lad.`, through the registry's placeholders.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis, check_dtype_kind
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import (AxisBatching, ad, defbatch, defjvp,
                                                  defnondiff, defstatic, defvjp, lad, lax,
                                                  names_primitive)

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


for _fn, _p in ((reduce_sum, reduce_sum_p), (reduce_prod, reduce_prod_p),
                (reduce_max, reduce_max_p), (reduce_min, reduce_min_p),
                (reduce_and, reduce_and_p), (reduce_or, reduce_or_p), (argmax, argmax_p),
                (argmin, argmin_p), (cumsum, cumsum_p), (cumprod, cumprod_p),
                (cummax, cummax_p), (cummin, cummin_p), (sort, sort_p), (argsort, argsort_p)):
    names_primitive(_fn, _p)

# ---- derivatives ---------------------------------------------------------------------------------

defjvp(reduce_sum_p, lambda operand_dot, ans, operand, axes: lax.reduce_sum(operand_dot, axes))
defvjp(reduce_sum_p, lambda g, ans, operand, axes: ad.unsum(g, operand, axes, False))
# Each element's derivative is the product of the other reduced elements (lad.prod_others
# computes it from exclusive cumulative products: no division, so zeros are fine).
defjvp(reduce_prod_p, lambda operand_dot, ans, operand, axes: lax.reduce_sum(
    operand_dot * lad.prod_others(operand, axes), axes))
defvjp(reduce_prod_p, lambda g, ans, operand, axes: ad.unsum(g, operand, axes, False)
       * lad.prod_others(operand, axes))
for _p in (reduce_max_p, reduce_min_p):  # ties share the derivative equally
    defjvp(_p, lambda operand_dot, ans, operand, axes: lax.reduce_sum(
        operand_dot * ad.argext_mask(operand, ans, axes, False), axes))
    defvjp(_p, lambda g, ans, operand, axes: ad.unsum(g, operand, axes, False)
           * ad.argext_mask(operand, ans, axes, False))
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p):
    defstatic(_p, "axes")

defjvp(cumsum_p, lambda operand_dot, ans, operand, axis=0, reverse=False:
       lax.cumsum(operand_dot, axis, reverse))
defvjp(cumsum_p, lambda g, ans, operand, axis=0, reverse=False:
       lax.cumsum(g, axis, not reverse))
# cumprod: y[i] = x[i] y[i-1], so y_dot[i] = x[i] y_dot[i-1] + y[i-1] x_dot[i], a linear
# recurrence; its transpose runs the recurrence backwards with the coefficients shifted.
defjvp(cumprod_p, lambda operand_dot, ans, operand, axis=0, reverse=False:
       lad.linear_recurrence(operand, lad.shift(ans, axis, reverse, 1.0) * operand_dot, axis,
                             reverse))
defvjp(cumprod_p, lambda g, ans, operand, axis=0, reverse=False:
       lad.shift(ans, axis, reverse, 1.0) * lad.linear_recurrence(
           lad.shift(operand, axis, not reverse), g, axis, not reverse))
for _p in (cummax_p, cummin_p):  # the derivative of the element each result equals
    defjvp(_p, lambda operand_dot, ans, operand, axis=0, reverse=False: lad.take_along(
        operand_dot, lad.cumulative_source(operand, ans, axis, reverse), axis))
    defvjp(_p, lambda g, ans, operand, axis=0, reverse=False: lad.take_along_bar(
        g, operand, lad.cumulative_source(operand, ans, axis, reverse), axis))
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    defstatic(_p, "axis", "reverse")

# sorting is a permutation of the operand
defjvp(sort_p, lambda operand_dot, ans, operand, dimension=-1: lad.take_along(
    operand_dot, lad.argsort_inverse(operand, dimension)[0], dimension))
defvjp(sort_p, lambda g, ans, operand, dimension=-1: lad.take_along(
    g, lad.argsort_inverse(operand, dimension)[1], dimension))
defstatic(sort_p, "dimension")

for _p in (reduce_and_p, reduce_or_p):
    defnondiff(_p, "bool-valued reduction")
for _p in (argmax_p, argmin_p):
    defnondiff(_p, "integer-valued: the position of the extremum")
defnondiff(argsort_p, "integer-valued: the positions that sort the operand")

# ---- batching: the operand batched at axis 0, the axis argument shifted past it -----------------

for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p):
    defbatch(_p, AxisBatching("axes"))
for _p in (argmax_p, argmin_p):
    defbatch(_p, AxisBatching("axis"))
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    defbatch(_p, AxisBatching("axis", 0))
for _p in (sort_p, argsort_p):
    defbatch(_p, AxisBatching("dimension", -1))
