"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

This family file owns everything about its operations, each keyed by its primitive: the
primitive with its impl and abstract eval, its lax function, its jnp function (JNP_TWINS,
which redraft/numpy/ufuncs.py builds), its jvp and vjp rules and its batching
(compiler/primitives/registry.py). A backend keeps only its lowering, keyed by the same
primitive (compiler/backend/llvm/elementwise.py).

Binary primitives broadcast their operands NumPy-style (the reverse-mode rules sum a
cotangent back to each operand's shape). They are strict about dtypes: operands must share
one dtype, except that weakly typed values (Python scalars) take the dtype of the others.
"""
from __future__ import annotations

import math

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import (broadcast_shapes, check_dtype_kind,
                                                check_same_dtypes)
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.operands import apply, strict_operands
from redraft.compiler.primitives.registry import (ELEMENTWISE, ad, defbatch, defelementwise,
                                                  defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp, defzeros, elementwise_batching, jnp,
                                                  lad, lax, names_primitive)

FAMILY = "elementwise"

# What each primitive accepts, as NumPy kind letters, and how errors describe it.
FLOATING = ("fc", "a floating-point or complex operand")
REAL_FLOAT = ("f", "a floating-point operand")
NUMBER = ("iufc", "a numeric operand")
SIGNED = ("ifc", "a signed numeric operand")
REAL = ("iuf", "a real (non-complex) operand")
INTEGRAL = ("biu", "a bool or integer operand")
INTEGER = ("iu", "an integer operand")
ANY = ("biufc", "an array")


# ---- declaring primitives -------------------------------------------------------------------

def _unary(name: str, impl, accepts: tuple[str, str], result_dtype=None) -> Primitive:
    prim = Primitive(name, FAMILY)
    impl_rules[prim] = impl
    kinds, what = accepts

    def abstract_eval(x: ShapedArray, **params) -> ShapedArray:
        check_dtype_kind(x.dtype, kinds, f"lax.{name}", what)
        dtype = x.dtype if result_dtype is None else result_dtype
        if name == "abs" and x.dtype.kind == "c":  # |complex| is real
            dtype = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
        return ShapedArray(x.shape, dtype, prim.result_weak([x.weak_type], params))

    abstract_eval_rules[prim] = abstract_eval
    return prim


def _binary(name: str, impl, accepts: tuple[str, str], result_dtype=None) -> Primitive:
    weak_rule = WeakRule.ALL if result_dtype is None else WeakRule.NEVER
    prim = Primitive(name, FAMILY, weak_rule)
    impl_rules[prim] = impl
    kinds, what = accepts

    def abstract_eval(x: ShapedArray, y: ShapedArray, **params) -> ShapedArray:
        check_same_dtypes([x.dtype, y.dtype], name)
        check_dtype_kind(x.dtype, kinds, f"lax.{name}", what)
        shape = broadcast_shapes(x.shape, y.shape, op=f"lax.{name}")
        dtype = x.dtype if result_dtype is None else result_dtype
        return ShapedArray(shape, dtype, prim.result_weak([x.weak_type, y.weak_type], params))

    abstract_eval_rules[prim] = abstract_eval
    return prim


# ---- host implementations that NumPy lacks --------------------------------------------------

def _erf(x: np.ndarray) -> np.ndarray:
    """erf through Python's math.erf per element: exact, slow; compiled code is vectorised."""
    return np.asarray(_vectorised_math(math.erf, x))


def _unsigned_bits(x: np.ndarray) -> np.ndarray:
    """The two's-complement bits of an integer array, as the unsigned type of its width."""
    return np.asarray(x).view(np.dtype(f"u{x.dtype.itemsize}"))


def _population_count(x: np.ndarray) -> np.ndarray:
    """The number of 1 bits of each element (of its two's complement, for a negative one)."""
    return np.bitwise_count(_unsigned_bits(x)).astype(x.dtype)


def _clz(x: np.ndarray) -> np.ndarray:
    """The number of 0 bits above each element's highest 1 bit (its width for 0)."""
    bits = _unsigned_bits(x)
    length = np.zeros(bits.shape, np.int64)
    for k in range(8 * x.dtype.itemsize):
        length += (bits >> k) != 0
    return (8 * x.dtype.itemsize - length).astype(x.dtype)


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.asarray(_vectorised_math(math.erfc, x))


def _lgamma(x: np.ndarray) -> np.ndarray:
    return np.asarray(_vectorised_math(_safe_lgamma, x))


def _safe_lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:
        return math.inf


def _vectorised_math(fn, x: np.ndarray) -> np.ndarray:
    wide = np.asarray(x, np.float64)
    flat = np.fromiter((fn(v) if not math.isnan(v) else v for v in wide.ravel()),
                       np.float64, wide.size)
    return flat.reshape(wide.shape).astype(x.dtype)


def _digamma(x: np.ndarray) -> np.ndarray:
    """psi(x): recurrence up to x >= 6, then the asymptotic series; reflection for x < 0."""
    v = np.asarray(x, np.float64)
    reflect = v < 0.5
    z = np.where(reflect, 1.0 - v, v)
    acc = np.zeros_like(z)
    for _ in range(6):
        small = z < 6.0
        acc = acc - np.where(small, 1.0 / np.where(small, z, 1.0), 0.0)
        z = np.where(small, z + 1.0, z)
    inv2 = 1.0 / (z * z)
    series = (np.log(z) - 0.5 / z
              - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240)))))
    out = acc + series
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(reflect, out - np.pi / np.tan(np.pi * v), out)
        out = np.where((v <= 0) & (v == np.floor(v)), np.nan, out)
    return out.astype(x.dtype)


def _erf_inv(x: np.ndarray) -> np.ndarray:
    """erfinv by Newton iterations on erf, from Giles' single-precision starting point."""
    v = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - v) * (1.0 + v))
        guess = np.where(w < 5.0, _giles_central(w - 2.5), _giles_tail(np.sqrt(w) - 3.0)) * v
        for _ in range(2):
            err = _vectorised_math(math.erf, guess) - v
            guess = guess - err / (2 / math.sqrt(math.pi) * np.exp(-guess * guess))
        guess = np.where(np.abs(v) == 1, np.copysign(np.inf, v), guess)
        guess = np.where(np.abs(v) > 1, np.nan, guess)
    return guess.astype(x.dtype)


def _giles_central(w):
    coeffs = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
    return _horner(coeffs, w)


def _giles_tail(w):
    coeffs = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
    return _horner(coeffs, w)


def _horner(coeffs, w):
    acc = np.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * w + c
    return acc


def _round(x: np.ndarray, rounding_method: int = 0) -> np.ndarray:
    if rounding_method == 1:
        return np.round(x)
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """lax.div: integer division rounds toward zero, like C."""
    if x.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(x, np.where(y == 0, 1, y))
            fix = (np.remainder(x, np.where(y == 0, 1, y)) != 0) & ((x < 0) != (y < 0))
            return np.where(y == 0, -1, q + fix).astype(x.dtype)
    return np.true_divide(x, y)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """lax.rem: the remainder takes the sign of the dividend, like C's fmod; an integer
    remainder by zero is the dividend (XLA's rule, so JAX's)."""
    if x.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)
    return np.fmod(x, y)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y; for integers a negative exponent gives 0, except 1 for x = 1 and +-1 for
    x = -1 (JAX's jnp.power: the truncated reciprocal, never an error)."""
    if x.dtype.kind in "iu" and np.any(y < 0):
        negative = y < 0
        magnitude = np.power(x, np.where(negative, 0, y))
        odd = (np.abs(y) % 2 == 1)
        reciprocal = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        return np.where(negative, reciprocal, magnitude).astype(x.dtype)
    return np.power(x, y)


def _logistic(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype)


def _quiet(fn):
    """NumPy warns on log(0), sqrt(-1), overflow; lax returns inf/nan quietly."""
    def impl(*args, **params):
        with np.errstate(all="ignore"):
            return fn(*args, **params)
    impl.__name__ = getattr(fn, "__name__", "impl")
    return impl


# ---- unary ------------------------------------------------------------------------------------

neg_p = _unary("neg", np.negative, NUMBER)
sign_p = _unary("sign", np.sign, NUMBER)
floor_p = _unary("floor", np.floor, REAL_FLOAT)
ceil_p = _unary("ceil", np.ceil, REAL_FLOAT)
round_p = _unary("round", _round, REAL_FLOAT)
is_finite_p = _unary("is_finite", np.isfinite, REAL_FLOAT, dtypes.bool_)
abs_p = _unary("abs", np.abs, NUMBER)
not_p = _unary("not", np.invert, INTEGRAL)
population_count_p = _unary("population_count", _population_count, INTEGER)
clz_p = _unary("clz", _clz, INTEGER)
exp_p = _unary("exp", _quiet(np.exp), FLOATING)
exp2_p = _unary("exp2", _quiet(np.exp2), FLOATING)
log_p = _unary("log", _quiet(np.log), FLOATING)
log1p_p = _unary("log1p", _quiet(np.log1p), FLOATING)
expm1_p = _unary("expm1", _quiet(np.expm1), FLOATING)
tanh_p = _unary("tanh", np.tanh, FLOATING)
logistic_p = _unary("logistic", _logistic, FLOATING)
sin_p = _unary("sin", np.sin, FLOATING)
cos_p = _unary("cos", np.cos, FLOATING)
tan_p = _unary("tan", np.tan, FLOATING)
asin_p = _unary("asin", _quiet(np.arcsin), FLOATING)
acos_p = _unary("acos", _quiet(np.arccos), FLOATING)
atan_p = _unary("atan", np.arctan, FLOATING)
sinh_p = _unary("sinh", _quiet(np.sinh), FLOATING)
cosh_p = _unary("cosh", _quiet(np.cosh), FLOATING)
asinh_p = _unary("asinh", np.arcsinh, FLOATING)
acosh_p = _unary("acosh", _quiet(np.arccosh), FLOATING)
atanh_p = _unary("atanh", _quiet(np.arctanh), FLOATING)
sqrt_p = _unary("sqrt", _quiet(np.sqrt), FLOATING)
rsqrt_p = _unary("rsqrt", _quiet(_rsqrt), FLOATING)
cbrt_p = _unary("cbrt", np.cbrt, REAL_FLOAT)
square_p = _unary("square", _quiet(np.square), NUMBER)
erf_p = _unary("erf", _erf, REAL_FLOAT)
erfc_p = _unary("erfc", _erfc, REAL_FLOAT)
erf_inv_p = _unary("erf_inv", _erf_inv, REAL_FLOAT)
lgamma_p = _unary("lgamma", _lgamma, REAL_FLOAT)
digamma_p = _unary("digamma", _digamma, REAL_FLOAT)
real_p = _unary("real", np.real, ("c", "a complex operand"))
imag_p = _unary("imag", np.imag, ("c", "a complex operand"))
conj_p = _unary("conj", np.conj, FLOATING)
def _complex_part_abstract(x: ShapedArray, **_) -> ShapedArray:
    check_dtype_kind(x.dtype, "c", "lax.real/imag", "a complex operand")
    real = np.float32 if x.dtype == np.complex64 else np.float64
    return ShapedArray(x.shape, np.dtype(real), x.weak_type)


for _p in (real_p, imag_p):
    abstract_eval_rules[_p] = _complex_part_abstract

# ---- binary -----------------------------------------------------------------------------------

add_p = _binary("add", np.add, NUMBER)
sub_p = _binary("sub", np.subtract, NUMBER)
mul_p = _binary("mul", np.multiply, NUMBER)
div_p = _binary("div", _quiet(_int_div), NUMBER)
rem_p = _binary("rem", _quiet(_rem), REAL)
pow_p = _binary("pow", _quiet(_pow), NUMBER)
max_p = _binary("max", np.maximum, REAL)
min_p = _binary("min", np.minimum, REAL)
atan2_p = _binary("atan2", np.arctan2, REAL_FLOAT)
nextafter_p = _binary("nextafter", np.nextafter, REAL_FLOAT)
and_p = _binary("and", np.bitwise_and, INTEGRAL)
or_p = _binary("or", np.bitwise_or, INTEGRAL)
xor_p = _binary("xor", np.bitwise_xor, INTEGRAL)
shift_left_p = _binary("shift_left", np.left_shift, ("iu", "an integer operand"))
shift_right_logical_p = _binary(
    "shift_right_logical",
    lambda x, y: (x.view(x.dtype.str.replace("i", "u")) >> y.astype(
        x.dtype.str.replace("i", "u"))).view(x.dtype),
    ("iu", "an integer operand"))
shift_right_arithmetic_p = _binary("shift_right_arithmetic", np.right_shift,
                                   ("iu", "an integer operand"))
eq_p = _binary("eq", np.equal, ANY, dtypes.bool_)
ne_p = _binary("ne", np.not_equal, ANY, dtypes.bool_)
lt_p = _binary("lt", np.less, ("biuf", "a real operand"), dtypes.bool_)
le_p = _binary("le", np.less_equal, ("biuf", "a real operand"), dtypes.bool_)
gt_p = _binary("gt", np.greater, ("biuf", "a real operand"), dtypes.bool_)
ge_p = _binary("ge", np.greater_equal, ("biuf", "a real operand"), dtypes.bool_)


# ---- select, clamp, integer_pow, convert_element_type -----------------------------------------

select_p = Primitive("select", FAMILY, WeakRule.ALL, weak_operands=(1, 2))


def _select_impl(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


def _select_abstract(pred: ShapedArray, on_true: ShapedArray, on_false: ShapedArray, **_):
    if pred.dtype != dtypes.bool_:
        raise TypeError(f"lax.select needs a bool predicate, got {pred.dtype.name}")
    check_same_dtypes([on_true.dtype, on_false.dtype], "select")
    shape = broadcast_shapes(pred.shape, on_true.shape, on_false.shape, op="lax.select")
    return ShapedArray(shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


impl_rules[select_p] = _select_impl
abstract_eval_rules[select_p] = _select_abstract

integer_pow_p = Primitive("integer_pow", FAMILY)


def _integer_pow_impl(x, *, y: int):
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError("integers cannot be raised to negative integer powers")
    with np.errstate(all="ignore"):
        if y == 2:
            return x * x
        return np.power(x, x.dtype.type(y) if x.dtype.kind in "fc" else y).astype(x.dtype)


impl_rules[integer_pow_p] = _integer_pow_impl
abstract_eval_rules[integer_pow_p] = lambda x, *, y: x

convert_element_type_p = Primitive("convert_element_type", FAMILY, WeakRule.PARAM)


def _convert_impl(x, *, new_dtype, weak_type=False):
    if x.dtype.kind in "fc" and np.dtype(new_dtype).kind in "iu":
        with np.errstate(invalid="ignore"):
            info = np.iinfo(new_dtype)  # clip in float64: int32's max rounds up in float32
            wide = np.nan_to_num(np.real(x).astype(np.float64), nan=0)
            return np.trunc(np.clip(wide, info.min, info.max)).astype(new_dtype)
    if np.dtype(new_dtype) == dtypes.bool_:
        return x != 0
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = np.real(x)  # as XLA converts, without NumPy's ComplexWarning
    with np.errstate(all="ignore"):
        return x.astype(new_dtype)


impl_rules[convert_element_type_p] = _convert_impl
abstract_eval_rules[convert_element_type_p] = (
    lambda x, *, new_dtype, weak_type=False: ShapedArray(x.shape, np.dtype(new_dtype), weak_type))

clamp_p = Primitive("clamp", FAMILY, weak_operands=(1,))
impl_rules[clamp_p] = lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi).astype(x.dtype)
abstract_eval_rules[clamp_p] = lambda lo, x, hi: ShapedArray(
    broadcast_shapes(lo.shape, x.shape, hi.shape, op="lax.clamp"), x.dtype, x.weak_type)


# ---- the lax functions --------------------------------------------------------------------------

UNARY = (neg_p, sign_p, floor_p, ceil_p, is_finite_p, abs_p, not_p, population_count_p, clz_p,
         exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p, cos_p, tan_p,
         asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p,
         cbrt_p, square_p, erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, real_p, imag_p,
         conj_p)
BINARY = (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, nextafter_p, and_p,
          or_p, xor_p, shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, eq_p, ne_p,
          lt_p, le_p, gt_p, ge_p)


def _lax_fn(prim: Primitive):
    """lax.<name>(x) or lax.<name>(x, y): the primitive on operands of one dtype."""
    if prim in UNARY:
        def fn(x):
            return apply(prim, x)
    else:
        def fn(x, y):
            return apply(prim, x, y)
    fn.__name__ = fn.__qualname__ = prim.name.replace("not", "bitwise_not")
    fn.__doc__ = f"lax.{prim.name}: the `{prim.name}` primitive, applied elementwise."
    return fn


def select(pred, on_true, on_false) -> Array:
    on_true, on_false = strict_operands("select", (on_true, on_false))
    pred = as_array(pred)
    abstract_eval_rules[select_p](*(ShapedArray(a.shape, a.dtype, a._weak)
                                    for a in (pred, on_true, on_false)))
    return bind(select_p, pred, on_true, on_false)


def clamp(min, x, max) -> Array:  # noqa: A002 - lax's parameter names
    return apply(clamp_p, min, x, max)


def integer_pow(x, y: int) -> Array:
    return apply(integer_pow_p, x, y=int(y))


def convert_element_type(x, new_dtype) -> Array:
    x = as_array(x)
    new_dtype = dtypes.check_dtype_arg(new_dtype)
    return bind(convert_element_type_p, x, new_dtype=new_dtype, weak_type=False)


def round(x, rounding_method: int = 0) -> Array:  # noqa: A001 - lax's name
    return apply(round_p, x, rounding_method=int(rounding_method))


LAX_FUNCTIONS = {p.name: _lax_fn(p) for p in UNARY + BINARY}
for _p in UNARY + BINARY:
    names_primitive(LAX_FUNCTIONS[_p.name], _p)
for _fn, _p in ((select, select_p), (clamp, clamp_p), (integer_pow, integer_pow_p),
                (convert_element_type, convert_element_type_p), (round, round_p)):
    names_primitive(_fn, _p)

# ---- the jnp functions ---------------------------------------------------------------------------
# Each is its primitive after JAX's type promotion (inexact: integer operands become floats),
# built by redraft/numpy/ufuncs.py under these names; it has the lax function's rules.

JNP_TWINS: dict[tuple[str, ...], tuple[Primitive, bool]] = {
    ("add",): (add_p, False), ("subtract",): (sub_p, False), ("multiply",): (mul_p, False),
    ("divide", "true_divide"): (div_p, True), ("maximum",): (max_p, False),
    ("minimum",): (min_p, False), ("arctan2",): (atan2_p, True),
    ("nextafter",): (nextafter_p, True), ("bitwise_and",): (and_p, False),
    ("bitwise_or",): (or_p, False), ("bitwise_xor",): (xor_p, False),
    ("left_shift",): (shift_left_p, False), ("right_shift",): (shift_right_arithmetic_p, False),
    ("equal",): (eq_p, False), ("not_equal",): (ne_p, False), ("less",): (lt_p, False),
    ("less_equal",): (le_p, False), ("greater",): (gt_p, False),
    ("greater_equal",): (ge_p, False),
    ("negative",): (neg_p, False), ("sign",): (sign_p, False),
    ("absolute", "abs"): (abs_p, False), ("exp",): (exp_p, True), ("exp2",): (exp2_p, True),
    ("log",): (log_p, True), ("log1p",): (log1p_p, True), ("expm1",): (expm1_p, True),
    ("tanh",): (tanh_p, True), ("sin",): (sin_p, True), ("cos",): (cos_p, True),
    ("tan",): (tan_p, True), ("arcsin",): (asin_p, True), ("arccos",): (acos_p, True),
    ("arctan",): (atan_p, True), ("sinh",): (sinh_p, True), ("cosh",): (cosh_p, True),
    ("arcsinh",): (asinh_p, True), ("arccosh",): (acosh_p, True),
    ("arctanh",): (atanh_p, True), ("sqrt",): (sqrt_p, True), ("cbrt",): (cbrt_p, True),
}

# ---- derivatives: one jvp and one vjp rule per operand, in the user's vocabulary -------------
# Reverse rules whose factor can overflow use ad.safe_mul (and ad.safe_div where they divide):
# a cotangent that jnp.where zeroed stays zero in the branch not taken, however large it is.

defjvp(add_p,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans))
defjvp_joint(add_p, lambda x_dot, y_dot, ans, x, y: x_dot + y_dot, ("x", "y"))
defvjp(add_p,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(g, y))

defjvp(sub_p,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: ad.broadcast_like(-y_dot, ans))
defjvp_joint(sub_p, lambda x_dot, y_dot, ans, x, y: x_dot - y_dot, ("x", "y"))
defvjp(sub_p,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g, y))

defjvp(mul_p,
       lambda x_dot, ans, x, y: x_dot * y,
       lambda y_dot, ans, x, y: x * y_dot)
defvjp(mul_p,
       lambda g, ans, x, y: ad.unbroadcast(g * y, x),
       lambda g, ans, x, y: ad.unbroadcast(x * g, y))

defjvp(div_p,
       lambda x_dot, ans, x, y: x_dot / y,
       lambda y_dot, ans, x, y: -y_dot * ans / y)
defvjp(div_p,
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(g, y), x),
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(-g * ans, y), y))

defjvp(neg_p, lambda x_dot, ans, x: -x_dot)
defvjp(neg_p, lambda g, ans, x: -g)

defjvp(pow_p,
       lambda x_dot, ans, x, y: x_dot * y * x ** (y - 1),
       lambda y_dot, ans, x, y: y_dot * ans * ad.safe_log(x))
defvjp(pow_p,
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_mul(g, y * x ** (y - 1)), x),
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_mul(g, ans * ad.safe_log(x)), y))

defjvp(max_p,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans) * ad.pick_first(x, y, True),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans) * ad.pick_first(y, x, False))
defvjp(max_p,
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(x, y, True), x),
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(y, x, False), y))
defjvp(min_p,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans) * ad.pick_first(y, x, True),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans) * ad.pick_first(x, y, False))
defvjp(min_p,
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(y, x, True), x),
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(x, y, False), y))
# The cotangent of the side max/min did not take is zero by construction (vjp.py keeps it so)
defzeros(max_p,
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(x, y, True) == 0, g),
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(y, x, False) == 0, g))
defzeros(min_p,
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(y, x, True) == 0, g),
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(x, y, False) == 0, g))

defjvp(rem_p,
       lambda x_dot, ans, x, y: jnp.broadcast_to(x_dot, jnp.shape(ans)),
       lambda y_dot, ans, x, y: -y_dot * lad.trunc_quotient(x, y))
defvjp(rem_p,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g * lad.trunc_quotient(x, y), y))

defjvp(exp_p, lambda x_dot, ans, x: x_dot * ans)
defvjp(exp_p, lambda g, ans, x: ad.safe_mul(g, ans))
defjvp(expm1_p, lambda x_dot, ans, x: x_dot * (ans + 1))
defvjp(expm1_p, lambda g, ans, x: ad.safe_mul(g, ans + 1))
defjvp(exp2_p, lambda x_dot, ans, x: x_dot * ans * 0.6931471805599453)
defvjp(exp2_p, lambda g, ans, x: ad.safe_mul(g, ans * 0.6931471805599453))
defjvp(log_p, lambda x_dot, ans, x: x_dot / x)
defvjp(log_p, lambda g, ans, x: ad.safe_div(g, x))
defjvp(log1p_p, lambda x_dot, ans, x: x_dot / (1 + x))
defvjp(log1p_p, lambda g, ans, x: ad.safe_div(g, 1 + x))
defjvp(sin_p, lambda x_dot, ans, x: x_dot * jnp.cos(x))
defvjp(sin_p, lambda g, ans, x: g * jnp.cos(x))
defjvp(cos_p, lambda x_dot, ans, x: -x_dot * jnp.sin(x))
defvjp(cos_p, lambda g, ans, x: -g * jnp.sin(x))
defjvp(tan_p, lambda x_dot, ans, x: x_dot * (1 + ans * ans))
defvjp(tan_p, lambda g, ans, x: g * (1 + ans * ans))
defjvp(tanh_p, lambda x_dot, ans, x: x_dot * (1 - ans * ans))
defvjp(tanh_p, lambda g, ans, x: g * (1 - ans * ans))
defjvp(sinh_p, lambda x_dot, ans, x: x_dot * jnp.cosh(x))
defvjp(sinh_p, lambda g, ans, x: ad.safe_mul(g, jnp.cosh(x)))
defjvp(cosh_p, lambda x_dot, ans, x: x_dot * jnp.sinh(x))
defvjp(cosh_p, lambda g, ans, x: ad.safe_mul(g, jnp.sinh(x)))
defjvp(asin_p, lambda x_dot, ans, x: x_dot / jnp.sqrt(1 - x * x))
defvjp(asin_p, lambda g, ans, x: ad.safe_div(g, jnp.sqrt(1 - x * x)))
defjvp(acos_p, lambda x_dot, ans, x: -x_dot / jnp.sqrt(1 - x * x))
defvjp(acos_p, lambda g, ans, x: ad.safe_div(-g, jnp.sqrt(1 - x * x)))
defjvp(atan_p, lambda x_dot, ans, x: x_dot / (1 + x * x))
defvjp(atan_p, lambda g, ans, x: g / (1 + x * x))
defjvp(asinh_p, lambda x_dot, ans, x: x_dot / jnp.sqrt(x * x + 1))
defvjp(asinh_p, lambda g, ans, x: g / jnp.sqrt(x * x + 1))
defjvp(acosh_p, lambda x_dot, ans, x: x_dot / jnp.sqrt(x * x - 1))
defvjp(acosh_p, lambda g, ans, x: ad.safe_div(g, jnp.sqrt(x * x - 1)))
defjvp(atanh_p, lambda x_dot, ans, x: x_dot / (1 - x * x))
defvjp(atanh_p, lambda g, ans, x: ad.safe_div(g, 1 - x * x))
defjvp(sqrt_p, lambda x_dot, ans, x: x_dot / (2 * ans))
defvjp(sqrt_p, lambda g, ans, x: ad.safe_div(g, 2 * ans))
defjvp(rsqrt_p, lambda x_dot, ans, x: x_dot * (-0.5 * ans * ans * ans))
defvjp(rsqrt_p, lambda g, ans, x: g * (-0.5 * ans * ans * ans))
defjvp(cbrt_p, lambda x_dot, ans, x: x_dot / (3 * ans * ans))
defvjp(cbrt_p, lambda g, ans, x: ad.safe_div(g, 3 * ans * ans))
defjvp(square_p, lambda x_dot, ans, x: 2 * x * x_dot)
defvjp(square_p, lambda g, ans, x: g * (2 * x))
defjvp(logistic_p, lambda x_dot, ans, x: x_dot * (ans * (1 - ans)))
defvjp(logistic_p, lambda g, ans, x: g * (ans * (1 - ans)))
defjvp(abs_p, lambda x_dot, ans, x: ad.abs_tangent(x_dot, x))
defvjp(abs_p, lambda g, ans, x: g * ad.abs_slope(x))
defjvp(atan2_p,
       lambda x_dot, ans, x, y: x_dot * y / (x * x + y * y),
       lambda y_dot, ans, x, y: -y_dot * x / (x * x + y * y))
defvjp(atan2_p,
       lambda g, ans, x, y: ad.unbroadcast(g * y / (x * x + y * y), x),
       lambda g, ans, x, y: ad.unbroadcast(-g * x / (x * x + y * y), y))

TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2
defjvp(erf_p, lambda x_dot, ans, x: x_dot * (TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defvjp(erf_p, lambda g, ans, x: g * (TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defjvp(erfc_p, lambda x_dot, ans, x: x_dot * (-TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defvjp(erfc_p, lambda g, ans, x: g * (-TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defjvp(erf_inv_p, lambda x_dot, ans, x: x_dot * (SQRT_PI_OVER_TWO * jnp.exp(ans * ans)))
defvjp(erf_inv_p, lambda g, ans, x: g * (SQRT_PI_OVER_TWO * jnp.exp(ans * ans)))
defjvp(lgamma_p, lambda x_dot, ans, x: x_dot * lax.digamma(x))
defvjp(lgamma_p, lambda g, ans, x: g * lax.digamma(x))
defjvp(digamma_p, lambda x_dot, ans, x: x_dot * lad.polygamma(1, x))
defvjp(digamma_p, lambda g, ans, x: g * lad.polygamma(1, x))

defjvp(real_p, lambda x_dot, ans, x: lax.real(x_dot))
defvjp(real_p, lambda g, ans, x: lad.complex_like(g, x))
defjvp(imag_p, lambda x_dot, ans, x: lax.imag(x_dot))
defvjp(imag_p, lambda g, ans, x: lad.complex_like(g, x) * -1j)
defjvp(conj_p, lambda x_dot, ans, x: lax.conj(x_dot))
defvjp(conj_p, lambda g, ans, x: lax.conj(g))

defjvp(integer_pow_p, lambda x_dot, ans, x, y:
       x_dot * (y * lax.integer_pow(x, y - 1)) if y != 0 else jnp.zeros_like(x_dot))
defvjp(integer_pow_p, lambda g, ans, x, y:
       g * (y * lax.integer_pow(x, y - 1)) if y != 0 else jnp.zeros_like(g))
defstatic(integer_pow_p, "y")

defjvp(select_p, None,
       lambda on_true_dot, ans, pred, on_true, on_false: lax.select(
           pred, jnp.broadcast_to(on_true_dot, jnp.shape(ans)), jnp.zeros_like(ans)),
       lambda on_false_dot, ans, pred, on_true, on_false: lax.select(
           pred, jnp.zeros_like(ans), jnp.broadcast_to(on_false_dot, jnp.shape(ans))))
defjvp_joint(select_p, lambda on_true_dot, on_false_dot, ans, pred, on_true, on_false:
             lax.select(pred, jnp.broadcast_to(on_true_dot, jnp.shape(ans)),
                        jnp.broadcast_to(on_false_dot, jnp.shape(ans))),
             ("on_true", "on_false"))
defvjp(select_p, None,
       lambda g, ans, pred, on_true, on_false: ad.unbroadcast(
           lax.select(pred, g, jnp.zeros_like(g)), on_true),
       lambda g, ans, pred, on_true, on_false: ad.unbroadcast(
           lax.select(pred, jnp.zeros_like(g), g), on_false))
defstatic(select_p, "pred")
defzeros(select_p, None,
         lambda g, ans, pred, on_true, on_false: ad.zero_mask(jnp.logical_not(pred), g),
         lambda g, ans, pred, on_true, on_false: ad.zero_mask(pred, g))

defjvp(clamp_p,
       lambda min_dot, ans, min, x, max: jnp.broadcast_to(min_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[0],
       lambda x_dot, ans, min, x, max: jnp.broadcast_to(x_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[1],
       lambda max_dot, ans, min, x, max: jnp.broadcast_to(max_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[2])
defvjp(clamp_p,
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[0], min),
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[1], x),
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[2], max))

defjvp(convert_element_type_p, lambda x_dot, ans, x, new_dtype:
       lax.convert_element_type(x_dot, jnp.result_type(ans)) if lad.is_inexact(ans)
       else ad.zeros_like(ans))
defvjp(convert_element_type_p, lambda g, ans, x, new_dtype: (ad.cotangent_astype(
    lax.real(g) if lad.drops_imaginary(g, x) else g, x)) if lad.is_inexact(ans)
    else ad.zeros_like(x))
defstatic(convert_element_type_p, "new_dtype")

# Each reverse rule is elementwise in `g` before its unbroadcast (vjp.py keeps structural
# zeros of `g` where they are).
defelementwise(add_p, sub_p, mul_p, div_p, neg_p, pow_p, max_p, min_p, exp_p, expm1_p, log_p,
               log1p_p, sin_p, cos_p, tan_p, tanh_p, sinh_p, cosh_p, asin_p, acos_p, atan_p,
               asinh_p, acosh_p, atanh_p, sqrt_p, cbrt_p, square_p, exp2_p, abs_p, atan2_p,
               select_p)

for _p in (sign_p, floor_p, ceil_p, round_p):
    defnondiff(_p, "piecewise constant: its derivative is zero almost everywhere")
defnondiff(nextafter_p, "steps to the adjacent floating-point number: piecewise constant "
                        "in y and the identity in x up to one ulp, with no useful derivative")
for _p in (is_finite_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defnondiff(_p, "bool-valued comparison")
for _p in (not_p, and_p, or_p, xor_p, shift_left_p, shift_right_logical_p,
           shift_right_arithmetic_p, population_count_p, clz_p):
    defnondiff(_p, "bitwise operation on bool or integer operands")

# ---- batching: the same call, batched operands aligned to broadcast per example ---------------

for _p in UNARY + BINARY + (select_p, clamp_p):
    defbatch(_p, ELEMENTWISE)
defbatch(convert_element_type_p, elementwise_batching(static=("new_dtype",)))
defbatch(integer_pow_p, elementwise_batching(static=("y",)))
defbatch(round_p, elementwise_batching(static=("rounding_method",)))
