"""Primitives compiled code runs by calling back into Python: `random_sample`.

redraft.random's samplers are host code (kernels/threefry.py), so compiled code calls
`redraft_host_call_callback(site, pointers)`: the site names the equation (its primitive,
parameters, and how to read each operand and write the result), `pointers` holds the
operands' and the result's base addresses. The callback runs the primitive's eager
implementation, so compiled samples are the bits eager code draws.
"""
from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass

import numpy as np
from redraft.kernels.jit_host import install_callback
from llvmlite import ir

from redraft.compiler.ir.ssa import Eqn
from redraft.runtime.eager import eager_impl

from .callbacks import OperandSpec, _read_operand
from .module import FunctionLowering, lowering
from .types import PTR, VOID, I64, declare, i64

SYMBOL = "redraft_host_call_callback"


@dataclass(frozen=True)
class HostCallSite:
    prim: object
    params: tuple          # (name, value) pairs
    operands: tuple[OperandSpec, ...]
    result: OperandSpec


_SITES: dict[int, HostCallSite] = {}
_NEXT = itertools.count(1)
_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)


def _write_result(spec: OperandSpec, base: int, value: np.ndarray) -> None:
    if value.size == 0:
        return
    item = spec.dtype.itemsize
    extent = sum((n - 1) * s for n, s in zip(spec.shape, spec.strides)) + 1
    raw = (ctypes.c_char * (extent * item)).from_address(base + spec.offset * item)
    flat = np.frombuffer(raw, dtype=spec.dtype)
    view = np.lib.stride_tricks.as_strided(flat, spec.shape,
                                           tuple(s * item for s in spec.strides))
    view[...] = value


def _host_call(key: int, pointers: int) -> None:
    site = _SITES[key]
    count = len(site.operands) + 1
    bases = (ctypes.c_void_p * count).from_address(pointers)
    operands = [_read_operand(spec, bases[k] or 0) for k, spec in enumerate(site.operands)]
    out = eager_impl(site.prim)(*operands, **dict(site.params))
    _write_result(site.result, bases[count - 1], np.asarray(out, site.result.dtype))


def _install() -> None:
    install_callback(SYMBOL, _CALLBACK_TYPE, _host_call)


@lowering("random_sample")
def lower_host_call(L: FunctionLowering, eqn: Eqn) -> None:
    _install()
    specs, bases = [], []
    for a in eqn.ins:
        view = L.read(a)
        if view.const is not None:
            specs.append(OperandSpec(view.dtype, view.shape, view.strides, 0, False,
                                     view.const.item()))
            bases.append(None)
        else:
            specs.append(OperandSpec(view.dtype, view.shape, view.strides, view.offset, False))
            bases.append(view.base)
    out = eqn.outs[0]
    dest = L.dest(out)
    L.views[out.id] = dest
    result = OperandSpec(dest.dtype, dest.shape, dest.strides, dest.offset, False)
    params = tuple((k, v) for k, v in eqn.params.items() if not k.startswith("_"))
    key = next(_NEXT)
    _SITES[key] = HostCallSite(eqn.prim, params, tuple(specs), result)
    b = L.b
    ctx = L.cx.entry_alloca(PTR, len(bases) + 1, name="host.ctx")
    for k, base in enumerate(bases + [dest.base]):
        b.store(base if base is not None else ir.Constant(PTR, None),
                b.gep(ctx, [i64(k)], source_etype=PTR))
    callback = declare(L.module, SYMBOL, VOID, [I64, PTR])
    b.call(callback, [i64(key), ctx])
