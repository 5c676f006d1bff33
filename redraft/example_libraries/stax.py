"""Neural network layers as (init_fun, apply_fun) pairs, with the interface of
jax.example_libraries.stax:

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs

Layers combine with `serial` and `parallel`. apply_fun takes one keyword argument, `rng`
(a key, for Dropout), not JAX's open **kwargs: transformed functions cannot have **kwargs
parameters yet. everything is written with redraft.numpy,
redraft.lax and redraft.random, so grad, vmap and jit transform a network like user code.
Pooling windows are a maximum or sum over strided slices of the padded input, one slice per
window offset.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

import redraft.numpy as jnp
from redraft import lax, random
from redraft.abstract import ShapeDtypeStruct, eval_shape
from redraft.compiler.primitives.conv import padtype_to_pads
from redraft.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid,  # noqa: F401
                        softmax, softplus, standardize)
from redraft.nn.initializers import glorot_normal, normal, ones, zeros  # noqa: F401

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _output_shape(fun, *shapes) -> tuple:
    """The shape of fun's result for float32 arguments of these shapes (no arithmetic)."""
    structs = [ShapeDtypeStruct(s, np.float32) for s in shapes]
    return eval_shape(fun, *structs).shape


# ---- dense and convolutional layers ----------------------------------------------------------

def Dense(out_dim: int, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b over the last axis."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec: str, lhs_spec: str, input_shape, out_chan: int,
                  filter_shape) -> tuple:
    spatial = iter(filter_shape)
    return tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                 else next(spatial) for c in rhs_spec)


def GeneralConv(dimension_numbers, out_chan: int, filter_shape, strides=None,
                padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A convolution with the given (lhs, rhs, out) layout strings, e.g. ('NHWC', 'HWIO',
    'NHWC'), a bias per output channel."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def conv(inputs, W):
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = _output_shape(conv, input_shape, kernel_shape)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return conv(inputs, W) + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan: int, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution (the gradient of a convolution) with the given layouts."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def conv(inputs, W):
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = _output_shape(conv, input_shape, kernel_shape)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return conv(inputs, W) + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
              beta_init=zeros, gamma_init=ones):
    """Normalise over `axis` with the batch's statistics, then scale and shift per feature."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, rng=None):
        beta, gamma = params
        kept = tuple(d for i, d in enumerate(x.shape) if i not in axis)
        bcast = tuple(1 if i in axis else d for i, d in enumerate(x.shape))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = jnp.reshape(gamma, bcast) * z if kept else gamma * z
        if center:
            z = z + (jnp.reshape(beta, bcast) if kept else beta)
        return z

    return init_fun, apply_fun


# ---- pointwise layers ------------------------------------------------------------------------

def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    bound = functools.partial(fun, **fun_kwargs) if fun_kwargs else fun

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        return bound(inputs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)


def _log_softmax_last(x):
    return log_softmax(x, axis=-1)


def _softmax_last(x):
    return softmax(x, axis=-1)


# elementwise(log_softmax, axis=-1) in JAX; a named function here, because a transform cannot
# read through functools.partial yet.
LogSoftmax = elementwise(_log_softmax_last)
Softmax = elementwise(_softmax_last)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---- pooling ---------------------------------------------------------------------------------

def _window_reduce(x, init_val: float, kind: str, window: tuple, strides: tuple,
                   pads: tuple):
    """Reduce every window of `x` (padded with init_val) to its maximum or its sum."""
    padded = lax.pad(x, jnp.array(init_val, x.dtype), [(lo, hi, 0) for lo, hi in pads])
    out_shape = tuple((n - w) // s + 1 for n, w, s in zip(padded.shape, window, strides))
    out = None
    for offset in itertools.product(*[range(w) for w in window]):
        limit = tuple(o + (m - 1) * s + 1 for o, m, s in zip(offset, out_shape, strides))
        part = lax.slice(padded, offset, limit, strides)
        if out is None:
            out = part
        elif kind == "max":
            out = jnp.maximum(out, part)
        else:
            out = out + part
    return out


def _full_window(window_shape, strides, spec, ndim_spatial: int):
    """Window and strides over every axis: 1 on the batch and channel axes."""
    if spec is None:
        non_spatial = (0, ndim_spatial + 1)
    else:
        non_spatial = (spec.index("N"), spec.index("C"))
    window, strides = tuple(window_shape), tuple(strides)
    for i in sorted(non_spatial):
        window = window[:i] + (1,) + window[i:]
        strides = strides[:i] + (1,) + strides[i:]
    return window, strides, non_spatial


def _pooling_layer(kind: str, init_val: float, average: bool = False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """Pooling over spatial windows; inputs are NHWC unless `spec` names the layout."""
        strides_ = tuple(strides) if strides else (1,) * len(window_shape)
        window, all_strides, non_spatial = _full_window(window_shape, strides_, spec,
                                                        len(window_shape))

        def pooled(inputs):
            pads = padtype_to_pads(inputs.shape, window, all_strides, padding)
            return _window_reduce(inputs, init_val, kind, window, all_strides, pads)

        def init_fun(rng, input_shape):
            return _output_shape(pooled, input_shape), ()

        def apply_fun(params, inputs, rng=None):
            out = pooled(inputs)
            if not average:
                return out
            spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
            counts = _window_reduce(jnp.ones(spatial, inputs.dtype), 0.0, "sum",
                                    tuple(window_shape), strides_,
                                    padtype_to_pads(spatial, window_shape, strides_, padding))
            for i in sorted(non_spatial):
                counts = jnp.expand_dims(counts, i)
            return out / counts

        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer("max", -math.inf)
SumPool = _pooling_layer("sum", 0.0)
AvgPool = _pooling_layer("sum", 0.0, average=True)


# ---- shape and plumbing layers ---------------------------------------------------------------

def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, rng=None):
    return jnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)


def _identity_init(rng, input_shape):
    return input_shape, ()


def _identity_apply(params, inputs, rng=None):
    return inputs


Identity = (_identity_init, _identity_apply)


def FanOut(num: int):
    """Copy the input into `num` outputs (feed it to a parallel combinator)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, rng=None):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_init(rng, input_shape):
    return input_shape[0], ()


def _fan_in_sum_apply(params, inputs, rng=None):
    out = inputs[0]
    for x in inputs[1:]:
        out = out + x
    return out


FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)


def FanInConcat(axis: int = -1):
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, rng=None):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train"):
    """Dropout, keeping each input with probability `rate` (JAX's stax convention) and
    scaling the kept ones by 1/rate; apply_fun needs `rng=` in 'train' mode."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        if mode != "train":
            return inputs
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a "
                             "PRNG key (e.g. from `redraft.random.key`).")
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# ---- combinators -----------------------------------------------------------------------------

def _serial_apply(apply_funs: tuple, k: int = 0):
    """apply_fun of layers k.. of a serial stack: a chain of closures, each calling one known
    layer then the rest, so that every call a transform sees is of a fixed function."""
    if k == len(apply_funs):
        def done(params, inputs, rngs):
            return inputs
        return done
    fun = apply_funs[k]
    rest = _serial_apply(apply_funs, k + 1)

    def step(params, inputs, rngs):
        if rngs is None:
            out = fun(params[k], inputs, rng=None)
        else:
            out = fun(params[k], inputs, rng=rngs[k])
        return rest(params, out, rngs)
    return step


def serial(*layers):
    """Layers applied one after another; params is the list of the layers' params."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    chain = _serial_apply(tuple(layer[1] for layer in layers))

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, rng=None):
        if rng is None:
            return chain(params, inputs, None)
        return chain(params, inputs, random.split(rng, nlayers))

    return init_fun, apply_fun


def _parallel_apply(apply_funs: tuple, k: int = 0):
    """apply_fun of layers k.. of a parallel combinator: their outputs as nested pairs
    (out_k, (out_k+1, (... ()))), made by a chain of closures (as in _serial_apply)."""
    if k == len(apply_funs):
        def done(params, inputs, rngs):
            return ()
        return done
    fun = apply_funs[k]
    rest = _parallel_apply(apply_funs, k + 1)

    def step(params, inputs, rngs):
        if rngs is None:
            out = fun(params[k], inputs[k], rng=None)
        else:
            out = fun(params[k], inputs[k], rng=rngs[k])
        return out, rest(params, inputs, rngs)
    return step


def parallel(*layers):
    """Layers applied side by side to a list of inputs (one each), giving a list."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    chain = _parallel_apply(tuple(layer[1] for layer in layers))

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        pairs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def apply_fun(params, inputs, rng=None):
        if rng is None:
            nested = chain(params, inputs, None)
        else:
            nested = chain(params, inputs, random.split(rng, nlayers))
        return [_nth_of_pairs(nested, k) for k in range(nlayers)]

    return init_fun, apply_fun


def _nth_of_pairs(nested, k: int):
    """Element k of nested pairs (a, (b, (c, ...)))."""
    for _ in range(k):
        nested = nested[1]
    return nested[0]


def shape_dependent(make_layer):
    """A layer built by `make_layer(input_shape)` once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, rng=None):
        return make_layer(inputs.shape)[1](params, inputs, rng=rng)

    return init_fun, apply_fun
