"""LLVM code for each elementwise primitive, on scalars or vectors alike (`lower_llvm`).

A rule takes the IR builder, the operand registers (all with the same lane count), the
operand dtypes, the result dtype and the primitive's static parameters, and returns the
result register. The semantics are the primitives' NumPy implementations (compiler/
primitives/elementwise.py): integer division truncates and gives -1 when dividing by zero,
NaN propagates through max/min, shifts by the bit width or more give 0 (or -1), float to
int conversion saturates with NaN -> 0. Transcendental functions come from kernels/vecmath
(vectorised polynomials); the few it lacks are scalar libm calls per lane.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives.base import Primitive
from redraft.kernels.vecmath import VECMATH

from .types import (
    I32,
    Unsupported,
    constant,
    declare,
    intrinsic,
    is_bool,
    is_float,
    is_signed,
    lanes_of,
    register_type,
    scalar_type,
    splat,
)

Rule = Callable[[ir.IRBuilder, list, list, np.dtype, dict], ir.Value]

ELEMENTWISE: dict[Primitive, Rule] = {}
# Rough cost of one element relative to an add, to decide when a loop is worth threads.
COST: dict[Primitive, int] = {}


def rule(*prims: Primitive, cost: int = 1):
    def register(fn: Rule) -> Rule:
        for p in prims:
            ELEMENTWISE[p] = fn
            COST[p] = cost
        return fn
    return register


def lower(b: ir.IRBuilder, prim: Primitive, args: list, in_dtypes: list, out_dtype: np.dtype,
          params: dict) -> ir.Value:
    """The register holding `prim(*args)`; operands are splatted to a common lane count."""
    lanes = max((lanes_of(a) for a in args), default=0)
    args = [splat(b, a, lanes) if lanes and not lanes_of(a) else a for a in args]
    return ELEMENTWISE[prim](b, args, in_dtypes, out_dtype, params)


def const_like(dtype: np.dtype, value, like: ir.Value) -> ir.Constant:
    return constant(dtype, value, lanes_of(like))


# ---- arithmetic ---------------------------------------------------------------------------

def _arith(float_op: str, int_op: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        op = float_op if is_float(dtypes[0]) else int_op
        return getattr(b, op)(*args)
    return emit


rule(ew.add_p)(_arith("fadd", "add"))
rule(ew.sub_p)(_arith("fsub", "sub"))
rule(ew.mul_p)(_arith("fmul", "mul"))


@rule(ew.square_p)
def _square(b, args, dtypes, out, params):
    (x,) = args
    return b.fmul(x, x) if is_float(dtypes[0]) else b.mul(x, x)


@rule(ew.div_p, cost=4)
def _div(b, args, dtypes, out, params):
    x, y = args
    dt = dtypes[0]
    if is_float(dt):
        return b.fdiv(x, y)
    zero = b.icmp_unsigned("==", y, const_like(dt, 0, y))
    ones = const_like(dt, -1 if is_signed(dt) else np.iinfo(dt).max, y)
    one = const_like(dt, 1, y)
    if not is_signed(dt):
        return b.select(zero, ones, b.udiv(x, b.select(zero, one, y)))
    minus_one = b.icmp_signed("==", y, ones)
    q = b.sdiv(x, b.select(b.or_(zero, minus_one), one, y))
    q = b.select(minus_one, b.sub(const_like(dt, 0, x), x), q)  # no overflow trap on MIN/-1
    return b.select(zero, ones, q)


@rule(ew.rem_p, cost=4)
def _rem(b, args, dtypes, out, params):
    x, y = args
    dt = dtypes[0]
    if is_float(dt):
        return b.frem(x, y)
    one = const_like(dt, 1, y)
    zero = b.icmp_unsigned("==", y, const_like(dt, 0, y))
    if is_signed(dt):  # x rem -1 is 0 (by 1: no overflow trap on MIN rem -1)
        bad = b.or_(zero, b.icmp_signed("==", y, const_like(dt, -1, y)))
        return b.select(zero, x, b.srem(x, b.select(bad, one, y)))  # x rem 0 is x, as XLA
    return b.select(zero, x, b.urem(x, b.select(zero, one, y)))


@rule(ew.pow_p, cost=20)
def _pow(b, args, dtypes, out, params):
    dt = dtypes[0]
    if not is_float(dt):
        return _integer_power(b, args[0], args[1], dt)
    if dt == np.float32:
        return b.call(VECMATH["pow"](b.module, args[0].type), args)
    return intrinsic(b, "llvm.pow", args)


def _integer_power(b: ir.IRBuilder, x: ir.Value, y: ir.Value, dt: np.dtype) -> ir.Value:
    """x ** y for integers by squaring, one step per bit of y; a negative y gives 0, or 1
    for x = 1 and +-1 for x = -1 (JAX's jnp.power)."""
    if is_bool(dt):
        return b.or_(x, b.icmp_unsigned("==", y, const_like(dt, 0, y)))
    result, base, rest = const_like(dt, 1, x), x, y
    for _ in range(8 * dt.itemsize - (1 if is_signed(dt) else 0)):
        odd = b.icmp_unsigned("!=", b.and_(rest, const_like(dt, 1, y)), const_like(dt, 0, y))
        result = b.select(odd, b.mul(result, base), result)
        base = b.mul(base, base)
        rest = b.lshr(rest, const_like(dt, 1, y))
    if not is_signed(dt):
        return result
    odd = b.icmp_unsigned("!=", b.and_(y, const_like(dt, 1, y)), const_like(dt, 0, y))
    minus_one = b.select(odd, const_like(dt, -1, x), const_like(dt, 1, x))
    reciprocal = b.select(b.icmp_signed("==", x, const_like(dt, 1, x)), const_like(dt, 1, x),
                          b.select(b.icmp_signed("==", x, const_like(dt, -1, x)), minus_one,
                                   const_like(dt, 0, x)))
    return b.select(b.icmp_signed("<", y, const_like(dt, 0, y)), reciprocal, result)


def _max_min(greater: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        x, y = args
        dt = dtypes[0]
        if is_float(dt):  # NumPy: (x > y or isnan(x)) ? x : y, so NaN wins
            pick = b.or_(b.fcmp_ordered(greater, x, y), b.fcmp_unordered("uno", x, x))
        elif is_signed(dt):
            pick = b.icmp_signed(greater, x, y)
        else:
            pick = b.icmp_unsigned(greater, x, y)
        return b.select(pick, x, y)
    return emit


rule(ew.max_p)(_max_min(">"))
rule(ew.min_p)(_max_min("<"))


@rule(ew.neg_p)
def _neg(b, args, dtypes, out, params):
    x = args[0]
    return b.fneg(x) if is_float(dtypes[0]) else b.sub(const_like(dtypes[0], 0, x), x)


@rule(ew.abs_p)
def _abs(b, args, dtypes, out, params):
    x, dt = args[0], dtypes[0]
    if is_float(dt):
        return intrinsic(b, "llvm.fabs", [x])
    if not is_signed(dt):
        return x
    negative = b.icmp_signed("<", x, const_like(dt, 0, x))
    return b.select(negative, b.sub(const_like(dt, 0, x), x), x)


def _sign_value(b, x, dt):
    if is_float(dt):  # NumPy: 1, -1, +0 for either zero, NaN stays NaN
        zero = const_like(dt, 0.0, x)
        r = b.select(b.fcmp_ordered("==", x, zero), zero, x)
        r = b.select(b.fcmp_ordered("<", x, zero), const_like(dt, -1.0, x), r)
        return b.select(b.fcmp_ordered(">", x, zero), const_like(dt, 1.0, x), r)
    zero = const_like(dt, 0, x)
    if not is_signed(dt):
        return b.zext(b.icmp_unsigned("!=", x, zero), x.type)
    return b.sub(b.zext(b.icmp_signed(">", x, zero), x.type),
                 b.zext(b.icmp_signed("<", x, zero), x.type))


@rule(ew.sign_p)
def _sign(b, args, dtypes, out, params):
    return _sign_value(b, args[0], dtypes[0])


def _float_intrinsic(name: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        return intrinsic(b, name, list(args))
    return emit


rule(ew.floor_p)(_float_intrinsic("llvm.floor"))
rule(ew.ceil_p)(_float_intrinsic("llvm.ceil"))
rule(ew.sqrt_p, cost=4)(_float_intrinsic("llvm.sqrt"))


@rule(ew.round_p)
def _round(b, args, dtypes, out, params):
    x, dt = args[0], dtypes[0]
    if params.get("rounding_method", 0) == 1:
        return intrinsic(b, "llvm.roundeven", [x])
    magnitude = intrinsic(b, "llvm.floor", [b.fadd(intrinsic(b, "llvm.fabs", [x]),
                                                  const_like(dt, 0.5, x))])
    return b.fmul(_sign_value(b, x, dt), magnitude)


@rule(ew.rsqrt_p, cost=5)
def _rsqrt(b, args, dtypes, out, params):
    x = args[0]
    return b.fdiv(const_like(dtypes[0], 1.0, x), intrinsic(b, "llvm.sqrt", [x]))


@rule(ew.is_finite_p)
def _is_finite(b, args, dtypes, out, params):
    x = args[0]
    return b.fcmp_ordered("<", intrinsic(b, "llvm.fabs", [x]), const_like(dtypes[0], np.inf, x))


@rule(ew.not_p)
def _not(b, args, dtypes, out, params):
    x = args[0]
    return b.xor(x, ir.Constant(x.type, [ir.Constant(scalar_type(dtypes[0]), -1)] *
                                lanes_of(x)) if lanes_of(x) else ir.Constant(x.type, -1))


@rule(ew.population_count_p)
def _population_count(b, args, dtypes, out, params):
    return intrinsic(b, "llvm.ctpop", [args[0]])


@rule(ew.clz_p)
def _clz(b, args, dtypes, out, params):
    x = args[0]
    return intrinsic(b, "llvm.ctlz", [x, ir.Constant(ir.IntType(1), 0)])  # defined at 0


@rule(ew.conj_p)
def _conj(b, args, dtypes, out, params):
    if not is_float(dtypes[0]):
        raise Unsupported("conj of a non-float")
    return args[0]


# ---- transcendental functions ----------------------------------------------------------------

def _vecmath(name: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        try:
            fn = VECMATH[name](b.module, args[0].type)
        except NotImplementedError:  # no float64 version: scalar libm per lane
            return libm(b, name, args, dtypes[0])
        return b.call(fn, list(args))
    return emit


for _name, _prim in (("exp", ew.exp_p), ("log", ew.log_p), ("log1p", ew.log1p_p),
                     ("expm1", ew.expm1_p), ("tanh", ew.tanh_p), ("logistic", ew.logistic_p),
                     ("erf", ew.erf_p)):
    rule(_prim, cost=10)(_vecmath(_name))

TRIG_RANGE = 2.0 ** 40   # vecmath's sin/cos are accurate up to here; libm beyond


def _trig(name: str) -> Rule:
    """vecmath sin/cos, with a branch to libm for the rare vector holding a huge |x|."""
    fast = _vecmath(name)

    def emit(b, args, dtypes, out, params):
        x, dt = args[0], dtypes[0]
        result = fast(b, args, dtypes, out, params)
        huge = b.fcmp_ordered(">", intrinsic(b, "llvm.fabs", [x]),
                              const_like(dt, TRIG_RANGE, x))
        if lanes_of(x):
            huge = intrinsic(b, "llvm.vector.reduce.or", [huge], ret=ir.IntType(1))
        fast_block = b.block
        with b.if_then(huge, likely=False):
            slow = libm(b, name, [x], dt)
            slow_block = b.block
        merged = b.phi(result.type)
        merged.add_incoming(result, fast_block)
        merged.add_incoming(slow, slow_block)
        return merged
    return emit


rule(ew.sin_p, cost=10)(_trig("sin"))
rule(ew.cos_p, cost=10)(_trig("cos"))


def libm(b: ir.IRBuilder, name: str, args: list, dt: np.dtype) -> ir.Value:
    """Scalar C library calls, one per lane (for functions vecmath does not have): `name`
    for float64, `name` + "f" for float32."""
    elem = scalar_type(dt)
    fn = declare(b.module, name if dt == np.float64 else name + "f", elem, [elem] * len(args))
    lanes = lanes_of(args[0])
    if not lanes:
        return b.call(fn, list(args))
    result = ir.Constant(args[0].type, ir.Undefined)
    for lane in range(lanes):
        scalars = [b.extract_element(a, ir.Constant(I32, lane)) for a in args]
        result = b.insert_element(result, b.call(fn, scalars), ir.Constant(I32, lane))
    return result


def _libm_rule(name: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        return libm(b, name, list(args), dtypes[0])
    return emit


for _name, _prim in (("exp2", ew.exp2_p), ("tan", ew.tan_p), ("asin", ew.asin_p),
                     ("acos", ew.acos_p), ("atan", ew.atan_p), ("sinh", ew.sinh_p),
                     ("cosh", ew.cosh_p), ("asinh", ew.asinh_p), ("acosh", ew.acosh_p),
                     ("atanh", ew.atanh_p), ("cbrt", ew.cbrt_p), ("erfc", ew.erfc_p),
                     ("lgamma", ew.lgamma_p), ("atan2", ew.atan2_p),
                     ("nextafter", ew.nextafter_p)):
    rule(_prim, cost=30)(_libm_rule(_name))


# ---- bitwise and shifts -------------------------------------------------------------------

rule(ew.and_p)(lambda b, args, dtypes, out, params: b.and_(*args))
rule(ew.or_p)(lambda b, args, dtypes, out, params: b.or_(*args))
rule(ew.xor_p)(lambda b, args, dtypes, out, params: b.xor(*args))


def _shift(kind: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        x, y = args
        dt = dtypes[0]
        width = const_like(dt, 8 * dt.itemsize, y)
        oversize = b.icmp_unsigned(">=", y, width)  # negative counts are huge unsigned
        safe = b.select(oversize, const_like(dt, 0, y), y)
        if kind == "left":
            return b.select(oversize, const_like(dt, 0, x), b.shl(x, safe))
        if kind == "arith" and is_signed(dt):
            fill = b.ashr(x, const_like(dt, 8 * dt.itemsize - 1, x))
            return b.select(oversize, fill, b.ashr(x, safe))
        return b.select(oversize, const_like(dt, 0, x), b.lshr(x, safe))
    return emit


rule(ew.shift_left_p)(_shift("left"))
rule(ew.shift_right_logical_p)(_shift("logical"))
rule(ew.shift_right_arithmetic_p)(_shift("arith"))


# ---- comparisons and selection ------------------------------------------------------------

def _compare(op: str) -> Rule:
    def emit(b, args, dtypes, out, params):
        dt = dtypes[0]
        if is_float(dt):  # != is true for NaN, every other comparison false
            return (b.fcmp_unordered if op == "!=" else b.fcmp_ordered)(op, *args)
        if is_signed(dt):
            return b.icmp_signed(op, *args)
        return b.icmp_unsigned(op, *args)
    return emit


for _op, _prim in (("==", ew.eq_p), ("!=", ew.ne_p), ("<", ew.lt_p), ("<=", ew.le_p),
                   (">", ew.gt_p), (">=", ew.ge_p)):
    rule(_prim)(_compare(_op))


@rule(ew.select_p)
def _select(b, args, dtypes, out, params):
    pred, on_true, on_false = args
    return b.select(pred, on_true, on_false)


@rule(ew.clamp_p)
def _clamp(b, args, dtypes, out, params):
    lo, x, hi = args
    dt = dtypes[1]
    raised = ELEMENTWISE[ew.max_p](b, [x, lo], [dt, dt], dt, {})
    return ELEMENTWISE[ew.min_p](b, [raised, hi], [dt, dt], dt, {})


@rule(ew.integer_pow_p)
def _integer_pow(b, args, dtypes, out, params):
    x, dt, y = args[0], dtypes[0], int(params["y"])
    if not (is_float(dt) or dt.kind in "iu") or (y < 0 and not is_float(dt)):
        raise Unsupported("integer_pow of this dtype or exponent")
    mul = b.fmul if is_float(dt) else b.mul
    result, base, n = None, x, abs(y)
    while n:  # binary exponentiation
        if n & 1:
            result = base if result is None else mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
    if result is None:
        return const_like(dt, 1, x)
    return b.fdiv(const_like(dt, 1.0, x), result) if y < 0 else result


@rule(ew.convert_element_type_p)
def _convert(b, args, dtypes, out, params):
    return convert(b, args[0], dtypes[0], np.dtype(params["new_dtype"]))


def convert(b: ir.IRBuilder, x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """x (of dtype src) as dst: saturating float->int (NaN -> 0), x != 0 for bool."""
    lanes = lanes_of(x)
    target = register_type(dst, lanes)
    if src == dst:
        return x
    if is_bool(dst):
        zero = constant(src, 0, lanes)
        return b.fcmp_unordered("!=", x, zero) if is_float(src) else b.icmp_unsigned(
            "!=", x, zero)
    if is_float(src) and is_float(dst):
        return b.fpext(x, target) if dst.itemsize > src.itemsize else b.fptrunc(x, target)
    if is_float(src):
        name = "llvm.fptosi.sat" if is_signed(dst) else "llvm.fptoui.sat"
        return intrinsic(b, name, [x], ret=target, suffix_types=[target, x.type])
    if is_float(dst):
        return b.sitofp(x, target) if is_signed(src) else b.uitofp(x, target)
    if dst.itemsize < src.itemsize:
        return b.trunc(x, target)
    if dst.itemsize == src.itemsize and not is_bool(src):
        return x
    return b.sext(x, target) if is_signed(src) else b.zext(x, target)



# ---- bitcast between types of one width (compiler/primitives/bits.py) ------------------------

from redraft.compiler.primitives import bits  # noqa: E402


@rule(bits.bitcast_convert_type_p)
def _bitcast(b, args, dtypes, out, params):
    x = args[0]
    if is_bool(dtypes[0]) or is_bool(out):
        raise Unsupported("bitcast of bool")  # registers hold bools as i1, not 8 bits
    return b.bitcast(x, register_type(out, lanes_of(x)))
