"""redraft.nn: activation functions and friends, as in jax.nn.

Written in numerically stable forms: softplus as logaddexp(x, 0), log_sigmoid as
-softplus(-x), softmax and log_softmax shifted by the maximum along the reduced axes.
"""
from __future__ import annotations

import math

import numpy as np

from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions as lax_red
from redraft.compiler.primitives.checks import canonical_axes
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind

import redraft.numpy as jnp
from redraft import lax
from redraft.numpy.promotion import cast, promote_inexact
from redraft.numpy.reductions import logsumexp  # noqa: F401 - re-exported as jax.nn does

__all__ = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "swish", "gelu", "elu",
           "celu", "selu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu",
           "hard_swish", "log_sigmoid", "glu", "softmax", "log_softmax", "logsumexp",
           "one_hot", "standardize"]


def _inexact(x) -> Array:
    return promote_inexact(x)[0]


# ---- pointwise activations -------------------------------------------------------------------

def relu(x) -> Array:
    """max(x, 0)."""
    return jnp.maximum(x, 0)


def relu6(x) -> Array:
    """min(max(x, 0), 6)."""
    return jnp.minimum(jnp.maximum(x, 0), 6)


def sigmoid(x) -> Array:
    """The logistic function 1 / (1 + exp(-x))."""
    return bind(ew.logistic_p, _inexact(x))


def softplus(x) -> Array:
    """log(1 + exp(x)), without overflow for large x."""
    return jnp.logaddexp(_inexact(x), 0)


def soft_sign(x) -> Array:
    """x / (1 + |x|)."""
    v = _inexact(x)
    return jnp.divide(v, jnp.add(jnp.absolute(v), 1))


def log_sigmoid(x) -> Array:
    """log(sigmoid(x)) = -softplus(-x), accurate for large |x|."""
    return jnp.negative(softplus(jnp.negative(_inexact(x))))


def silu(x) -> Array:
    """x * sigmoid(x) (also called swish)."""
    v = _inexact(x)
    return jnp.multiply(v, sigmoid(v))


swish = silu


def gelu(x, approximate: bool = True) -> Array:
    """The Gaussian error linear unit: x * Phi(x), by default through the tanh
    approximation (as jax.nn.gelu), exactly through erf when approximate=False."""
    v = _inexact(x)
    if approximate:
        inner = jnp.multiply(math.sqrt(2 / math.pi),
                             jnp.add(v, jnp.multiply(0.044715, jnp.power(v, 3))))
        return jnp.multiply(jnp.multiply(v, 0.5), jnp.add(jnp.tanh(inner), 1))
    cdf = jnp.multiply(jnp.add(bind(ew.erf_p, jnp.multiply(v, 1 / math.sqrt(2))), 1), 0.5)
    return jnp.multiply(v, cdf)


def elu(x, alpha: float = 1.0) -> Array:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    v = _inexact(x)
    safe = jnp.where(jnp.greater(v, 0), 0.0, v)
    return jnp.where(jnp.greater(v, 0), v, jnp.multiply(alpha, jnp.expm1(safe)))


def celu(x, alpha: float = 1.0) -> Array:
    """max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)."""
    v = _inexact(x)
    neg = jnp.multiply(alpha, jnp.expm1(jnp.divide(jnp.minimum(v, 0), alpha)))
    return jnp.add(jnp.maximum(v, 0), neg)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x) -> Array:
    """The scaled ELU with the self-normalising constants of Klambauer et al."""
    return jnp.multiply(_SELU_SCALE, elu(x, _SELU_ALPHA))


def leaky_relu(x, negative_slope: float = 1e-2) -> Array:
    """x for x >= 0, negative_slope * x otherwise."""
    v = _inexact(x)
    return jnp.where(jnp.greater_equal(v, 0), v, jnp.multiply(negative_slope, v))


def hard_tanh(x) -> Array:
    """tanh clipped to a straight line: -1 below -1, 1 above 1, x between (slope 1 on the
    bounds, as JAX's)."""
    v = _inexact(x)
    return jnp.where(v > 1, 1.0, jnp.where(v < -1, -1.0, v))


def hard_sigmoid(x) -> Array:
    """relu6(x + 3) / 6."""
    return jnp.divide(relu6(jnp.add(_inexact(x), 3)), 6)


def hard_silu(x) -> Array:
    """x * hard_sigmoid(x)."""
    v = _inexact(x)
    return jnp.multiply(v, hard_sigmoid(v))


hard_swish = hard_silu


def glu(x, axis: int = -1) -> Array:
    """Gated linear unit: split `axis` in halves a, b and return a * sigmoid(b)."""
    v = as_array(x)
    a, b = jnp.split(v, 2, axis=axis)
    return jnp.multiply(a, sigmoid(b))


# ---- normalisations over axes ------------------------------------------------------------------

def _shift_by_max(v: Array, axes: tuple[int, ...], where) -> Array:
    """v - max(v) over `axes` (kept as size-1 axes); a non-finite max shifts by 0."""
    masked = v if where is None else jnp.where(where, v, -np.inf)
    peak = lax_red.reduce_max(masked, axes)
    peak = jnp.reshape(peak, tuple(1 if i in axes else d for i, d in enumerate(v.shape)))
    peak = jnp.where(jnp.isfinite(peak), peak, 0)
    return jnp.subtract(v, peak)


def softmax(x, axis=-1, where=None) -> Array:
    """exp(x) / sum(exp(x)) over `axis`, shifted by the maximum so it cannot overflow.
    Entries outside `where` get 0."""
    v = _inexact(x)
    axes = canonical_axes(axis, v.ndim, "softmax")
    unnormalised = jnp.exp(_shift_by_max(v, axes, where))
    if where is not None:
        unnormalised = jnp.where(where, unnormalised, 0)
    total = jnp.sum(unnormalised, axis=axes, keepdims=True)
    return jnp.divide(unnormalised, total)


def log_softmax(x, axis=-1, where=None) -> Array:
    """x - logsumexp(x) over `axis`, computed from the max-shifted values."""
    v = _inexact(x)
    axes = canonical_axes(axis, v.ndim, "log_softmax")
    shifted = _shift_by_max(v, axes, where)
    exps = jnp.exp(shifted)
    if where is not None:
        exps = jnp.where(where, exps, 0)
    out = jnp.subtract(shifted, jnp.log(jnp.sum(exps, axis=axes, keepdims=True)))
    return out if where is None else jnp.where(where, out, -np.inf)


def standardize(x, axis=-1, mean=None, variance=None, epsilon: float = 1e-5,
                where=None) -> Array:
    """(x - mean) / sqrt(variance + epsilon), with mean and variance over `axis` unless
    given."""
    v = _inexact(x)
    if mean is None:
        mean = jnp.mean(v, axis=axis, keepdims=True, where=where)
    if variance is None:
        centred = jnp.subtract(v, mean)
        variance = jnp.mean(jnp.multiply(centred, centred), axis=axis, keepdims=True,
                            where=where)
    return jnp.multiply(jnp.subtract(v, mean), lax.rsqrt(_inexact(jnp.add(variance, epsilon))))


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1) -> Array:
    """x[..., None] == arange(num_classes), as `dtype` (float32 by default); indices out of
    range give all-zero rows."""
    indices = as_array(x)
    num_classes = int(num_classes)
    out_dtype = dtypes.check_dtype_arg(dtype) if dtype is not None else dtypes.DEFAULT_FLOAT
    out_ndim = indices.ndim + 1
    axis = axis + out_ndim if axis < 0 else axis
    if not 0 <= axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a result of rank "
                         f"{out_ndim}")
    classes = jnp.reshape(jnp.arange(num_classes),
                          tuple(num_classes if i == axis else 1 for i in range(out_ndim)))
    hot = jnp.equal(jnp.expand_dims(indices, axis), classes)
    return cast(hot, out_dtype)


# ---- more activations and helpers, composed from the ones above -----------------------------

def identity(x) -> Array:
    """x itself."""
    return jnp.asarray(x)


def tanh(x) -> Array:
    """The hyperbolic tangent."""
    return jnp.tanh(x)


def mish(x) -> Array:
    """x * tanh(softplus(x)) (Misra 2019)."""
    v = _inexact(x)
    return v * jnp.tanh(softplus(v))


def squareplus(x, b: float = 4) -> Array:
    """(x + sqrt(x^2 + b)) / 2, a smooth relu (Barron 2021)."""
    v = _inexact(x)
    return (v + jnp.sqrt(v * v + b)) / 2


def sparse_plus(x) -> Array:
    """0 for x <= -1, (x + 1)^2 / 4 between, x for x >= 1."""
    v = _inexact(x)
    return jnp.where(v <= -1, 0.0, jnp.where(v >= 1, v, (v + 1) ** 2 / 4))


def sparse_sigmoid(x) -> Array:
    """The derivative of sparse_plus: clip((x + 1) / 2, 0, 1)."""
    v = _inexact(x)
    return 0.5 * jnp.clip(v + 1.0, 0.0, 2.0)


def log1mexp(x) -> Array:
    """log(1 - exp(-x)) for x > 0, accurate at both ends (Maechler 2012)."""
    v = _inexact(x)
    small = v < math.log(2)
    safe_small = jnp.where(small, v, 1.0)
    safe_large = jnp.where(small, 1.0, v)
    return jnp.where(small, jnp.log(-jnp.expm1(-safe_small)), jnp.log1p(-jnp.exp(-safe_large)))


def logmeanexp(x, axis=None, where=None, keepdims: bool = False) -> Array:
    """log(mean(exp(x))) along axis, without overflow."""
    v = _inexact(x)
    if where is not None:
        v = jnp.where(where, v, -np.inf)
    total = logsumexp(v, axis=axis, keepdims=keepdims)
    ones = jnp.ones_like(v) if where is None else jnp.where(where, 1.0, 0.0).astype(v.dtype)
    count = jnp.sum(ones, axis=axis, keepdims=keepdims)
    return total - jnp.log(count)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None) -> Array:
    """softmax(query key^T * scale + bias, masked) value, for arrays laid out as
    (batch, sequence, heads, head_dim) or without the batch axis; scale defaults to
    1/sqrt(head_dim). The key and value may have fewer heads than the query when those
    divide its heads (grouped-query attention). (JAX makes scale and the later parameters
    keyword-only; here they are ordinary ones, which transformed code can call.)"""
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is not "
                         "available; use None")
    if local_window_size is not None:
        raise NotImplementedError("dot_product_attention(local_window_size=...) is not "
                                  "supported yet")
    q, k, v = (jnp.asarray(a) for a in (query, key, value))
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("dot_product_attention: query, key and value must be 3- or "
                         "4-dimensional (batch, sequence, heads, head_dim)")
    n_heads, kv_heads = q.shape[2], k.shape[2]
    if n_heads % kv_heads:
        raise ValueError(f"dot_product_attention: {n_heads} query heads are not a multiple "
                         f"of {kv_heads} key/value heads")
    if kv_heads != n_heads:
        k = jnp.repeat(k, n_heads // kv_heads, axis=2)
        v = jnp.repeat(v, n_heads // kv_heads, axis=2)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = jnp.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + (jnp.asarray(bias)[None] if unbatched and jnp.ndim(bias) == 3
                           else jnp.asarray(bias))
    t_len, s_len = q.shape[1], k.shape[1]
    keep = jnp.ones((1, 1, t_len, s_len), bool)
    if mask is not None:
        m = jnp.asarray(mask)
        keep = keep & (m[None] if unbatched and m.ndim == 3 else m)
    if is_causal:
        keep = keep & (jnp.arange(t_len)[:, None] >= jnp.arange(s_len)[None, :])
    if query_seq_lengths is not None:
        keep = keep & (jnp.arange(t_len)[None, None, :, None]
                       < jnp.asarray(query_seq_lengths)[:, None, None, None])
    if key_value_seq_lengths is not None:
        keep = keep & (jnp.arange(s_len)[None, None, None, :]
                       < jnp.asarray(key_value_seq_lengths)[:, None, None, None])
    big_negative = float(np.finfo(np.dtype(logits.dtype)).min) * 0.7
    weights = softmax(jnp.where(keep, logits, big_negative), axis=-1)
    out = jnp.einsum("bnts,bsnh->btnh", weights, v)
    return out[0] if unbatched else out


__all__ += ["identity", "tanh", "mish", "squareplus", "sparse_plus", "sparse_sigmoid",
            "log1mexp", "logmeanexp", "dot_product_attention"]

from redraft.nn.scaled import (BlockScaleConfig, get_scaled_dot_general_config,  # noqa: E402
                               scaled_matmul)

__all__ += ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_matmul"]

from redraft.nn import initializers  # noqa: E402,F401 - jax.nn.initializers, as in JAX
