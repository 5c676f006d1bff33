"""Derivative rules of the elementwise lax functions that have no redraft.numpy twin.

The elementwise lax functions take `*args`, so each rule is registered with the signature
of a template (`x` or `x, y`) that names the operands. The lax functions that are the same
operation as a jnp ufunc (lax.add, lax.exp, ...) share its rules (rules/elementwise.py).
"""
import inspect
import math

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lad
from redraft.compiler.transforms.ad.registry import (alias, defelementwise, defjvp, defjvp_joint,
                                                     defnondiff, defstatic, defvjp, defzeros)


def _unary(x):
    """Template: the operand names of a unary elementwise lax function."""


def _binary(x, y):
    """Template: the operand names of a binary elementwise lax function."""


UNARY = inspect.signature(_unary)
BINARY = inspect.signature(_binary)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2

# ---- special functions ---------------------------------------------------------------------------

defjvp(lax.erf, lambda x_dot, ans, x: x_dot * (TWO_OVER_SQRT_PI * jnp.exp(-(x * x))),
       signature=UNARY)
defvjp(lax.erf, lambda g, ans, x: g * (TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defjvp(lax.erfc, lambda x_dot, ans, x: x_dot * (-TWO_OVER_SQRT_PI * jnp.exp(-(x * x))),
       signature=UNARY)
defvjp(lax.erfc, lambda g, ans, x: g * (-TWO_OVER_SQRT_PI * jnp.exp(-(x * x))))
defjvp(lax.erf_inv, lambda x_dot, ans, x: x_dot * (SQRT_PI_OVER_TWO * jnp.exp(ans * ans)),
       signature=UNARY)
defvjp(lax.erf_inv, lambda g, ans, x: g * (SQRT_PI_OVER_TWO * jnp.exp(ans * ans)))
defjvp(lax.lgamma, lambda x_dot, ans, x: x_dot * lax.digamma(x), signature=UNARY)
defvjp(lax.lgamma, lambda g, ans, x: g * lax.digamma(x))
defjvp(lax.digamma, lambda x_dot, ans, x: x_dot * lad.polygamma(1, x), signature=UNARY)
defvjp(lax.digamma, lambda g, ans, x: g * lad.polygamma(1, x))
defjvp(lad.polygamma, None, lambda x_dot, ans, n, x: x_dot * lad.polygamma(n + 1, x))
defvjp(lad.polygamma, None, lambda g, ans, n, x: g * lad.polygamma(n + 1, x))
defstatic(lad.polygamma, "n")

# ---- exponentials and roots ----------------------------------------------------------------------

defjvp(lax.logistic, lambda x_dot, ans, x: x_dot * (ans * (1 - ans)), signature=UNARY)
defvjp(lax.logistic, lambda g, ans, x: g * (ans * (1 - ans)))
alias(lax.exp2, jnp.exp2)
defjvp(lax.rsqrt, lambda x_dot, ans, x: x_dot * (-0.5 * ans * ans * ans), signature=UNARY)
defvjp(lax.rsqrt, lambda g, ans, x: g * (-0.5 * ans * ans * ans))
defjvp(lax.integer_pow, lambda x_dot, ans, x, y:
       x_dot * (y * lax.integer_pow(x, y - 1)) if y != 0 else jnp.zeros_like(x_dot))
defvjp(lax.integer_pow, lambda g, ans, x, y:
       g * (y * lax.integer_pow(x, y - 1)) if y != 0 else jnp.zeros_like(g))
defstatic(lax.integer_pow, "y")

# ---- remainder -----------------------------------------------------------------------------------

defjvp(lax.rem,
       lambda x_dot, ans, x, y: jnp.broadcast_to(x_dot, jnp.shape(ans)),
       lambda y_dot, ans, x, y: -y_dot * lad.trunc_quotient(x, y), signature=BINARY)
defvjp(lax.rem,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g * lad.trunc_quotient(x, y), y))

# ---- complex parts -------------------------------------------------------------------------------

defjvp(lax.real, lambda x_dot, ans, x: lax.real(x_dot), signature=UNARY)
defvjp(lax.real, lambda g, ans, x: lad.complex_like(g, x))
defjvp(lax.imag, lambda x_dot, ans, x: lax.imag(x_dot), signature=UNARY)
defvjp(lax.imag, lambda g, ans, x: lad.complex_like(g, x) * -1j)
defjvp(lax.conj, lambda x_dot, ans, x: lax.conj(x_dot), signature=UNARY)
defvjp(lax.conj, lambda g, ans, x: lax.conj(g))
defjvp(lad.complex_like, lambda g_dot, ans, g, x: lad.complex_like(g_dot, x))
defvjp(lad.complex_like, lambda ct, ans, g, x: lax.real(ct))
defstatic(lad.complex_like, "x")

# ---- select, clamp, casts ------------------------------------------------------------------------

defjvp(lax.select, None,
       lambda on_true_dot, ans, pred, on_true, on_false: lax.select(
           pred, jnp.broadcast_to(on_true_dot, jnp.shape(ans)), jnp.zeros_like(ans)),
       lambda on_false_dot, ans, pred, on_true, on_false: lax.select(
           pred, jnp.zeros_like(ans), jnp.broadcast_to(on_false_dot, jnp.shape(ans))))
defjvp_joint(lax.select, lambda on_true_dot, on_false_dot, ans, pred, on_true, on_false:
             lax.select(pred, jnp.broadcast_to(on_true_dot, jnp.shape(ans)),
                        jnp.broadcast_to(on_false_dot, jnp.shape(ans))),
             ("on_true", "on_false"))
defvjp(lax.select, None,
       lambda g, ans, pred, on_true, on_false: ad.unbroadcast(
           lax.select(pred, g, jnp.zeros_like(g)), on_true),
       lambda g, ans, pred, on_true, on_false: ad.unbroadcast(
           lax.select(pred, jnp.zeros_like(g), g), on_false))
defstatic(lax.select, "pred")
defzeros(lax.select, None,
         lambda g, ans, pred, on_true, on_false: ad.zero_mask(jnp.logical_not(pred), g),
         lambda g, ans, pred, on_true, on_false: ad.zero_mask(pred, g))
defelementwise(lax.select)

defjvp(lax.clamp,
       lambda min_dot, ans, min, x, max: jnp.broadcast_to(min_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[0],
       lambda x_dot, ans, min, x, max: jnp.broadcast_to(x_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[1],
       lambda max_dot, ans, min, x, max: jnp.broadcast_to(max_dot, jnp.shape(ans))
       * lad.clamp_weights(min, x, max)[2])
defvjp(lax.clamp,
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[0], min),
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[1], x),
       lambda g, ans, min, x, max: ad.unbroadcast(g * lad.clamp_weights(min, x, max)[2], max))

defjvp(lax.convert_element_type, lambda x_dot, ans, x, new_dtype:
       lax.convert_element_type(x_dot, jnp.result_type(ans)) if lad.is_inexact(ans)
       else ad.zeros_like(ans))
defvjp(lax.convert_element_type, lambda g, ans, x, new_dtype: (ad.cotangent_astype(
    lax.real(g) if lad.drops_imaginary(g, x) else g, x)) if lad.is_inexact(ans)
    else ad.zeros_like(x))

# ---- not differentiable --------------------------------------------------------------------------

for _op in (lax.sign, lax.floor, lax.ceil, lax.round):
    defnondiff(_op, "piecewise constant: its derivative is zero almost everywhere")
defnondiff(lax.nextafter, "steps to the adjacent floating-point number: piecewise constant "
                          "in y and the identity in x up to one ulp, with no useful derivative")
for _op in (lax.is_finite, lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge):
    defnondiff(_op, "bool-valued comparison")
for _op in (lax.bitwise_not, lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.shift_left,
            lax.shift_right_logical, lax.shift_right_arithmetic, lax.population_count, lax.clz):
    defnondiff(_op, "bitwise operation on bool or integer operands")
for _op in (lad.drops_imaginary, lad.is_inexact):
    defnondiff(_op, "a test of dtypes")
for _op in (lad.trunc_quotient, lad.clamp_weights):
    defnondiff(_op, "piecewise constant in its arguments")
