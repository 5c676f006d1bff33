"""Derivative rules of lax's special functions (redraft/scipy/special_functions/lax_forms.py,
handed down to redraft.lax), as JAX defines them,
and of lax's structural and bit conveniences (structure.py, bits.py) at the end. Specials:
igamma and igammac in both arguments (d/da through lax.igamma_grad_a), igamma_grad_a in x,
polygamma and betainc in x only, zeta in q (JAX gives zeta none; d/dq zeta(x, q) =
-x zeta(x + 1, q)). Differentiating in an argument without a rule is an error that names
it, as in JAX.
"""
import inspect

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives.registry import defjvp, defnondiff, defstatic, defvjp
from redraft.compiler.transforms.runtime import ad, lad
from redraft.lax import patches, structure
from redraft.scipy.special_functions import incomplete_gamma, lax_forms


def igamma_density(a, x):
    """dP(a, x)/dx = x^(a-1) exp(-x) / Gamma(a), the gamma density."""
    return jnp.exp((a - 1.0) * jnp.log(x) - x - lax.lgamma(a))


def igamma_grad_a_slope_x(a, x):
    """d/dx dP/da = d/da density = density (log x - digamma(a))."""
    return igamma_density(a, x) * (jnp.log(x) - incomplete_gamma.digamma(a))


def betainc_slope_x(a, b, x):
    """dI_x(a, b)/dx = x^(a-1) (1 - x)^(b-1) / B(a, b)."""
    log_beta = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    return jnp.exp((b - 1.0) * jnp.log1p(-x) + (a - 1.0) * jnp.log(x) - log_beta)


defjvp(lax_forms.igamma,
       lambda a_dot, ans, a, x: a_dot * lax.igamma_grad_a(a, x),
       lambda x_dot, ans, a, x: x_dot * igamma_density(a, x))
defvjp(lax_forms.igamma,
       lambda g, ans, a, x: ad.unbroadcast(g * lax.igamma_grad_a(a, x), a),
       lambda g, ans, a, x: ad.unbroadcast(g * igamma_density(a, x), x))
defjvp(lax_forms.igammac,
       lambda a_dot, ans, a, x: -a_dot * lax.igamma_grad_a(a, x),
       lambda x_dot, ans, a, x: -x_dot * igamma_density(a, x))
defvjp(lax_forms.igammac,
       lambda g, ans, a, x: ad.unbroadcast(-g * lax.igamma_grad_a(a, x), a),
       lambda g, ans, a, x: ad.unbroadcast(-g * igamma_density(a, x), x))
defjvp(lax_forms.igamma_grad_a, None,
       lambda x_dot, ans, a, x: x_dot * igamma_grad_a_slope_x(a, x))
defvjp(lax_forms.igamma_grad_a, None,
       lambda g, ans, a, x: ad.unbroadcast(g * igamma_grad_a_slope_x(a, x), x))
defjvp(lax_forms.polygamma, None, lambda x_dot, ans, m, x: x_dot * lax.polygamma(m + 1.0, x))
defvjp(lax_forms.polygamma, None,
       lambda g, ans, m, x: ad.unbroadcast(g * lax.polygamma(m + 1.0, x), x))
defjvp(lax_forms.zeta, None, lambda q_dot, ans, x, q: -q_dot * x * lax.zeta(x + 1.0, q))
defvjp(lax_forms.zeta, None, lambda g, ans, x, q: ad.unbroadcast(-g * x * lax.zeta(x + 1.0, q), q))
defjvp(lax_forms.betainc, None, None, lambda x_dot, ans, a, b, x: x_dot * betainc_slope_x(a, b, x))
defvjp(lax_forms.betainc, None, None,
       lambda g, ans, a, b, x: ad.unbroadcast(g * betainc_slope_x(a, b, x), x))

# ---- structure (redraft/lax/structure.py) and bits (redraft/lax/bits.py) ----------------------


def _select_n_operands(which, case0, case1=None, case2=None, case3=None, case4=None,
                       case5=None):
    """Template: the calls of select_n the transforms bind (up to six cases)."""


def select_n_mask(which, k, following):
    """Where select_n picks case k: `which` equal to k, at or below it for k = 0 and at or
    above it for the last case (`following` is None), as select_n's forward pass chooses."""
    w = lax.convert_element_type(which, jnp.int32)
    if following is None:
        return w >= k if k > 0 else w == w
    return w == k if k > 0 else w < 1


defnondiff(select_n_mask, "a bool mask (its `following` argument only says whether case k is "
                          "the last one)")


def select_n_part(t, which, k, following):
    """t where select_n picks case k, zero elsewhere (the tangent or cotangent of case k)."""
    mask = select_n_mask(which, k, following)
    return ad.unbroadcast(jnp.where(mask, t, jnp.zeros_like(t)), t)


_SELECT_N = inspect.signature(_select_n_operands)
defjvp(lax.select_n, None,
       lambda case0_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case0_dot, jnp.shape(ans)), which, 0, case1),
       lambda case1_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case1_dot, jnp.shape(ans)), which, 1, case2),
       lambda case2_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case2_dot, jnp.shape(ans)), which, 2, case3),
       lambda case3_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case3_dot, jnp.shape(ans)), which, 3, case4),
       lambda case4_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case4_dot, jnp.shape(ans)), which, 4, case5),
       lambda case5_dot, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: select_n_part(jnp.broadcast_to(case5_dot, jnp.shape(ans)), which, 5, None),
       signature=_SELECT_N)
defvjp(lax.select_n, None,
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 0, case1), case0),
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 1, case2), case1),
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 2, case3), case2),
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 3, case4), case3),
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 4, case5), case4),
       lambda g, ans, which, case0, case1=None, case2=None, case3=None, case4=None,
       case5=None: ad.unbroadcast(select_n_part(g, which, 5, None), case5))
defstatic(lax.select_n, "which")

defjvp(lax.broadcast_like, lambda arr_dot, ans, arr, like_arr: lax.broadcast_like(arr_dot, ans))
defvjp(lax.broadcast_like, lambda g, ans, arr, like_arr: ad.unbroadcast(g, arr))
defstatic(lax.broadcast_like, "like_arr")
defnondiff(lax.empty, "creates an array from a shape and a dtype: it takes no values")
defjvp(lax.index_take, lambda src_dot, ans, src, idxs, axes: lax.index_take(src_dot, idxs, axes))
defvjp(lax.index_take, lambda g, ans, src, idxs, axes:
       structure.index_take_scatter(jnp.zeros_like(src), g, idxs, axes))
defstatic(lax.index_take, "idxs")
defjvp(lax.optimization_barrier, lambda operand_dot, ans, operand: operand_dot)
defvjp(lax.optimization_barrier, lambda g, ans, operand: g)
defjvp(lax.stack, lambda operands_dot, ans, operands, axis=0: lax.stack(operands_dot, axis))
defvjp(lax.stack, lambda g, ans, operands, axis=0: list(lax.unstack(g, axis)))
defjvp(lax.unstack, lambda x_dot, ans, x, axis=0: lax.unstack(x_dot, axis))
defvjp(lax.unstack, lambda g, ans, x, axis=0: lax.stack(g, axis))
defnondiff(lax.bitcast_convert_type, "reinterprets bits: the result is not a differentiable "
                                     "function of the operand's value")
defnondiff(lax.mulhi, "integer-valued")
defjvp(lax.reduce_precision, lambda operand_dot, ans, operand, exponent_bits, mantissa_bits:
       lax.reduce_precision(operand_dot, exponent_bits, mantissa_bits))
defvjp(lax.reduce_precision, lambda g, ans, operand, exponent_bits, mantissa_bits:
       lax.reduce_precision(g, exponent_bits, mantissa_bits))



# ---- conv_general_dilated_patches (redraft/lax/patches.py): the convolution's rules in lhs ---


def patches_cotangent(g, lhs, filter_shape, window_strides, padding, lhs_dilation,
                      rhs_dilation, dimension_numbers):
    """The cotangent of lhs: the convolution's, with the patch kernel."""
    kernel, numbers, channels = patches.patches_kernel(
        jnp.shape(lhs), jnp.result_type(lhs), filter_shape, dimension_numbers)
    return lad.conv_lhs_bar(g, lhs, kernel, window_strides, padding, lhs_dilation,
                            rhs_dilation, numbers, channels, 1)


defjvp(lax.conv_general_dilated_patches,
       lambda lhs_dot, ans, lhs, filter_shape, window_strides, padding, lhs_dilation=None,
       rhs_dilation=None, dimension_numbers=None, precision=None, preferred_element_type=None:
       lax.conv_general_dilated_patches(lhs_dot, filter_shape, window_strides, padding,
                                        lhs_dilation, rhs_dilation, dimension_numbers,
                                        precision, preferred_element_type))
defvjp(lax.conv_general_dilated_patches,
       lambda g, ans, lhs, filter_shape, window_strides, padding, lhs_dilation=None,
       rhs_dilation=None, dimension_numbers=None, precision=None, preferred_element_type=None:
       patches_cotangent(g, lhs, filter_shape, window_strides, padding, lhs_dilation,
                         rhs_dilation, dimension_numbers))
