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
    # a cast operand takes the promoted weak flag (int32 + 1.5 is a weak float32, as in JAX)
    return [a if a.dtype == dtype else convert(a, dtype, weak) for a in arrays]


def promote_inexact(*args) -> list[Array]:
    """As `promote`, then integers and bools become the default float (for sin, /, mean)."""
    arrays = promote(*args)
    if dtypes.is_inexact(arrays[0].dtype):
        return arrays
    return [convert(a, dtypes.DEFAULT_FLOAT, a._weak) for a in arrays]


def convert(a: Array, dtype, weak: bool) -> Array:
    """`a` as `dtype` with weak flag `weak`: a NumPy cast now, or a staged conversion."""
    if type(a._buf) is np.ndarray:
        return wrap_host(a._buf.astype(dtype), weak)
    from redraft.compiler.primitives.elementwise import convert_element_type_p
    from redraft.runtime.eager import bind
    return bind(convert_element_type_p, a, new_dtype=np.dtype(dtype), weak_type=weak)


def cast(x: Array, dtype) -> Array:
    """`x` as `dtype` (a no-op when it already is); casting drops weak typing."""
    if x._buf.dtype == dtype:  # NumPy compares a dtype with anything np.dtype() accepts
        return x
    dtype = np.dtype(dtype)
    if x._buf.dtype == dtype:
        return x
    from redraft.compiler.primitives.elementwise import convert_element_type
    return convert_element_type(x, dtype)


def result_type(*args) -> np.dtype:
    """The dtype JAX's promotion gives for combining `args` (arrays, scalars or dtypes)."""
    types = []
    for a in args:
        if isinstance(a, (np.dtype, type)) or (isinstance(a, str)):
            types.append((dtypes.resolve_dtype(a), False))
        elif hasattr(a, "dtype") and not isinstance(a, (Array, np.ndarray, np.generic)):
            types.append((np.dtype(a.dtype), False))  # jnp.float32-style scalar types
        else:
            x = as_array(a)
            types.append((x.dtype, x._weak))
    return dtypes.promote_types(*types)[0]


def promote_types(a, b) -> np.dtype:
    return dtypes.promote_types((dtypes.resolve_dtype(a), False),
                                (dtypes.resolve_dtype(b), False))[0]


def astype(x, dtype, copy: bool = False) -> Array:
    return cast(as_array(x), dtypes.check_dtype_arg(dtype, "astype"))
