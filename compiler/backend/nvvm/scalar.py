"""One element of an elementwise primitive, for either kernel target.

The LLVM CPU backend's rules (compiler/backend/llvm/elementwise.py) are reused where their
IR means the same on a GPU; this table replaces the ones libNVVM cannot take or that would
call host code: LLVM-7 IR has no `fneg` and no saturating `fptosi.sat`, and transcendental
functions are libdevice calls (`__nv_expf`) on the GPU and C library calls on the host
emulation; so are fabs, floor, ceil, sqrt and rint, whose LLVM intrinsics libNVVM rejects.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from redraft.compiler.backend.llvm.elementwise import ELEMENTWISE
from redraft.compiler.backend.llvm.types import (
    Unsupported,
    constant,
    declare,
    is_bool,
    is_float,
    is_signed,
    register_type,
    scalar_type,
)
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives.base import Primitive

Override = Callable[[str, ir.IRBuilder, list, list, np.dtype, dict], ir.Value]
OVERRIDES: dict[Primitive, Override] = {}

# name -> libdevice/libm stem (float32 adds "f")
MATH = {ew.exp_p: "exp", ew.log_p: "log", ew.log1p_p: "log1p", ew.expm1_p: "expm1",
        ew.tanh_p: "tanh", ew.erf_p: "erf", ew.sin_p: "sin", ew.cos_p: "cos",
        ew.exp2_p: "exp2", ew.tan_p: "tan", ew.asin_p: "asin", ew.acos_p: "acos",
        ew.atan_p: "atan", ew.sinh_p: "sinh", ew.cosh_p: "cosh", ew.asinh_p: "asinh",
        ew.acosh_p: "acosh", ew.atanh_p: "atanh", ew.cbrt_p: "cbrt", ew.erfc_p: "erfc",
        ew.lgamma_p: "lgamma", ew.atan2_p: "atan2", ew.nextafter_p: "nextafter",
        ew.pow_p: "pow", ew.floor_p: "floor", ew.ceil_p: "ceil", ew.sqrt_p: "sqrt"}


def lowered_primitives() -> set[Primitive]:
    return set(ELEMENTWISE) | set(OVERRIDES)


def lower(target: str, b: ir.IRBuilder, prim: Primitive, args: list, in_dtypes: list,
          out_dtype: np.dtype, params: dict) -> ir.Value:
    """The register holding `prim(*args)` on scalars, for `target` ("nvvm" or "host")."""
    override = OVERRIDES.get(prim)
    if override is not None:
        return override(target, b, args, in_dtypes, out_dtype, params)
    rule = ELEMENTWISE.get(prim)
    if rule is None:
        raise Unsupported(f"primitive {prim.name} in a GPU kernel")
    return rule(b, args, in_dtypes, out_dtype, params)


def math_call(target: str, b: ir.IRBuilder, stem: str, args: list, dtype: np.dtype
              ) -> ir.Value:
    """libdevice `__nv_<stem>[f]` on the GPU, the C library's `<stem>[f]` on the host."""
    if not is_float(dtype):
        raise Unsupported(f"{stem} of {dtype.name}")
    elem = scalar_type(dtype)
    name = stem + ("f" if dtype == np.float32 else "")
    if target == "nvvm":
        name = "__nv_" + name
    return b.call(declare(b.module, name, elem, [elem] * len(args)), list(args))


def _override(*prims: Primitive):
    def register(fn: Override) -> Override:
        for p in prims:
            OVERRIDES[p] = fn
        return fn
    return register


for _prim, _stem in MATH.items():
    OVERRIDES[_prim] = (lambda stem: lambda target, b, args, dts, out, params: math_call(
        target, b, stem, args, dts[0]))(_stem)


@_override(ew.logistic_p)
def _logistic(target, b, args, dts, out, params):
    x = args[0]
    one = constant(dts[0], 1.0)
    e = math_call(target, b, "exp", [b.fsub(constant(dts[0], -0.0), x)], dts[0])
    return b.fdiv(one, b.fadd(one, e))


@_override(ew.neg_p)
def _neg(target, b, args, dts, out, params):
    x = args[0]
    if is_float(dts[0]):
        return b.fsub(constant(dts[0], -0.0), x)
    return b.sub(constant(dts[0], 0), x)


@_override(ew.abs_p)
def _abs(target, b, args, dts, out, params):
    if is_float(dts[0]):
        return math_call(target, b, "fabs", args, dts[0])
    return ELEMENTWISE[ew.abs_p](b, args, dts, out, params)


@_override(ew.rsqrt_p)
def _rsqrt(target, b, args, dts, out, params):
    return b.fdiv(constant(dts[0], 1.0), math_call(target, b, "sqrt", args, dts[0]))


@_override(ew.is_finite_p)
def _is_finite(target, b, args, dts, out, params):
    magnitude = math_call(target, b, "fabs", args, dts[0])
    return b.fcmp_ordered("<", magnitude, constant(dts[0], np.inf))


@_override(ew.round_p)
def _round(target, b, args, dts, out, params):
    x, dt = args[0], dts[0]
    if params.get("rounding_method", 0) == 1:
        return math_call(target, b, "rint", [x], dt)
    magnitude = math_call(target, b, "floor", [b.fadd(math_call(target, b, "fabs", [x], dt),
                                                      constant(dt, 0.5))], dt)
    sign = ELEMENTWISE[ew.sign_p](b, [x], [dt], dt, {})
    return b.fmul(sign, magnitude)


@_override(ew.convert_element_type_p)
def _convert(target, b, args, dts, out, params):
    return convert(b, args[0], dts[0], np.dtype(params["new_dtype"]))


def convert(b: ir.IRBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """x as dst, float -> int saturating with NaN -> 0 (written out: no `fptosi.sat`)."""
    if src == dst:
        return x
    target = register_type(dst, 0)
    if is_float(src) and not is_float(dst) and not is_bool(dst):
        info = np.iinfo(dst)
        lo, hi = constant(src, float(info.min)), constant(src, float(info.max))
        as_int = b.fptosi if is_signed(dst) else b.fptoui
        clamped = b.select(b.fcmp_ordered("<", x, lo), lo, x)
        too_big = b.fcmp_ordered(">=", clamped, hi)
        value = as_int(b.select(too_big, constant(src, 0.0), clamped), target)
        value = b.select(too_big, ir.Constant(target, int(info.max) & ((1 << 8 * dst.itemsize)
                                                                        - 1)), value)
        return b.select(b.fcmp_unordered("uno", x, x), ir.Constant(target, 0), value)
    return ELEMENTWISE[ew.convert_element_type_p](b, [x], [src], dst, {"new_dtype": dst})


@_override(ew.clamp_p)
def _clamp(target, b, args, dts, out, params):
    lo, x, hi = args
    dt = dts[1]
    raised = ELEMENTWISE[ew.max_p](b, [x, lo], [dt, dt], dt, {})
    return ELEMENTWISE[ew.min_p](b, [raised, hi], [dt, dt], dt, {})
