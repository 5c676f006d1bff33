"""`jnp.float32(1)` and friends: callables that make 0-d (or n-d) Arrays of one dtype.

In JAX these are not NumPy scalar types but functions returning Arrays; `dtype=jnp.float32`
must still work, so each carries `.dtype` and converts with np.dtype().
"""
from __future__ import annotations

import numpy as np

from redraft.runtime.array import Array


class _ScalarType:
    """A callable dtype: `jnp.float32(x)` is `jnp.asarray(x, dtype=float32)`."""

    def __init__(self, np_type):
        self.dtype = np.dtype(np_type)
        self.type = np_type
        self.__name__ = self.dtype.name

    def __call__(self, x=0) -> Array:
        from redraft.numpy.creation import asarray
        return asarray(x, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"<class 'redraft.numpy.{self.__name__}'>"

    def __eq__(self, other) -> bool:
        try:
            return np.dtype(other) == self.dtype
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)


float32 = _ScalarType(np.float32)
float16 = _ScalarType(np.float16)
float64 = _ScalarType(np.float64)
int8, int16, int32, int64 = (_ScalarType(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_ScalarType(t)
                                 for t in (np.uint8, np.uint16, np.uint32, np.uint64))
bool_ = _ScalarType(np.bool_)
complex64 = _ScalarType(np.complex64)
complex128 = _ScalarType(np.complex128)

__all__ = ["float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "bool_", "complex64", "complex128"]
