"""Collectives (psum, all_gather, ppermute, axis_index, ...) as calls into the runtime.

A compiled per-device body calls `redraft_collective_callback(site, operands, result)` where
the collective stands: `site` names a registered CollectiveSite (the primitive, its static
parameters, how to read each operand and write the result), `operands` holds the operands'
base addresses and `result` the result's. The callback runs on the device's own thread, so
the runtime finds the axis that thread is bound to and rendezvous with the other devices
(runtime/collectives.py) exactly as eager code does; one compiled body serves every device.
"""
from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass

import numpy as np
from redraft.kernels.jit_host import install_callback
from llvmlite import ir
from redraft.compiler.ir.ssa import Eqn
from redraft.runtime.eager import impl_rules

from .callbacks import OperandSpec, _read_operand
from .module import FunctionLowering, lowering
from .types import I64, PTR, VOID, declare, i64

NAMES = ("psum", "pmax", "pmin", "all_gather", "all_to_all", "psum_scatter", "ppermute",
         "axis_index")


@dataclass(frozen=True)
class CollectiveSite:
    prim: object
    params: tuple            # sorted (name, value) pairs
    operands: tuple[OperandSpec, ...]
    result: OperandSpec


_SITES: dict[int, CollectiveSite] = {}
_NEXT = itertools.count(1)
_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


def _strided(spec: OperandSpec, base: int) -> np.ndarray:
    """A writable NumPy view of the result's memory as the compiled code lays it out."""
    item = spec.dtype.itemsize
    if 0 in spec.shape:
        return np.empty(spec.shape, spec.dtype)
    hi = spec.offset + sum((n - 1) * s for n, s in zip(spec.shape, spec.strides))
    raw = (ctypes.c_char * ((hi + 1) * item)).from_address(base)
    flat = np.frombuffer(raw, dtype=spec.dtype)
    return np.lib.stride_tricks.as_strided(flat[spec.offset:], spec.shape,
                                           tuple(s * item for s in spec.strides))


def _collective_callback(key: int, operands: int, result: int) -> None:
    site = _SITES[key]
    count = len(site.operands)
    bases = (ctypes.c_void_p * max(count, 1)).from_address(operands) if count else []
    values = [_read_operand(spec, bases[k] or 0) for k, spec in enumerate(site.operands)]
    out = impl_rules[site.prim](*values, **dict(site.params))
    np.copyto(_strided(site.result, result), np.asarray(out, site.result.dtype))


def _install() -> None:
    install_callback("redraft_collective_callback", _CALLBACK_TYPE, _collective_callback)


def _spec(view, weak: bool) -> tuple[OperandSpec, object]:
    if view.const is not None:
        return OperandSpec(view.dtype, view.shape, view.strides, 0, weak,
                           view.const.item()), None
    return OperandSpec(view.dtype, view.shape, view.strides, view.offset, weak), view.base


@lowering(*NAMES)
def lower_collective(L: FunctionLowering, eqn: Eqn) -> None:
    """A call into the runtime; the result is written into its own buffer."""
    _install()
    specs, bases = [], []
    for a in eqn.ins:
        spec, base = _spec(L.read(a), bool(a.aval.weak_type))
        specs.append(spec)
        bases.append(base)
    out = eqn.outs[0]
    dest = L.dest(out)
    result = OperandSpec(dest.dtype, dest.shape, dest.strides, dest.offset, False)
    params = tuple(sorted((k, v) for k, v in eqn.params.items() if not k.startswith("_")))
    key = next(_NEXT)
    _SITES[key] = CollectiveSite(eqn.prim, params, tuple(specs), result)
    b = L.b
    ctx = L.cx.entry_alloca(PTR, max(len(bases), 1), name="collective.ctx")
    for k, base in enumerate(bases):
        b.store(base if base is not None else ir.Constant(PTR, None),
                b.gep(ctx, [i64(k)], source_etype=PTR))
    callback = declare(L.module, "redraft_collective_callback", VOID, [I64, PTR, PTR])
    b.call(callback, [i64(key), ctx, dest.base])
    L.bind(out, dest)
