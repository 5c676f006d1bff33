"""Calls from compiled code back into Python: `debug_print` at run time.

Compiled code calls `redraft_print_callback(site, pointers)`; the site number names a
registered print (its template and how to read each operand: dtype, shape, strides, offset,
or a constant), `pointers` holds the operands' base addresses. The callback copies each
operand into a NumPy array and prints exactly as the interpreter does.
"""
from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass

import numpy as np
from redraft.kernels.jit_host import install_callback
from redraft.kernels.host_calls import strided
from redraft.runtime.array import wrap_host


@dataclass(frozen=True)
class OperandSpec:
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]      # elements
    offset: int
    weak: bool
    const: object = None


@dataclass(frozen=True)
class PrintSite:
    template: str
    operands: tuple[OperandSpec, ...]


_SITES: dict[int, PrintSite] = {}
_NEXT = itertools.count(1)
_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)


def register_print(site: PrintSite) -> int:
    """A number for `site` that compiled code passes back."""
    _install()
    key = next(_NEXT)
    _SITES[key] = site
    return key


def _read_operand(spec: OperandSpec, base: int) -> np.ndarray:
    """A copy of the operand `spec` describes at `base` (the callback outlives the buffer)."""
    return np.array(strided(spec, base))


def _print_callback(key: int, pointers: int) -> None:
    site = _SITES[key]
    count = len(site.operands)
    bases = (ctypes.c_void_p * max(count, 1)).from_address(pointers) if count else []
    values = [wrap_host(_read_operand(spec, bases[k] or 0), spec.weak)
              for k, spec in enumerate(site.operands)]
    print(site.template.format(*values), end="")


def _install() -> None:
    install_callback("redraft_print_callback", _CALLBACK_TYPE, _print_callback)


def install() -> None:
    """Register the callback symbol before compiling a module that prints."""
    _install()
