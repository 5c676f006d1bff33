"""Host kernels that compiled code calls: the factorisations and the fft.

Compiled code calls `redraft_host_kernel(site, pointers)`: the site number names a
registered call (the kernel function, its static parameters, and the geometry of each
operand and result: dtype, shape, element strides and offset, or a constant); `pointers`
holds the base address of every operand, then of every result. The callback views the
operands in place (strided NumPy views, no copy), runs the kernel, and writes each result
into the buffer the compiled code gave it.

The kernels are NumPy's: numpy.linalg (LAPACK) for cholesky, qr, eigh, svd and eig,
pocketfft for the fft, the stable sort for sort and argsort, and the vectorised LU and
triangular substitution of compiler/primitives/factorizations.py, which the eager runtime
runs too. So a compiled function and eager mode compute these with the same code; the
compiled function runs every other operation natively and calls here only for these (a call
costs a few microseconds of Python, nothing next to an O(n^3) factorisation). A kernel that raises
(say, LAPACK failing to converge on NaNs) fills its results with NaN, or 0 for integers,
as JAX's kernels return NaN rather than raising.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from redraft.kernels.jit_host import install_callback

SYMBOL = "redraft_host_kernel"


@dataclass(frozen=True)
class BufferSpec:
    """Where an operand or result lives: base pointer (passed at run time) + geometry."""
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]      # elements
    offset: int                   # elements
    const: object = None          # a compile-time scalar broadcast to shape (no pointer)


@dataclass(frozen=True)
class KernelSite:
    kernel: Callable
    params: tuple[tuple[str, object], ...]
    operands: tuple[BufferSpec, ...]
    results: tuple[BufferSpec, ...]
    multiple_results: bool


_SITES: dict[int, KernelSite] = {}
_NEXT = itertools.count(1)
_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
last_error: list[BaseException] = []   # the most recent kernel failure, for diagnosis


def register(site: KernelSite) -> int:
    """A number for `site` that compiled code passes back."""
    _install()
    key = next(_NEXT)
    _SITES[key] = site
    return key


def strided(spec: BufferSpec, base: int) -> np.ndarray:
    """The array `spec` describes at address `base`, viewed in place."""
    if spec.const is not None:
        return np.broadcast_to(np.asarray(spec.const, spec.dtype), spec.shape)
    if 0 in spec.shape:
        return np.empty(spec.shape, spec.dtype)
    span, first, offset, strides = _geometry(spec)
    # the ndarray constructor takes the strides directly (as_strided costs ~10 us a call)
    return np.ndarray(spec.shape, spec.dtype, buffer=span.from_address(base + first),
                      offset=offset, strides=strides)


@functools.lru_cache(maxsize=4096)
def _geometry(spec: BufferSpec) -> tuple[type, int, int, tuple[int, ...]]:
    """The bytes a strided operand spans (a ctypes array type), where they start relative
    to the base address, the operand's offset into them and its byte strides."""
    lo = spec.offset + sum(min(0, (n - 1) * s) for n, s in zip(spec.shape, spec.strides))
    hi = spec.offset + sum(max(0, (n - 1) * s) for n, s in zip(spec.shape, spec.strides))
    item = spec.dtype.itemsize
    return (ctypes.c_char * ((hi - lo + 1) * item), lo * item, (spec.offset - lo) * item,
            tuple(s * item for s in spec.strides))


def run_site(site: KernelSite, bases: list[int]) -> None:
    """Run one kernel call on the buffers at `bases` (operands, then results)."""
    n_in = len(site.operands)
    ins = [strided(spec, bases[k]) for k, spec in enumerate(site.operands)]
    outs = [strided(spec, bases[n_in + k]) for k, spec in enumerate(site.results)]
    try:
        values = site.kernel(*ins, **dict(site.params))
        values = values if site.multiple_results else (values,)
        for out, value in zip(outs, values):
            np.copyto(out, np.asarray(value).astype(out.dtype, copy=False), casting="unsafe")
    except Exception as e:  # noqa: BLE001 - compiled code cannot take a Python exception
        last_error[:] = [e]
        for out in outs:
            out[...] = np.nan if out.dtype.kind in "fc" else 0


def _callback(key: int, pointers: int) -> None:
    site = _SITES[key]
    count = len(site.operands) + len(site.results)
    bases = (ctypes.c_void_p * count).from_address(pointers)
    run_site(site, [b or 0 for b in bases])


def _install() -> None:
    install_callback(SYMBOL, _CALLBACK_TYPE, _callback)


def install() -> None:
    """Register the callback symbol before compiling a module that calls a kernel."""
    _install()
