"""NumPy's own OpenBLAS, called through ctypes: triangular solves (trsm) of float32 and
float64 matrices.

numpy.linalg has no triangular solve (solving by blocks with numpy.linalg.solve took ~125 us
for 100 x 100, trsm takes ~4), and the wheels of NumPy bring OpenBLAS in `numpy.libs/`,
under ILP64 names (`scipy_cblas_strsm64_` in NumPy 2, `cblas_strsm64_` in 1.x). Where no
such library is found (a NumPy built against another BLAS) `trsm` returns None and the
caller substitutes with its own NumPy code.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import threading

import numpy as np

_ROW_MAJOR = 101
_NO_TRANS, _TRANS = 111, 112
_UPPER, _LOWER = 121, 122
_NON_UNIT, _UNIT = 131, 132
_LEFT, _RIGHT = 141, 142
_SCALARS = {np.dtype(np.float32): ("s", ctypes.c_float),
            np.dtype(np.float64): ("d", ctypes.c_double)}
ONE_THREAD_FLOPS = 1 << 25  # a solve below this runs on the calling thread alone: OpenBLAS's
#                            threads cost more than they save on it and then spin ~0.1 s (a
#                            GP's gradient, six solves of 100 x 100: 635 -> 180 us of CPU)


def _libraries() -> list[str]:
    """OpenBLAS libraries shipped inside the NumPy wheel (numpy.libs beside the package)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    return sorted(glob.glob(os.path.join(folder, "lib*openblas*.so*")))


def _find(lib: ctypes.CDLL, names: list[str]):
    """The first of `names` that `lib` exports."""
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            return fn
    return None


@functools.lru_cache(maxsize=None)
def _library() -> ctypes.CDLL | None:
    """The first of NumPy's OpenBLAS libraries that loads."""
    for path in _libraries():
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


_ONE_THREAD = threading.Lock()


@functools.lru_cache(maxsize=None)
def _thread_setter():
    """OpenBLAS's `openblas_set_num_threads_local` (0.3.27 on; it returns the old count), or
    None. Its pthreads builds set the process's count, so a small solve holds a lock while
    it runs with one thread, and two of them cannot restore each other's setting."""
    lib = _library()
    setter = getattr(lib, "openblas_set_num_threads_local", None) if lib else None
    if setter is not None:
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
    return setter


@functools.lru_cache(maxsize=None)
def _trsm_for(dtype: np.dtype):
    """cblas_?trsm for `dtype` from NumPy's OpenBLAS, or None."""
    if dtype not in _SCALARS:
        return None
    letter, scalar = _SCALARS[dtype]
    lib = _library()
    trsm = lib and _find(lib, [f"scipy_cblas_{letter}trsm64_", f"cblas_{letter}trsm64_"])
    if trsm is None:
        return None
    i32, i64, ptr = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p
    trsm.argtypes = [i32] * 5 + [i64, i64, scalar, ptr, i64, ptr, i64]
    trsm.restype = None
    return trsm


def available(dtype) -> bool:
    """Whether trsm runs on NumPy's OpenBLAS for `dtype`."""
    return _trsm_for(np.dtype(dtype)) is not None


def trsm(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool, transpose_a: bool,
         unit_diagonal: bool) -> np.ndarray | None:
    """x with op(a) @ x = b (left_side) or x @ op(a) = b, a triangular (only its `lower` or
    upper triangle is read), over the broadcast leading axes; None where no BLAS serves
    these dtypes. A zero on the diagonal gives the infinities and NaNs of IEEE division."""
    dtype = a.dtype
    call = _trsm_for(dtype) if b.dtype == dtype else None
    if call is None:
        return None
    flags = (_ROW_MAJOR, _LEFT if left_side else _RIGHT, _LOWER if lower else _UPPER,
             _TRANS if transpose_a else _NO_TRANS, _UNIT if unit_diagonal else _NON_UNIT)
    side = a.shape[-1]
    small = side * side * (b.shape[-1] if left_side else b.shape[-2]) < ONE_THREAD_FLOPS
    setter = _thread_setter() if small else None
    if setter is None:
        return _solve(call, flags, a, b)
    with _ONE_THREAD:  # the count is the process's in OpenBLAS's pthreads builds
        previous = setter(1)
        try:
            return _solve(call, flags, a, b)
        finally:
            setter(previous)


def _solve(call, flags: tuple, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim == b.ndim == 2:  # the common case, without the batch's bookkeeping (~8 us)
        x = np.array(b, order="C")
        if x.size:
            a = np.ascontiguousarray(a)
            call(*flags, x.shape[0], x.shape[1], 1.0, a.ctypes.data, a.shape[1],
                 x.ctypes.data, x.shape[1])
        return x
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), order="C")
    m, n = x.shape[-2:]
    if x.size == 0:
        return x
    a = np.broadcast_to(a, batch + a.shape[-2:])
    for index in np.ndindex(*batch):
        matrix = np.ascontiguousarray(a[index])
        call(*flags, m, n, 1.0, matrix.ctypes.data, matrix.shape[-1], x[index].ctypes.data, n)
    return x
