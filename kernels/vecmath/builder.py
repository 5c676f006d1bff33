"""Shared machinery for the vector math emitters: typed constants, bit tricks, definitions.

`MathBuilder` wraps an `ir.IRBuilder` together with the floating type being computed on
(`float`, `double`, or a vector of either) and its same-shaped integer type, so each math
function reads like scalar code while working on any lane count. `define_math_function`
gives every emitter the same idempotent, internal, always-inlined definition.
"""
from __future__ import annotations

from typing import Callable, Sequence

from llvmlite import ir

F32 = ir.FloatType()
F64 = ir.DoubleType()


def element_type(ty: ir.Type) -> ir.Type:
    """The scalar element of a vector type, or the type itself."""
    return ty.element if isinstance(ty, ir.VectorType) else ty


def lanes_of(ty: ir.Type) -> int:
    """Lane count of a vector type; 0 for scalars."""
    return ty.count if isinstance(ty, ir.VectorType) else 0


def shaped(elem: ir.Type, lanes: int) -> ir.Type:
    """`elem`, or a vector of `lanes` of it when `lanes` > 0."""
    return ir.VectorType(elem, lanes) if lanes else elem


def mangle(ty: ir.Type) -> str:
    """LLVM's overloaded-intrinsic suffix for a type: 'f32', 'v16f32', 'v8i64', ..."""
    elem = element_type(ty)
    if isinstance(elem, ir.FloatType):
        base = "f32"
    elif isinstance(elem, ir.DoubleType):
        base = "f64"
    elif isinstance(elem, ir.IntType):
        base = f"i{elem.width}"
    else:
        raise TypeError(f"cannot mangle {ty}")
    lanes = lanes_of(ty)
    return f"v{lanes}{base}" if lanes else base


def is_float_type(ty: ir.Type) -> bool:
    """True for float/double and vectors of them (the types the emitters accept)."""
    return isinstance(element_type(ty), (ir.FloatType, ir.DoubleType))


class MathBuilder:
    """An IRBuilder bound to one floating type `ty` (scalar or vector) and its integer twin."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type) -> None:
        if not is_float_type(ty):
            raise TypeError(f"vecmath needs float/double or a vector of them, got {ty}")
        self.b = builder
        self.ty = ty
        self.lanes = lanes_of(ty)
        self.is_f64 = isinstance(element_type(ty), ir.DoubleType)
        self.bits = 64 if self.is_f64 else 32
        self.mant_bits = 52 if self.is_f64 else 23
        self.exp_bias = 1023 if self.is_f64 else 127
        self.ity = shaped(ir.IntType(self.bits), self.lanes)

    @property
    def module(self) -> ir.Module:
        return self.b.module

    def retyped(self, elem: ir.Type) -> "MathBuilder":
        """A MathBuilder on the same insertion point for `elem` with the same lane count."""
        return MathBuilder(self.b, shaped(elem, self.lanes))

    # constants -------------------------------------------------------------------------

    def const(self, value: float) -> ir.Constant:
        """`value` rounded to this type's precision, splatted across lanes."""
        elem = ir.Constant(element_type(self.ty), float(value))
        return ir.Constant(self.ty, [elem] * self.lanes) if self.lanes else elem

    def iconst(self, value: int) -> ir.Constant:
        """Integer `value` in the same-shaped integer type."""
        elem = ir.Constant(element_type(self.ity), int(value))
        return ir.Constant(self.ity, [elem] * self.lanes) if self.lanes else elem

    # arithmetic (strict IEEE, no fast-math flags: special values must survive) ------------

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fadd(a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fsub(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fmul(a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fdiv(a, b)

    def neg(self, a: ir.Value) -> ir.Value:
        return self.b.fneg(a)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """a * b + c with one rounding (llvm.fma)."""
        return self.intrinsic("llvm.fma", a, b, c)

    def poly(self, x: ir.Value, coeffs: Sequence[float]) -> ir.Value:
        """Horner evaluation of sum(coeffs[i] * x**i) with FMAs (coeffs lowest order first)."""
        acc = self.const(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.const(c))
        return acc

    def abs(self, a: ir.Value) -> ir.Value:
        return self.intrinsic("llvm.fabs", a)

    def trunc(self, a: ir.Value) -> ir.Value:
        return self.intrinsic("llvm.trunc", a)

    def copysign(self, mag: ir.Value, sign: ir.Value) -> ir.Value:
        return self.intrinsic("llvm.copysign", mag, sign)

    def intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        """Call an overloaded intrinsic whose operands and result are all of type `ty`."""
        full = f"{name}.{mangle(self.ty)}"
        fn = self.module.globals.get(full)
        if fn is None:
            fnty = ir.FunctionType(self.ty, [self.ty] * len(args))
            fn = ir.Function(self.module, fnty, name=full)
        return self.b.call(fn, list(args))

    # comparisons and selection ------------------------------------------------------------

    def cmp(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """Ordered comparison (false when either side is NaN)."""
        return self.b.fcmp_ordered(op, a, b)

    def is_nan(self, a: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", a, a)

    def select(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.select(cond, a, b)

    def clamp(self, x: ir.Value, lo: float, hi: float) -> ir.Value:
        """x limited to [lo, hi]; NaN stays NaN."""
        x = self.select(self.cmp(">", x, self.const(hi)), self.const(hi), x)
        return self.select(self.cmp("<", x, self.const(lo)), self.const(lo), x)

    # bits ---------------------------------------------------------------------------------

    def to_bits(self, x: ir.Value) -> ir.Value:
        return self.b.bitcast(x, self.ity)

    def from_bits(self, n: ir.Value) -> ir.Value:
        return self.b.bitcast(n, self.ty)

    def pow2i(self, n: ir.Value) -> ir.Value:
        """2**n for integer n in the normal exponent range, built from bits."""
        biased = self.b.add(n, self.iconst(self.exp_bias))
        return self.from_bits(self.b.shl(biased, self.iconst(self.mant_bits)))

    def round_to_int(self, x: ir.Value, scale: float) -> tuple[ir.Value, ir.Value]:
        """(n, n as integer) for n = round-to-nearest(x * scale), |n| < 2**(mantissa-1).

        Adding 1.5 * 2**mantissa_bits inside one FMA rounds to an integer and leaves that
        integer in the low bits of the sum, with no float-to-int conversion (which is poison
        in LLVM for out-of-range or NaN inputs).
        """
        magic = self.const(1.5 * 2.0 ** self.mant_bits)
        shifted = self.fma(x, self.const(scale), magic)
        n = self.sub(shifted, magic)
        n_int = self.b.sub(self.to_bits(shifted), self.to_bits(magic))
        return n, n_int


Body = Callable[..., ir.Value]


def define_math_function(module: ir.Module, op: str, ty: ir.Type, arity: int,
                         body: Body) -> ir.Function:
    """Define `redraft.vecmath.<op>.<ty>` once: internal, always inlined, no side effects.

    `body(mb, *args)` builds the result with a MathBuilder `mb` for `ty`. A second call
    with the same module, op and type returns the existing function.
    """
    if not is_float_type(ty):
        raise TypeError(f"vecmath.{op} needs float/double or a vector of them, got {ty}")
    name = f"redraft.vecmath.{op}.{mangle(ty)}"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * arity), name=name)
    fn.linkage = "internal"
    for attr in ("alwaysinline", "nounwind", "readnone"):
        fn.attributes.add(attr)
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    builder.ret(body(MathBuilder(builder, ty), *fn.args))
    return fn
