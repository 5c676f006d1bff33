"""Scalar type names and predicates on dtypes and values (issubdtype, isdtype, can_cast,
isscalar, iscomplexobj, ...), with redraft's 32-bit defaults for the generic names."""
from __future__ import annotations

from numpy import (character, complexfloating, flexible, floating, generic,  # noqa: F401
                   inexact, integer, number, object_, signedinteger, unsignedinteger)
import numpy as np

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["character", "complexfloating", "flexible", "floating", "generic", "inexact",
           "integer", "number", "object_", "signedinteger", "unsignedinteger", "bool",
           "double", "single", "float_", "int_", "uint", "cdouble", "csingle", "complex_",
           "issubdtype", "isdtype", "can_cast", "isscalar", "iterable", "iscomplexobj",
           "isrealobj", "iscomplex", "isreal"]

bool = np.bool_  # noqa: A001
double = np.float64
single = np.float32
float_ = np.float64
int_ = np.int64
uint = np.uint64
cdouble = np.complex128
csingle = np.complex64
complex_ = np.complex128


def issubdtype(arg1, arg2) -> bool:
    """Whether dtype arg1 is below arg2 in the type hierarchy."""
    return np.issubdtype(arg1, arg2)


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind) -> bool:
    """The array API's dtype test: kind is a dtype, a kind name ('real floating', ...) or a
    tuple of them."""
    dtype = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}")
            if dtype.kind in _KINDS[k]:
                return True
        elif dtype == np.dtype(k):
            return True
    return False


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether values of from_'s dtype can be cast to `to` under the casting rule."""
    if isinstance(from_, (Array, np.ndarray, list, tuple, int, float, complex)):
        source = jnp.asarray(from_).dtype
    else:
        source = np.dtype(from_)
    return np.can_cast(source, np.dtype(to), casting)


def isscalar(element) -> bool:
    """True for Python and NumPy scalars and 0-dimensional arrays."""
    if isinstance(element, Array):
        return element.ndim == 0
    return np.isscalar(element) or (isinstance(element, np.ndarray) and element.ndim == 0)


def iterable(y) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype."""
    return np.issubdtype(jnp.asarray(x).dtype, np.complexfloating)


def isrealobj(x) -> bool:
    return not iscomplexobj(x)


def iscomplex(x) -> Array:
    """Elementwise: a non-zero imaginary part."""
    x = jnp.asarray(x)
    return jnp.imag(x) != 0 if iscomplexobj(x) else jnp.zeros(x.shape, np.bool_)


def isreal(x) -> Array:
    """Elementwise: a zero imaginary part."""
    return jnp.logical_not(iscomplex(x))
