"""An elementwise loop around one vecmath function, compiled for the host, callable on arrays.

Eager execution, tests and benchmarks use it to run a vecmath function over NumPy arrays:
the loop applies the vector version UNROLL * `lanes`, then `lanes` elements at a time and the
scalar version to the tail, so all are exercised (and agree bit for bit). It is also the
smallest example of how a backend calls the emitters.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np
from llvmlite import ir
from redraft.kernels.llvm_loops import counted_loop

from ..jit_host import compile_module, host_vector_bits
from . import ARITY, VECMATH
from .builder import F32, F64, shaped

_I64 = ir.IntType(64)
_PTR = ir.PointerType()


# The main loop applies the function to UNROLL registers' worth at once (a vector type
# UNROLL times the host's width, which the code generator splits into interleaved register
# operations): the long dependency chain of one register's polynomial otherwise leaves the
# FP pipes idle (tanh 0.200 -> 0.183 ns an element, logistic 0.210 -> 0.158, on Zen 5).
UNROLL = 4


def _elem_for(dtype: np.dtype) -> ir.Type:
    if dtype == np.float32:
        return F32
    if dtype == np.float64:
        return F64
    raise TypeError(f"vecmath loops support float32 and float64, not {dtype}")


def default_lanes(dtype: np.dtype) -> int:
    """Lanes that fill the host's widest vector register."""
    return host_vector_bits() // (8 * np.dtype(dtype).itemsize)


def build_map_module(op: str, dtype: np.dtype, lanes: int) -> tuple[ir.Module, str]:
    """Module with `void name(ptr out, ptr in0, ..., i64 n)` computing out = op(in...)."""
    elem = _elem_for(np.dtype(dtype))
    arity = ARITY[op]
    module = ir.Module(name=f"vecmath_map_{op}")
    name = f"map_{op}_{np.dtype(dtype).name}_x{lanes}"
    fnty = ir.FunctionType(ir.VoidType(), [_PTR] * (arity + 1) + [_I64])
    fn = ir.Function(module, fnty, name=name)
    out, ins, n = fn.args[0], fn.args[1:-1], fn.args[-1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    align = np.dtype(dtype).itemsize

    def apply(i: ir.Value, ty: ir.Type) -> None:
        kernel = VECMATH[op](module, ty)
        ptrs = [b.gep(p, [i], inbounds=True, source_etype=elem) for p in ins]
        args = [b.load(p, typ=ty, align=align) for p in ptrs]
        dst = b.gep(out, [i], inbounds=True, source_etype=elem)
        b.store(b.call(kernel, args), dst, align=align)

    start = ir.Constant(_I64, 0)
    for width in (UNROLL * lanes, lanes) if lanes > 1 else ():
        stop = b.add(start, b.and_(b.sub(n, start), ir.Constant(_I64, -width)))
        counted_loop(b, start, stop, width, lambda i, w=width: apply(i, shaped(elem, w)),
                     f"vec{width}")
        start = stop
    counted_loop(b, start, n, 1, lambda i: apply(i, elem), "tail")
    b.ret_void()
    return module, name


class MapKernel:
    """A compiled elementwise loop applying vecmath `op` to float32 or float64 arrays."""

    def __init__(self, op: str, dtype: np.dtype, lanes: int | None = None) -> None:
        self.op = op
        self.dtype = np.dtype(dtype)
        self.lanes = default_lanes(self.dtype) if lanes is None else lanes
        module, name = build_map_module(op, self.dtype, self.lanes)
        # written vectorised: LLVM's vectorisers only add compile time (eager code waits
        # for it: 30 -> 16 ms for log), the machine code runs as fast and gives equal bits
        self.compiled = compile_module(module, opt_level=2, vectorise=False)
        argtypes = [ctypes.c_void_p] * (ARITY[op] + 1) + [ctypes.c_int64]
        self._fn = self.compiled.function(name, None, argtypes)

    def __call__(self, *arrays: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if len(arrays) != ARITY[self.op]:
            raise TypeError(f"{self.op} takes {ARITY[self.op]} arrays, got {len(arrays)}")
        xs = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
        shape = np.broadcast_shapes(*(x.shape for x in xs))
        xs = [np.ascontiguousarray(np.broadcast_to(x, shape)) for x in xs]
        if out is None:
            out = np.empty(shape, self.dtype)
        elif out.shape != shape or out.dtype != self.dtype or not out.flags.c_contiguous:
            raise ValueError("out must be a C-contiguous array of the result's shape and dtype")
        self._fn(out.ctypes.data, *(x.ctypes.data for x in xs), out.size)
        return out


@functools.lru_cache(maxsize=None)
def map_kernel(op: str, dtype: str = "float32", lanes: int | None = None) -> MapKernel:
    """Cached `MapKernel` for (op, dtype, lanes)."""
    return MapKernel(op, np.dtype(dtype), lanes)
