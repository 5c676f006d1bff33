"""The runner: what a compiled call costs in Python is checked here, and nothing more.

A Runner holds the ctypes entry point, the expected (shape, dtype) of every argument, the
output shapes and the result plan, all fixed when the function was compiled. A call
checks each argument, allocates the outputs with np.empty, and calls the machine code with
the arrays themselves (the code reads their data pointers): no IR, no re-analysis. A
workspace too big for the stack is allocated once and reused, unless another thread is
using it at that moment.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .module import LoweredFunction, ResultPlan


class ArgumentError(ValueError):
    """A compiled function was called with arguments of the wrong shape or dtype."""


class Runner:
    """Calls one compiled function on a list of host arrays; returns the results."""

    def __init__(self, lowered: LoweredFunction, compiled, raw_pointers: bool = False):
        self.compiled = compiled            # keeps the machine code alive
        self.name = lowered.name
        self.in_specs = [(tuple(s), np.dtype(d)) for s, d in lowered.in_specs]
        self.out_specs = [(tuple(s), np.dtype(d)) for s, d in lowered.out_specs]
        self.results: list[ResultPlan] = lowered.results
        self.n_in = len(self.in_specs)
        self.in_keys = [(np.ndarray, shape, dtype, _c_strides(shape, dtype))
                        for shape, dtype in self.in_specs]
        self.simple = all(r.kind == "out" and r.index == k for k, r in enumerate(self.results))
        n_args = len(self.in_specs) + len(self.out_specs) + 1
        self.raw = raw_pointers
        argtype = ctypes.c_void_p if raw_pointers else ctypes.py_object
        entry = self.name if raw_pointers else self.name + "_py"
        self.fn = compiled.function(entry, None, [argtype] * n_args)
        self.workspace_bytes = 0 if lowered.stack_workspace else lowered.workspace_bytes
        self._workspace = np.empty(self.workspace_bytes, np.uint8) if self.workspace_bytes \
            else None
        self._lock = threading.Lock()

    def __call__(self, bufs: list) -> list[np.ndarray]:
        if len(bufs) != self.n_in:
            raise ArgumentError(f"{self.name} takes {self.n_in} arrays, got {len(bufs)}")
        args = bufs
        for k, buf in enumerate(bufs):
            # one tuple comparison checks type, shape, dtype and row-major layout at once
            if (type(buf), buf.shape, buf.dtype, buf.strides) != self.in_keys[k]:
                if args is bufs:
                    args = list(bufs)
                args[k] = self._conform(k, buf)
        outs = [np.empty(shape, dtype) for shape, dtype in self.out_specs]
        if self._workspace is None:
            if self.raw:
                self._call(args, outs, None)
            else:
                self.fn(*args, *outs, None)
        elif self._lock.acquire(blocking=False):
            try:
                self._call(args, outs, self._workspace)
            finally:
                self._lock.release()
        else:
            self._call(args, outs, np.empty(self.workspace_bytes, np.uint8))
        if self.simple:
            return outs
        return self._assemble(args, outs)

    def _call(self, args: list, outs: list, workspace) -> None:
        if self.raw:
            pointers = [a.ctypes.data for a in args] + [o.ctypes.data for o in outs]
            self.fn(*pointers, workspace.ctypes.data if workspace is not None else None)
        else:
            self.fn(*args, *outs, workspace)

    def _conform(self, k: int, buf) -> np.ndarray:
        """`buf` as the row-major array of the compiled shape and dtype (or an error)."""
        shape, dtype = self.in_specs[k]
        arr = np.asarray(buf)
        if arr.shape != shape:
            raise ArgumentError(f"{self.name}: argument {k} has shape {arr.shape}, but the "
                                f"function was compiled for {shape}")
        if arr.dtype != dtype:
            if not np.can_cast(arr.dtype, dtype, "same_kind"):
                raise ArgumentError(f"{self.name}: argument {k} has dtype {arr.dtype}, but "
                                    f"the function was compiled for {dtype}")
            arr = arr.astype(dtype)
        return np.ascontiguousarray(arr)

    def _assemble(self, args: list, outs: list) -> list[np.ndarray]:
        results: list[np.ndarray] = []
        for plan in self.results:
            if plan.kind == "out":
                results.append(outs[plan.index])
            elif plan.kind == "param":
                results.append(args[plan.index])
            elif plan.kind == "literal":
                results.append(plan.value)
            else:
                results.append(results[plan.index])
        return results


def _c_strides(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, ...]:
    """The strides NumPy gives a fresh row-major array of this shape."""
    return np.empty(shape, dtype).strides
