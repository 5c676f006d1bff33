"""NumPy-level operand handling: JAX's implicit type promotion before calling lax."""
from __future__ import annotations

import numpy as np

from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array

_promote_pair = dtypes.promote_pair


def promote(*args) -> list[Array]:
    """Arrays of one promoted dtype; the result is weak only if every operand was weak."""
    arrays = [a if type(a) is Array else as_array(a) for a in args]
    dtype, weak = arrays[0].dtype, arrays[0]._weak
    for a in arrays[1:]:
        dtype, weak = _promote_pair(dtype, weak, a.dtype, a._weak)
    return [a if a.dtype == dtype else wrap_host(a._buf.astype(dtype), a._weak) for a in arrays]


def promote_inexact(*args) -> list[Array]:
    """As `promote`, then integers and bools become the default float (for sin, /, mean)."""
    arrays = promote(*args)
    if dtypes.is_inexact(arrays[0].dtype):
        return arrays
    return [wrap_host(a._buf.astype(dtypes.DEFAULT_FLOAT), a._weak) for a in arrays]


def cast(x: Array, dtype) -> Array:
    """`x` as `dtype` (a no-op when it already is); casting drops weak typing."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    from redraft.compiler.primitives.elementwise import convert_element_type
    return convert_element_type(x, dtype)
