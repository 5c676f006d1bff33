"""dtypes: 32-bit defaults and JAX's type-promotion lattice with weak types.

A value's type for promotion is a pair (dtype, weak). Python scalars are *weak*: they take
the dtype of the arrays they meet (`float32_array * 2.0` stays float32). Promotion is the
least upper bound in JAX's lattice, then canonicalised to 32 bits (redraft, like JAX's
default, has no 64-bit types at run time).
"""
from __future__ import annotations

import functools

import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

DEFAULT_INT, DEFAULT_UINT, DEFAULT_FLOAT, DEFAULT_COMPLEX = int32, uint32, float32, complex64

# Lattice nodes: dtypes, plus the three weak categories of Python scalars.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_EDGES: dict[object, tuple] = {
    bool_: (_WEAK_INT,),
    _WEAK_INT: (uint8, int8),
    uint8: (int16, uint16), uint16: (int32, uint32), uint32: (int64, uint64),
    uint64: (_WEAK_FLOAT,),
    int8: (int16,), int16: (int32,), int32: (int64,), int64: (_WEAK_FLOAT,),
    _WEAK_FLOAT: (float16, _WEAK_COMPLEX),
    float16: (float32,), float32: (float64, complex64), float64: (complex128,),
    _WEAK_COMPLEX: (complex64,), complex64: (complex128,), complex128: (),
}
_WEAK_DEFAULT = {_WEAK_INT: int32, _WEAK_FLOAT: float32, _WEAK_COMPLEX: complex64}
_CANONICAL = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def _upper_set(node) -> frozenset:
    seen, todo = {node}, [node]
    while todo:
        for succ in _EDGES[todo.pop()]:
            if succ not in seen:
                seen.add(succ)
                todo.append(succ)
    return frozenset(seen)


_UPPER = {node: _upper_set(node) for node in _EDGES}


def canonicalize(dtype) -> np.dtype:
    """The 32-bit dtype redraft uses for `dtype` (float64 -> float32, int64 -> int32)."""
    dtype = np.dtype(dtype)
    return _CANONICAL.get(dtype, dtype)


def _node(dtype: np.dtype, weak: bool):
    if not weak:
        return dtype
    kind = dtype.kind
    if kind in "iu":
        return _WEAK_INT
    if kind == "f":
        return _WEAK_FLOAT
    if kind == "c":
        return _WEAK_COMPLEX
    return dtype


def _join(a, b):
    common = _UPPER[a] & _UPPER[b]
    for cand in common:
        if common <= _UPPER[cand]:
            return cand
    raise TypeError(f"no common type for {a} and {b}")  # unreachable: the lattice is complete


@functools.lru_cache(maxsize=None)
def promote_pair(a: np.dtype, a_weak: bool, b: np.dtype, b_weak: bool) -> tuple[np.dtype, bool]:
    """(dtype, weak) of combining a value of type (a, a_weak) with one of (b, b_weak)."""
    node = _join(_node(a, a_weak), _node(b, b_weak))
    if isinstance(node, str):
        return _WEAK_DEFAULT[node], True
    return canonicalize(node), False


def promote_types(*types: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """(dtype, weak) of combining several (dtype, weak) types, as JAX's result_type."""
    dtype, weak = types[0]
    if len(types) == 1:
        return canonicalize(dtype), weak
    for other, other_weak in types[1:]:
        dtype, weak = promote_pair(dtype, weak, other, other_weak)
    return dtype, weak


def python_scalar_dtype(value) -> np.dtype:
    """The dtype a Python scalar takes: bools are strong, numbers weak (see is_weak)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return DEFAULT_INT
    if isinstance(value, float):
        return DEFAULT_FLOAT
    if isinstance(value, complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"{type(value).__name__} is not a Python scalar")


def is_python_scalar(value) -> bool:
    return type(value) in (bool, int, float, complex)


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def to_inexact(dtype: np.dtype, weak: bool) -> tuple[np.dtype, bool]:
    """The floating type an integer or bool operand is promoted to by `/`, `sin`, `mean`."""
    if is_inexact(dtype):
        return dtype, weak
    return DEFAULT_FLOAT, weak


def check_dtype_arg(dtype) -> np.dtype:
    """Validate a user's `dtype=` argument; Python types map to 32-bit defaults."""
    if dtype is float:
        return DEFAULT_FLOAT
    if dtype is int:
        return DEFAULT_INT
    if dtype is bool:
        return bool_
    if dtype is complex:
        return DEFAULT_COMPLEX
    try:
        return canonicalize(np.dtype(dtype))
    except TypeError:
        raise TypeError(f"dtype {dtype!r} is not a valid dtype") from None


def finfo(dtype) -> np.finfo:
    return np.finfo(check_dtype_arg(dtype))


def iinfo(dtype) -> np.iinfo:
    return np.iinfo(check_dtype_arg(dtype))
