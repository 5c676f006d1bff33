"""Products and Jacobians per example, written in plain redraft.numpy and lax (an outer
vmap and the AD transforms read their source): `dot(mat, x, False, True)` is one product of
the batch, `lax.dot_general` gains batch dimensions, and a Jacobian is one batched jvp or
backward pass over the basis of a space."""
from __future__ import annotations

import math

import numpy as np
from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.transforms.runtime.vm.shapes import align, flat_examples
from redraft.runtime.array import Array
from redraft.runtime.pytree import tree_flatten, tree_unflatten

import redraft.numpy as jnp
from redraft import lax

# ---- products (transformed through their source) --------------------------------------------


def _cast_pair(a, b):
    dtype = jnp.result_type(a, b)
    if jnp.result_type(a) != dtype:
        a = core_helpers.astype(a, dtype)
    if jnp.result_type(b) != dtype:
        b = core_helpers.astype(b, dtype)
    return a, b


def dot(a, b, a_batched, b_batched):
    """Per-example jnp.dot(a, b); a flagged operand carries its batch axis at 0."""
    ra = jnp.ndim(a) - a_batched
    rb = jnp.ndim(b) - b_batched
    if ra == 0 or rb == 0:
        return _scale(a, b, a_batched, b_batched)
    if not b_batched:
        return jnp.dot(a, b)
    if not a_batched:
        if rb == 1:
            if ra == 1:
                return jnp.dot(b, a)
            return jnp.dot(b, jnp.swapaxes(a, -1, -2))
        a, b = _cast_pair(a, b)
        dims = (((jnp.ndim(a) - 1,), (jnp.ndim(b) - 2,)), ((), ()))
        return jnp.moveaxis(lax.dot_general(a, b, dims), ra - 1, 0)
    a, b = _cast_pair(a, b)
    contract_b = jnp.ndim(b) - 1 if rb == 1 else jnp.ndim(b) - 2
    dims = (((jnp.ndim(a) - 1,), (contract_b,)), ((0,), (0,)))
    return lax.dot_general(a, b, dims)


def _scale(a, b, a_batched, b_batched):
    if a_batched:
        a = align(a, b, b_batched)
    if b_batched:
        b = align(b, a, a_batched)
    return jnp.multiply(a, b)


def matmul(a, b, a_batched, b_batched):
    """Per-example jnp.matmul(a, b) (a @ b)."""
    ra = jnp.ndim(a) - a_batched
    rb = jnp.ndim(b) - b_batched
    if rb == 1:
        if b_batched:
            return dot(a, b, a_batched, b_batched)
        return jnp.matmul(a, b)
    if ra == 1:
        if a_batched and not b_batched:
            return jnp.matmul(a, b)
        a2 = jnp.expand_dims(a, jnp.ndim(a) - 1)
        out = matmul(a2, b, a_batched, b_batched)
        return jnp.squeeze(out, jnp.ndim(out) - 2)
    if a_batched:
        a = align(a, b, b_batched)
    if b_batched:
        b = align(b, a, a_batched)
    return jnp.matmul(a, b)


def vdot(a, b, a_batched, b_batched):
    """Per-example jnp.vdot(a, b): both flattened, a conjugated."""
    a2 = flat_examples(a, 1) if a_batched else jnp.ravel(a)
    b2 = flat_examples(b, 1) if b_batched else jnp.ravel(b)
    a2 = jnp.conj(a2)
    if a_batched and b_batched:
        return jnp.sum(jnp.multiply(a2, b2), axis=1)
    if a_batched:
        return jnp.dot(a2, b2)
    return jnp.dot(b2, a2)


def outer(a, b, a_batched, b_batched):
    """Per-example jnp.outer(a, b): both raveled, every pair multiplied."""
    a2 = flat_examples(a, 1) if a_batched else jnp.ravel(a)
    b2 = flat_examples(b, 1) if b_batched else jnp.ravel(b)
    a3 = jnp.expand_dims(a2, jnp.ndim(a2))
    b3 = jnp.expand_dims(b2, jnp.ndim(b2) - 1)
    return jnp.multiply(a3, b3)


def inner(a, b, a_batched, b_batched):
    """Per-example jnp.inner(a, b): contraction over both last axes."""
    if jnp.ndim(a) - a_batched == 0 or jnp.ndim(b) - b_batched == 0:
        return _scale(a, b, a_batched, b_batched)
    return dot(a, jnp.swapaxes(b, -1, -2) if jnp.ndim(b) - b_batched > 1 else b,
               a_batched, b_batched)


def dot_general(lhs, rhs, dimension_numbers, lhs_batched, rhs_batched):
    """Per-example lax.dot_general: the batch axis becomes a batch dimension (both operands
    batched) or a free one moved to the front (one operand batched)."""
    (lc, rc), (lb, rb) = dimension_numbers
    if not lhs_batched and not rhs_batched:
        return lax.dot_general(lhs, rhs, dimension_numbers)
    lc1, lb1 = _shifted(lc, lhs_batched), _shifted(lb, lhs_batched)
    rc1, rb1 = _shifted(rc, rhs_batched), _shifted(rb, rhs_batched)
    if lhs_batched and rhs_batched:
        return lax.dot_general(lhs, rhs, ((lc1, rc1), ((0,) + lb1, (0,) + rb1)))
    out = lax.dot_general(lhs, rhs, ((lc1, rc1), (lb1, rb1)))
    if lhs_batched:
        return jnp.moveaxis(out, len(lb), 0)
    lhs_free = jnp.ndim(lhs) - len(lc) - len(lb)
    return jnp.moveaxis(out, len(lb) + lhs_free, 0)


def _shifted(axes, batched) -> tuple:
    """Axis numbers moved past a batch axis in front (when `batched`)."""
    if not batched:
        return tuple(axes)
    return tuple(a + 1 for a in axes)


def dot_general_lhs_bar(g, lhs, rhs, dimension_numbers, swap_ans, g_batched, lhs_batched,
                        rhs_batched):
    """ad.dot_general_lhs_bar per example: the cotangent of dot_general's lhs."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = jnp.ndim(lhs) - lhs_batched
    y_ndim = jnp.ndim(rhs) - rhs_batched
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(y_ndim) if i not in y_contract and i not in y_batch]
    nb = len(x_batch)
    ans_batch = tuple(range(nb))
    if swap_ans:
        ans_y = tuple(range(nb, nb + len(y_kept)))
    else:
        ans_y = tuple(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
    order = np.argsort(y_contract)
    x_contract_by_y = [x_contract[int(i)] for i in order]
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_by_y)
    out = dot_general(g, rhs, dims, g_batched, rhs_batched)
    if g_batched or rhs_batched:
        perm = (0,) + tuple(int(a) + 1 for a in out_axes)
    else:
        perm = tuple(int(a) for a in out_axes)
    return lax.transpose(out, perm)


def dot_general_rhs_bar(g, lhs, rhs, dimension_numbers, g_batched, lhs_batched, rhs_batched):
    """ad.dot_general_rhs_bar per example."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return dot_general_lhs_bar(g, rhs, lhs, swapped, True, g_batched, rhs_batched,
                               lhs_batched)


# ---- Jacobians as one batched jvp or backward pass (compiler/transforms/ad/jacobian.py) ----------


def is_array(x) -> bool:
    """Whether `x` is one array (a Jacobian of it is batched), not a pytree."""
    return isinstance(x, Array)


def basis_rows(x):
    """The standard basis of x's space, one basis element per row: shape (x.size, *x.shape),
    in x's inexact dtype (the tangents of a batched jvp, the cotangents of a backward pass)."""
    dims = tuple(jnp.shape(x))
    n = math.prod(dims)
    dtype = jnp.result_type(x)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float32)
    return jnp.reshape(jnp.eye(n, dtype=dtype), (n,) + dims)


def columns_to_jacobian(cols, out, x):
    """Batched jvp results (one per input element, stacked first) as the Jacobian
    out.shape + x.shape."""
    return jnp.reshape(jnp.moveaxis(cols, 0, -1), tuple(jnp.shape(out)) + tuple(jnp.shape(x)))


def rows_to_jacobian(rows, out, x):
    """Batched backward-pass results (one per output element) as the Jacobian
    out.shape + x.shape; for a pytree x, a tree shaped like x of such blocks (as JAX's)."""
    if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex)):
        return rows_to_tree_jacobian(rows, out, x)  # a pytree: a tuple, dict, registered class
    return jnp.reshape(rows, tuple(jnp.shape(out)) + tuple(jnp.shape(x)))


def rows_to_tree_jacobian(rows, out, x):
    """rows_to_jacobian for a pytree x: each leaf's rows as a block out.shape + leaf.shape
    (linear in rows: its AD rules are in ad/rules/helpers.py, its batching a loop)."""
    out_shape = tuple(jnp.shape(out))
    leaves, treedef = tree_flatten(x)
    blocks = [jnp.reshape(r, out_shape + tuple(jnp.shape(leaf)))
              for r, leaf in zip(tree_flatten(rows)[0], leaves)]
    return tree_unflatten(treedef, blocks)


def tree_jacobian_to_rows(ct, rows):
    """The cotangent of rows_to_tree_jacobian: each block reshaped back like its rows."""
    leaves, treedef = tree_flatten(rows)
    return tree_unflatten(treedef, [jnp.reshape(c, jnp.shape(r))
                                    for c, r in zip(tree_flatten(ct)[0], leaves)])
