"""Two elementwise primitives lax has beside elementwise.py's: bitcast_convert_type between
types of one width, and complex (a real and an imaginary part into one complex number).

bitcast_convert_type reinterprets each element's bits (lax.bitcast_convert_type builds the
width-changing forms on it, redraft/lax/bits.py); the LLVM backend lowers it to a register
bitcast. complex is differentiable (its parts' tangents are the real and imaginary parts of
the result's); like every complex computation it runs on the interpreter under jit.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import broadcast_shapes, check_dtype_kind
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.registry import (ELEMENTWISE, ad, defbatch, defjvp, defnondiff,
                                                  defstatic, defvjp, elementwise_batching, jnp,
                                                  lax, names_primitive)
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules

FAMILY = "elementwise"  # both compute each element from the same element of each operand

# ---- bitcast between types of one width ----------------------------------------------------

bitcast_convert_type_p = Primitive("bitcast_convert_type", FAMILY, WeakRule.NEVER)


def _bitcast_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    return np.asarray(x).view(new_dtype)  # one width: any layout views in place


def _bitcast_abstract(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    new_dtype = np.dtype(new_dtype)
    if x.dtype.itemsize != new_dtype.itemsize:
        raise TypeError(f"bitcast_convert_type_p keeps the width: {x.dtype.name} is "
                        f"{8 * x.dtype.itemsize} bits, {new_dtype.name} "
                        f"{8 * new_dtype.itemsize}")
    return ShapedArray(x.shape, new_dtype, False)


abstract_eval_rules[bitcast_convert_type_p] = _bitcast_abstract


def bitcast_same_width(x, new_dtype) -> Array:
    """x's bits read as `new_dtype`, which has x's width (the primitive itself)."""
    x = as_array(x)
    new_dtype = np.dtype(new_dtype)
    _bitcast_abstract(ShapedArray(x.shape, x.dtype, False), new_dtype=new_dtype)
    return bind(bitcast_convert_type_p, x, new_dtype=new_dtype)


# ---- complex from two reals -----------------------------------------------------------------

complex_p = Primitive("complex", FAMILY)


def _complex_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _complex_of(x.dtype))
    out.real, out.imag = x, y  # no arithmetic: inf and nan parts stay as they are
    return out


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)


def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    for v in (x, y):
        check_dtype_kind(v.dtype, "f", "lax.complex", "a float32 or float64 operand")
        if v.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"lax.complex needs float32 or float64 parts, got {v.dtype.name}")
    if x.dtype != y.dtype:
        raise TypeError(f"lax.complex requires arguments of the same dtype, got "
                        f"{x.dtype.name}, {y.dtype.name}")
    shape = broadcast_shapes(x.shape, y.shape, op="lax.complex")
    return ShapedArray(shape, _complex_of(x.dtype), complex_p.result_weak(
        [x.weak_type, y.weak_type], {}))


abstract_eval_rules[complex_p] = _complex_abstract


def complex(x, y) -> Array:  # noqa: A001 - lax's name
    """x + i y, elementwise, for float32 (complex64 result) or float64 parts."""
    x, y = strict_operands("complex", (x, y))
    _complex_abstract(ShapedArray(x.shape, x.dtype, x._weak),
                      ShapedArray(y.shape, y.dtype, y._weak))
    return bind(complex_p, x, y)


impl_rules[bitcast_convert_type_p] = _bitcast_impl
impl_rules[complex_p] = _complex_impl
names_primitive(bitcast_same_width, bitcast_convert_type_p)
names_primitive(complex, complex_p)

defnondiff(bitcast_same_width, "reinterprets bits: the result is not a differentiable "
                               "function of the operand's value")
defstatic(bitcast_same_width, "new_dtype")
defbatch(bitcast_same_width, elementwise_batching(static=("new_dtype",)))

defjvp(complex,
       lambda x_dot, ans, x, y: lax.complex(jnp.broadcast_to(x_dot, jnp.shape(ans)),
                                            jnp.zeros(jnp.shape(ans), jnp.result_type(x_dot))),
       lambda y_dot, ans, x, y: lax.complex(jnp.zeros(jnp.shape(ans), jnp.result_type(y_dot)),
                                            jnp.broadcast_to(y_dot, jnp.shape(ans))))
# JAX's transposition of x + i y: real(g) to x, -imag(g) to y (the cotangent convention
# lax.real and lax.imag follow in elementwise.py)
defvjp(complex,
       lambda g, ans, x, y: ad.unbroadcast(lax.real(g), x),
       lambda g, ans, x, y: ad.unbroadcast(-lax.imag(g), y))
defbatch(complex, ELEMENTWISE)
