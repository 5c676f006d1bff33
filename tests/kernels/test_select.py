"""The compiled select loop against NumPy's where, bit for bit, for each element width."""
from __future__ import annotations

import numpy as np
import pytest

from redraft.kernels.select import select_kernel

DTYPES = [np.int8, np.uint8, np.bool_, np.float16, np.int16, np.float32, np.int32,
          np.float64, np.int64, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 64, 65, 1000, 4099])
def test_matches_numpy_where(dtype: type, n: int) -> None:
    rng = np.random.default_rng(n)
    pred = rng.random(n) > 0.5
    on_true = rng.integers(0, 100, n).astype(dtype)
    on_false = rng.integers(-100, 0, n).astype(dtype)
    got = select_kernel(np.dtype(dtype).itemsize)(pred, on_true, on_false)
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(got, np.where(pred, on_true, on_false))


def test_bits_of_nan_payloads_and_signed_zeros_are_kept() -> None:
    on_true = np.array([0x7FC00001, 0x80000000, 0xFFC00123, 0x3F800000], np.uint32)
    on_false = np.array([0, 0x7F800000, 1, 0x80000000], np.uint32)
    pred = np.array([True, True, False, True])
    got = select_kernel(4)(pred, on_true.view(np.float32), on_false.view(np.float32))
    assert np.array_equal(got.view(np.uint32), np.where(pred, on_true, on_false))


def test_refuses_mismatched_operands() -> None:
    kernel = select_kernel(4)
    a = np.zeros(8, np.float32)
    with pytest.raises(ValueError):
        kernel(np.ones(8, bool), a, np.zeros(8, np.float64))
    with pytest.raises(ValueError):
        kernel(np.ones(4, bool), a, a)
    with pytest.raises(ValueError):
        kernel(np.ones(8, np.int8), a, a)
    with pytest.raises(ValueError):
        select_kernel(3)
