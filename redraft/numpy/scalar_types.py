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

# the narrow types JAX takes from the ml_dtypes package: named (dtype=jnp.bfloat16 compares
# and hashes as JAX's does), but making an array of one is refused where dtypes are read
# (runtime/dtypes.py): the runtime computes with NumPy's own dtypes only
ML_DTYPE_NAMES = ("bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
                  "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                  "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4",
                  "uint1", "uint2", "uint4")


def _ml_dtypes_scalar_types() -> dict[str, _ScalarType]:
    import ml_dtypes
    return {name: _ScalarType(getattr(ml_dtypes, name)) for name in ML_DTYPE_NAMES}


globals().update(_ml_dtypes_scalar_types())

__all__ = ["float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "bool_", "complex64", "complex128", *ML_DTYPE_NAMES]


def _refuse_batching() -> None:
    from redraft.compiler.primitives.registry import defnotbatchable
    for name in ML_DTYPE_NAMES:
        defnotbatchable(globals()[name], f"redraft has no {name} arrays to batch")


_refuse_batching()
