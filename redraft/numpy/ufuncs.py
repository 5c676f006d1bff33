"""Elementwise NumPy functions: promote operand types as JAX does, then apply a lax primitive.

The functions here are the hot path of eager code (`a + b` runs `add`), so they avoid
every step that the common case does not need: no abstract evaluation unless NumPy itself
refuses the operands, in which case the primitive's own rule explains the problem.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import registry as _registry
from redraft.runtime import dtypes
from redraft.runtime import numeric_checks as _numeric_checks
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.config import DEBUG_CHECKS as _DEBUG_CHECKS
from redraft.runtime.config import RANK_CHECKS as _RANK_CHECKS
from redraft.runtime.config import check_rank_promotion as _check_rank_promotion
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, binary_binder, impl_rules, unary_binder

from redraft.numpy.promotion import cast, convert, promote, promote_inexact

_promote_pair = dtypes.promote_pair


def _binary(prim, name: str, to_inexact: bool = False):
    """A NumPy binary function over `prim` with JAX's promotion and broadcasting."""
    prep = promote_inexact if to_inexact else promote
    run_with_scalar = _scalar_binder(prim, to_inexact)

    def promote_and_bind(x, y) -> Array:
        if _RANK_CHECKS[0]:
            _check_rank_promotion(name, np.shape(x), np.shape(y))
        if run_with_scalar is not None:
            out = run_with_scalar(x, y)
            if out is not None:
                return out
        return bind(prim, *prep(x, y))

    fn = binary_binder(prim, otherwise=promote_and_bind)  # Arrays of one dtype: no promotion
    if to_inexact:
        fn = _inexact_first(fn, promote_and_bind)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__  # the compiler names it `jnp.<name>` by its module
    fn.__doc__ = f"jnp.{name}: elementwise, with JAX's type promotion (lax.{prim.name})."
    return fn


def _inexact_first(fast, promote_and_bind):
    """Division-like functions: integer operands of one dtype must still become floats."""
    def fn(x, y, /) -> Array:
        if type(x) is Array and x._buf.dtype.kind not in "fc":
            return promote_and_bind(x, y)
        return fast(x, y)
    return fn


# Array dtypes that a weakly typed Python scalar of these types leaves unchanged, and for
# which NumPy converts the scalar exactly as redraft would (one rounding to the dtype).
_INEXACT_SCALAR_KEEPS = {dtypes.float32: (int, float), dtypes.complex64: (int, float, complex),
                         dtypes.float64: (int, float), dtypes.complex128: (int, float, complex)}
_SCALAR_KEEPS = {**_INEXACT_SCALAR_KEEPS, dtypes.int32: (int,), dtypes.int64: (int,)}


def _keeps_dtype(table: dict, array: Array, scalar) -> bool:
    """Whether combining `array` with Python `scalar` leaves the array's dtype as it is."""
    if type(array._buf) is not np.ndarray:
        return False  # staged: the general path records the operation
    kinds = table.get(array._buf.dtype)
    if kinds is None or type(scalar) not in kinds:
        return False
    if type(scalar) is int:
        kind = array._buf.dtype
        bound = np.iinfo(kind if kind.kind == "i" else dtypes.DEFAULT_INT)
        return bound.min <= scalar <= bound.max
    return True


def _quiet_true_divide(x, y):
    """x / y without NumPy's divide-by-zero warning (lax returns inf quietly)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(x, y)


def _scalar_binder(prim, to_inexact: bool):
    """`(x, y) -> x op y` for an Array and a Python scalar that keeps the Array's dtype; the
    function returns None for other operands, and is None itself unless the impl is a NumPy
    ufunc. The scalar goes straight to the ufunc, which (NEP 50) treats it as weak just as
    JAX does: no promotion, no 0-d array."""
    impl = impl_rules.get(prim)
    if to_inexact and prim is ew.div_p:
        impl = _quiet_true_divide  # on inexact arrays lax.div is true division
    elif type(impl) is not np.ufunc:
        return None
    table = _INEXACT_SCALAR_KEEPS if to_inexact else _SCALAR_KEEPS
    weak_if_weak = prim.result_weak([True, True], {})

    def run(x, y) -> Array | None:
        if type(x) is Array and _keeps_dtype(table, x, y):
            array, args = x, (x._buf, y)
        elif type(y) is Array and _keeps_dtype(table, y, x):
            array, args = y, (x, y._buf)
        else:
            return None
        try:
            out = impl(*args)
        except (ValueError, TypeError, IndexError):
            return None  # the general path raises the primitive's own, clearer error
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if _DEBUG_CHECKS[0]:
            _numeric_checks.check(prim.name, out)
        return wrap_host(out, weak_if_weak and array._weak)

    return run


def _unary(prim, name: str, to_inexact: bool = False):
    run = unary_binder(prim)

    def fn(x, /) -> Array:
        if type(x) is not Array:
            x = as_array(x)
        if to_inexact and x._buf.dtype.kind not in "fc":
            x = convert(x, dtypes.DEFAULT_FLOAT, x._weak)
        return run(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"jnp.{name}: elementwise (lax.{prim.name})."
    return fn


def _twin(name: str):
    """The jnp function the elementwise family declares as `name` (ew.JNP_TWINS): JAX's
    promotion, then the primitive; the same operation as the lax function, so it has its
    rules."""
    names, (prim, to_inexact) = next((names, entry) for names, entry in ew.JNP_TWINS.items()
                                     if names[0] == name)
    build = _unary if prim in ew.UNARY else _binary
    fn = build(prim, names[0], to_inexact)
    _registry.same_operation(fn, prim)
    return fn


# each jnp function the family declares, by name (test_ufuncs checks none is left out)
add = _twin("add")
subtract = _twin("subtract")
multiply = _twin("multiply")
true_divide = divide = _twin("divide")
maximum = _twin("maximum")
minimum = _twin("minimum")
arctan2 = _twin("arctan2")
nextafter = _twin("nextafter")
bitwise_and = _twin("bitwise_and")
bitwise_or = _twin("bitwise_or")
bitwise_xor = _twin("bitwise_xor")
left_shift = _twin("left_shift")
right_shift = _twin("right_shift")
equal = _twin("equal")
not_equal = _twin("not_equal")
less = _twin("less")
less_equal = _twin("less_equal")
greater = _twin("greater")
greater_equal = _twin("greater_equal")
negative = _twin("negative")
sign = _twin("sign")
abs = absolute = _twin("absolute")  # noqa: A001
exp = _twin("exp")
exp2 = _twin("exp2")
log = _twin("log")
log1p = _twin("log1p")
expm1 = _twin("expm1")
tanh = _twin("tanh")
sin = _twin("sin")
cos = _twin("cos")
tan = _twin("tan")
arcsin = _twin("arcsin")
arccos = _twin("arccos")
arctan = _twin("arctan")
sinh = _twin("sinh")
cosh = _twin("cosh")
arcsinh = _twin("arcsinh")
arccosh = _twin("arccosh")
arctanh = _twin("arctanh")
sqrt = _twin("sqrt")
cbrt = _twin("cbrt")
_complex_real = _unary(ew.real_p, "real")
_complex_imag = _unary(ew.imag_p, "imag")


def real(x, /) -> Array:
    """jnp.real: the real part; a real array is its own real part (lax.real takes only
    complex operands)."""
    x = as_array(x)
    return _complex_real(x) if x.dtype.kind == "c" else x


def imag(x, /) -> Array:
    """jnp.imag: the imaginary part; zeros for a real array."""
    x = as_array(x)
    if x.dtype.kind == "c":
        return _complex_imag(x)
    return multiply(x, as_array(np.zeros((), x.dtype)))
conjugate = conj = _unary(ew.conj_p, "conjugate")


def _float_or_identity(prim, name: str):
    """floor/ceil/round keep integer inputs as they are (NumPy does the same)."""
    op = _unary(prim, name)

    def fn(x, /) -> Array:
        x = as_array(x)
        return x if dtypes.is_integer(x.dtype) or x.dtype == dtypes.bool_ else op(x)

    fn.__name__ = fn.__qualname__ = name
    return fn


floor = _float_or_identity(ew.floor_p, "floor")
ceil = _float_or_identity(ew.ceil_p, "ceil")
_round_even = _float_or_identity(ew.round_p, "round")


def round(a, decimals: int = 0) -> Array:  # noqa: A001
    """Round half to even, as NumPy does, to `decimals` places."""
    x = as_array(a)
    if dtypes.is_integer(x.dtype) or decimals == 0:
        return ew.round(x, 1) if dtypes.is_inexact(x.dtype) else x
    scale = 10.0 ** int(decimals)
    return ew.round(multiply(x, scale), 1) / scale


around = round


def square(x, /) -> Array:
    return ew.integer_pow(as_array(x), 2)


def reciprocal(x, /) -> Array:
    return divide(1, x)


def logical_not(x, /) -> Array:
    return bind(ew.not_p, cast(as_array(x), dtypes.bool_))


def bitwise_not(x, /) -> Array:
    return bind(ew.not_p, as_array(x))


invert = bitwise_not


def bitwise_count(x, /) -> Array:
    """The number of 1 bits in the absolute value of each element, as uint8 (NumPy 2's
    bitwise_count; lax.population_count counts a negative number's two's complement)."""
    x = as_array(x)
    if x.dtype == dtypes.bool_:
        x = cast(x, np.dtype(np.uint8))
    if x.dtype.kind == "i":
        x = absolute(x)
    return cast(bind(ew.population_count_p, x), np.dtype(np.uint8))


def _logical(prim, name):
    def fn(x, y, /) -> Array:
        return bind(prim, cast(as_array(x), dtypes.bool_), cast(as_array(y), dtypes.bool_))
    fn.__name__ = fn.__qualname__ = name
    return fn


logical_and = _logical(ew.and_p, "logical_and")
logical_or = _logical(ew.or_p, "logical_or")
logical_xor = _logical(ew.xor_p, "logical_xor")


def power(x, y, /) -> Array:
    """x ** y: an integer exponent known in Python becomes lax.integer_pow."""
    if type(y) is int and not isinstance(x, (int, float)):
        x = as_array(x)
        if y >= 0 or dtypes.is_inexact(x.dtype):
            return ew.integer_pow(x, y)
    x, y = promote(x, y)
    return bind(ew.pow_p, x, y)


def floor_divide(x, y, /) -> Array:
    x, y = promote(x, y)
    if dtypes.is_integer(x.dtype):
        q = bind(ew.div_p, x, y)
        if x.dtype.kind == "u":  # truncation is flooring already
            return q
        fix = logical_and(not_equal(bind(ew.rem_p, x, y), 0),
                          not_equal(less(x, 0), less(y, 0)))
        # by zero, as JAX's (XLA's quotient -1, less one where x is not zero: its sign
        # differs from 0's and XLA's remainder by zero is x)
        fix = where(equal(y, 0), not_equal(x, 0), fix)
        return subtract(q, cast(fix, q.dtype))
    return floor(bind(ew.div_p, x, y))


def remainder(x, y, /) -> Array:
    """Python's modulo: the result takes the sign of the divisor."""
    x, y = _integer_divisor_nonzero(*promote(x, y))
    r = bind(ew.rem_p, x, y)
    wrong_sign = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return where(wrong_sign, add(r, y), r)


mod = remainder


def fmod(x, y, /) -> Array:
    x, y = _integer_divisor_nonzero(*promote(x, y))
    return bind(ew.rem_p, x, y)


def _integer_divisor_nonzero(x: Array, y: Array) -> tuple[Array, Array]:
    """JAX's remainders of integers by zero are 0: the divisor 0 is taken as 1."""
    if dtypes.is_integer(y.dtype):
        y = where(equal(y, 0), cast(as_array(1), y.dtype), y)
    return x, y


def divmod(x, y, /) -> tuple[Array, Array]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)


# where(condition) is nonzero(condition); nonzero lives in searching.py, which is written on
# this module, so searching installs it here at import instead of this module importing it.
_ONE_ARGUMENT_WHERE: dict = {}


def _install_one_argument_where(nonzero) -> None:
    """Called by searching.py: the function where(condition) returns the value of."""
    _ONE_ARGUMENT_WHERE["nonzero"] = nonzero


def where(condition, x=None, y=None, /, *, size=None, fill_value=None) -> Array:
    """Elementwise choice between x (where condition) and y; one-argument form is nonzero
    (with its static `size` and `fill_value`)."""
    if x is None and y is None:
        return _ONE_ARGUMENT_WHERE["nonzero"](condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where takes either one or three arguments")
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    cond = cast(as_array(condition), dtypes.bool_)
    x, y = promote(x, y)
    return bind(ew.select_p, cond, x, y)


def clip(a, a_min=None, a_max=None, /, *, min=None, max=None) -> Array:  # noqa: A002
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    x = as_array(a)
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


def isnan(x, /) -> Array:
    x = as_array(x)
    return not_equal(x, x) if dtypes.is_inexact(x.dtype) else _all_false(x)


def isfinite(x, /) -> Array:
    x = as_array(x)
    if not dtypes.is_inexact(x.dtype):
        return logical_not(_all_false(x))
    return bind(ew.is_finite_p, x)


def isinf(x, /) -> Array:
    x = as_array(x)
    if not dtypes.is_inexact(x.dtype):
        return _all_false(x)
    return equal(absolute(x), np.inf)


def isposinf(x, /) -> Array:
    return equal(as_array(x), np.inf)


def isneginf(x, /) -> Array:
    return equal(as_array(x), -np.inf)


def _all_false(x: Array) -> Array:
    return wrap_host(np.zeros(x.shape, bool))


def signbit(x, /) -> Array:
    x = as_array(x)
    if dtypes.is_inexact(x.dtype):
        if type(x._buf) is not np.ndarray:
            return less(x, 0)  # compiled: -0.0 and NaN signs are not distinguished yet
        return wrap_host(np.signbit(x._buf))
    return less(x, 0)


def copysign(x, y, /) -> Array:
    x, y = promote_inexact(x, y)
    return where(signbit(y), negative(absolute(x)), absolute(x))


def logaddexp(x, y, /) -> Array:
    """log(exp(x) + exp(y)) without overflow: max + log1p(exp(-|x - y|))."""
    x, y = promote_inexact(x, y)
    big = maximum(x, y)
    delta = subtract(x, y)
    safe = where(isnan(delta), add(x, y), add(big, log1p(exp(negative(absolute(delta))))))
    # log 2 as a Python float (weak, so x's dtype): an eager log(2.0) compiled a vecmath
    # kernel (24 ms) in the first call of every function using logaddexp
    return where(equal(x, y), add(x, float(np.log(2.0))), safe)


def logaddexp2(x, y, /) -> Array:
    x, y = promote_inexact(x, y)
    return divide(logaddexp(multiply(x, np.log(2)), multiply(y, np.log(2))), np.log(2))


def log2(x, /) -> Array:
    x = promote_inexact(x)[0]
    return divide(log(x), log(cast(as_array(2.0), x.dtype)))


def log10(x, /) -> Array:
    x = promote_inexact(x)[0]
    return divide(log(x), log(cast(as_array(10.0), x.dtype)))


def hypot(x, y, /) -> Array:
    """sqrt(x^2 + y^2) without squaring the larger magnitude, which overflows (1e20) or
    underflows (1e-30) in float32: hi * sqrt(1 + (lo / hi)^2), as NumPy and JAX compute."""
    x, y = promote_inexact(x, y)
    a, b = absolute(x), absolute(y)
    hi, lo = maximum(a, b), minimum(a, b)
    zero = equal(hi, 0)
    ratio = divide(lo, where(zero, 1.0, hi))  # Python scalars keep a weak result weak
    out = where(zero, hi, multiply(hi, sqrt(add(1, multiply(ratio, ratio)))))
    return where(logical_or(isinf(a), isinf(b)), np.inf, out)


def deg2rad(x, /) -> Array:
    return multiply(promote_inexact(x)[0], np.pi / 180)


def rad2deg(x, /) -> Array:
    return multiply(promote_inexact(x)[0], 180 / np.pi)


radians, degrees = deg2rad, rad2deg


def sinc(x, /) -> Array:
    x = promote_inexact(x)[0]
    pix = multiply(x, np.pi)
    safe = where(equal(x, 0), 1.0, pix)
    return where(equal(x, 0), 1.0, divide(sin(safe), safe))


def heaviside(x1, x2, /) -> Array:
    x1, x2 = promote_inexact(x1, x2)
    return where(less(x1, 0), 0.0, where(greater(x1, 0), 1.0, x2)).astype(x1.dtype)


def positive(x, /) -> Array:
    return as_array(x)


def fabs(x, /) -> Array:
    return absolute(promote_inexact(x)[0])


def float_power(x, y, /) -> Array:
    x, y = promote_inexact(x, y)
    return bind(ew.pow_p, x, y)


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None) -> Array:
    x = as_array(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    info = np.finfo(x.dtype)
    x = where(isnan(x), nan, x)
    x = where(equal(x, np.inf), info.max if posinf is None else posinf, x)
    return where(equal(x, -np.inf), info.min if neginf is None else neginf, x)
