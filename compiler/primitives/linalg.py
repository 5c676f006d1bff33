"""dot_general: the one contraction primitive (dot, matmul, tensordot, einsum build on it).

dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)); the
result's axes are batch, then lhs free, then rhs free, as in XLA. As a family file it
also declares lax.dot_general's and lax.dot's jvp and vjp rules (compiler/primitives/
registry.py); their batching is code over the call, in batch/rules/products.py.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive
from redraft.compiler.primitives.checks import check_same_dtypes
from redraft.runtime.array import Array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.registry import (ad, defjvp, defstatic, defvjp, lax,
                                                  names_convenience, names_primitive)

FAMILY = "linalg"

dot_general_p = Primitive("dot_general", FAMILY)


def _free_axes(ndim: int, contracting, batch) -> list[int]:
    return [i for i in range(ndim) if i not in contracting and i not in batch]


def _dot_general_impl(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    lf, rf = _free_axes(lhs.ndim, lc, lb), _free_axes(rhs.ndim, rc, rb)
    batch = [lhs.shape[i] for i in lb]
    m = int(np.prod([lhs.shape[i] for i in lf], dtype=np.int64))
    n = int(np.prod([rhs.shape[i] for i in rf], dtype=np.int64))
    k = int(np.prod([lhs.shape[i] for i in lc], dtype=np.int64))
    b = int(np.prod(batch, dtype=np.int64))
    a = np.transpose(lhs, list(lb) + lf + list(lc)).reshape(b, m, k)
    c = np.transpose(rhs, list(rb) + list(rc) + rf).reshape(b, k, n)
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    if lhs.dtype.kind == "b":
        a, c = a.astype(np.int32), c.astype(np.int32)
    out = np.matmul(a, c).astype(out_dtype, copy=False)
    shape = batch + [lhs.shape[i] for i in lf] + [rhs.shape[i] for i in rf]
    return out.reshape(shape)


def _dot_general_abstract(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers,
                          preferred_element_type=None) -> ShapedArray:
    check_same_dtypes([lhs.dtype, rhs.dtype], "dot_general")
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general: dimension_numbers {dimension_numbers} pair unequal "
                        "numbers of axes")
    for axes, shape, side in ((lc + lb, lhs.shape, "lhs"), (rc + rb, rhs.shape, "rhs")):
        if any(not 0 <= a < len(shape) for a in axes) or len(set(axes)) != len(axes):
            raise TypeError(f"dot_general: {side} axes {axes} do not fit shape {shape}")
    for l_ax, r_ax in zip(lc + lb, rc + rb):
        if lhs.shape[l_ax] != rhs.shape[r_ax]:
            raise TypeError(f"dot_general: shapes {lhs.shape} and {rhs.shape} disagree on "
                            f"contracted/batch axes {l_ax} and {r_ax} "
                            f"({lhs.shape[l_ax]} != {rhs.shape[r_ax]})")
    lf, rf = _free_axes(lhs.ndim, lc, lb), _free_axes(rhs.ndim, rc, rb)
    shape = (tuple(lhs.shape[i] for i in lb) + tuple(lhs.shape[i] for i in lf)
             + tuple(rhs.shape[i] for i in rf))
    dtype = np.dtype(preferred_element_type or lhs.dtype)
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


impl_rules[dot_general_p] = _dot_general_impl
abstract_eval_rules[dot_general_p] = _dot_general_abstract


def _canonical_dimension_numbers(dimension_numbers) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(a) for a in lc), tuple(int(a) for a in rc)),
            (tuple(int(a) for a in lb), tuple(int(a) for a in rb)))


def dot_general(lhs, rhs, dimension_numbers, precision=None,
                preferred_element_type=None) -> Array:
    """lax.dot_general: contract `lhs` and `rhs` over the axes `dimension_numbers` names."""
    lhs, rhs = strict_operands("dot_general", (lhs, rhs))
    dims = _canonical_dimension_numbers(dimension_numbers)
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    abstract_eval_rules[dot_general_p](ShapedArray(lhs.shape, lhs.dtype, lhs._weak),
                                       ShapedArray(rhs.shape, rhs.dtype, rhs._weak),
                                       dimension_numbers=dims, preferred_element_type=pet)
    return bind(dot_general_p, lhs, rhs, dimension_numbers=dims, preferred_element_type=pet)


def dot(lhs, rhs, precision=None, preferred_element_type=None) -> Array:
    """lax.dot: vector·vector, matrix·vector or matrix·matrix (contract last with first)."""
    from redraft.runtime.convert import as_array
    lhs, rhs = as_array(lhs), as_array(rhs)
    if lhs.ndim not in (1, 2) or rhs.ndim not in (1, 2):
        raise TypeError(f"lax.dot takes arrays of rank 1 or 2, got shapes {lhs.shape} and "
                        f"{rhs.shape}; use dot_general")
    dims = (((lhs.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dims, precision, preferred_element_type)


names_primitive(dot_general, dot_general_p)
names_convenience(dot, dot_general_p)

# ---- derivatives: a product is bilinear; each operand's cotangent contracts the output's
# with the other operand (ad.dot_general_lhs_bar, ...) ------------------------------------------

defjvp(dot_general_p,
       lambda lhs_dot, ans, lhs, rhs, dimension_numbers, precision=None,
       preferred_element_type=None: lax.dot_general(lhs_dot, rhs, dimension_numbers),
       lambda rhs_dot, ans, lhs, rhs, dimension_numbers, precision=None,
       preferred_element_type=None: lax.dot_general(lhs, rhs_dot, dimension_numbers))
defvjp(dot_general_p,
       lambda g, ans, lhs, rhs, dimension_numbers, precision=None,
       preferred_element_type=None: ad.dot_general_lhs_bar(g, lhs, rhs, dimension_numbers),
       lambda g, ans, lhs, rhs, dimension_numbers, precision=None,
       preferred_element_type=None: ad.dot_general_rhs_bar(g, lhs, rhs, dimension_numbers))
defstatic(dot_general_p, "dimension_numbers", "precision", "preferred_element_type")
defjvp(dot,
       lambda lhs_dot, ans, lhs, rhs, precision=None, preferred_element_type=None:
       lax.dot(lhs_dot, rhs),
       lambda rhs_dot, ans, lhs, rhs, precision=None, preferred_element_type=None:
       lax.dot(lhs, rhs_dot))
defvjp(dot,
       lambda g, ans, lhs, rhs, precision=None, preferred_element_type=None:
       ad.dot_lhs_bar(g, lhs, rhs),
       lambda g, ans, lhs, rhs, precision=None, preferred_element_type=None:
       ad.dot_rhs_bar(g, lhs, rhs))
defstatic(dot, "precision", "preferred_element_type")
