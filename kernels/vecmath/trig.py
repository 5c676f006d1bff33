"""sin and cos as branch-free polynomials (float32 and float64).

x = n * pi/2 + r with |r| <= pi/4 by Cody-Waite reduction, one FMA per part of pi/2 (each
step is exact before its single rounding, so cancellation near multiples of pi/2 costs no
accuracy). float32 reduces in double precision with pi/2 in two parts, float64 with three.
Then sin(r) = r + r**3 S(r**2), cos(r) = 1 - r**2/2 + r**4 C(r**2) (Cephes coefficients),
chosen and negated per lane by the quadrant n mod 4. Non-finite inputs give NaN.
"""
from __future__ import annotations

from decimal import Decimal, getcontext

from llvmlite import ir

from .builder import F64, MathBuilder, define_math_function

_PI_DIGITS = ("3.14159265358979323846264338327950288419716939937510"
              "58209749445923078164062862089986280348253421170679")


def _split_half_pi(parts: int) -> tuple[float, ...]:
    """pi/2 as a sum of `parts` doubles, each the rounding of what the previous left."""
    getcontext().prec = 100
    rest = Decimal(_PI_DIGITS) / 2
    out = []
    for _ in range(parts):
        part = float(rest)
        out.append(part)
        rest -= Decimal(part)
    return tuple(out)


_HALF_PI_PARTS = _split_half_pi(3)
_TWO_OVER_PI = float(2 / Decimal(_PI_DIGITS))
_REDUCE_LIMIT = 2.0 ** 40   # |x| beyond this is clamped before reduction (see docstrings)

# Cephes sinf/cosf (float32) and sin/cos (float64), lowest order first, in z = r**2.
_SIN_F32 = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS_F32 = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)
_SIN_F64 = (-1.66666666666666307295e-1, 8.33333333332211858878e-3,
            -1.98412698295895385996e-4, 2.75573136213857245213e-6,
            -2.50507477628578072866e-8, 1.58962301576546568060e-10)
_COS_F64 = (4.16666666666665929218e-2, -1.38888888888730564116e-3,
            2.48015872888517045348e-5, -2.75573141792967388112e-7,
            2.08757008419747316778e-9, -1.13585365213876817300e-11)


def _reduce(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r, quadrant bits as this type's integer) with x = n*pi/2 + r, |r| <~ pi/4."""
    b = mb.b
    wide = mb if mb.is_f64 else mb.retyped(F64)
    xd = x if mb.is_f64 else b.fpext(x, wide.ty)
    n, n_int = wide.round_to_int(xd, _TWO_OVER_PI)
    parts = _HALF_PI_PARTS if mb.is_f64 else _HALF_PI_PARTS[:2]
    r = xd
    for part in parts:
        r = wide.fma(n, wide.const(-part), r)
    if mb.is_f64:
        return r, n_int
    return b.fptrunc(r, mb.ty), b.trunc(n_int, mb.ity)


def _kernels(mb: MathBuilder, r: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(sin r, cos r) for |r| <~ pi/4."""
    sin_c, cos_c = (_SIN_F64, _COS_F64) if mb.is_f64 else (_SIN_F32, _COS_F32)
    z = mb.mul(r, r)
    s = mb.fma(mb.mul(r, z), mb.poly(z, sin_c), r)
    c = mb.fma(mb.mul(z, z), mb.poly(z, cos_c), mb.fma(z, mb.const(-0.5), mb.const(1.0)))
    return s, c


def _sincos_body(mb: MathBuilder, x: ir.Value, quadrant_offset: int) -> ir.Value:
    b = mb.b
    finite = mb.cmp("<", mb.abs(x), mb.const(float("inf")))
    xr = mb.clamp(mb.select(finite, x, mb.const(0.0)), -_REDUCE_LIMIT, _REDUCE_LIMIT)
    r, q = _reduce(mb, xr)
    q = b.add(q, mb.iconst(quadrant_offset))
    s, c = _kernels(mb, r)
    odd = b.icmp_signed("!=", b.and_(q, mb.iconst(1)), mb.iconst(0))
    value = mb.select(odd, c, s)
    sign = b.shl(b.and_(q, mb.iconst(2)), mb.iconst(mb.bits - 2))
    value = mb.from_bits(b.xor(mb.to_bits(value), sign))
    return mb.select(finite, value, mb.const(float("nan")))


def sin_body(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """sin(x); sin(+-0) = +-0."""
    value = _sincos_body(mb, x, 0)
    return mb.select(mb.cmp("==", x, mb.const(0.0)), x, value)


def cos_body(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """cos(x)."""
    return _sincos_body(mb, x, 1)


def emit_sin(module: ir.Module, ty: ir.Type) -> ir.Function:
    """sin elementwise on `ty`.

    Measured max error vs a wider reference for |x| <= 2**40, near multiples of pi/2
    included: float32 1.54 ulp, float64 1.55 ulp. Arguments beyond 2**40 are clamped, so
    results there are in [-1, 1] but not meaningful.
    """
    return define_math_function(module, "sin", ty, 1, sin_body)


def emit_cos(module: ir.Module, ty: ir.Type) -> ir.Function:
    """cos elementwise on `ty`.

    Measured max error vs a wider reference for |x| <= 2**40, near multiples of pi/2
    included: float32 1.53 ulp, float64 1.54 ulp. Arguments beyond 2**40 are clamped, so
    results there are in [-1, 1] but not meaningful.
    """
    return define_math_function(module, "cos", ty, 1, cos_body)
