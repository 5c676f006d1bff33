"""Derivative rules of the elementwise jnp functions written on several primitives (power,
where, clip, logaddexp, ...) and of Python's operators. A jnp function that is one
primitive (jnp.exp, jnp.add) has its primitive's rules, in compiler/primitives/elementwise.py.
"""
import operator

import redraft.numpy as jnp
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.primitives.registry import (alias, defelementwise, defjvp, defnondiff,
                                                  defstatic, defvjp, defzeros)

# ---- arithmetic ------------------------------------------------------------------------------

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
defstatic(jnp.where, "condition")  # a mask (grad of a batch with allow_int): no derivative
# clip passes the derivative where it left `a` as it was, half of it on a bound (as JAX's
# max-then-min does); bounds given as a_min or min alike
defjvp(jnp.clip, lambda a_dot, ans, a, a_min=None, a_max=None, min=None, max=None:
       ad.broadcast_like(a_dot, ans) * ad.clip_slope(a, a_min, a_max, min, max),
       argnames=("a",))
defvjp(jnp.clip, lambda g, ans, a, a_min=None, a_max=None, min=None, max=None:
       ad.unbroadcast(g * ad.clip_slope(a, a_min, a_max, min, max), a), argnames=("a",))

# Structural zeros: the cotangent of the side a selection did not take is zero by
# construction, and stays zero through that side's chain of rules (vjp.py, ad.safe_mul).
defzeros(jnp.where, None,
         lambda g, ans, condition, x, y: ad.zero_mask(jnp.logical_not(condition), g),
         lambda g, ans, condition, x, y: ad.zero_mask(condition, g))
defzeros(jnp.clip, lambda g, ans, a: ad.zero_mask(ans != a, g), argnames=("a",))
defelementwise(jnp.power, jnp.square, jnp.reciprocal, jnp.logaddexp, jnp.where, jnp.clip,
               ad.log1p_exp, ad.sigmoid, ad.safe_mul, ad.safe_div)

# ---- the Python operators are the jnp functions ------------------------------------------------

for _op, _fn in ((operator.add, jnp.add), (operator.sub, jnp.subtract),
                 (operator.mul, jnp.multiply), (operator.truediv, jnp.divide),
                 (operator.pow, jnp.power), (operator.neg, jnp.negative)):
    alias(_op, _fn)
alias(operator.pos, jnp.positive)
defjvp(jnp.positive, lambda x_dot, ans, x: x_dot)
defvjp(jnp.positive, lambda g, ans, x: g)

# ---- no derivative -------------------------------------------------------------------------------

for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
            operator.not_, operator.is_, operator.is_not, jnp.isnan, jnp.isinf,
            jnp.isfinite, jnp.logical_and, jnp.logical_or, jnp.logical_not,
            jnp.logical_xor, jnp.bitwise_not, operator.and_, operator.or_, operator.xor,
            operator.invert, operator.floordiv, jnp.floor_divide, jnp.signbit,
            jnp.bitwise_count):
    defnondiff(_op, "bool- or integer-valued")
defjvp(jnp.remainder,
       lambda x_dot, ans, x, y: ad.broadcast_like(x_dot, ans),
       lambda y_dot, ans, x, y: -y_dot * jnp.floor_divide(x, y))
defvjp(jnp.remainder,
       lambda g, ans, x, y: ad.unbroadcast(g, x),
       lambda g, ans, x, y: ad.unbroadcast(-g * jnp.floor_divide(x, y), y))
alias(operator.mod, jnp.remainder)

for _op in (jnp.floor, jnp.ceil, jnp.round):
    defnondiff(_op, "piecewise constant: its derivative is zero almost everywhere")
