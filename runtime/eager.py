"""Eager execution: apply a primitive to concrete Arrays with its `impl` rule.

`impl_rules[prim]` takes host NumPy buffers and static keyword parameters and returns a
NumPy array (or a tuple of them for multiple-result primitives). `bind` wraps the result
into immutable Arrays with the primitive's weak-type rule.

Eager arithmetic on small arrays costs mostly Python overhead, so `bind` avoids per-call
list building for one operand, and `unary_binder` / `binary_binder` give the NumPy layer
closures specialised to one primitive (impl and weak rule looked up once, no keywords).

The transcendental functions that compiled code computes with kernels/vecmath (exp, log,
tanh...) run here through the same vecmath loops on float32/float64 buffers, so eager and
jit give bit-identical results (as in JAX, where both run XLA's code); big arrays are shared
with a second core. `select` (jnp.where) on big arrays runs a compiled blend loop.

Every eager operation allocates its result. With glibc's defaults a buffer of a few MB is a
fresh mmap each time and every 4 KiB page of it faults on first write (~2.6 us a page here,
more than the arithmetic), so `keep_freed_buffers` asks malloc to serve such buffers from
its heap and keep freed memory for reuse (REDRAFT_MALLOC_DEFAULTS=1 leaves malloc alone).
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from redraft.runtime import numeric_checks
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.config import DEBUG_CHECKS, RANK_CHECKS, check_rank_promotion
from redraft.runtime.device_buffer import DeviceBuffer
from redraft.runtime.staged import StagedBuf

impl_rules: dict[object, Callable] = {}

_ndarray = np.ndarray

# primitive name -> kernels/vecmath function that compiled code uses for it
VECMATH_OPS = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
               "tanh": "tanh", "logistic": "logistic", "erf": "erf"}
_VECMATH_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
_SPLIT_MIN = 1 << 18  # elements from which a map is shared with a second thread (below,
#                      the hand-off, ~15 us, costs more than half the work saves)
_CHUNKS = 8           # pieces a shared map is cut into
_SELECT_MIN = 4096    # elements from which where/select runs the compiled select loop


MMAP_THRESHOLD = 64 << 20   # buffers below this come from malloc's heap...
TRIM_THRESHOLD = 256 << 20   # ...which keeps up to this much freed memory for reuse


def keep_freed_buffers() -> bool:
    """Raise glibc malloc's mmap and trim thresholds (see the module docstring); False where
    the C library is not glibc or the user asked for malloc's defaults."""
    if os.environ.get("REDRAFT_MALLOC_DEFAULTS") == "1" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    return bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD)) and bool(
        mallopt(m_trim_threshold, TRIM_THRESHOLD))


keep_freed_buffers()


def _vecmath_impl(op: str, fallback: Callable) -> Callable:
    """impl(x) through the compiled vecmath loop for `op`, or `fallback` (NumPy) where no
    loop exists (other dtypes, an op without a float64 version)."""
    kernels: dict[str, object] = {}

    def impl(x):
        dtype = _VECMATH_DTYPES.get(x.dtype) if type(x) is _ndarray else None
        if dtype is None or x.size == 0:
            return fallback(x)
        kernel = kernels.get(dtype)
        if kernel is None:
            kernel = kernels[dtype] = _map_kernel(op, dtype)
        if kernel is False:
            return fallback(x)
        if not x.flags.c_contiguous:
            x = x.copy()  # (np.ascontiguousarray would make a 0-d array 1-d)
        out = np.empty_like(x)
        _run_map(kernel._fn, out, x)
        return out

    return impl


def _map_kernel(op: str, dtype: str):
    from redraft.kernels.vecmath.loops import map_kernel
    try:
        return map_kernel(op, dtype)
    except NotImplementedError:  # e.g. erf has no float64 version: NumPy's then, as libm
        return False


def _run_map(fn: Callable, out: np.ndarray, x: np.ndarray) -> None:
    """fn(out, x, n) over the whole buffer; a big one in chunks that this thread and a
    helper thread take in turn (the ctypes call releases the GIL), so a helper that the
    scheduler starts late, on a loaded machine, costs no more than its hand-off."""
    n = x.size
    if n < _SPLIT_MIN or _cores() < 2:
        fn(out.ctypes.data, x.ctypes.data, n)
        return
    per = -(-n // _CHUNKS) + 63 & ~63
    chunks = -(-n // per)
    claims, finished = itertools.count(), itertools.count(1)  # next() is atomic (GIL)
    all_done = threading.Event()
    dst, src, size = out.ctypes.data, x.ctypes.data, x.itemsize

    def work() -> None:
        while (c := next(claims)) < chunks:
            lo = c * per
            fn(dst + lo * size, src + lo * size, min(per, n - lo))
            if next(finished) == chunks:
                all_done.set()

    _pool().submit(work)
    work()
    all_done.wait()


@functools.lru_cache(maxsize=None)
def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


@functools.lru_cache(maxsize=None)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="redraft-eager")


def _select_impl(fallback: Callable) -> Callable:
    """impl(pred, on_true, on_false) through kernels/select.py's blend loop for big operands
    of one shape and layout (NumPy's where branches per element), else `fallback`."""
    def impl(pred, on_true, on_false):
        if (type(pred) is _ndarray and type(on_true) is _ndarray
                and type(on_false) is _ndarray and pred.size >= _SELECT_MIN
                and pred.shape == on_true.shape == on_false.shape
                and pred.dtype == np.bool_ and on_true.dtype == on_false.dtype
                and on_true.dtype.kind in "biufc" and on_true.dtype.itemsize in (1, 2, 4, 8)
                and pred.flags.c_contiguous and on_true.flags.c_contiguous
                and on_false.flags.c_contiguous):
            from redraft.kernels.select import select_kernel
            return select_kernel(on_true.dtype.itemsize)(pred, on_true, on_false)
        return fallback(pred, on_true, on_false)

    return impl


# primitive name -> (impl rule -> the eager impl running a compiled loop where it can)
_KERNEL_IMPLS: dict[str, Callable[[Callable], Callable]] = {
    **{name: functools.partial(_vecmath_impl, op) for name, op in VECMATH_OPS.items()},
    "select": _select_impl,
}


def eager_impl(prim) -> Callable:
    """The eager implementation of `prim`: vecmath's where compiled code uses it, the
    compiled select loop for select."""
    impl = impl_rules[prim]
    make = _KERNEL_IMPLS.get(prim.name)
    if make is None:
        return impl
    wrapped = _WRAPPED_IMPLS.get(prim)
    if wrapped is None or wrapped[0] is not impl:
        wrapped = _WRAPPED_IMPLS[prim] = (impl, make(impl))
    return wrapped[1]


_WRAPPED_IMPLS: dict[object, tuple[Callable, Callable]] = {}


def bind(prim, *args: Array, **params):
    """Run `prim` on Arrays `args` now; returns an Array (or a tuple for multi-result ones)."""
    try:
        impl = eager_impl(prim)
    except KeyError:
        raise NotImplementedError(f"primitive {prim.name} has no eager implementation") from None
    if len(args) == 1:
        bufs, weaks = (args[0]._buf,), (args[0]._weak,)
    else:
        bufs, weaks = [a._buf for a in args], [a._weak for a in args]
    for buf in bufs:
        if type(buf) is StagedBuf:  # compiling: record the operation instead of running it
            return buf.builder.stage(prim, args, params)
    for buf in bufs:
        if type(buf) is DeviceBuffer:  # an operand lives on a GPU: run it there
            return _bind_on_device(prim, args, params)
    try:
        out = impl(*bufs, **params)
    except (ValueError, TypeError, IndexError):
        _explain(prim, args, params)
        raise
    if DEBUG_CHECKS[0]:
        numeric_checks.check(prim.name, out)
    weak = prim.result_weak(weaks, params)
    if prim.multiple_results:
        return tuple(wrap_host(np.asarray(o), weak) for o in out)
    return wrap_host(out if type(out) is _ndarray else np.asarray(out), weak)


# Running a primitive on a GPU operand compiles it, which the compiler (a layer above)
# knows how to do; compiler/driver.py installs that here at import, before any call.
_DEVICE_BINDER: dict = {}


def install_device_binder(binder: Callable) -> None:
    """Called by the driver: `binder(prim, args, params)` runs `prim` on the args' GPU."""
    _DEVICE_BINDER["bind"] = binder


def _bind_on_device(prim, args, params):
    return _DEVICE_BINDER["bind"](prim, tuple(args), params)


def unary_binder(prim) -> Callable[[Array], Array]:
    """`x -> bind(prim, x)` for a single-result primitive without parameters, made cheap."""
    impl, weak_if_weak = _fixed_arity_rule(prim, 1)

    def run(x: Array) -> Array:
        if type(x._buf) is not _ndarray:
            return bind(prim, x)
        try:
            out = impl(x._buf)
        except (ValueError, TypeError, IndexError):
            _explain(prim, (x,), {})
            raise
        if type(out) is not _ndarray:
            out = np.asarray(out)  # NumPy returns scalars for 0-d results
        if DEBUG_CHECKS[0]:
            numeric_checks.check(prim.name, out)
        result = Array()  # wrap_host, inlined on this hot path
        result._buf = out
        result._weak = weak_if_weak and x._weak
        return result

    return run


def binary_binder(prim, otherwise: Callable[[object, object], Array]) -> Callable:
    """`(x, y) -> bind(prim, x, y)` for two Arrays of one dtype, made cheap (the hot path of
    eager arithmetic); any other operands go to `otherwise(x, y)`, which must promote them."""
    impl, weak_if_weak = _fixed_arity_rule(prim, 2)

    def run(x, y, /) -> Array:
        if type(x) is not Array or type(y) is not Array:
            return otherwise(x, y)
        xbuf, ybuf = x._buf, y._buf
        if RANK_CHECKS[0]:
            check_rank_promotion(prim.name, xbuf.shape, ybuf.shape)
        if xbuf.dtype != ybuf.dtype:
            return otherwise(x, y)
        if type(xbuf) is not _ndarray or type(ybuf) is not _ndarray:
            return bind(prim, x, y)
        try:
            out = impl(xbuf, ybuf)
        except (ValueError, TypeError, IndexError):
            _explain(prim, (x, y), {})
            raise
        if type(out) is not _ndarray:
            out = np.asarray(out)
        if DEBUG_CHECKS[0]:
            numeric_checks.check(prim.name, out)
        result = Array()  # wrap_host, inlined on this hot path
        result._buf = out
        result._weak = weak_if_weak and x._weak and y._weak
        return result

    return run


def _fixed_arity_rule(prim, arity: int) -> tuple[Callable, bool]:
    """(impl, weak_if_weak) for a binder: without parameters every weak rule is either
    "weak iff all operands are weak" or "never weak", so one probe tells which."""
    if prim.multiple_results:
        raise ValueError(f"primitive {prim.name} has several results; use bind")
    if prim not in impl_rules:
        raise NotImplementedError(f"primitive {prim.name} has no eager implementation")
    return eager_impl(prim), prim.result_weak([True] * arity, {})


def _explain(prim, args, params) -> None:
    """Re-raise a failure of NumPy inside `impl` as the primitive's own, clearer error."""
    from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
    rule = abstract_eval_rules.get(prim)
    if rule is not None:
        rule(*(ShapedArray(a.shape, a.dtype, a._weak) for a in args), **params)
