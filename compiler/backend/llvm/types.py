"""NumPy dtypes as LLVM types: how a value is stored in memory and held in registers.

Memory and registers differ only for bool: one byte in memory (as NumPy stores it), `i1`
in registers (so it feeds `select` and branches directly). Register values are either
scalars or vectors of `lanes` elements; every helper here takes `lanes` (0 for a scalar).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()

SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64, np.complex64, np.complex128))
# complex values are stored and passed to the host kernels (fft, factorisations), but no
# lowering computes with them: scalar_type refuses them, so such code falls back as before


class Unsupported(Exception):
    """The function uses something this backend does not lower; the interpreter runs it."""


def check_dtype(dtype: np.dtype) -> np.dtype:
    """`dtype` as a NumPy dtype, or Unsupported for float16, complex and the like."""
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise Unsupported(f"dtype {dtype.name}")
    return dtype


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def is_bool(dtype: np.dtype) -> bool:
    return dtype.kind == "b"


def is_signed(dtype: np.dtype) -> bool:
    """Signed integers (bool and unsigned integers compare and divide unsigned)."""
    return dtype.kind == "i"


def scalar_type(dtype: np.dtype) -> ir.Type:
    """The register element type: i1 for bool, iN for integers, float/double."""
    dtype = check_dtype(dtype)
    if dtype.kind == "c":
        raise Unsupported(f"arithmetic on {dtype.name}")
    if dtype.kind == "b":
        return I1
    if dtype.kind == "f":
        return F32 if dtype.itemsize == 4 else F64
    return ir.IntType(8 * dtype.itemsize)


def memory_type(dtype: np.dtype) -> ir.Type:
    """The element type in memory: like `scalar_type`, but bool is a byte."""
    dtype = check_dtype(dtype)
    return I8 if dtype.kind == "b" else scalar_type(dtype)


def shaped(elem: ir.Type, lanes: int) -> ir.Type:
    """`elem`, or a vector of `lanes` of it when lanes > 0."""
    return ir.VectorType(elem, lanes) if lanes else elem


def register_type(dtype: np.dtype, lanes: int) -> ir.Type:
    return shaped(scalar_type(dtype), lanes)


def constant(dtype: np.dtype, value, lanes: int = 0) -> ir.Constant:
    """`value` of `dtype` as a register constant, splatted over `lanes`."""
    elem = scalar_type(dtype)
    if dtype.kind == "b":
        item = ir.Constant(elem, int(bool(value)))
    elif dtype.kind == "f":
        item = ir.Constant(elem, float(np.asarray(value, dtype)))
    else:
        raw = int(np.asarray(value).astype(dtype).view(f"u{dtype.itemsize}"))
        item = ir.Constant(elem, raw)
    return ir.Constant(shaped(elem, lanes), [item] * lanes) if lanes else item


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, int(value))


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, int(value))


def lanes_of(value: ir.Value) -> int:
    ty = value.type
    return ty.count if isinstance(ty, ir.VectorType) else 0


def splat(b: ir.IRBuilder, scalar: ir.Value, lanes: int) -> ir.Value:
    """A vector of `lanes` copies of `scalar` (the scalar itself when lanes == 0)."""
    if not lanes:
        return scalar
    if isinstance(scalar, ir.Constant):
        return ir.Constant(ir.VectorType(scalar.type, lanes), [scalar] * lanes)
    vty = ir.VectorType(scalar.type, lanes)
    undef = ir.Constant(vty, ir.Undefined)
    one = b.insert_element(undef, scalar, i32(0))
    mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
    return b.shuffle_vector(one, undef, mask)


def mangle(ty: ir.Type) -> str:
    """LLVM's intrinsic suffix for a type: f32, v16f32, i8, v8i64."""
    elem = ty.element if isinstance(ty, ir.VectorType) else ty
    if isinstance(elem, ir.PointerType):
        base = "p0"
    elif isinstance(elem, ir.FloatType):
        base = "f32"
    elif isinstance(elem, ir.DoubleType):
        base = "f64"
    else:
        base = f"i{elem.width}"
    return f"v{ty.count}{base}" if isinstance(ty, ir.VectorType) else base


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type],
            var_arg: bool = False) -> ir.Function:
    """The function `name` in `module`, declared on first use."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ret, args, var_arg=var_arg), name=name)


def intrinsic(b: ir.IRBuilder, name: str, args: list[ir.Value], ret: ir.Type | None = None,
              suffix_types: list[ir.Type] | None = None, fastmath=()) -> ir.Value:
    """Call the overloaded intrinsic `name`, mangled on `suffix_types` (default: the first
    argument's type); `ret` defaults to the first argument's type."""
    suffix_types = suffix_types or [args[0].type]
    full = name + "".join("." + mangle(t) for t in suffix_types)
    types = [PTR if isinstance(a.type, ir.PointerType) else a.type for a in args]
    fn = declare(b.module, full, ret or args[0].type, types)
    return b.call(fn, args, fastmath=fastmath)
