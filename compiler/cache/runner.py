"""Calling a cached library: the runner contract of compiler/backend/llvm/dispatch.py
(`list[np.ndarray] -> list[np.ndarray]`) without importing the LLVM backend, whose import
alone would cost more than the whole warm-cache load."""
from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np

PYOBJECT_DATA_OFFSET = 16


@functools.cache
def objects_ok() -> bool:
    """Whether an ndarray's data pointer sits where the `_py` entry points read it."""
    probe = np.arange(4.0)
    return ctypes.c_void_p.from_address(id(probe) + PYOBJECT_DATA_OFFSET).value == (
        probe.ctypes.data)


class LibraryRunner:
    """Checks the arguments, allocates the outputs, calls the entry point."""

    def __init__(self, lib: ctypes.CDLL, meta: dict):
        self.lib = lib
        self.name = meta["name"]
        self.in_specs = [(tuple(s), np.dtype(d)) for s, d in meta["in_specs"]]
        self.out_specs = [(tuple(s), np.dtype(d)) for s, d in meta["out_specs"]]
        self.in_keys = [(np.ndarray, s, d, np.empty(s, d).strides) for s, d in self.in_specs]
        self.results = [(kind, index, None if value is None else _literal(value, dtype))
                        for kind, index, value, dtype in meta["results"]]
        self.simple = all(kind == "out" and index == k
                          for k, (kind, index, _) in enumerate(self.results))
        self.workspace_bytes = meta["workspace_bytes"]
        self.by_object = meta["by_object"]
        n = len(self.in_specs) + len(self.out_specs) + 1
        self.fn = getattr(lib, self.name + "_py" if self.by_object else self.name)
        self.fn.restype = None
        self.fn.argtypes = [ctypes.py_object if self.by_object else ctypes.c_void_p] * n
        self._workspace = (np.empty(self.workspace_bytes, np.uint8) if self.workspace_bytes
                           else None)
        self._lock = threading.Lock()

    def __call__(self, bufs: list) -> list[np.ndarray]:
        if len(bufs) != len(self.in_specs):
            raise ValueError(f"{self.name} takes {len(self.in_specs)} arrays, got {len(bufs)}")
        args = list(bufs)
        for k, buf in enumerate(bufs):
            if (type(buf), buf.shape, buf.dtype, buf.strides) != self.in_keys[k]:
                args[k] = self._conform(k, buf)
        outs = [np.empty(s, d) for s, d in self.out_specs]
        if self._workspace is None:
            self._call(args, outs, None)
        elif self._lock.acquire(blocking=False):
            try:
                self._call(args, outs, self._workspace)
            finally:
                self._lock.release()
        else:
            self._call(args, outs, np.empty(self.workspace_bytes, np.uint8))
        return outs if self.simple else self._assemble(args, outs)

    def _call(self, args: list, outs: list, workspace) -> None:
        if self.by_object:
            self.fn(*args, *outs, workspace)
        else:
            self.fn(*[a.ctypes.data for a in args], *[o.ctypes.data for o in outs],
                    None if workspace is None else workspace.ctypes.data)

    def _conform(self, k: int, buf) -> np.ndarray:
        shape, dtype = self.in_specs[k]
        arr = np.asarray(buf)
        if arr.shape != shape or not np.can_cast(arr.dtype, dtype, "same_kind"):
            raise ValueError(f"{self.name}: argument {k} is {arr.dtype}{list(arr.shape)}, but "
                             f"the function was compiled for {dtype}{list(shape)}")
        return np.ascontiguousarray(arr, dtype=dtype)

    def _assemble(self, args: list, outs: list) -> list[np.ndarray]:
        results: list[np.ndarray] = []
        for kind, index, value in self.results:
            if kind == "out":
                results.append(outs[index])
            elif kind == "param":
                results.append(args[index])
            elif kind == "literal":
                results.append(value)
            else:
                results.append(results[index])
        return results


def _literal(value, dtype: str) -> np.ndarray:
    arr = np.array(value, dtype=dtype)
    arr.flags.writeable = False
    return arr
