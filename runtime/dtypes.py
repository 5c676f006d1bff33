"""dtypes: default dtypes and JAX's type-promotion lattice with weak types.

A value's type for promotion is a pair (dtype, weak). Python scalars are *weak*: they take
the dtype of the arrays they meet (`float32_array * 2.0` stays float32). Promotion is the
least upper bound in JAX's lattice, then canonicalised. With x64 off (JAX's default) there
are no 64-bit types at run time: float64 becomes float32, int64 int32, and an explicit
request for one warns as JAX does. With x64 on (runtime.config) the 64-bit types exist and
are the defaults (DEFAULT_FLOAT is float64, a Python int is int64).
"""
from __future__ import annotations

import functools
import sys
import warnings

import numpy as np

from redraft.runtime.config import strict_dtype_promotion, x64_enabled

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

_DEFAULTS_32 = {"DEFAULT_INT": int32, "DEFAULT_UINT": uint32, "DEFAULT_FLOAT": float32,
                "DEFAULT_COMPLEX": complex64}
_DEFAULTS_64 = {"DEFAULT_INT": int64, "DEFAULT_UINT": uint64, "DEFAULT_FLOAT": float64,
                "DEFAULT_COMPLEX": complex128}


def __getattr__(name: str) -> np.dtype:
    """DEFAULT_INT, DEFAULT_UINT, DEFAULT_FLOAT, DEFAULT_COMPLEX, read live: they follow the
    x64 flag, so `dtypes.DEFAULT_FLOAT` is float32 or float64 at the moment it is read."""
    if name in _DEFAULTS_32:
        return (_DEFAULTS_64 if x64_enabled() else _DEFAULTS_32)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_int() -> np.dtype:
    return int64 if x64_enabled() else int32


def default_uint() -> np.dtype:
    return uint64 if x64_enabled() else uint32


def default_float() -> np.dtype:
    return float64 if x64_enabled() else float32


def default_complex() -> np.dtype:
    return complex128 if x64_enabled() else complex64


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
_WEAK_DEFAULT = {_WEAK_INT: default_int, _WEAK_FLOAT: default_float,
                 _WEAK_COMPLEX: default_complex}
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
    """The dtype redraft uses for `dtype`: itself with x64 on; with it off, 32 bits
    (float64 -> float32, int64 -> int32)."""
    dtype = np.dtype(dtype)
    if x64_enabled():
        return dtype
    return _CANONICAL.get(dtype, dtype)


_TRUNCATION = ("Explicitly requested dtype {req} requested in {name} is not available, and "
               "will be truncated to dtype {got}. To enable more dtypes, set the "
               "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
               "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


def canonicalize_requested(dtype, name: str, stacklevel: int = 3) -> np.dtype:
    """canonicalize for a dtype the user asked for by name in `name` (zeros, astype, ...):
    a 64-bit request with x64 off is truncated with JAX's UserWarning, text unchanged."""
    dtype = np.dtype(dtype)
    got = canonicalize(dtype)
    if got != dtype:
        warnings.warn(_TRUNCATION.format(req=dtype.name, name=name, got=got.name),
                      UserWarning, stacklevel=stacklevel)
    return got


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


def promote_pair(a: np.dtype, a_weak: bool, b: np.dtype, b_weak: bool) -> tuple[np.dtype, bool]:
    """(dtype, weak) of combining a value of type (a, a_weak) with one of (b, b_weak)."""
    if a != b and strict_dtype_promotion():
        _check_strict(a, a_weak, b, b_weak)
    return _promote_pair(a, a_weak, b, b_weak, x64_enabled())


class TypePromotionError(TypeError):
    """An implicit promotion that jax_numpy_dtype_promotion="strict" refuses (JAX's name)."""


# the array kinds a weakly typed Python scalar of each kind joins without a new dtype
_STRICT_WEAK_JOINS = {"b": "b", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}


def _check_strict(a: np.dtype, a_weak: bool, b: np.dtype, b_weak: bool) -> None:
    """Strict promotion: one dtype, or a weak Python scalar that the other's kind holds
    (float32 + 1.0); anything else is an error."""
    if a_weak and b_weak:
        return
    if a_weak and np.dtype(b).kind in _STRICT_WEAK_JOINS[np.dtype(a).kind]:
        return
    if b_weak and np.dtype(a).kind in _STRICT_WEAK_JOINS[np.dtype(b).kind]:
        return
    names = tuple(f"<class '{_PY_NAMES[np.dtype(d).kind]}'>" if weak else np.dtype(d).name
                  for d, weak in ((a, a_weak), (b, b_weak)))
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        f"jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        f"output type, or set jax_numpy_dtype_promotion=standard.")


_PY_NAMES = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


@functools.lru_cache(maxsize=None)
def _promote_pair(a: np.dtype, a_weak: bool, b: np.dtype, b_weak: bool,
                  x64: bool) -> tuple[np.dtype, bool]:
    """promote_pair under a given x64 state (part of the cache key: the answer depends on it).
    With x64 off the operands are canonicalised first, as JAX does (int8 with uint64 is
    int8 with uint32, so int32, not a float)."""
    if not x64:
        a, b = canonicalize(a), canonicalize(b)
    node = _join(_node(a, a_weak), _node(b, b_weak))
    if isinstance(node, str):
        return _WEAK_DEFAULT[node](), True
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
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return default_complex()
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
    return default_float(), weak


def check_dtype_arg(dtype, name: str | None = None) -> np.dtype:
    """Validate a user's `dtype=` argument to `name` (the API function; the caller's name if
    not given). Python types map to the defaults; an explicit 64-bit dtype with x64 off is
    truncated to 32 bits with JAX's warning."""
    requested = _requested(dtype)
    if requested is not None:
        return canonicalize_requested(requested, name or sys._getframe(1).f_code.co_name,
                                      stacklevel=4)
    return _python_type_default(dtype)


def _python_type_default(dtype) -> np.dtype:
    return {float: default_float, int: default_int, complex: default_complex,
            bool: lambda: bool_}[dtype]()


def _requested(dtype) -> np.dtype | None:
    """The NumPy dtype a `dtype=` argument names, None for the Python types float/int/..."""
    if any(dtype is t for t in (float, int, bool, complex)):  # `in` would match np.float64
        return None
    try:
        requested = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype {dtype!r} is not a valid dtype") from None
    check_supported(requested)
    return requested


def check_supported(dtype: np.dtype) -> None:
    """Refuse the narrow types of the ml_dtypes package (bfloat16, float8_*, int4, ...): the
    runtime's arrays and kernels compute with NumPy's own dtypes, which these are not."""
    if dtype.kind == "V" or type(dtype).__module__.startswith("ml_dtypes") or (
            dtype.type.__module__ or "").startswith("ml_dtypes"):
        raise TypeError(f"redraft has no {dtype.name} arrays: its runtime computes with "
                        "NumPy's own dtypes (bool, integers, float16/32/64, complex); cast to "
                        "float32 or float16 instead")


def resolve_dtype(dtype) -> np.dtype:
    """A dtype argument canonicalised without a warning (result_type, finfo: questions about
    types, not requests for arrays); Python types map to the defaults."""
    requested = _requested(dtype)
    return canonicalize(requested) if requested is not None else _python_type_default(dtype)


def finfo(dtype) -> np.finfo:
    return np.finfo(resolve_dtype(dtype))


def iinfo(dtype) -> np.iinfo:
    return np.iinfo(resolve_dtype(dtype))
