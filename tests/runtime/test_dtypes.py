"""dtypes: JAX's type-promotion lattice with weak types, canonicalised to 32 bits."""
from __future__ import annotations

import numpy as np
import pytest

from redraft.runtime import dtypes

B, U8, I8, I32 = dtypes.bool_, dtypes.uint8, dtypes.int8, dtypes.int32
F16, F32, C64 = dtypes.float16, dtypes.float32, dtypes.complex64
U32, I64, F64 = dtypes.uint32, dtypes.int64, dtypes.float64

# Weak types of Python scalars: (the dtype a lone scalar takes, weak=True).
WI, WF, WC = (I32, True), (F32, True), (C64, True)

# JAX's promote_types table with x64 disabled: (a, b) -> result (dtype, weak).
PROMOTIONS = [
    ((B, False), (B, False), (B, False)),
    ((B, False), (U8, False), (U8, False)),
    ((B, False), (I8, False), (I8, False)),
    ((B, False), (I32, False), (I32, False)),
    ((B, False), (F16, False), (F16, False)),
    ((B, False), (F32, False), (F32, False)),
    ((B, False), (C64, False), (C64, False)),
    ((B, False), WI, WI),
    ((B, False), WF, WF),
    ((B, False), WC, WC),
    ((U8, False), (U8, False), (U8, False)),
    ((U8, False), (I8, False), (dtypes.int16, False)),
    ((U8, False), (I32, False), (I32, False)),
    ((U8, False), (F16, False), (F16, False)),
    ((U8, False), (F32, False), (F32, False)),
    ((U8, False), (C64, False), (C64, False)),
    ((U8, False), WI, (U8, False)),
    ((U8, False), WF, WF),
    ((U8, False), WC, WC),
    ((I8, False), (I8, False), (I8, False)),
    ((I8, False), (I32, False), (I32, False)),
    ((I8, False), (F16, False), (F16, False)),
    ((I8, False), WI, (I8, False)),
    ((I8, False), WF, WF),
    ((I8, False), (U32, False), (I32, False)),  # int64, canonicalised
    ((I32, False), (I32, False), (I32, False)),
    ((I32, False), (F16, False), (F16, False)),
    ((I32, False), (F32, False), (F32, False)),
    ((I32, False), (C64, False), (C64, False)),
    ((I32, False), WI, (I32, False)),
    ((I32, False), WF, WF),
    ((I32, False), WC, WC),
    ((I32, False), (U32, False), (I32, False)),  # int64, canonicalised
    ((F16, False), (F16, False), (F16, False)),
    ((F16, False), (F32, False), (F32, False)),
    ((F16, False), (C64, False), (C64, False)),
    ((F16, False), WI, (F16, False)),
    ((F16, False), WF, (F16, False)),
    ((F16, False), WC, (C64, False)),
    ((F32, False), (F32, False), (F32, False)),
    ((F32, False), (C64, False), (C64, False)),
    ((F32, False), WI, (F32, False)),
    ((F32, False), WF, (F32, False)),
    ((F32, False), WC, (C64, False)),
    ((F32, False), (F64, False), (F32, False)),  # float64, canonicalised
    ((C64, False), (C64, False), (C64, False)),
    ((C64, False), WI, (C64, False)),
    ((C64, False), WF, (C64, False)),
    ((C64, False), WC, (C64, False)),
    (WI, WI, WI),
    (WI, WF, WF),
    (WI, WC, WC),
    (WF, WF, WF),
    (WF, WC, WC),
    (WC, WC, WC),
]


def _name(t: tuple[np.dtype, bool]) -> str:
    return t[0].name + ("*" if t[1] else "")


@pytest.mark.parametrize("a, b, expected", PROMOTIONS,
                         ids=[f"{_name(a)}+{_name(b)}" for a, b, _ in PROMOTIONS])
def test_promote_pair_table(a, b, expected):
    assert dtypes.promote_pair(*a, *b) == expected


@pytest.mark.parametrize("a, b, expected", PROMOTIONS,
                         ids=[f"{_name(b)}+{_name(a)}" for a, b, _ in PROMOTIONS])
def test_promotion_is_symmetric(a, b, expected):
    assert dtypes.promote_pair(*b, *a) == expected


def test_promote_types_folds_many():
    assert dtypes.promote_types((B, False), WI, (U8, False)) == (U8, False)
    assert dtypes.promote_types(WI, WF, (F16, False)) == (F16, False)
    assert dtypes.promote_types(WI, WI, WI) == WI


def test_promote_types_single_is_canonicalised():
    assert dtypes.promote_types((F64, False)) == (F32, False)
    assert dtypes.promote_types((I64, True)) == (I32, True)


def test_promotion_is_associative_on_the_lattice():
    nodes = [(B, False), (U8, False), (I8, False), (I32, False), (F16, False), (F32, False),
             (C64, False), WI, WF, WC]
    for a in nodes:
        for b in nodes:
            for c in nodes:
                left = dtypes.promote_pair(*dtypes.promote_pair(*a, *b), *c)
                right = dtypes.promote_pair(*a, *dtypes.promote_pair(*b, *c))
                assert left == right, (a, b, c)


@pytest.mark.parametrize("wide, narrow", [(np.float64, F32), (np.int64, I32),
                                          (np.uint64, U32), (np.complex128, C64),
                                          (np.float32, F32), (np.int8, I8), (np.bool_, B)])
def test_canonicalize(wide, narrow):
    assert dtypes.canonicalize(wide) == narrow


@pytest.mark.parametrize("value, dtype", [(True, B), (3, I32), (2.5, F32), (1j, C64)])
def test_python_scalar_dtype(value, dtype):
    assert dtypes.python_scalar_dtype(value) == dtype
    assert dtypes.is_python_scalar(value)


def test_python_scalar_dtype_rejects_other_values():
    with pytest.raises(TypeError, match="not a Python scalar"):
        dtypes.python_scalar_dtype("1")
    assert not dtypes.is_python_scalar(np.float32(1))


@pytest.mark.parametrize("arg, dtype", [
    (float, F32), (int, I32), (bool, B), (complex, C64), ("float32", F32),
    ("float64", F32), (np.int64, I32), (np.dtype("uint8"), U8), ("complex128", C64),
    (np.float16, F16),
])
def test_check_dtype_arg(arg, dtype):
    assert dtypes.check_dtype_arg(arg) == dtype


@pytest.mark.parametrize("bad", ["not_a_dtype", object(), "float33"])
def test_check_dtype_arg_errors(bad):
    with pytest.raises(TypeError, match="is not a valid dtype"):
        dtypes.check_dtype_arg(bad)


def test_kind_predicates():
    assert dtypes.is_float(F16) and not dtypes.is_float(C64)
    assert dtypes.is_inexact(C64) and dtypes.is_inexact(F32) and not dtypes.is_inexact(I32)
    assert dtypes.is_integer(U8) and dtypes.is_integer(I32) and not dtypes.is_integer(B)


def test_to_inexact_keeps_weak_flag():
    assert dtypes.to_inexact(I32, True) == (F32, True)
    assert dtypes.to_inexact(B, False) == (F32, False)
    assert dtypes.to_inexact(F16, False) == (F16, False)
    assert dtypes.to_inexact(C64, True) == (C64, True)


def test_finfo_iinfo_use_32_bit_defaults():
    assert dtypes.finfo(float).bits == 32
    assert dtypes.iinfo(int).max == 2 ** 31 - 1
    assert dtypes.finfo("float64").dtype == F32
