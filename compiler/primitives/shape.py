"""Shape primitives: reshape, broadcast, transpose, squeeze, concatenate, pad, rev, slices, iota.

Every parameter is static (tuples of ints), except the start indices of dynamic_slice and
dynamic_update_slice, which are scalar integer operands (they may depend on data). As a
family file it also declares the lax functions' jvp and vjp rules and their batching
(compiler/primitives/registry.py); the batching rules that are code over a call (reshape,
broadcast_in_dim, transpose, concatenate, pad, slice) are in batch/rules/shapes.py.
"""
from __future__ import annotations

import builtins

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis, check_same_dtypes
from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.registry import (AxisBatching, ad, defbatch, defbatch_loop,
                                                  defjvp, defjvp_joint, defnondiff,
                                                  defstatic, defvjp, jnp, lad, lax,
                                                  names_convenience, names_primitive)

FAMILY = "shape"


def _declare(name: str, impl, abstract_eval, weak_rule: WeakRule = WeakRule.ALL) -> Primitive:
    prim = Primitive(name, FAMILY, weak_rule)
    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    return prim


def _checked(prim: Primitive, *operands: Array, **params) -> Array:
    abstract_eval_rules[prim](*(ShapedArray(o.shape, o.dtype, o._weak) for o in operands),
                              **params)
    return bind(prim, *operands, **params)


# ---- reshape -----------------------------------------------------------------------------------

def _reshape_abstract(x: ShapedArray, *, new_sizes: tuple[int, ...]) -> ShapedArray:
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise TypeError(f"cannot reshape an array of shape {x.shape} (size {x.size}) "
                        f"into shape {new_sizes}")
    return ShapedArray(tuple(new_sizes), x.dtype, x.weak_type)


reshape_p = _declare("reshape", lambda x, *, new_sizes: x.reshape(new_sizes), _reshape_abstract)


def reshape(operand, new_sizes, dimensions=None) -> Array:
    x = as_array(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = tuple(int(d) for d in np.atleast_1d(new_sizes)) if np.ndim(new_sizes) else (
        (int(new_sizes),))
    return _checked(reshape_p, x, new_sizes=new_sizes)


# ---- broadcast_in_dim ----------------------------------------------------------------------------

def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_abstract(x: ShapedArray, *, shape, broadcast_dimensions) -> ShapedArray:
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: operand of rank {x.ndim} needs {x.ndim} "
                        f"broadcast_dimensions, got {broadcast_dimensions}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                        "must be strictly increasing")
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or x.shape[src] not in (1, shape[dst]):
            raise TypeError(f"broadcast_in_dim: cannot broadcast shape {x.shape} to {shape} "
                            f"along dimensions {broadcast_dimensions}")
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


broadcast_in_dim_p = _declare("broadcast_in_dim", _broadcast_in_dim_impl,
                              _broadcast_in_dim_abstract)


def broadcast_in_dim(operand, shape, broadcast_dimensions) -> Array:
    x = as_array(operand)
    return _checked(broadcast_in_dim_p, x, shape=tuple(int(d) for d in shape),
                    broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def broadcast(operand, sizes) -> Array:
    """Add leading dimensions `sizes` to `operand`."""
    x = as_array(operand)
    sizes = tuple(int(d) for d in sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_to_rank(x: Array, shape: tuple[int, ...]) -> Array:
    """NumPy-style broadcast of `x` to `shape` (trailing alignment)."""
    x = as_array(x)
    if x.shape == tuple(shape):
        return x
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"cannot broadcast shape {x.shape} to the smaller rank of {shape}")
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


# ---- transpose, squeeze, expand_dims, rev ---------------------------------------------------

def _transpose_abstract(x: ShapedArray, *, permutation) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose permutation {permutation} is not a permutation of the "
                         f"{x.ndim} axes of shape {x.shape}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = _declare("transpose", lambda x, *, permutation: np.transpose(x, permutation),
                       _transpose_abstract)


def transpose(operand, permutation) -> Array:
    x = as_array(operand)
    permutation = tuple(int(p) for p in permutation)
    return _checked(transpose_p, x, permutation=permutation)


def _squeeze_abstract(x: ShapedArray, *, dimensions) -> ShapedArray:
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"cannot squeeze axis {d} of size {x.shape[d]} (shape {x.shape})")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                       x.dtype, x.weak_type)


squeeze_p = _declare("squeeze", lambda x, *, dimensions: x.reshape(
    [s for i, s in enumerate(x.shape) if i not in dimensions]), _squeeze_abstract)


def squeeze(array, dimensions) -> Array:
    x = as_array(array)
    return _checked(squeeze_p, x, dimensions=canonical_axes(dimensions, x.ndim, "lax.squeeze"))


def expand_dims(array, dimensions) -> Array:
    """Insert size-1 axes at `dimensions` (positions in the result)."""
    x = as_array(array)
    out_ndim = x.ndim + len(dimensions)
    dims = canonical_axes(dimensions, out_ndim, "lax.expand_dims")
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


rev_p = _declare("rev", lambda x, *, dimensions: np.flip(x, dimensions) if dimensions else x,
                 lambda x, *, dimensions: x)


def rev(operand, dimensions) -> Array:
    x = as_array(operand)
    return bind(rev_p, x, dimensions=canonical_axes(dimensions, x.ndim, "lax.rev"))


# ---- concatenate, pad ---------------------------------------------------------------------

def _concatenate_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    check_same_dtypes([x.dtype for x in xs], "concatenate")
    first = xs[0]
    for x in xs[1:]:
        if x.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape))
                                       if i != dimension):
            raise TypeError(f"concatenate: shapes {[x.shape for x in xs]} differ outside "
                            f"dimension {dimension}")
    size = sum(x.shape[dimension] for x in xs)
    shape = first.shape[:dimension] + (size,) + first.shape[dimension + 1:]
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


concatenate_p = _declare("concatenate", lambda *xs, dimension: np.concatenate(xs, dimension),
                         _concatenate_abstract)


def concatenate(operands, dimension: int) -> Array:
    xs = [as_array(o) for o in operands]
    if not xs:
        raise ValueError("concatenate needs at least one array")
    dimension = canonical_axis(dimension, xs[0].ndim, "lax.concatenate")
    return _checked(concatenate_p, *xs, dimension=dimension)


def _pad_impl(x, padding_value, *, padding_config):
    lo_hi_interior = list(padding_config)
    out = x
    if any(i for _, _, i in lo_hi_interior):  # interior padding: scatter into a strided view
        shape = [d + max(d - 1, 0) * i for d, (_, _, i) in zip(x.shape, lo_hi_interior)]
        spread = np.full(shape, padding_value, x.dtype)
        spread[tuple(builtins.slice(None, None, i + 1) for _, _, i in lo_hi_interior)] = x
        out = spread
    for axis, (lo, hi, _) in enumerate(lo_hi_interior):
        out = _pad_axis(out, axis, lo, hi, padding_value)
    return out


def _pad_axis(x, axis, lo, hi, value):
    if lo < 0:
        x = np.take(x, range(-lo, x.shape[axis]), axis=axis)
        lo = 0
    if hi < 0:
        x = np.take(x, range(0, x.shape[axis] + hi), axis=axis)
        hi = 0
    if lo or hi:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (lo, hi)
        x = np.pad(x, widths, constant_values=np.asarray(value).item())
    return x


def _pad_abstract(x: ShapedArray, v: ShapedArray, *, padding_config) -> ShapedArray:
    check_same_dtypes([x.dtype, v.dtype], "pad")
    if v.ndim != 0:
        raise TypeError(f"pad: padding_value must be a scalar, got shape {v.shape}")
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad: padding_config has {len(padding_config)} entries for an "
                         f"operand of rank {x.ndim}")
    shape = tuple(lo + hi + d + max(d - 1, 0) * i
                  for d, (lo, hi, i) in zip(x.shape, padding_config))
    if any(s < 0 for s in shape):
        raise ValueError(f"pad: negative padding {padding_config} removes more than shape "
                         f"{x.shape} has")
    return ShapedArray(shape, x.dtype, x.weak_type)


pad_p = _declare("pad", _pad_impl, _pad_abstract)
pad_p.weak_operands = (0,)


def pad(operand, padding_value, padding_config) -> Array:
    x, v = strict_operands("pad", (operand, padding_value))
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return _checked(pad_p, x, v, padding_config=config)


# ---- static and dynamic slices -------------------------------------------------------------------

def _slice_abstract(x: ShapedArray, *, start_indices, limit_indices, strides) -> ShapedArray:
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice: need {x.ndim} start/limit/stride entries for shape {x.shape}")
    for d, lo, hi, st in zip(x.shape, start_indices, limit_indices, strides):
        if not 0 <= lo <= hi <= d or st < 1:
            raise IndexError(f"slice: [{start_indices}:{limit_indices}:{strides}] is out of "
                             f"bounds for shape {x.shape}")
    shape = tuple(max(0, -(-(hi - lo) // st))
                  for lo, hi, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, x.weak_type)


slice_p = _declare("slice", lambda x, *, start_indices, limit_indices, strides: x[tuple(
    builtins.slice(lo, hi, st) for lo, hi, st in zip(start_indices, limit_indices, strides))],
    _slice_abstract)


def slice(operand, start_indices, limit_indices, strides=None) -> Array:  # noqa: A001
    x = as_array(operand)
    strides = tuple(strides) if strides is not None else (1,) * x.ndim
    return _checked(slice_p, x, start_indices=tuple(int(i) for i in start_indices),
                    limit_indices=tuple(int(i) for i in limit_indices),
                    strides=tuple(int(s) for s in strides))


def _clamped_starts(shape, sizes, starts) -> tuple[int, ...]:
    """JAX clamps dynamic starts so the window stays inside the array."""
    return tuple(int(min(max(int(s), 0), d - z)) for d, z, s in zip(shape, sizes, starts))


def _dynamic_slice_impl(x, *starts, slice_sizes):
    lo = _clamped_starts(x.shape, slice_sizes, starts)
    return x[tuple(np.s_[a:a + z] for a, z in zip(lo, slice_sizes))]


def _dynamic_slice_abstract(x: ShapedArray, *starts: ShapedArray, slice_sizes) -> ShapedArray:
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice: need {x.ndim} start indices and slice sizes for "
                        f"shape {x.shape}")
    for s in starts:
        if s.ndim != 0 or s.dtype.kind not in "iu":
            raise TypeError("dynamic_slice: start indices must be integer scalars")
    if any(not 0 <= z <= d for z, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice sizes {slice_sizes} do not fit shape {x.shape}")
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


dynamic_slice_p = _declare("dynamic_slice", _dynamic_slice_impl, _dynamic_slice_abstract)
dynamic_slice_p.weak_operands = (0,)


def _start_operands(start_indices, shape=None) -> list[Array]:
    """The start indices as operands; with the operand's shape, a negative start counts from
    the end of its axis (JAX's allow_negative_indices), before the primitive clamps."""
    out = []
    for k, s in enumerate(start_indices):
        size = None if shape is None else shape[k]
        if isinstance(s, (int, np.integer)):
            out.append(wrap_host(np.asarray(s + size if size and s < 0 else s, np.int32)))
            continue
        s = as_array(s)
        if size and s.dtype.kind == "i":
            from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS as E, select
            s = select(E["lt"](s, as_array(np.asarray(0, s.dtype))),
                       E["add"](s, as_array(np.asarray(size, s.dtype))), s)
        out.append(s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *,
                  allow_negative_indices: bool = True) -> Array:
    x = as_array(operand)
    starts = _start_operands(start_indices, x.shape if allow_negative_indices else None)
    return _checked(dynamic_slice_p, x, *starts, slice_sizes=tuple(int(z) for z in slice_sizes))


def _dynamic_update_slice_impl(x, update, *starts):
    lo = _clamped_starts(x.shape, update.shape, starts)
    out = x.copy()
    out[tuple(np.s_[a:a + z] for a, z in zip(lo, update.shape))] = update
    return out


def _dynamic_update_slice_abstract(x: ShapedArray, update: ShapedArray, *starts) -> ShapedArray:
    check_same_dtypes([x.dtype, update.dtype], "dynamic_update_slice")
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update of shape {update.shape} does not fit "
                        f"operand of shape {x.shape}")
    return x


dynamic_update_slice_p = _declare("dynamic_update_slice", _dynamic_update_slice_impl,
                                  _dynamic_update_slice_abstract)
dynamic_update_slice_p.weak_operands = (0,)


def dynamic_update_slice(operand, update, start_indices, *,
                         allow_negative_indices: bool = True) -> Array:
    x, u = strict_operands("dynamic_update_slice", (operand, update))
    starts = _start_operands(start_indices, x.shape if allow_negative_indices else None)
    return _checked(dynamic_update_slice_p, x, u, *starts)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Array:
    x = as_array(operand)
    axis = canonical_axis(axis, x.ndim, "lax.dynamic_index_in_dim")
    starts = [0] * x.ndim
    starts[axis] = index
    sizes = list(x.shape)
    sizes[axis] = 1
    out = dynamic_slice(x, starts, sizes)
    return out if keepdims else squeeze(out, (axis,))


# ---- iota -------------------------------------------------------------------------------------

def _iota_impl(*, dtype, shape, dimension):
    line = np.arange(shape[dimension], dtype=dtype)
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(view), shape)


iota_p = _declare("iota", _iota_impl,
                  lambda *, dtype, shape, dimension: ShapedArray(tuple(shape), np.dtype(dtype)),
                  WeakRule.NEVER)


def iota(dtype, size: int) -> Array:
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension: int) -> Array:
    shape = tuple(int(d) for d in shape)
    dtype = dtypes.check_dtype_arg(dtype)
    dimension = canonical_axis(dimension, len(shape), "lax.broadcasted_iota")
    return bind(iota_p, dtype=dtype, shape=shape, dimension=dimension)


for _fn, _p in ((reshape, reshape_p), (broadcast_in_dim, broadcast_in_dim_p),
                (transpose, transpose_p), (squeeze, squeeze_p), (rev, rev_p),
                (concatenate, concatenate_p), (pad, pad_p), (slice, slice_p),
                (dynamic_slice, dynamic_slice_p), (dynamic_update_slice, dynamic_update_slice_p),
                (broadcasted_iota, iota_p)):
    names_primitive(_fn, _p)
for _fn, _p in ((expand_dims, reshape_p), (broadcast, broadcast_in_dim_p),
                (dynamic_index_in_dim, dynamic_slice_p), (iota, iota_p)):
    names_convenience(_fn, _p)

# ---- derivatives: each is linear in its array operands; its transpose moves the cotangent
# back (sums it over broadcast axes, pads it around a slice) ---------------------------------

defjvp(reshape_p, lambda operand_dot, ans, operand, new_sizes, dimensions=None:
       jnp.reshape(operand_dot, jnp.shape(ans)))
defvjp(reshape_p, lambda g, ans, operand, new_sizes, dimensions=None:
       jnp.reshape(g, jnp.shape(operand)))
defstatic(reshape_p, "new_sizes", "dimensions")
defjvp(expand_dims, lambda array_dot, ans, array, dimensions:
       lax.expand_dims(array_dot, dimensions))
defvjp(expand_dims, lambda g, ans, array, dimensions: lax.reshape(g, jnp.shape(array)))
defstatic(expand_dims, "dimensions")
defjvp(broadcast_in_dim_p, lambda operand_dot, ans, operand, shape, broadcast_dimensions:
       lax.broadcast_in_dim(operand_dot, shape, broadcast_dimensions))
defvjp(broadcast_in_dim_p, lambda g, ans, operand, shape, broadcast_dimensions: lax.reshape(
    lax.reduce_sum(g, lad.broadcast_in_dim_sum_axes(operand, shape, broadcast_dimensions)),
    jnp.shape(operand)))
defstatic(broadcast_in_dim_p, "shape", "broadcast_dimensions")
defjvp(broadcast, lambda operand_dot, ans, operand, sizes: lax.broadcast(operand_dot, sizes))
defvjp(broadcast, lambda g, ans, operand, sizes: ad.unbroadcast(g, operand))
defstatic(broadcast, "sizes")
defjvp(transpose_p, lambda operand_dot, ans, operand, permutation:
       lax.transpose(operand_dot, permutation))
defvjp(transpose_p, lambda g, ans, operand, permutation:
       lax.transpose(g, lad.inverse_permutation(permutation)))
defstatic(transpose_p, "permutation")
defjvp(squeeze_p, lambda array_dot, ans, array, dimensions: lax.squeeze(array_dot, dimensions))
defvjp(squeeze_p, lambda g, ans, array, dimensions: lax.reshape(g, jnp.shape(array)))
defstatic(squeeze_p, "dimensions")
defjvp(rev_p, lambda operand_dot, ans, operand, dimensions: lax.rev(operand_dot, dimensions))
defvjp(rev_p, lambda g, ans, operand, dimensions: lax.rev(g, dimensions))
defstatic(rev_p, "dimensions")
defjvp(concatenate_p, lambda operands_dot, ans, operands, dimension:
       lax.concatenate(operands_dot, dimension))
defvjp(concatenate_p, lambda g, ans, operands, dimension: ad.split_like(g, operands, dimension))
defstatic(concatenate_p, "dimension")

defjvp(pad_p,
       lambda operand_dot, ans, operand, padding_value, padding_config:
       lax.pad(operand_dot, 0.0, padding_config),
       lambda padding_value_dot, ans, operand, padding_value, padding_config:
       lax.pad(jnp.zeros_like(operand), padding_value_dot, padding_config))
defjvp_joint(pad_p, lambda operand_dot, padding_value_dot, ans, operand, padding_value,
             padding_config: lax.pad(operand_dot, padding_value_dot, padding_config),
             ("operand", "padding_value"))
defvjp(pad_p,
       lambda g, ans, operand, padding_value, padding_config: lad.pad_bar(g, padding_config),
       lambda g, ans, operand, padding_value, padding_config:
       jnp.sum(g) - jnp.sum(lad.pad_bar(g, padding_config)))
defstatic(pad_p, "padding_config")

defjvp(slice_p, lambda operand_dot, ans, operand, start_indices, limit_indices, strides=None:
       lax.slice(operand_dot, start_indices, limit_indices, strides))
defvjp(slice_p, lambda g, ans, operand, start_indices, limit_indices, strides=None: lax.pad(
    g, 0.0, lad.slice_padding(operand, start_indices, limit_indices, strides, ans)))
# bounds are static: ones a library loop (lax.reduce_window) reads back from its reverse-mode
# tape are not tangents under a second derivative
defstatic(slice_p, "start_indices", "limit_indices", "strides")

defjvp(dynamic_slice_p, lambda operand_dot, ans, operand, start_indices, slice_sizes:
       lax.dynamic_slice(operand_dot, start_indices, slice_sizes))
defvjp(dynamic_slice_p, lambda g, ans, operand, start_indices, slice_sizes:
       lax.dynamic_update_slice(jnp.zeros_like(operand), g, start_indices))
defstatic(dynamic_slice_p, "start_indices", "slice_sizes")
defjvp(dynamic_update_slice_p,
       lambda operand_dot, ans, operand, update, start_indices:
       lax.dynamic_update_slice(operand_dot, jnp.zeros_like(update), start_indices),
       lambda update_dot, ans, operand, update, start_indices:
       lax.dynamic_update_slice(jnp.zeros_like(operand), update_dot, start_indices))
defjvp_joint(dynamic_update_slice_p, lambda operand_dot, update_dot, ans, operand, update,
             start_indices: lax.dynamic_update_slice(operand_dot, update_dot, start_indices),
             ("operand", "update"))
defvjp(dynamic_update_slice_p,
       lambda g, ans, operand, update, start_indices:
       lax.dynamic_update_slice(g, jnp.zeros_like(update), start_indices),
       lambda g, ans, operand, update, start_indices:
       lax.dynamic_slice(g, start_indices, jnp.shape(update)))
defstatic(dynamic_update_slice_p, "start_indices")
defjvp(dynamic_index_in_dim, lambda operand_dot, ans, operand, index, axis=0, keepdims=True:
       lax.dynamic_index_in_dim(operand_dot, index, axis, keepdims))
defvjp(dynamic_index_in_dim, lambda g, ans, operand, index, axis=0, keepdims=True:
       lad.dynamic_index_bar(g, operand, index, axis, keepdims))
defstatic(dynamic_index_in_dim, "index", "axis", "keepdims")

for _fn in (iota, broadcasted_iota):
    defnondiff(_fn, "integer-valued, and a function of static shapes only")

# ---- batching: an axis argument shifts past the batch axis; the rest are code over the call
# (batch/rules/shapes.py) or a loop -----------------------------------------------------------

defbatch(expand_dims, AxisBatching("dimensions", operand="array"))
defbatch(squeeze_p, AxisBatching("dimensions", operand="array"))
defbatch(rev_p, AxisBatching("dimensions"))
_NO_RULE_YET = "no vectorised rule yet: batched by a loop over the examples"
for _fn in (broadcast, dynamic_slice, dynamic_update_slice, dynamic_index_in_dim):
    defbatch_loop(_fn, _NO_RULE_YET)
for _fn in (iota, broadcasted_iota):
    defbatch_loop(_fn, "it takes static shapes: batched only where a shape is, by a loop")
