"""Derivative rules of elementwise operations: Python operators, jnp ufuncs, lax functions."""
import operator

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.ad.registry import (alias, defelementwise, defjvp, defjvp_joint,
                                                     defnondiff, defvjp, defzeros)

# ---- arithmetic ------------------------------------------------------------------------------

defjvp(jnp.add,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans))
defjvp_joint(jnp.add, lambda x_dot, y_dot, ans, x, y: x_dot + y_dot, ("x", "y"))
defvjp(jnp.add,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(g, y))

defjvp(jnp.subtract,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: ad.broadcast_like(-y_dot, ans))
defjvp_joint(jnp.subtract, lambda x_dot, y_dot, ans, x, y: x_dot - y_dot, ("x", "y"))
defvjp(jnp.subtract,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g, y))

defjvp(jnp.multiply,
       lambda x_dot, ans, x, y: x_dot * y,
       lambda y_dot, ans, x, y: x * y_dot)
defvjp(jnp.multiply,
       lambda g, ans, x, y: ad.unbroadcast(g * y, x),
       lambda g, ans, x, y: ad.unbroadcast(x * g, y))

defjvp(jnp.divide,
       lambda x_dot, ans, x, y: x_dot / y,
       lambda y_dot, ans, x, y: -y_dot * ans / y)
defvjp(jnp.divide,
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(g, y), x),
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(-g * ans, y), y))

defjvp(jnp.negative, lambda x_dot, ans, x: -x_dot)
defvjp(jnp.negative, lambda g, ans, x: -g)

defjvp(jnp.power,
       lambda x_dot, ans, x, y: x_dot * y * x ** (y - 1),
       lambda y_dot, ans, x, y: y_dot * ans * ad.safe_log(x))
defvjp(jnp.power,
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_mul(g, y * x ** (y - 1)), x),
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_mul(g, ans * ad.safe_log(x)), y))

defjvp(jnp.square, lambda x_dot, ans, x: 2 * x * x_dot)
defvjp(jnp.square, lambda g, ans, x: 2 * x * g)
defjvp(jnp.reciprocal, lambda x_dot, ans, x: -x_dot * ans * ans)
defvjp(jnp.reciprocal, lambda g, ans, x: ad.safe_mul(-g, ans * ans))

defjvp(jnp.maximum,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans) * ad.pick_first(x, y, True),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans) * ad.pick_first(y, x, False))
defvjp(jnp.maximum,
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(x, y, True), x),
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(y, x, False), y))
defjvp(jnp.minimum,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans) * ad.pick_first(y, x, True),
       lambda y_dot, ans, x, y: ad.broadcast_like(y_dot, ans) * ad.pick_first(x, y, False))
defvjp(jnp.minimum,
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(y, x, True), x),
       lambda g, ans, x, y: ad.unbroadcast(g * ad.pick_first(x, y, False), y))

# ---- transcendental ------------------------------------------------------------------------------
# Reverse rules whose factor can overflow use ad.safe_mul (and ad.safe_div where they divide):
# a cotangent that jnp.where zeroed stays zero in the branch not taken, however large it is.

defjvp(jnp.exp, lambda x_dot, ans, x: x_dot * ans)
defvjp(jnp.exp, lambda g, ans, x: ad.safe_mul(g, ans))
defjvp(jnp.expm1, lambda x_dot, ans, x: x_dot * (ans + 1))
defvjp(jnp.expm1, lambda g, ans, x: ad.safe_mul(g, ans + 1))
defjvp(jnp.log, lambda x_dot, ans, x: x_dot / x)
defvjp(jnp.log, lambda g, ans, x: ad.safe_div(g, x))
defjvp(jnp.log1p, lambda x_dot, ans, x: x_dot / (1 + x))
defvjp(jnp.log1p, lambda g, ans, x: ad.safe_div(g, 1 + x))
defjvp(jnp.sin, lambda x_dot, ans, x: x_dot * jnp.cos(x))
defvjp(jnp.sin, lambda g, ans, x: g * jnp.cos(x))
defjvp(jnp.cos, lambda x_dot, ans, x: -x_dot * jnp.sin(x))
defvjp(jnp.cos, lambda g, ans, x: -g * jnp.sin(x))
defjvp(jnp.tan, lambda x_dot, ans, x: x_dot * (1 + ans * ans))
defvjp(jnp.tan, lambda g, ans, x: g * (1 + ans * ans))
defjvp(jnp.tanh, lambda x_dot, ans, x: x_dot * (1 - ans * ans))
defvjp(jnp.tanh, lambda g, ans, x: g * (1 - ans * ans))
defjvp(jnp.sinh, lambda x_dot, ans, x: x_dot * jnp.cosh(x))
defvjp(jnp.sinh, lambda g, ans, x: ad.safe_mul(g, jnp.cosh(x)))
defjvp(jnp.cosh, lambda x_dot, ans, x: x_dot * jnp.sinh(x))
defvjp(jnp.cosh, lambda g, ans, x: ad.safe_mul(g, jnp.sinh(x)))
defjvp(jnp.arcsin, lambda x_dot, ans, x: x_dot / jnp.sqrt(1 - x * x))
defvjp(jnp.arcsin, lambda g, ans, x: ad.safe_div(g, jnp.sqrt(1 - x * x)))
defjvp(jnp.arccos, lambda x_dot, ans, x: -x_dot / jnp.sqrt(1 - x * x))
defvjp(jnp.arccos, lambda g, ans, x: ad.safe_div(-g, jnp.sqrt(1 - x * x)))
defjvp(jnp.arctan, lambda x_dot, ans, x: x_dot / (1 + x * x))
defvjp(jnp.arctan, lambda g, ans, x: g / (1 + x * x))
defjvp(jnp.arcsinh, lambda x_dot, ans, x: x_dot / jnp.sqrt(x * x + 1))
defvjp(jnp.arcsinh, lambda g, ans, x: g / jnp.sqrt(x * x + 1))
defjvp(jnp.arccosh, lambda x_dot, ans, x: x_dot / jnp.sqrt(x * x - 1))
defvjp(jnp.arccosh, lambda g, ans, x: ad.safe_div(g, jnp.sqrt(x * x - 1)))
defjvp(jnp.arctanh, lambda x_dot, ans, x: x_dot / (1 - x * x))
defvjp(jnp.arctanh, lambda g, ans, x: ad.safe_div(g, 1 - x * x))
defjvp(jnp.sqrt, lambda x_dot, ans, x: x_dot / (2 * ans))
defvjp(jnp.sqrt, lambda g, ans, x: ad.safe_div(g, 2 * ans))
defjvp(jnp.cbrt, lambda x_dot, ans, x: x_dot / (3 * ans * ans))
defvjp(jnp.cbrt, lambda g, ans, x: ad.safe_div(g, 3 * ans * ans))
defjvp(jnp.exp2, lambda x_dot, ans, x: x_dot * ans * 0.6931471805599453)
defvjp(jnp.exp2, lambda g, ans, x: ad.safe_mul(g, ans * 0.6931471805599453))
defjvp(jnp.absolute, lambda x_dot, ans, x: x_dot * jnp.sign(x))
defvjp(jnp.absolute, lambda g, ans, x: g * jnp.sign(x))
defjvp(jnp.arctan2,
       lambda x_dot, ans, x, y: x_dot * y / (x * x + y * y),
       lambda y_dot, ans, x, y: -y_dot * x / (x * x + y * y))
defvjp(jnp.arctan2,
       lambda g, ans, x, y: ad.unbroadcast(g * y / (x * x + y * y), x),
       lambda g, ans, x, y: ad.unbroadcast(-g * x / (x * x + y * y), y))
defjvp(jnp.logaddexp,
       lambda x_dot, ans, x, y: x_dot * jnp.exp(x - ans),
       lambda y_dot, ans, x, y: y_dot * jnp.exp(y - ans))
defvjp(jnp.logaddexp,
       lambda g, ans, x, y: ad.unbroadcast(g * jnp.exp(x - ans), x),
       lambda g, ans, x, y: ad.unbroadcast(g * jnp.exp(y - ans), y))

# ---- selection -----------------------------------------------------------------------------------

defjvp(jnp.where, None,
       lambda x_dot, ans, condition, x, y: jnp.where(condition, ad.broadcast_like(x_dot, ans), 0.0),
       lambda y_dot, ans, condition, x, y: jnp.where(condition, 0.0, ad.broadcast_like(y_dot, ans)))
defvjp(jnp.where, None,
       lambda g, ans, condition, x, y: ad.unbroadcast(jnp.where(condition, g, 0.0), x),
       lambda g, ans, condition, x, y: ad.unbroadcast(jnp.where(condition, 0.0, g), y))
# clip passes the derivative where it left `a` as it was (bounds given as a_min or min alike)
defjvp(jnp.clip, lambda a_dot, ans, a: jnp.where(ans == a, ad.broadcast_like(a_dot, ans), 0.0),
       argnames=("a",))
defvjp(jnp.clip, lambda g, ans, a: ad.unbroadcast(jnp.where(ans == a, g, 0.0), a),
       argnames=("a",))

# Structural zeros: the cotangent of the side a selection did not take is zero by
# construction, and stays zero through that side's chain of rules (vjp.py, ad.safe_mul).
defzeros(jnp.where, None,
         lambda g, ans, condition, x, y: ad.zero_mask(jnp.logical_not(condition), g),
         lambda g, ans, condition, x, y: ad.zero_mask(condition, g))
defzeros(jnp.clip, lambda g, ans, a: ad.zero_mask(ans != a, g), argnames=("a",))
defzeros(jnp.maximum,
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(x, y, True) == 0, g),
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(y, x, False) == 0, g))
defzeros(jnp.minimum,
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(y, x, True) == 0, g),
         lambda g, ans, x, y: ad.zero_mask(ad.pick_first(x, y, False) == 0, g))
defelementwise(jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.negative, jnp.power,
               jnp.square, jnp.reciprocal, jnp.maximum, jnp.minimum, jnp.exp, jnp.expm1,
               jnp.log, jnp.log1p, jnp.sin, jnp.cos, jnp.tan, jnp.tanh, jnp.sinh, jnp.cosh,
               jnp.arcsin, jnp.arccos, jnp.arctan, jnp.arcsinh, jnp.arccosh, jnp.arctanh,
               jnp.sqrt, jnp.cbrt, jnp.exp2, jnp.absolute, jnp.arctan2, jnp.logaddexp,
               jnp.where, jnp.clip, ad.log1p_exp, ad.sigmoid, ad.safe_mul, ad.safe_div)

# ---- the Python operators are the jnp functions ------------------------------------------------

for _op, _fn in ((operator.add, jnp.add), (operator.sub, jnp.subtract),
                 (operator.mul, jnp.multiply), (operator.truediv, jnp.divide),
                 (operator.pow, jnp.power), (operator.neg, jnp.negative),
                 (jnp.true_divide, jnp.divide), (jnp.abs, jnp.absolute)):
    alias(_op, _fn)
alias(operator.pos, jnp.positive)
defjvp(jnp.positive, lambda x_dot, ans, x: x_dot)
defvjp(jnp.positive, lambda g, ans, x: g)

# ---- lax -----------------------------------------------------------------------------------------

for _name, _fn in (("add", jnp.add), ("sub", jnp.subtract), ("mul", jnp.multiply),
                   ("div", jnp.divide), ("neg", jnp.negative), ("exp", jnp.exp),
                   ("log", jnp.log), ("log1p", jnp.log1p), ("expm1", jnp.expm1),
                   ("sin", jnp.sin), ("cos", jnp.cos), ("tan", jnp.tan), ("tanh", jnp.tanh),
                   ("sqrt", jnp.sqrt), ("abs", jnp.absolute), ("max", jnp.maximum),
                   ("min", jnp.minimum), ("pow", jnp.power), ("atan2", jnp.arctan2),
                   ("sinh", jnp.sinh), ("cosh", jnp.cosh), ("asin", jnp.arcsin),
                   ("acos", jnp.arccos), ("atan", jnp.arctan), ("asinh", jnp.arcsinh),
                   ("acosh", jnp.arccosh), ("atanh", jnp.arctanh), ("cbrt", jnp.cbrt)):
    alias(getattr(lax, _name), _fn)

# ---- no derivative -------------------------------------------------------------------------------

for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
            operator.not_, operator.is_, operator.is_not, jnp.less, jnp.less_equal,
            jnp.greater, jnp.greater_equal, jnp.equal, jnp.not_equal, jnp.isnan,
            jnp.isfinite, jnp.isinf, jnp.logical_and, jnp.logical_or, jnp.logical_not,
            jnp.logical_xor, jnp.bitwise_and, jnp.bitwise_or, jnp.bitwise_xor,
            jnp.bitwise_not, operator.and_, operator.or_, operator.xor, operator.invert,
            operator.floordiv, jnp.floor_divide, jnp.signbit, jnp.bitwise_count):
    defnondiff(_op, "bool- or integer-valued")
defjvp(jnp.remainder,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: -y_dot * jnp.floor_divide(x, y))
defvjp(jnp.remainder,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g * jnp.floor_divide(x, y), y))
alias(operator.mod, jnp.remainder)

for _op in (jnp.sign, jnp.floor, jnp.ceil, jnp.round):
    defnondiff(_op, "piecewise constant: its derivative is zero almost everywhere")
