"""Derivative rules of redraft.numpy, redraft.nn and redraft.scipy.special functions whose
source the AD cannot transform (they use *args, keyword-only parameters, imports inside the
function, or bind primitives directly), written in numerically stable forms:
logsumexp's derivative is exp(x - ans), softmax's vjp ans * (g - sum(g * ans)), products
use exclusive products rather than division.

Rules that need a static parameter (canonical axes, a permutation) call the static helpers
of runtime/lad.py, which are marked not differentiable in rules/lax_structure.py.
"""
import inspect
import math

import redraft.numpy as jnp
from redraft import lax, nn
from redraft.numpy import promotion
from redraft.scipy import special
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.runtime import lad
from redraft.compiler.primitives.registry import (alias, defjvp, defjvp_joint, defnondiff,
                                                  defstatic, defvjp)

LN2 = math.log(2.0)
LN10 = math.log(10.0)
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
INV_SQRT2 = 1 / math.sqrt(2)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
GELU_CUBIC = 0.044715

# ---- operand promotion -------------------------------------------------------------------------
# redraft.numpy, nn and scipy.special functions start with promote(*args) or
# promote_inexact(*args); with rules for their one- and two-operand forms, the AD can read
# the functions that call them. The result is a list: one tangent or cotangent per operand.


def _promoted_operands(x, y=None):
    """Template: the one- and two-operand calls of promote / promote_inexact."""


for _op in (promotion.promote, promotion.promote_inexact):
    defjvp(_op,
           lambda x_dot, ans, x, y=None: [lax.convert_element_type(
               x_dot, jnp.result_type(ans[0]))] if y is None else [lax.convert_element_type(
                   x_dot, jnp.result_type(ans[0])), ad.zeros_like(ans[1])],
           lambda y_dot, ans, x, y=None: [ad.zeros_like(ans[0]), lax.convert_element_type(
               y_dot, jnp.result_type(ans[1]))],
           signature=inspect.signature(_promoted_operands))
    defjvp_joint(_op, lambda x_dot, y_dot, ans, x, y=None: [
        lax.convert_element_type(x_dot, jnp.result_type(ans[0])),
        lax.convert_element_type(y_dot, jnp.result_type(ans[1]))], ("x", "y"))
    defvjp(_op,
           lambda g, ans, x, y=None: ad.cotangent_astype(g[0], x),
           lambda g, ans, x, y=None: ad.cotangent_astype(g[1], y))

# scipy.special functions that bind a primitive directly are the lax functions.
for _fn, _same in ((special.erf, lax.erf), (special.erfc, lax.erfc),
                   (special.erfinv, lax.erf_inv), (special.expit, lax.logistic),
                   (special.gammaln, lax.lgamma), (special.digamma, lax.digamma)):
    alias(_fn, _same)

# ---- reductions ----------------------------------------------------------------------------------


def _prod_jvp(a_dot, ans, a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    """Each element's tangent times the product of the others (and of `initial`)."""
    checked = lad.refuse_if(where is not None, "jnp.prod(where=...)", axis)
    others = lad.prod_others(a, lad.reduction_axes(a, checked))
    scale = 1.0 if initial is None else initial
    return jnp.sum(a_dot * others, axis=axis, keepdims=keepdims) * scale


def _prod_vjp(g, ans, a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    checked = lad.refuse_if(where is not None, "jnp.prod(where=...)", axis)
    others = lad.prod_others(a, lad.reduction_axes(a, checked))
    scale = 1.0 if initial is None else initial
    return ad.unsum(g * scale, a, axis, keepdims) * others


defjvp(jnp.prod, _prod_jvp)
defvjp(jnp.prod, _prod_vjp)


def _var_jvp(a_dot, ans, a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    """2 / (n - ddof) * sum((a - mean) * a_dot): the mean's own change sums to zero."""
    centred = a - jnp.mean(a, axis=axis, keepdims=True)
    scale = 2.0 / lad.degrees_of_freedom(a, axis, ddof)
    return jnp.sum(centred * a_dot, axis=axis, keepdims=keepdims) * scale


def _var_vjp(g, ans, a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    centred = a - jnp.mean(a, axis=axis, keepdims=True)
    scale = 2.0 / lad.degrees_of_freedom(a, axis, ddof)
    return ad.unsum(g, a, axis, keepdims) * centred * scale


def _std_jvp(a_dot, ans, a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    """d std = d var / (2 std)."""
    centred = a - jnp.mean(a, axis=axis, keepdims=True)
    total = jnp.sum(centred * a_dot, axis=axis, keepdims=keepdims)
    return ad.safe_div(total, ans * lad.degrees_of_freedom(a, axis, ddof))


def _std_vjp(g, ans, a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    centred = a - jnp.mean(a, axis=axis, keepdims=True)
    spread = ad.unsum(ad.safe_div(g, ans), a, axis, keepdims)
    return spread * centred / lad.degrees_of_freedom(a, axis, ddof)


defjvp(jnp.var, _var_jvp)
defvjp(jnp.var, _var_vjp)
defjvp(jnp.std, _std_jvp)
defvjp(jnp.std, _std_vjp)


def _logsumexp_jvp(a_dot, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """The tangent weighted by softmax(a) (times b), i.e. b * exp(a - ans): never overflows.
    Covers return_sign=False with a positive sum."""
    checked = lad.refuse_if(return_sign, "logsumexp(return_sign=True)", axis)
    weights = jnp.exp(a - ad.unsum(ans, a, checked, keepdims))
    scaled = weights if b is None else weights * b
    return jnp.sum(a_dot * scaled, axis=axis, keepdims=keepdims)


def _logsumexp_vjp_a(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    checked = lad.refuse_if(return_sign, "logsumexp(return_sign=True)", axis)
    weights = jnp.exp(a - ad.unsum(ans, a, checked, keepdims))
    scaled = weights if b is None else weights * b
    return ad.unsum(g, a, axis, keepdims) * scaled


def _logsumexp_jvp_b(b_dot, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    checked = lad.refuse_if(return_sign, "logsumexp(return_sign=True)", axis)
    weights = jnp.exp(a - ad.unsum(ans, a, checked, keepdims))
    return jnp.sum(b_dot * weights, axis=axis, keepdims=keepdims)


def _logsumexp_vjp_b(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    checked = lad.refuse_if(return_sign, "logsumexp(return_sign=True)", axis)
    weights = jnp.exp(a - ad.unsum(ans, a, checked, keepdims))
    return ad.unbroadcast(ad.unsum(g, a, axis, keepdims) * weights, b)


defjvp(jnp.logsumexp, _logsumexp_jvp, None, _logsumexp_jvp_b, argnames=("a", "axis", "b"))
defvjp(jnp.logsumexp, _logsumexp_vjp_a, None, _logsumexp_vjp_b, argnames=("a", "axis", "b"))

# jnp.cumprod flattens when axis is None; its tangent and cotangent are the linear
# recurrences of lax.cumprod's rules.
defjvp(jnp.cumprod, lambda a_dot, ans, a, axis=None, dtype=None: lad.linear_recurrence(
    jnp.reshape(a, lad.flat_if_none(a, axis)),
    lad.shift(ans, lad.axis_or_zero(axis), False, 1.0)
    * jnp.reshape(a_dot, lad.flat_if_none(a, axis)), lad.axis_or_zero(axis), False))
defvjp(jnp.cumprod, lambda g, ans, a, axis=None, dtype=None: jnp.reshape(
    lad.shift(ans, lad.axis_or_zero(axis), False, 1.0) * lad.linear_recurrence(
        lad.shift(jnp.reshape(a, lad.flat_if_none(a, axis)), lad.axis_or_zero(axis), True),
        g, lad.axis_or_zero(axis), True), jnp.shape(a)))


def _sort_jvp(a_dot, ans, a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """Sorting permutes: the tangent is permuted the same way (argsort is stable too)."""
    flat = jnp.reshape(a, lad.flat_if_none(a, axis))
    order_ = jnp.argsort(flat, axis=lad.axis_or_zero(axis), descending=descending)
    return lad.take_along(jnp.reshape(a_dot, jnp.shape(flat)), order_, lad.axis_or_zero(axis))


def _sort_vjp(g, ans, a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """The cotangent goes back through the inverse permutation."""
    flat = jnp.reshape(a, lad.flat_if_none(a, axis))
    order_ = jnp.argsort(flat, axis=lad.axis_or_zero(axis), descending=descending)
    inverse = jnp.argsort(order_, axis=lad.axis_or_zero(axis))
    return jnp.reshape(lad.take_along(g, inverse, lad.axis_or_zero(axis)), jnp.shape(a))


defjvp(jnp.sort, _sort_jvp)
defvjp(jnp.sort, _sort_vjp)

# ---- nn ------------------------------------------------------------------------------------------


def _softmax_jvp(x_dot, ans, x, axis=-1, where=None):
    return ans * (x_dot - jnp.sum(x_dot * ans, axis=axis, keepdims=True))


def _softmax_vjp(g, ans, x, axis=-1, where=None):
    return ans * (g - jnp.sum(g * ans, axis=axis, keepdims=True))


def _log_softmax_jvp(x_dot, ans, x, axis=-1, where=None):
    """x_dot - sum(x_dot * softmax); entries outside `where` stay at -inf (no tangent)."""
    out = x_dot - jnp.sum(x_dot * jnp.exp(ans), axis=axis, keepdims=True)
    return out if where is None else jnp.where(where, out, 0.0)


def _log_softmax_vjp(g, ans, x, axis=-1, where=None):
    kept = g if where is None else jnp.where(where, g, 0.0)
    return kept - jnp.exp(ans) * jnp.sum(kept, axis=axis, keepdims=True)


defjvp(nn.softmax, _softmax_jvp)
defvjp(nn.softmax, _softmax_vjp)
defjvp(nn.log_softmax, _log_softmax_jvp)
defvjp(nn.log_softmax, _log_softmax_vjp)


def _gelu_slope(x, approximate):
    """d/dx of x * Phi(x): through the tanh approximation, or Phi(x) + x phi(x) exactly."""
    if approximate:
        t = jnp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (
            1 + 3 * GELU_CUBIC * x * x)
    return 0.5 * (1 + lax.erf(x * INV_SQRT2)) + x * jnp.exp(-0.5 * x * x) * INV_SQRT_2PI


def _gelu_jvp(x_dot, ans, x, approximate=True):
    return x_dot * _gelu_slope(x, approximate)


def _gelu_vjp(g, ans, x, approximate=True):
    return g * _gelu_slope(x, approximate)


defjvp(nn.gelu, _gelu_jvp)
defvjp(nn.gelu, _gelu_vjp)
# relu and relu6 pass no derivative at their kinks (JAX's custom rules), where max would
# split it in half
defjvp(nn.relu, lambda x_dot, ans, x: jnp.where(x > 0, x_dot, 0.0))
defvjp(nn.relu, lambda g, ans, x: jnp.where(x > 0, g, 0.0))
defjvp(nn.relu6, lambda x_dot, ans, x: jnp.where((x > 0) & (x < 6), x_dot, 0.0))
defvjp(nn.relu6, lambda g, ans, x: jnp.where((x > 0) & (x < 6), g, 0.0))
defjvp(nn.sigmoid, lambda x_dot, ans, x: x_dot * (ans * (1 - ans)))
defvjp(nn.sigmoid, lambda g, ans, x: g * (ans * (1 - ans)))
defjvp(nn.softplus, lambda x_dot, ans, x: x_dot * lax.logistic(x))
defvjp(nn.softplus, lambda g, ans, x: g * lax.logistic(x))
defjvp(nn.silu, lambda x_dot, ans, x: x_dot * (
    lax.logistic(x) * (1 + x * (1 - lax.logistic(x)))))
defvjp(nn.silu, lambda g, ans, x: g * (lax.logistic(x) * (1 + x * (1 - lax.logistic(x)))))

# ---- norms and products --------------------------------------------------------------------------

# jnp.linalg.norm: rules/linalg.py (its Euclidean case; the other ords through its source)

defjvp(jnp.tensordot,
       lambda a_dot, ans, a, b, axes=2: jnp.tensordot(a_dot, b, axes),
       lambda b_dot, ans, a, b, axes=2: jnp.tensordot(a, b_dot, axes))
defvjp(jnp.tensordot,
       lambda g, ans, a, b, axes=2: lax.transpose(
           jnp.tensordot(g, b, lad.tensordot_bar_spec(a, b, axes, 0)[0]),
           lad.tensordot_bar_spec(a, b, axes, 0)[1]),
       lambda g, ans, a, b, axes=2: lax.transpose(
           jnp.tensordot(a, g, lad.tensordot_bar_spec(a, b, axes, 1)[0]),
           lad.tensordot_bar_spec(a, b, axes, 1)[1]))
defjvp(jnp.inner,
       lambda a_dot, ans, a, b: jnp.inner(a_dot, b),
       lambda b_dot, ans, a, b: jnp.inner(a, b_dot))
defvjp(jnp.inner,
       lambda g, ans, a, b: lax.transpose(
           jnp.tensordot(g, b, lad.tensordot_bar_spec(a, b, lad.inner_axes(a, b), 0)[0]),
           lad.tensordot_bar_spec(a, b, lad.inner_axes(a, b), 0)[1]),
       lambda g, ans, a, b: lax.transpose(
           jnp.tensordot(a, g, lad.tensordot_bar_spec(a, b, lad.inner_axes(a, b), 1)[0]),
           lad.tensordot_bar_spec(a, b, lad.inner_axes(a, b), 1)[1]))
defjvp(jnp.outer,
       lambda a_dot, ans, a, b: jnp.outer(a_dot, b),
       lambda b_dot, ans, a, b: jnp.outer(a, b_dot))
defvjp(jnp.outer,
       lambda g, ans, a, b: jnp.reshape(jnp.dot(g, jnp.ravel(b)), jnp.shape(a)),
       lambda g, ans, a, b: jnp.reshape(jnp.dot(jnp.ravel(a), g), jnp.shape(b)))


def _einsum_operands(subscripts, x, y=None, *, out=None, optimize="auto", precision=None,
                     preferred_element_type=None):
    """Template: redraft's einsum rules cover one or two operands (jnp.einsum takes
    *operands, which a rule cannot name); its keywords bind, and the rules need none of
    them (redraft's products are always at full precision)."""


EINSUM = inspect.signature(_einsum_operands)
defjvp(jnp.einsum, None,
       lambda x_dot, ans, subscripts, x, y=None: jnp.einsum(subscripts, x_dot) if y is None
       else jnp.einsum(subscripts, x_dot, y),
       lambda y_dot, ans, subscripts, x, y=None: jnp.einsum(subscripts, x, y_dot),
       signature=EINSUM)
defvjp(jnp.einsum, None,
       lambda g, ans, subscripts, x, y=None: lad.einsum_x_bar(g, subscripts, x, y),
       lambda g, ans, subscripts, x, y=None: lad.einsum_y_bar(g, subscripts, x, y))
# einsum_x_bar is linear in g and in y: its transposes are einsum again and einsum_y_bar.
defjvp(lad.einsum_x_bar,
       lambda g_dot, ans, g, subscripts, x, y=None: lad.einsum_x_bar(g_dot, subscripts, x, y),
       None, None,
       lambda y_dot, ans, g, subscripts, x, y=None: lad.einsum_x_bar(g, subscripts, x, y_dot))
defvjp(lad.einsum_x_bar,
       lambda ct, ans, g, subscripts, x, y=None: jnp.einsum(subscripts, ct) if y is None
       else jnp.einsum(subscripts, ct, y),
       None, None,
       lambda ct, ans, g, subscripts, x, y=None: lad.einsum_y_bar(g, subscripts, ct, y))
defjvp(lad.einsum_y_bar,
       lambda g_dot, ans, g, subscripts, x, y: lad.einsum_y_bar(g_dot, subscripts, x, y),
       None,
       lambda x_dot, ans, g, subscripts, x, y: lad.einsum_y_bar(g, subscripts, x_dot, y))
defvjp(lad.einsum_y_bar,
       lambda ct, ans, g, subscripts, x, y: jnp.einsum(subscripts, x, ct),
       None,
       lambda ct, ans, g, subscripts, x, y: lad.einsum_x_bar(g, subscripts, x, ct))
defstatic(lad.einsum_x_bar, "x")
defstatic(lad.einsum_y_bar, "y")

# ---- diagonals and triangles ---------------------------------------------------------------------

defjvp(jnp.trace, lambda a_dot, ans, a, offset=0, axis1=0, axis2=1, dtype=None:
       jnp.trace(a_dot, offset, axis1, axis2))
defvjp(jnp.trace, lambda g, ans, a, offset=0, axis1=0, axis2=1, dtype=None:
       lad.trace_bar(g, a, offset, axis1, axis2))
defjvp(jnp.diagonal, lambda a_dot, ans, a, offset=0, axis1=0, axis2=1:
       jnp.diagonal(a_dot, offset, axis1, axis2))
defvjp(jnp.diagonal, lambda g, ans, a, offset=0, axis1=0, axis2=1:
       lad.diagonal_bar(g, a, offset, axis1, axis2))
defjvp(lad.trace_bar, lambda g_dot, ans, g, a, offset=0, axis1=0, axis2=1:
       lad.trace_bar(g_dot, a, offset, axis1, axis2))
defvjp(lad.trace_bar, lambda ct, ans, g, a, offset=0, axis1=0, axis2=1:
       jnp.trace(ct, offset, axis1, axis2))
defjvp(lad.diagonal_bar, lambda g_dot, ans, g, a, offset=0, axis1=0, axis2=1:
       lad.diagonal_bar(g_dot, a, offset, axis1, axis2))
defvjp(lad.diagonal_bar, lambda ct, ans, g, a, offset=0, axis1=0, axis2=1:
       jnp.diagonal(ct, offset, axis1, axis2))
defstatic(lad.trace_bar, "a")
defstatic(lad.diagonal_bar, "a")
defjvp(jnp.tril, lambda m_dot, ans, m, k=0: jnp.tril(m_dot, k))
defvjp(jnp.tril, lambda g, ans, m, k=0: jnp.tril(g, k))
defjvp(jnp.triu, lambda m_dot, ans, m, k=0: jnp.triu(m_dot, k))
defvjp(jnp.triu, lambda g, ans, m, k=0: jnp.triu(g, k))

# ---- rearrangements ------------------------------------------------------------------------------

defjvp(jnp.flip, lambda m_dot, ans, m, axis=None: jnp.flip(m_dot, axis))
defvjp(jnp.flip, lambda g, ans, m, axis=None: jnp.flip(g, axis))
defjvp(jnp.roll, lambda a_dot, ans, a, shift, axis=None: jnp.roll(a_dot, shift, axis))
defvjp(jnp.roll, lambda g, ans, a, shift, axis=None: jnp.roll(g, lad.negated(shift), axis))
defjvp(jnp.tile, lambda A_dot, ans, A, reps: jnp.tile(A_dot, reps))
defvjp(jnp.tile, lambda g, ans, A, reps: jnp.reshape(
    jnp.sum(jnp.reshape(g, lad.tile_layout(A, reps)[0]), axis=lad.tile_layout(A, reps)[1]),
    jnp.shape(A)))
defjvp(jnp.repeat, lambda a_dot, ans, a, repeats, axis=None, total_repeat_length=None:
       jnp.repeat(a_dot, repeats, axis))
defvjp(jnp.repeat, lambda g, ans, a, repeats, axis=None, total_repeat_length=None:
       lad.repeat_bar(g, a, repeats, axis))
defjvp(lad.repeat_bar, lambda g_dot, ans, g, a, repeats, axis=None:
       lad.repeat_bar(g_dot, a, repeats, axis))
defvjp(lad.repeat_bar, lambda ct, ans, g, a, repeats, axis=None: jnp.repeat(ct, repeats, axis))
defstatic(lad.repeat_bar, "a")
defjvp(jnp.split, lambda ary_dot, ans, ary, indices_or_sections, axis=0:
       jnp.split(ary_dot, indices_or_sections, axis))
defvjp(jnp.split, lambda g, ans, ary, indices_or_sections, axis=0: jnp.concatenate(g, axis))
defjvp(jnp.take_along_axis, lambda arr_dot, ans, arr, indices, axis, mode=None, fill_value=None:
       jnp.take_along_axis(arr_dot, indices, axis, mode, 0))  # a filled read's tangent: 0
defvjp(jnp.take_along_axis, lambda g, ans, arr, indices, axis, mode=None, fill_value=None:
       lad.take_along_bar(g, arr, indices, axis, mode))
defstatic(jnp.take_along_axis, "indices")


def _one_array(x):
    """Template: jnp.atleast_Nd(*arys) with one array (a rule cannot name *arys)."""


for _op in (jnp.atleast_1d, jnp.atleast_2d, jnp.atleast_3d):
    defjvp(_op, lambda x_dot, ans, x: jnp.reshape(x_dot, jnp.shape(ans)),
           signature=inspect.signature(_one_array))
    defvjp(_op, lambda g, ans, x: jnp.reshape(g, jnp.shape(x)))

# ---- elementwise ---------------------------------------------------------------------------------

defjvp(jnp.hypot,
       lambda x_dot, ans, x, y: ad.safe_div(x_dot * x, ans),
       lambda y_dot, ans, x, y: ad.safe_div(y_dot * y, ans))
defvjp(jnp.hypot,
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(g * x, ans), x),
       lambda g, ans, x, y: ad.unbroadcast(ad.safe_div(g * y, ans), y))
defjvp(jnp.log2, lambda x_dot, ans, x: x_dot / (x * LN2))
defvjp(jnp.log2, lambda g, ans, x: ad.safe_div(g, x * LN2))
defjvp(jnp.log10, lambda x_dot, ans, x: x_dot / (x * LN10))
defvjp(jnp.log10, lambda g, ans, x: ad.safe_div(g, x * LN10))


def _sinc_jvp(x_dot, ans, x):
    """pi (u cos u - sin u) / u^2 with u = pi x; its Taylor series near 0, where the
    formula cancels."""
    u = x * math.pi
    small = jnp.abs(u) < 0.05
    safe = jnp.where(small, 1.0, u)
    formula = (safe * jnp.cos(safe) - jnp.sin(safe)) / (safe * safe) * math.pi
    series = (u * u * u / 30 - u / 3) * math.pi
    return x_dot * jnp.where(small, series, formula)


def _sinc_vjp(g, ans, x):
    u = x * math.pi
    small = jnp.abs(u) < 0.05
    safe = jnp.where(small, 1.0, u)
    formula = (safe * jnp.cos(safe) - jnp.sin(safe)) / (safe * safe) * math.pi
    series = (u * u * u / 30 - u / 3) * math.pi
    return g * jnp.where(small, series, formula)


defjvp(jnp.sinc, _sinc_jvp)
defvjp(jnp.sinc, _sinc_vjp)

for _op in (lad.refuse_if, lad.reduction_axes, lad.degrees_of_freedom, lad.flat_if_none,
            lad.axis_or_zero, lad.negated, lad.tile_layout, lad.tensordot_axes,
            lad.tensordot_bar_spec, lad.inner_axes, lad.euclidean_norm_axis):
    defnondiff(_op, "computes static parameters from shapes and static arguments")

# jnp.float32(x) and the other scalar types are casts (JAX's are functions that convert)
from redraft.numpy import scalar_types as _scalar_types  # noqa: E402

for _name in _scalar_types.__all__:
    _type = getattr(_scalar_types, _name)
    defjvp(_type, lambda x_dot, ans, x=0: ad.tangent_astype(x_dot, ans.dtype))
    defvjp(_type, lambda g, ans, x=0: ad.cotangent_astype(g, x, ans.dtype))
