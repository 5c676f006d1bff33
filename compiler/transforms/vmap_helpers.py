"""Helpers that batched code calls (`vm.shape(x, 1)`, `vm.align(x, y, False)`, ...).

Batched arrays carry their batch axes first: `k` leading axes when k vmaps are around a
value. Helpers that look at shapes take `k` as an explicit static argument, so an outer vmap
rewrites `vm.shape(x, 1)` into `vm.shape(x, 2)` (see batch_rules/vmap_helpers.py). The
helpers written in plain redraft.numpy (`align`, `select`, `dot`, ...) have no rules at all:
an outer vmap and the AD transforms read and transform their source, like a user function's.
Each such helper therefore uses only module-level names, positional parameters and the
Python subset Core accepts.
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.transforms import batch_types as bt
from redraft.runtime.pytree import tree_map, tree_structure

# ---- shapes as one example sees them ------------------------------------------------------------


def shape(x, k: int = 1) -> tuple:
    """`x.shape` inside k vmaps: the shape without the k leading batch axes."""
    return tuple(jnp.shape(x))[k:]


def ndim(x, k: int = 1) -> int:
    """`x.ndim` inside k vmaps."""
    return jnp.ndim(x) - k


def size(x, k: int = 1) -> int:
    """`x.size` inside k vmaps."""
    return math.prod(tuple(jnp.shape(x))[k:])


def length(x, k: int = 1) -> int:
    """`len(x)` inside k vmaps (an array's per-example leading axis)."""
    dims = tuple(jnp.shape(x))[k:]
    if not dims:
        raise TypeError("len() of unsized object: the per-example value is a scalar")
    return dims[0]


def example_axes(x, k: int = 1) -> tuple:
    """Every axis of `x` but its k leading batch axes (a reduction over `axis=None`)."""
    return tuple(range(k, jnp.ndim(x)))


def shift_axis(axis, x, k: int = 1):
    """An `axis` argument known only at run time, moved past k batch axes (None: all)."""
    if axis is None:
        return example_axes(x, k)
    if isinstance(axis, (tuple, list)):
        return tuple(shift_axis(a, x, k) for a in axis)
    return axis + k if axis >= 0 else axis


def index(idx, k: int = 1) -> tuple:
    """An index known only at run time, applied behind k batch axes: `x[:, idx]`."""
    items = idx if isinstance(idx, tuple) else (idx,)
    return (slice(None),) * k + items


def with_batch_shape(x, shape_, k: int = 1) -> tuple:
    """`shape_` with x's k leading batch sizes in front (reshape, broadcast_to)."""
    if isinstance(shape_, int):
        shape_ = (shape_,)
    return tuple(jnp.shape(x))[:k] + tuple(shape_)


def reversed_axes(x, k: int = 1) -> tuple:
    """`transpose(x)` per example: the batch axes stay, the others reverse."""
    nd = jnp.ndim(x)
    return tuple(range(k)) + tuple(range(nd - 1, k - 1, -1))


def unit_axes(x, k: int = 1) -> tuple:
    """The per-example axes of size 1 (`squeeze(x)` never drops a batch axis of size 1)."""
    dims = tuple(jnp.shape(x))
    return tuple(i for i in range(k, len(dims)) if dims[i] == 1)


def probe(x, k: int = 1):
    """Zeros shaped like one example of `x` (an argument a helper reads only the shape and
    dtype of, which every example shares)."""
    return jnp.zeros(tuple(jnp.shape(x))[k:], jnp.result_type(x))


def flat_examples(x, k: int = 1):
    """`x` reshaped to (batch sizes..., -1): each example raveled."""
    lead = tuple(jnp.shape(x))[:k]
    return jnp.reshape(x, lead + (-1,))


# ---- batch sizes and conversions --------------------------------------------------------------


def broadcast(x, n: int, k: int = 0):
    """`x` with a new batch axis of size `n` at position `k` (an unbatched value made
    batched: every example sees the same value)."""
    a = jnp.asarray(x)
    dims = tuple(jnp.shape(a))
    return jnp.broadcast_to(jnp.expand_dims(a, k), dims[:k] + (n,) + dims[k:])


def unbroadcast(g, k: int = 0):
    """The cotangent of `broadcast`: the batch axis at `k` summed away."""
    return jnp.sum(g, axis=k)


def convert(x, from_t, to_t, n: int, outer: tuple = ()):
    """`x` (of batch type `from_t`) as a value of batch type `to_t`: every leaf that was
    unbatched and must be batched is broadcast to `n` examples. `outer` holds x's batch
    types in the vmaps around this one; a leaf batched there has that many leading axes."""
    return _convert(x, from_t, to_t, n, outer, False)


def unconvert(g, from_t, to_t, n: int, outer: tuple = ()):
    """The cotangent of `convert`: broadcast axes summed away."""
    return _convert(g, from_t, to_t, n, outer, True)


def _convert(x, from_t, to_t, n, outer, reverse):
    if from_t == to_t or x is None:
        return x
    if bt.kind(to_t) in ("B", "P") and bt.kind(from_t) == "U":
        return _broadcast_leaves(x, n, outer, reverse)
    if bt.kind(to_t) == "P":
        if isinstance(x, (tuple, list)) and bt.kind(from_t) in ("T", "L"):
            items = [_convert(v, _item(from_t, i), bt.TREE, n, _items(outer, i), reverse)
                     for i, v in enumerate(x)]
            return _rebuild(x, items)
        return x
    if isinstance(x, (tuple, list)) and bt.kind(to_t) in ("T", "L"):
        items = [_convert(v, _item(from_t, i), _item(to_t, i), n, _items(outer, i), reverse)
                 for i, v in enumerate(x)]
        return _rebuild(x, items)
    if bt.kind(to_t) == "tape" and isinstance(x, tuple) and len(x) == 2:
        head = _convert(x[0], _item(from_t, 0), to_t[1], n, _items(outer, 0), reverse)
        rest = _convert(x[1], from_t, to_t, n, outer, reverse)
        return (head, rest)
    raise TypeError(f"vmap: cannot convert a {type(x).__name__} of batch type "
                    f"{bt.describe(from_t)} to {bt.describe(to_t)}")


def _item(t, i):
    if bt.kind(t) == "tape":
        return t[1] if i == 0 else t
    return bt.item(t, i)


def _items(outer: tuple, i: int) -> tuple:
    return tuple(_item(t, i) for t in outer)


def _rebuild(x, items: list):
    if isinstance(x, list):
        return items
    if hasattr(type(x), "_fields"):
        return type(x)(*items)
    return tuple(items)


def _broadcast_leaves(x, n, outer, reverse):
    k = sum(1 for t in outer if bt.is_array(t))
    if any(bt.kind(t) not in ("U", "B", "P") for t in outer):
        raise TypeError("vmap: cannot broadcast a nested structure batched by an outer vmap")
    if reverse:
        return tree_map(lambda g: unbroadcast(g, k), x)
    return tree_map(lambda leaf: broadcast(leaf, n, k), x)


def axis_size(leaves: tuple, axes: tuple, names: tuple, given=None) -> int:
    """The size of the mapped axis, checked to agree across arguments (JAX's error when
    they do not, naming each argument and its size)."""
    sizes = []
    for leaf, axis, name in zip(leaves, axes, names):
        dims = tuple(jnp.shape(leaf))
        if not -len(dims) <= axis < len(dims):
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies "
                f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                f"is only {len(dims)} (its shape is {dims})")
        sizes.append(dims[axis])
    if given is not None:
        sizes_ok = all(s == given for s in sizes)
        if not sizes_ok:
            raise ValueError(_inconsistent(leaves, axes, names, sizes, given))
        return given
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(_inconsistent(leaves, axes, names, sizes, None))
    return sizes[0]


def _inconsistent(leaves, axes, names, sizes, given) -> str:
    from redraft.compiler.core.abstract import short_dtype_name
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if given is not None:
        lines.append(f"  * axis_size was given as {given};")
    for leaf, axis, name, n in zip(leaves, axes, names, sizes):
        dims = tuple(jnp.shape(leaf))
        dtype = getattr(leaf, "dtype", None)
        dname = short_dtype_name(dtype) if isinstance(dtype, np.dtype) else "key"
        kind = f"{dname}[{','.join(map(str, dims))}]"
        lines.append(f"  * one axis had size {n}: axis {axis} of {name} of type {kind};")
    lines[-1] = lines[-1].rstrip(";")
    return "\n".join(lines)


def move_axis(x, source: int, destination: int):
    """jnp.moveaxis for arrays and typed key arrays alike."""
    if source == destination:
        return x
    data = getattr(x, "_data", None)
    if data is not None and not hasattr(x, "_buf"):  # a typed PRNG key array
        from redraft.random import PRNGKeyArray
        nd = data.ndim - 1
        return PRNGKeyArray(np.moveaxis(data, source % nd, destination % nd))
    return jnp.moveaxis(x, source, destination)


def stack_examples(pieces, axis: int = 0):
    """Per-example results of a loop stacked along a new batch axis, leaf by leaf (so
    lists of arrays and typed key arrays stack too)."""
    first = pieces[0] if len(pieces) else None
    if first is not None and hasattr(first, "_data") and not hasattr(first, "_buf"):
        from redraft.random import PRNGKeyArray
        return PRNGKeyArray(np.stack([p._data for p in pieces], axis))
    if isinstance(first, (tuple, list, dict)) or (
            first is not None and tree_structure(first).kind is not None):
        return tree_map(lambda *leaves: stack_examples(list(leaves), axis), *pieces)
    return jnp.stack(pieces, axis)


# ---- elementwise alignment and selection (transformed through their source) --------------------


def align(x, other, other_batched):
    """`x`, batched at axis 0, with size-1 axes inserted after the batch axis until its
    per-example rank reaches `other`'s, so that NumPy broadcasting pairs per-example axes."""
    missing = jnp.ndim(other) - other_batched - (jnp.ndim(x) - 1)
    if missing <= 0:
        return x
    dims = jnp.shape(x)
    return jnp.reshape(x, dims[:1] + (1,) * missing + dims[1:])


def align_to_shape(x, shape_):
    """`x`, batched at axis 0, with size-1 axes after the batch axis up to len(shape_)."""
    if isinstance(shape_, int):
        shape_ = (shape_,)
    missing = len(shape_) - (jnp.ndim(x) - 1)
    if missing <= 0:
        return x
    dims = jnp.shape(x)
    return jnp.reshape(x, dims[:1] + (1,) * missing + dims[1:])


def take_examples(x, i):
    """`x[i]` per example with both batched: example k reads x[k][i[k]]."""
    n = jnp.shape(x)[0]
    rows = jnp.reshape(jnp.arange(n), (n,) + (1,) * (jnp.ndim(i) - 1))
    return x[rows, i]


def align_update(v, x, idx):
    """`v` (batched) aligned to the per-example shape of `x[idx]` for `x.at[idx].set(v)`."""
    missing = jnp.ndim(x[idx]) - jnp.ndim(v)
    if missing <= 0:
        return v
    dims = jnp.shape(v)
    return jnp.reshape(v, dims[:1] + (1,) * missing + dims[1:])


def select(mask, a, b, a_batched, b_batched):
    """Per example, `a` where the (per-example scalar) `mask` holds, else `b`."""
    rank = max(jnp.ndim(a) - a_batched, jnp.ndim(b) - b_batched)
    m = jnp.reshape(mask, jnp.shape(mask)[:1] + (1,) * rank)
    return jnp.where(m, a, b)


def select_tree(mask, a, b):
    """`select` leaf by leaf over two pytrees of the same structure."""
    return tree_map(lambda u, v: select(mask, u, v, True, True), a, b)


def any_example(mask):
    """Whether any example's condition holds (a batched `while` runs until none does)."""
    return bool(jnp.any(mask))


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
    lc1 = tuple(a + 1 for a in lc) if lhs_batched else tuple(lc)
    lb1 = tuple(a + 1 for a in lb) if lhs_batched else tuple(lb)
    rc1 = tuple(a + 1 for a in rc) if rhs_batched else tuple(rc)
    rb1 = tuple(a + 1 for a in rb) if rhs_batched else tuple(rb)
    if lhs_batched and rhs_batched:
        return lax.dot_general(lhs, rhs, ((lc1, rc1), ((0,) + lb1, (0,) + rb1)))
    out = lax.dot_general(lhs, rhs, ((lc1, rc1), (lb1, rb1)))
    if lhs_batched:
        return jnp.moveaxis(out, len(lb), 0)
    lhs_free = jnp.ndim(lhs) - len(lc) - len(lb)
    return jnp.moveaxis(out, len(lb) + lhs_free, 0)


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
