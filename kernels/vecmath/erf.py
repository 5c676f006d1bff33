"""erf as branch-free piecewise polynomials (float32 only).

|x| < 1:       erf(x) = x + x * Q(x**2)
1 <= |x| < 2:  erf(|x|) = B1((|x| - 1.5) / 0.5)
2 <= |x|:      erf(|x|) = B2((|x| - 2.96) / 0.96), and 1 from |x| >= 3.92 on (where erf
               rounds to 1 in float32)
B1 and B2 are evaluated by one Horner pass whose coefficients are chosen per lane with
selects. Coefficients: Chebyshev interpolants (degree 7 in x**2, degree 10 in the scaled
variable), converted to monomials in float64 and rounded to float32.
"""
from __future__ import annotations

from llvmlite import ir

from .builder import F64, MathBuilder, define_math_function, element_type

_SMALL = (0.12837916612625122, -0.37612637877464294, 0.11283782124519348,
          -0.026865430176258087, 0.005221031606197357, -0.0008484080317430198,
          0.00011265958892181516, -9.667043741501402e-06)
_MID_CENTRE, _MID_HALF = 1.5, 0.5
_MID = (0.9661051630973816, 0.05946514382958412, -0.044598858803510666,
        0.017344025894999504, -0.0027874321676790714, -0.0004647140740416944,
        0.0003019917057827115, -3.672752427519299e-05, -9.276131095248275e-06,
        3.0084761419857386e-06, -4.2558919943758156e-08)
_TAIL_CENTRE, _TAIL_HALF = 2.96, 0.96
_TAIL = (0.9999716281890869, 0.00016959986533038318, -0.00048213161062449217,
         0.0008627056377008557, -0.0010757490526884794, 0.0009761464898474514,
         -0.000666893960442394, 0.0003455512342043221, -0.00010288364865118638,
         -1.5144423741730861e-05, 1.7157743059215136e-05)
_SATURATION = 3.92


def _pick(mb: MathBuilder, cond: ir.Value, a: float, b: float) -> ir.Value:
    return mb.select(cond, mb.const(a), mb.const(b))


def _erf_large(mb: MathBuilder, a: ir.Value) -> ir.Value:
    """erf(a) for 1 <= a <= 3.92 with per-lane coefficients."""
    mid = mb.cmp("<", a, mb.const(2.0))
    scale = _pick(mb, mid, 1 / _MID_HALF, 1 / _TAIL_HALF)
    offset = _pick(mb, mid, -_MID_CENTRE / _MID_HALF, -_TAIL_CENTRE / _TAIL_HALF)
    s = mb.fma(a, scale, offset)
    acc = _pick(mb, mid, _MID[-1], _TAIL[-1])
    for lo, hi in zip(reversed(_MID[:-1]), reversed(_TAIL[:-1])):
        acc = mb.fma(acc, s, _pick(mb, mid, lo, hi))
    return acc


def erf_body(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """erf(x); keeps -0 and subnormals, +-inf -> +-1, NaN -> NaN."""
    a = mb.abs(x)
    small = mb.fma(x, mb.poly(mb.mul(x, x), _SMALL), x)
    large = _erf_large(mb, mb.clamp(a, 1.0, _SATURATION))
    large = mb.select(mb.cmp(">=", a, mb.const(_SATURATION)), mb.const(1.0), large)
    return mb.select(mb.cmp("<", a, mb.const(1.0)), small, mb.copysign(large, x))


def emit_erf(module: ir.Module, ty: ir.Type) -> ir.Function:
    """erf elementwise on a float32 `ty` (float64 raises NotImplementedError).

    Measured max error vs a float64 reference: float32 0.89 ulp.
    """
    if element_type(ty) == F64:
        raise NotImplementedError("vecmath.erf has no float64 version yet")
    return define_math_function(module, "erf", ty, 1, erf_body)
