"""Derivative rules of shape operations, products, indexing and array construction."""
import operator

import redraft.numpy as jnp
from redraft.numpy import indexing as ix
from redraft.compiler.core import helpers
from redraft.runtime.convert import as_array
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.primitives.registry import (alias, defjvp, defjvp_joint, defnondiff,
                                                  defrearranging, defstatic, defvjp)

# ---- shape -------------------------------------------------------------------------------------

# a reshape in either order is a permutation of the elements, undone by reshaping back in
# the same order
defjvp(jnp.reshape, lambda a_dot, ans, a, shape=None, order="C", newshape=None:
       jnp.reshape(a_dot, jnp.shape(ans), order))
defvjp(jnp.reshape, lambda g, ans, a, shape=None, order="C", newshape=None:
       jnp.reshape(g, jnp.shape(a), order))
defjvp(jnp.ravel, lambda a_dot, ans, a, order="C": jnp.ravel(a_dot, order))
defvjp(jnp.ravel, lambda g, ans, a, order="C": jnp.reshape(g, jnp.shape(a), order))
defjvp(jnp.transpose, lambda a_dot, ans, a, axes=None: jnp.transpose(a_dot, axes))
defvjp(jnp.transpose, lambda g, ans, a, axes=None: ad.untranspose(g, axes))
defjvp(jnp.swapaxes, lambda a_dot, ans, a, axis1, axis2: jnp.swapaxes(a_dot, axis1, axis2))
defvjp(jnp.swapaxes, lambda g, ans, a, axis1, axis2: jnp.swapaxes(g, axis1, axis2))
defjvp(jnp.moveaxis, lambda a_dot, ans, a, source, destination:
       jnp.moveaxis(a_dot, source, destination))
defvjp(jnp.moveaxis, lambda g, ans, a, source, destination:
       jnp.moveaxis(g, destination, source))
defjvp(jnp.expand_dims, lambda a_dot, ans, a, axis: jnp.expand_dims(a_dot, axis))
defvjp(jnp.expand_dims, lambda g, ans, a, axis: jnp.reshape(g, jnp.shape(a)))
defjvp(jnp.squeeze, lambda a_dot, ans, a, axis=None: jnp.squeeze(a_dot, axis))
defvjp(jnp.squeeze, lambda g, ans, a, axis=None: jnp.reshape(g, jnp.shape(a)))
defjvp(jnp.broadcast_to, lambda array_dot, ans, array, shape: jnp.broadcast_to(array_dot, shape))
defvjp(jnp.broadcast_to, lambda g, ans, array, shape: ad.unbroadcast(g, array))
defjvp(jnp.stack, lambda arrays_dot, ans, arrays, axis=0, dtype=None:
       jnp.stack(arrays_dot, axis))
defvjp(jnp.stack, lambda g, ans, arrays, axis=0, dtype=None: ad.unstack(g, axis))
defjvp(jnp.concatenate, lambda arrays_dot, ans, arrays, axis=0, dtype=None:
       jnp.concatenate(arrays_dot, axis))
defvjp(jnp.concatenate, lambda g, ans, arrays, axis=0, dtype=None:
       ad.split_like(g, arrays, axis))

# ---- products ------------------------------------------------------------------------------------

defjvp(jnp.dot,
       lambda a_dot, ans, a, b: jnp.dot(a_dot, b),
       lambda b_dot, ans, a, b: jnp.dot(a, b_dot))
defvjp(jnp.dot,
       lambda g, ans, a, b: ad.dot_lhs_bar(g, a, b),
       lambda g, ans, a, b: ad.dot_rhs_bar(g, a, b))
defjvp(jnp.matmul,
       lambda a_dot, ans, a, b: jnp.matmul(a_dot, b),
       lambda b_dot, ans, a, b: jnp.matmul(a, b_dot))
defvjp(jnp.matmul,
       lambda g, ans, a, b: ad.matmul_lhs_bar(g, a, b),
       lambda g, ans, a, b: ad.matmul_rhs_bar(g, a, b))
alias(operator.matmul, jnp.matmul)
defjvp(jnp.vdot,
       lambda a_dot, ans, a, b: jnp.vdot(a_dot, b),
       lambda b_dot, ans, a, b: jnp.vdot(a, b_dot))
defvjp(jnp.vdot,
       lambda g, ans, a, b: jnp.reshape(g * jnp.conj(b), jnp.shape(a)),
       lambda g, ans, a, b: jnp.reshape(g * jnp.conj(a), jnp.shape(b)))

# ---- indexing ------------------------------------------------------------------------------------

defjvp(operator.getitem, lambda a_dot, ans, a, b: a_dot[b])
defvjp(operator.getitem, lambda g, ans, a, b: ad.index_add(a, b, g))
defjvp(helpers.at_set, lambda x_dot, ans, x, idx, v: x_dot.at[idx].set(0.0),
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].set(v_dot),
       argnames=("x", "v"))
defjvp_joint(helpers.at_set, lambda x_dot, v_dot, ans, x, idx, v: x_dot.at[idx].set(v_dot),
             ("x", "v"))
defvjp(helpers.at_set, lambda g, ans, x, idx, v: g.at[idx].set(0.0),
       lambda g, ans, x, idx, v: ad.unbroadcast(
           ad.updated_part(g, idx) * ad.set_survivors(x, idx, v), v), argnames=("x", "v"))
defjvp(helpers.at_add, lambda x_dot, ans, x, idx, v: x_dot,
       lambda v_dot, ans, x, idx, v: jnp.zeros_like(ans).at[idx].add(v_dot),
       argnames=("x", "v"))
defjvp_joint(helpers.at_add, lambda x_dot, v_dot, ans, x, idx, v: x_dot.at[idx].add(v_dot),
             ("x", "v"))
defvjp(helpers.at_add, lambda g, ans, x, idx, v: g,
       lambda g, ans, x, idx, v: ad.unbroadcast(ad.updated_part(g, idx), v),
       argnames=("x", "v"))
defjvp(helpers.at_get, lambda x_dot, ans, x, idx: ix.at_get_mode(x_dot, idx))
defvjp(helpers.at_get, lambda g, ans, x, idx: ix.at_add_mode(jnp.zeros_like(x), idx, g, "clip"))
defstatic(operator.getitem, "b")  # an index: ints, slices, masks, never differentiated
for _at in helpers.AT_UPDATES.values():
    defstatic(_at, "idx")
defjvp(jnp.take, lambda a_dot, ans, a, indices, axis=None, mode=None, fill_value=None:
       jnp.take(a_dot, indices, axis=axis, mode=mode, fill_value=0))  # a filled read: 0
defvjp(jnp.take, lambda g, ans, a, indices, axis=None, mode=None, fill_value=None:
       ad.take_bar(g, a, indices, axis, mode))
defstatic(jnp.take, "indices")

# ---- construction and conversion -----------------------------------------------------------------

defjvp(jnp.array, lambda object_dot, ans, object, dtype=None, copy=True, ndmin=0:
       jnp.array(object_dot, dtype=jnp.result_type(ans)))
defvjp(jnp.array, lambda g, ans, object, dtype=None, copy=True, ndmin=0: ad.unarray(g, object))
defjvp(jnp.asarray, lambda a_dot, ans, a, dtype=None, order=None, copy=None:
       jnp.asarray(a_dot, dtype=jnp.result_type(ans)))
defvjp(jnp.asarray, lambda g, ans, a, dtype=None, order=None, copy=None: ad.unarray(g, a))
# as_array: how library functions take their operands (their source is differentiated
# where they have no rule of their own, e.g. jnp.diag)
defjvp(as_array, lambda value_dot, ans, value: as_array(value_dot))
defvjp(as_array, lambda g, ans, value: ad.unarray(g, value))
defjvp(helpers.astype, lambda x_dot, ans, x, dtype: ad.tangent_astype(x_dot, dtype))
defvjp(helpers.astype, lambda g, ans, x, dtype: ad.cotangent_astype(g, x, dtype))
defjvp(jnp.real, lambda x_dot, ans, x: jnp.real(x_dot))
defvjp(jnp.real, lambda g, ans, x: g)
defjvp(jnp.conj, lambda x_dot, ans, x: jnp.conj(x_dot))
defvjp(jnp.conj, lambda g, ans, x: jnp.conj(g))

for _op in (jnp.shape, jnp.ndim, jnp.size, len, range, int, bool, jnp.zeros_like,
            jnp.ones_like, jnp.zeros, jnp.ones, jnp.eye, jnp.arange, jnp.linspace,
            jnp.empty, jnp.empty_like, jnp.result_type, isinstance, type, print):
    defnondiff(_op, "its value does not depend on its arguments' values")

defrearranging(jnp.reshape, jnp.ravel, jnp.transpose, jnp.expand_dims, jnp.squeeze,
               jnp.swapaxes, jnp.moveaxis, jnp.broadcast_to, jnp.sum, operator.getitem)

# full: every element is the fill value (a scalar, or an array repeated along new axes)
defjvp(jnp.full, lambda fill_value_dot, ans, shape, fill_value, dtype=None:
       ad.broadcast_like(fill_value_dot, ans), argnames=("fill_value",))
defvjp(jnp.full, lambda g, ans, shape, fill_value, dtype=None: ad.unbroadcast(g, fill_value),
       argnames=("fill_value",))
defstatic(jnp.full, "shape", "dtype")
defjvp(jnp.full_like, lambda fill_value_dot, ans, a, fill_value, dtype=None, shape=None:
       ad.broadcast_like(fill_value_dot, ans), argnames=("fill_value",))
defvjp(jnp.full_like, lambda g, ans, a, fill_value, dtype=None, shape=None:
       ad.unbroadcast(g, fill_value), argnames=("fill_value",))
defstatic(jnp.full_like, "a", "dtype", "shape")

# Indices are never differentiable (a loop index restored from a tape may look active).
defnondiff(slice, "a slice holds indices, which carry no derivative")
defstatic(operator.getitem, "b")
for _op in (helpers.at_set, helpers.at_add, helpers.at_get):
    defstatic(_op, "idx")
defstatic(jnp.take, "indices")

# casts inside redraft.numpy (promotion.py): the tangent is cast along when inexact
from redraft.numpy import promotion as _promotion  # noqa: E402

defjvp(_promotion.cast, lambda x_dot, ans, x, dtype: ad.tangent_astype(x_dot, dtype))
defvjp(_promotion.cast, lambda g, ans, x, dtype: ad.cotangent_astype(g, x, dtype))
defjvp(_promotion.convert, lambda a_dot, ans, a, dtype, weak: ad.tangent_astype(a_dot, dtype))
defvjp(_promotion.convert, lambda g, ans, a, dtype, weak: ad.cotangent_astype(g, a, dtype))
defjvp(jnp.astype, lambda x_dot, ans, x, dtype, copy=False: ad.tangent_astype(x_dot, dtype))
defvjp(jnp.astype, lambda g, ans, x, dtype, copy=False: ad.cotangent_astype(g, x, dtype))
