"""The runtime of batched code: shapes and axes as one example sees them, batch sizes,
broadcasting, alignment for per-example broadcasting, and per-example selection.

Batched arrays carry their batch axes first: `k` leading axes when k vmaps are around a
value. Helpers that look at shapes take `k` (and `lead`, the axes of outer vmaps that axis
numbers do not count) as explicit static arguments, so an outer vmap rewrites
`vm.shape(x, 1)` into `vm.shape(x, 2)` (batch/rules/vmap_helpers.py). The helpers written
in plain redraft.numpy (`align`, `select`, ...) have no rules at all: an outer vmap and the
AD transforms read and transform their source, like a user function's, so they use only
module-level names, positional parameters and the Python subset Core accepts.
"""
from __future__ import annotations

import math

import numpy as np
from redraft.compiler.core import helpers as core_helpers
from redraft.runtime.pytree import tree_leaves, tree_map, tree_structure

import redraft.numpy as jnp

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


def example_axes(x, k: int = 1, lead: int = 0) -> tuple:
    """Every axis but the k batch axes of x (a reduction over `axis=None`). Axis numbers
    count from x without its `lead` leading axes (those of outer vmaps)."""
    return tuple(range(k, jnp.ndim(x) - lead))


def shift_axis(axis, x, k: int = 1, lead: int = 0):
    """An `axis` argument known only at run time, moved past k batch axes (None: all)."""
    if axis is None:
        return example_axes(x, k, lead)
    if isinstance(axis, (tuple, list)):
        return tuple(shift_axis(a, x, k, lead) for a in axis)
    return axis + k if axis >= 0 else axis


def structure(x):
    """`x` itself, marked as structure (axis numbers, dimension numbers): derivatives never
    flow through it, however it was computed."""
    return x


def index(idx, k: int = 1) -> tuple:
    """An index known only at run time, applied behind k batch axes: `x[:, idx]`."""
    items = idx if isinstance(idx, tuple) else (idx,)
    return (slice(None),) * k + items


def with_batch_shape(x, shape_, k: int = 1, lead: int = 0) -> tuple:
    """`shape_` with x's k batch sizes in front (reshape, broadcast_to); x's `lead` leading
    axes (outer vmaps') are not counted."""
    if isinstance(shape_, int):
        shape_ = (shape_,)
    return tuple(jnp.shape(x))[lead:lead + k] + tuple(shape_)


def reversed_axes(x, k: int = 1, lead: int = 0) -> tuple:
    """`transpose(x)` per example: the batch axes stay, the others reverse."""
    nd = jnp.ndim(x) - lead
    return tuple(range(k)) + tuple(range(nd - 1, k - 1, -1))


def unit_axes(x, k: int = 1, lead: int = 0) -> tuple:
    """The per-example axes of size 1 (`squeeze(x)` never drops a batch axis of size 1)."""
    dims = tuple(jnp.shape(x))[lead:]
    return tuple(i for i in range(k, len(dims)) if dims[i] == 1)


def probe(x, k: int = 1):
    """Zeros shaped like one example of `x` (an argument a helper reads only the shape and
    dtype of, which every example shares)."""
    return jnp.zeros(tuple(jnp.shape(x))[k:], jnp.result_type(x))


def rows(x, k: int = 1):
    """What iterating one example yields: a container's own items, an array's rows (the
    axis after the k batch axes, moved to the front)."""
    if isinstance(x, (tuple, list)):
        return x
    return jnp.moveaxis(x, k, 0)


def unrows(g, k: int = 1):
    """The cotangent of `rows`."""
    if isinstance(g, (tuple, list)):
        return g
    return jnp.moveaxis(g, 0, k)


def flat_examples(x, k: int = 1):
    """`x` reshaped to (batch sizes..., -1): each example raveled."""
    lead = tuple(jnp.shape(x))[:k]
    return jnp.reshape(x, lead + (-1,))


# ---- batch sizes and conversions --------------------------------------------------------------


def broadcast(x, n: int, k: int = 0):
    """`x` with a new batch axis of size `n` at position `k` (an unbatched value made
    batched: every example sees the same value). None, a pytree without leaves, stays
    None (a loop-carried `acc = None` that the loop later makes an array)."""
    if x is None:
        return None
    if isinstance(x, (tuple, list, dict)):  # a container typed as one value: leaf by leaf
        return tree_map(lambda leaf: broadcast(leaf, n, k), x)
    a = jnp.asarray(x)
    dims = tuple(jnp.shape(a))
    return jnp.broadcast_to(jnp.expand_dims(a, k), dims[:k] + (n,) + dims[k:])


def unbroadcast(g, k: int = 0):
    """The cotangent of `broadcast`: the batch axis at `k` summed away."""
    return jnp.sum(g, axis=k)


def axis_size(values: tuple, axes: tuple, names: tuple, given=None) -> int:
    """The size of the mapped axis, checked to agree across every leaf of the mapped
    arguments (JAX's error when they do not, naming each argument and its size)."""
    leaves, leaf_axes, leaf_names = [], [], []
    for value, axis, name in zip(values, axes, names):
        for leaf in tree_leaves(value):
            leaves.append(leaf)
            leaf_axes.append(axis)
            leaf_names.append(name)
    sizes = []
    for leaf, axis, name in zip(leaves, leaf_axes, leaf_names):
        dims = tuple(jnp.shape(leaf))
        if not -len(dims) <= axis < len(dims):
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies "
                f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                f"is only {len(dims)} (its shape is {dims})")
        sizes.append(dims[axis])
    if given is not None:
        if any(s != given for s in sizes):
            raise ValueError(_inconsistent(leaves, leaf_axes, leaf_names, sizes, given))
        return given
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(_inconsistent(leaves, leaf_axes, leaf_names, sizes, None))
    return sizes[0]


def _inconsistent(leaves, axes, names, sizes, given) -> str:
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if given is not None:
        lines.append(f"  * axis_size was given as {given};")
    for leaf, axis, name, n in zip(leaves, axes, names, sizes):
        dims = tuple(jnp.shape(leaf))
        dtype = getattr(leaf, "dtype", None)
        dname = dtype.name if isinstance(dtype, np.dtype) else "key"
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
        return PRNGKeyArray(jnp.moveaxis(data, source % nd, destination % nd))
    return jnp.moveaxis(x, source, destination)


def move_leaves(x, source: int, destination: int):
    """move_axis on every leaf of a pytree."""
    return tree_map(lambda leaf: move_axis(leaf, source, destination), x)


def getitem(x, idx, k: int = 1):
    """`x[idx]` of one example of a value that is either a container of batched values (its
    own item) or a batched array (indexed behind its k batch axes)."""
    if isinstance(x, (tuple, list, dict)):
        return x[idx]
    return x[index(idx, k)]


def ungetitem(x, idx, g, k: int = 1):
    """The cotangent of `getitem`: zeros like x with g at idx."""
    from redraft.compiler.transforms.runtime import ad
    if isinstance(x, (tuple, list, dict)):
        return ad.index_add(x, idx, g)
    from redraft.numpy.indexing import clamped_index   # reads clamp: so does their transpose
    z = ad.zeros_like(x)
    return z.at[clamped_index(z.shape, index(idx, k))].add(g)


def index_add_unbatched(x, idx, batched_idx, g, g_batched: bool, n: int,
                        x_batched: bool = False):
    """The cotangent of `x[idx]` for `x` unbatched (the same for every example; or, with
    x_batched, a container whose leaves are batched) and a cotangent `g`: every leaf of the
    result batched at axis 0. `x` is a Python container (a dict or list of parameters, its
    item's cotangent put in place) or an array (zeros with `g` added at `batched_idx`, the
    index behind the batch axis)."""
    from redraft.compiler.transforms.runtime import ad
    if isinstance(x, (tuple, list, dict)):
        if not g_batched:
            g = tree_map(lambda leaf: broadcast(leaf, n), g)
        zeros = tree_map(lambda leaf: ad.zeros_like(leaf) if x_batched else
                         broadcast(ad.zeros_like(leaf), n), x)
        if isinstance(x, dict) or not isinstance(idx, slice):
            item = ad.add(zeros[idx], g)
        else:
            item = [ad.add(z, v) for z, v in zip(zeros[idx], g)]
        return _with_item(zeros, idx, item)
    z = ad.zeros_like(x) if x_batched else broadcast(ad.zeros_like(x), n)
    if g_batched:
        g = align_update(g, z, batched_idx)
    from redraft.numpy.indexing import clamped_index   # reads clamp: so does their transpose
    return z.at[clamped_index(z.shape, batched_idx)].add(g)


def index_add_unbatched_bar(ct, x, idx, batched_idx, g, g_batched: bool, n: int,
                            x_batched: bool = False):
    """The cotangent of `g` in index_add_unbatched: the item of `ct` it was added to, summed
    over the examples where `g` was the same for all of them."""
    if isinstance(x, (tuple, list, dict)):
        part = ct[idx]
    else:
        part = jnp.reshape(ct[batched_idx], jnp.shape(g) if g_batched else
                           (n,) + tuple(jnp.shape(g)))
    return part if g_batched else tree_map(lambda leaf: unbroadcast(leaf), part)


def _with_item(x, idx, item):
    """Container `x` with item(s) `idx` replaced by `item` (a copy)."""
    if isinstance(x, dict):
        return {**x, idx: item}
    out = list(x)
    out[idx] = item
    if hasattr(type(x), "_fields"):
        return type(x)(*out)
    return type(x)(out)


def length_any(x, k: int = 1) -> int:
    """`len(x)` of one example of a container of batched values or of a batched array."""
    if isinstance(x, (tuple, list, dict)):
        return len(x)
    return length(x, k)


def stack_examples(pieces, axis: int = 0):
    """Per-example results of a loop stacked along a new batch axis, leaf by leaf (so
    lists of arrays and typed key arrays stack too)."""
    first = pieces[0] if len(pieces) else None
    if first is not None and hasattr(first, "_data") and not hasattr(first, "_buf"):
        from redraft.random import PRNGKeyArray
        return PRNGKeyArray(jnp.stack([p._data for p in pieces], axis))  # staged too
    if isinstance(first, (tuple, list, dict)) or (
            first is not None and tree_structure(first).kind is not None):
        return tree_map(lambda *leaves: stack_examples(list(leaves), axis), *pieces)
    return jnp.stack(pieces, axis)


def tree_rows(x, as_list: bool = False):
    """`tuple(x)` (`list(x)`) of a value whose every leaf is batched: an array's rows per
    example (the batch axis kept first in each), or a tuple's items as they are (a model's
    result, a NamedTuple's cotangent). Which it is shows only when the code runs."""
    from redraft.compiler.transforms.runtime.vm.linalg import is_array
    if is_array(x):
        rows = tuple(jnp.moveaxis(x, 1, 0))
    else:
        rows = tuple(x)
    if as_list:
        return list(rows)
    return rows


def unstack_examples(g, n: int, axis: int = 0) -> list:
    """The cotangent of stack_examples of `n` pieces: one piece per example, each with the
    structure of `g` (a tuple of stacked arrays gives a tuple per example, not one row of
    each array)."""
    if isinstance(g, (tuple, list, dict)) or tree_structure(g).kind is not None:
        return [tree_map(lambda leaf, i=i: jnp.take(leaf, i, axis=axis), g) for i in range(n)]
    return [jnp.take(g, i, axis=axis) for i in range(n)]


# ---- elementwise alignment and selection (transformed through their source) --------------------


def align(x, other, other_batched):
    """`x`, batched at axis 0, with size-1 axes inserted after the batch axis until its
    per-example rank reaches `other`'s, so that NumPy broadcasting pairs per-example axes."""
    missing = jnp.ndim(other) - other_batched - (jnp.ndim(x) - 1)
    if missing <= 0:
        return x
    dims = jnp.shape(x)
    return jnp.reshape(x, dims[:1] + (1,) * missing + dims[1:])


def align_pair(a, b):
    """`a` and `b`, both batched at axis 0, each aligned to the other's per-example rank
    (one statement where two operands of unknown ranks meet)."""
    return align(a, b, True), align(b, a, True)


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


def as_index(x):
    """An int32 index array, truncated toward zero as int() truncates."""
    return core_helpers.astype(x, np.int32)


def select(mask, a, b, a_batched, b_batched, name=None):
    """Per example, `a` where the (per-example scalar) `mask` holds, else `b`. The user's
    `name` given, the two must have one example shape, as under jit: an `if` on a batched
    value that binds `name` to different shapes on its two paths is an error, never a
    silent broadcast. None on one path is a placeholder (a name set on the other path
    only, such as the value of a `return` inside a loop): the other path decides, as
    under jit."""
    if a is None or b is None:
        return b if a is None else a
    if name is not None:
        shape_a, shape_b = _example_shape(a, a_batched), _example_shape(b, b_batched)
        if shape_a != shape_b:
            raise TypeError(f"`{name}` has shape {shape_a} on one path and {shape_b} on the "
                            "other of an `if` on a batched value; values chosen per example "
                            "need one shape")
    rank = max(jnp.ndim(a) - a_batched, jnp.ndim(b) - b_batched)
    m = jnp.reshape(mask, jnp.shape(mask)[:1] + (1,) * rank)
    return jnp.where(m, a, b)


def _example_shape(x, batched: bool) -> tuple:
    shape = tuple(jnp.shape(x))
    return shape[1:] if batched and shape else shape


def select_tree(mask, a, b, name=None):
    """`select` leaf by leaf over two pytrees of the same structure, every leaf batched
    (None on one path is a placeholder, as in `select`). The user's `name` given, the two
    must have one structure and each leaf one example shape, as in `select`: a tuple whose
    items change shape on one path is an error, never a silent broadcast."""
    if a is None or b is None:
        return b if a is None else a
    if name is not None and tree_structure(a) != tree_structure(b):
        raise TypeError(f"`{name}` has structure {tree_structure(a)} on one path and "
                        f"{tree_structure(b)} on the other of an `if` on a batched value; "
                        "values chosen per example need one structure")
    return tree_map(lambda u, v: select(mask, u, v, True, True, name), a, b)


def any_example(mask):
    """Whether any example's condition holds (a batched `while` runs until none does)."""
    return jnp.any(mask)
