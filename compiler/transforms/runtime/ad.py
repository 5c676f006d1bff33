"""Helpers that generated derivative code calls (`ad.unbroadcast(g, x)`, `ad.zeros_like(x)`).

Each works on arrays, Python numbers and pytrees of them, and has its own derivative rules
(rules/helpers.py), so derivative code can be differentiated again.
"""
from __future__ import annotations

import numpy as np

import redraft.numpy as jnp
from redraft.compiler.core import helpers
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.pytree import tree_flatten, tree_map, tree_unflatten
from redraft.runtime.staged import StagedBuf


def zeros_like(x):
    """Zeros of the structure, shape and (inexact) dtype of `x`; None stays None."""
    def leaf(v):
        if v is None:
            return None
        if isinstance(v, (bool, int, float, complex)):
            return 0.0
        if isinstance(v, (str, bytes)) or not (isinstance(v, (Array, np.ndarray, np.generic))
                                               or hasattr(v, "__array__")):
            return None  # Python-level data (a key path, a treedef): no cotangent
        a = jnp.asarray(v)
        dtype = a.dtype if a.dtype.kind in "fc" else np.float32
        if type(a._buf) is StagedBuf:
            return _staged_zeros(a.shape, dtype)
        return jnp.zeros(a.shape, dtype)
    return tree_map(leaf, x)


def _staged_zeros(shape: tuple, dtype) -> Array:
    """Zeros of `shape` while a function is being staged: one zero broadcast (a view, as
    jnp.broadcast_to's). Staging records a constant of one repeated value as that value
    broadcast anyway (ir/build.py), so the IR is the same; the MLP update's accumulators
    were 30 MB of zero pages, written or read (~1 us a page) in its first call."""
    zero = jnp.zeros((), dtype)
    return wrap_host(np.broadcast_to(zero._buf, shape), zero._weak)


def add(a, b):
    """a + b leaf by leaf (adjoints of pytrees add componentwise). None is a zero, at any
    depth: the cotangent of a None placeholder (a loop-carried name before the loop binds
    it) adds to the cotangent the same name has where it holds a tuple. A list and a tuple
    of one length are one sequence's cotangents (made by different rules): their items
    add, and the result is `a`'s kind."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (Array, int, float)) and isinstance(b, (Array, int, float)):
        return _add_leaves(a, b)
    if type(a) in (tuple, list) and type(b) in (tuple, list) and len(a) == len(b):
        return type(a)(add(u, v) for u, v in zip(a, b))
    return tree_map(lambda u, v: v if u is None else (u if v is None else _add_leaves(u, v)),
                    a, b)


def _add_leaves(a, b):
    """a + b, or the other operand itself where one is a staged zero (zeros_like's, which
    an index_add of a container makes for each slot it does not write) of the other's shape
    and dtype: JAX adds no symbolic zero, so a -0.0 keeps its sign, and the generated IR
    has no `x + 0` for each slot of a parameter list a loop unpacks."""
    if _staged_zero_of(a, b):
        return b
    if _staged_zero_of(b, a):
        return a
    return a + b


def _staged_zero_of(z, x) -> bool:
    """Whether `z` is a broadcast zero (_staged_zeros) with the shape and dtype of `x`."""
    if not (isinstance(z, Array) and isinstance(x, Array)) or z.shape != x.shape \
            or z.dtype != x.dtype or z._weak != x._weak:
        return False
    buf = z._buf
    return (isinstance(buf, np.ndarray) and buf.ndim > 0 and not any(buf.strides)
            and buf.size > 0 and buf.flat[0] == 0)


def unbroadcast(g, x):
    """Sum `g` down to the shape of `x` (undoing NumPy broadcasting in reverse mode). Where
    x is real and g complex, x was promoted to complex on the way, and the cotangent of
    that promotion is g's real part (as JAX transposes its convert_element_type)."""
    target = np.shape(x) if not isinstance(x, Array) else x.shape
    g = jnp.asarray(g)
    if g.dtype.kind == "c" and not jnp.iscomplexobj(x):
        g = jnp.real(g)
    if g.shape == target:
        return g
    lead = g.ndim - len(target)
    if lead < 0:
        return jnp.broadcast_to(g, target)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                      if d == 1 and g.shape[lead + i] != 1)
    out = jnp.sum(g, axis=axes) if axes else g
    return jnp.reshape(out, target)


def broadcast_like(t, ans):
    """`t` broadcast to the shape of `ans` (a tangent of a broadcasting operation)."""
    shape = ans.shape if isinstance(ans, Array) else np.shape(ans)
    t = jnp.asarray(t)
    return t if t.shape == shape else jnp.broadcast_to(t, shape)


def unsum(g, x, axis=None, keepdims=False, where=None):
    """The cotangent of `sum(x, axis, where=where)`: g spread back over the summed axes of
    x, and 0 at the elements `where` leaves out of the sum."""
    shape = jnp.shape(x)
    g = jnp.asarray(g)
    if g.ndim == 0 and type(g._buf) is np.ndarray:  # eager: a read-only broadcast view
        out = wrap_host(np.broadcast_to(g._buf, shape), g._weak)
    else:
        if g.ndim and not keepdims:
            ndim = len(shape)
            axes = range(ndim) if axis is None else (
                axis if isinstance(axis, tuple) else (axis,))
            for a in sorted(ax % ndim for ax in axes):
                g = jnp.expand_dims(g, a)
        out = jnp.broadcast_to(g, shape)
    if where is None:
        return out
    return jnp.where(where, out, jnp.zeros_like(out))


def mean_count(x, axis=None, keepdims=False, where=None):
    """How many elements of x each mean over `axis` averages: a number, or with where= an
    array shaped like the mean (only the elements `where` keeps count)."""
    if where is None:
        return jnp.size(x) // max(jnp.size(jnp.sum(x, axis=axis)), 1)
    mask = jnp.broadcast_to(where, jnp.shape(x))
    return jnp.sum(mask, axis=axis, keepdims=keepdims)


def grad_seed(out):
    """1 shaped like the (scalar) output of a function differentiated with grad."""
    a = out if isinstance(out, Array) else jnp.asarray(out)
    if a.shape != ():
        raise TypeError(f"grad requires a scalar output, but the function returned shape "
                        f"{a.shape}: use jacrev/jacobian, or vjp with a cotangent")
    if a.dtype.kind not in "fc":
        raise TypeError(f"grad requires a real or complex output, got {a.dtype.name}")
    return _ONES.get(a.dtype) or jnp.ones((), a.dtype)


_ONES: dict = {}


def _init_ones() -> None:
    """Scalar ones of each inexact dtype, made once (grad's seed; Arrays are immutable)."""
    from redraft.runtime.array import wrap_host
    for dt in (np.float32, np.float16, np.complex64):
        _ONES[np.dtype(dt)] = wrap_host(np.ones((), dt))


_init_ones()


def ones_like(x):
    return tree_map(lambda v: jnp.ones_like(v), x)


def basis(x, i: int):
    """The i-th standard basis element shaped like `x` (a row of the identity); for a
    pytree, element i of its leaves taken in order."""
    if _is_tree(x):
        leaves, treedef = tree_flatten(x)
        sizes = [size(v) for v in leaves]
        starts = np.cumsum([0] + sizes)
        return tree_unflatten(treedef, [
            basis(v, i - start) if start <= i < start + n else zeros_like(jnp.asarray(v))
            for v, start, n in zip(leaves, starts, sizes)])
    a = jnp.asarray(x)
    dtype = a.dtype if a.dtype.kind in "fc" else np.float32
    flat = jnp.zeros((a.size,), dtype).at[i].set(1)
    return jnp.reshape(flat, a.shape)


def tape_constant(value):
    """A value that no parameter feeds (a loop's index or counter) as reverse mode reads it
    back from a tape: the same value, marked as carrying no derivative (the tape's record
    holds it beside arrays that do)."""
    return value


def size(x, lead: int = 0) -> int:
    """The number of elements of `x` (of all its leaves, for a pytree); of one example where
    x's leaves carry `lead` batch axes."""
    if _is_tree(x):
        return sum(size(v, lead) for v in tree_flatten(x)[0])
    return int(np.prod(tuple(jnp.shape(x))[lead:], dtype=np.int64))


def _is_tree(x) -> bool:
    """True for a pytree with structure (a tuple, dict, registered class), not an array."""
    return not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex))


def stack_jacobian(rows: list, out, x, rows_first: bool = True):
    """Stack per-basis results into a Jacobian of shape out.shape + x.shape; for pytrees,
    a tree shaped like `out` whose leaves are trees shaped like `x` (as JAX's)."""
    if _is_tree(out) or _is_tree(x):
        return _stack_tree_jacobian(rows, out, x, rows_first)
    out_shape, x_shape = jnp.shape(out), jnp.shape(x)
    stacked = jnp.stack(rows) if rows else jnp.zeros((0,))
    if rows_first:  # rows indexed by output elements (reverse mode)
        return jnp.reshape(stacked, out_shape + x_shape)
    flat = jnp.reshape(stacked, (len(rows),) + out_shape)  # indexed by input elements
    ndim_out = len(out_shape)
    moved = jnp.moveaxis(flat, 0, -1) if ndim_out else flat
    return jnp.reshape(moved, out_shape + x_shape)


def push(tape, value) -> tuple:
    """Save `value` for the reverse pass of a loop iteration. A tape is an immutable cons
    list (value, rest), so a tape saved by an outer loop keeps exactly its state then."""
    return (value, tape)


def tape_items(tape) -> list:
    """The values on `tape`, the last pushed first (the order a reverse pass wants)."""
    items = []
    while tape is not None:
        items.append(tape[0])
        tape = tape[1]
    return items


def tape_from_items(items) -> tuple | None:
    """The tape whose tape_items are `items` (the inverse of tape_items)."""
    tape = None
    for value in reversed(list(items)):
        tape = (value, tape)
    return tape


def unflatten_like(leaves, like):
    """The cotangent of tree_leaves(like): the leaves' cotangents in like's structure."""
    from redraft.runtime.pytree import tree_structure, tree_unflatten
    return tree_unflatten(tree_structure(like), list(leaves))


def paths_bar_to_tree(g, like):
    """The cotangent of tree_flatten_with_path(like) = ([(path, leaf), ...], treedef): the
    leaves' cotangents in like's structure (paths and treedef have none)."""
    from redraft.runtime.pytree import tree_leaves
    pairs = g[0] if g is not None else None
    leaves = tree_leaves(like)
    items = [zeros_like(leaf) if pair is None or pair[1] is None else pair[1]
             for leaf, pair in zip(leaves, pairs or [None] * len(leaves))]
    return unflatten_like(items, like)


def container_like(value, items: tuple):
    """The cotangent of `a, b = value` (items: a_bar, b_bar) in value's own container: a
    list's cotangent is a list, as its pytree structure says."""
    if isinstance(value, list):
        return list(items)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*items)
    if isinstance(value, (Array, np.ndarray)) and np.ndim(value) >= 1:
        # `a, b = p` of an array p: its cotangent is one array of p's shape (the rows'
        # cotangents stacked), not a tuple
        return _stacked_rows(value, items, 0, None)
    if isinstance(value, tuple) and isinstance(items, (Array, np.ndarray)):
        return tuple(items[k] for k in range(len(value)))  # the reverse of the stacking
    return items


def container_like_batched(value, items, batched: tuple, n: int):
    """container_like of a batched array `value` (axis 0 the examples): the rows'
    cotangents (those in `batched` with their own axis 0) stacked along axis 1."""
    return _stacked_rows(value, items, 1, [None if b else n for b in batched])


def _stacked_rows(value, items, axis: int, broadcast_to):
    array = jnp.asarray(value)
    dtype = array.dtype if array.dtype.kind in "fc" else np.float32
    row = array.shape[:axis] + array.shape[axis + 1:]
    rows = []
    for k, g in enumerate(items):
        if g is None:
            rows.append(jnp.zeros(row, dtype))
            continue
        g = jnp.asarray(g, dtype)
        if broadcast_to is not None and broadcast_to[k] is not None:
            g = jnp.broadcast_to(g, (broadcast_to[k],) + g.shape)  # the same for every example
        rows.append(jnp.broadcast_to(g, row))
    return jnp.stack(rows, axis=axis)


def index_add(x, idx, g):
    """The cotangent of `x[idx]` for arrays and Python containers alike."""
    if isinstance(x, (tuple, list)):
        out = [zeros_like(v) for v in x]
        if isinstance(idx, slice):
            for k, gv in zip(range(*idx.indices(len(x))), g):
                out[k] = add(out[k], gv)
        else:
            out[idx] = add(out[idx], g)
        return type(x)(out) if not hasattr(type(x), "_fields") else type(x)(*out)
    if isinstance(x, dict):
        out = {k: zeros_like(v) for k, v in x.items()}
        out[idx] = add(out[idx], g)
        return out
    z = zeros_like(jnp.asarray(x))
    # reads clamp out-of-range indices (JAX's semantics), so their cotangent goes where
    # they were clamped to (an update would drop it)
    from redraft.numpy.indexing import clamped_index
    return z.at[clamped_index(z.shape, idx)].add(g)


def iterated_tangent(xs, xs_dot):
    """The tangent of iterated(xs): xs_dot for a sequence or array; for a dict, whose loop
    visits its keys, zeros shaped like the keys (no derivative reaches a key)."""
    if isinstance(xs, dict):
        return [zeros_like(key) for key in xs]
    return xs_dot


def iterated_bar(g, xs):
    """The cotangent of iterated(xs): g for a sequence or array, none for a dict's keys."""
    if isinstance(xs, dict):
        return None
    return g


def values_bar(g, container):
    """The cotangent of values_of(container): a dict of container's keys, g's items."""
    if isinstance(container, dict):
        return dict(zip(container.keys(), g))
    raise TypeError(f"cannot differentiate {type(container).__name__}.values()")


def items_bar(g, container):
    """The cotangent of items_of(container): each pair's value part, keyed as before."""
    if isinstance(container, dict):
        return {key: pair[1] for key, pair in zip(container.keys(), g)}
    raise TypeError(f"cannot differentiate {type(container).__name__}.items()")


def updated_part(g, idx):
    """The cotangent `g` where `x.at[idx]` writes, one entry per update: 0 for an update
    outside x, which was dropped (where reading x[idx] would clamp it into range)."""
    return jnp.asarray(g).at[idx].get(mode="fill", fill_value=0)


def set_survivors(x, idx, v):
    """1 for each update of `x.at[idx].set(v)` that is in the result, 0 for one that a later
    update of the same position replaced or that fell outside x: only survivors receive a
    cotangent. Found by the same set on update numbers, so it agrees with the forward."""
    x = jnp.asarray(x)
    shape = jnp.broadcast_shapes(jnp.shape(x[idx]), jnp.shape(v))
    numbers = jnp.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    landed = jnp.full(x.shape, -1, np.int32).at[idx].set(numbers)
    return (landed.at[idx].get(mode="fill", fill_value=-1) == numbers).astype(x.dtype)


def _holds_as_child(obj, name: str) -> bool:
    """Whether `obj.name` is (a subtree of) obj's pytree children, not its static aux data
    (told by identity, never by comparing values known only when compiled code runs)."""
    from redraft.runtime.pytree import tree_leaves
    if hasattr(type(obj), "_fields"):
        return True
    held = {id(leaf) for leaf in tree_leaves(obj)}
    field = tree_leaves(getattr(obj, name))
    return bool(field) and all(id(leaf) in held for leaf in field)


def attr_tangent(obj, obj_dot, name: str):
    """The tangent of `obj.name`: that field of obj's tangent, or zero where the field is
    static aux data (the tangent object holds obj's own value there, not a tangent)."""
    if _holds_as_child(obj, name):
        return getattr(obj_dot, name)
    return zeros_like(getattr(obj, name))


def attr_add(obj, name: str, g):
    """The cotangent of `obj.name`: zeros shaped like `obj`, with `g` at field `name`."""
    import copy
    zeros = zeros_like(obj)
    out = copy.copy(zeros)
    if hasattr(type(out), "_fields"):
        return out._replace(**{name: g})
    if not _holds_as_child(obj, name):
        return zeros  # the field is the node's static aux data: it has no cotangent
    setattr(out, name, g)
    return out


def zip_tangent(xs, xs_dot):
    """Pairs (x, x_dot) for a forward-mode loop over an active sequence."""
    return list(zip(xs, xs_dot))


def _same_type_buffers(a, b):
    """(buffer, buffer, weak) when a and b are host Arrays of one inexact dtype, else None."""
    if type(a) is Array and type(b) is Array:
        ab, bb = a._buf, b._buf
        if type(ab) is np.ndarray and type(bb) is np.ndarray and ab.dtype == bb.dtype and (
                ab.dtype.kind in "fc"):
            return ab, bb, a._weak and b._weak
    return None


def safe_div(g, d, zero=None):
    """g / d, but exactly 0 where `zero` is True: the positions where g is a structural zero
    (the untaken side of a `where`), so that a branch not taken, infinite or undefined
    there, gives no NaN. Anywhere else the division is plain: a zero that comes from the
    arithmetic (an overflow) meets an infinite factor as NaN, never as a made-up 0."""
    if zero is None:
        return g / d
    fast = _same_type_buffers(g, d)
    if fast is not None and type(zero) is Array and type(zero._buf) is np.ndarray:
        gb, db, weak = fast  # eager: one NumPy expression, no promotion
        with np.errstate(all="ignore"):
            return wrap_host(np.where(zero._buf, gb.dtype.type(0), gb / db), weak)
    return jnp.where(zero, 0.0, g / d)


def safe_mul(g, f, zero=None):
    """g * f, but exactly 0 where `zero` (g's structural zeros) is True; see safe_div."""
    if zero is None:
        return g * f
    fast = _same_type_buffers(g, f)
    if fast is not None and type(zero) is Array and type(zero._buf) is np.ndarray:
        gb, fb, weak = fast
        with np.errstate(all="ignore"):
            return wrap_host(np.where(zero._buf, gb.dtype.type(0), gb * fb), weak)
    return jnp.where(zero, 0.0, g * f)


def zero_mask(mask, g):
    """`mask` (True where a cotangent is structurally zero) as a bool array of g's shape;
    None (no structural zeros) is all False."""
    if mask is None:
        return jnp.zeros(jnp.shape(g), dtype=bool)
    return jnp.broadcast_to(jnp.asarray(mask, dtype=bool), jnp.shape(g))


def zero_mask_or(a, b):
    """Structurally zero where either mask says so (a `where` inside a masked chain)."""
    return jnp.logical_or(a, b)


def zero_mask_and(a, b):
    """The structural zeros of a sum of two cotangents: where both are."""
    return jnp.logical_and(a, b)


def unbroadcast_zero_mask(mask, x):
    """The mask summed down to x's shape, as unbroadcast sums a cotangent: a position is
    structurally zero where every position summed into it is."""
    return unbroadcast(jnp.where(mask, 0.0, 1.0), x) == 0


def zero_indicator(mask):
    """0.0 where `mask` marks a structural zero, 1.0 elsewhere: moved by a rearranging
    op's own reverse rule, it gives the mask of that op's argument (indicator_zero)."""
    return jnp.where(mask, 0.0, 1.0)


def indicator_zero(moved):
    """Structurally zero where no unmasked position was moved or summed into."""
    return moved == 0


def log1p_exp(x):
    """log1p(exp(x)), computed as written (the same value); its derivative rules use the
    stable sigmoid(x), where the chain of log1p's and exp's rules gives inf/inf."""
    return jnp.log1p(jnp.exp(x))


def sigmoid(x):
    """1 / (1 + exp(-x)), without overflow at either end."""
    return 0.5 * (jnp.tanh(0.5 * x) + 1.0)


def safe_log(x):
    """log(x) where x > 0, else 0: the y-derivative of x ** y at x = 0 is 0."""
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


def pick_first(x, y, ties_first: bool):
    """1 where max(x, y) comes from x, 0 where from y, 0.5 at ties (as JAX)."""
    return jnp.where(x > y, 1.0, jnp.where(x == y, 0.5, 0.0))


def abs_slope(x):
    """d|x|/dx as JAX takes it: 1 at 0 and above, -1 below; for complex x, conj(x)/|x|,
    the factor |x|'s tangent takes the real part of (abs_tangent)."""
    if jnp.iscomplexobj(x):
        return jnp.conj(jnp.sign(x))
    return jnp.where(x >= 0, 1.0, -1.0)


def abs_tangent(t, x):
    """The tangent of |x| for a tangent t of x: t * abs_slope(x), its real part for complex
    x (|x| is real)."""
    out = t * abs_slope(x)
    return jnp.real(out) if jnp.iscomplexobj(out) else out


def clip_slope(a, a_min=None, a_max=None, min=None, max=None):  # noqa: A002 - clip's names
    """d clip(a)/da as JAX's clip (max, then min) has it: 1 strictly inside the bounds, 0
    outside, 0.5 on a bound (max and min split a tie)."""
    slope = 1.0
    for bound, below in ((a_min if a_min is not None else min, True),
                         (a_max if a_max is not None else max, False)):
        if bound is not None:
            kept = a > bound if below else a < bound
            slope = slope * jnp.where(a == bound, 0.5, jnp.where(kept, 1.0, 0.0))
    return slope


def inside(a, lo, hi):
    """1 where lo <= a <= hi (clip passes the gradient through), else 0."""
    mask = jnp.ones_like(jnp.asarray(a, float))
    if lo is not None:
        mask = jnp.where(a < lo, 0.0, mask)
    if hi is not None:
        mask = jnp.where(a > hi, 0.0, mask)
    return mask


def argext_mask(a, ans, axis=None, keepdims=False):
    """Where `a` attains its max/min `ans` along `axis`, shared equally among ties."""
    peak = ans if keepdims else unsum(ans, a, axis, False)
    hits = jnp.where(a == peak, 1.0, 0.0)
    count = jnp.sum(hits, axis=axis, keepdims=True)
    return hits / count


def reverse_cumsum(g, a, axis=None):
    """The cotangent of cumsum: a cumulative sum from the end."""
    if axis is None:
        flipped = jnp.flip(jnp.ravel(g), 0)
        return jnp.reshape(jnp.flip(jnp.cumsum(flipped), 0), jnp.shape(a))
    return jnp.flip(jnp.cumsum(jnp.flip(g, axis), axis), axis)


# ---- contractions ------------------------------------------------------------------------------

def _ranges_like(*lists):
    start = 0
    for items in lists:
        yield tuple(range(start, start + len(items)))
        start += len(items)


def dot_general_lhs_bar(g, lhs, rhs, dimension_numbers, swap_ans: bool = False):
    """Cotangent of dot_general's lhs: contract g with rhs, then restore lhs's axis order."""
    from redraft import lax
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim, y_ndim = np.ndim(lhs), np.ndim(rhs)
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(y_ndim) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_by_y)
    return lax.transpose(lax.dot_general(g, rhs, dims), tuple(int(a) for a in out_axes))


def dot_general_rhs_bar(g, lhs, rhs, dimension_numbers):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return dot_general_lhs_bar(g, rhs, lhs, swapped, swap_ans=True)


def _dot_dims(a, b):
    contract_b = 0 if np.ndim(b) == 1 else np.ndim(b) - 2
    return (((np.ndim(a) - 1,), (contract_b,)), ((), ()))


def dot_lhs_bar(g, a, b):
    """Cotangent of `a` in jnp.dot(a, b)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    return dot_general_lhs_bar(jnp.asarray(g), a, jnp.asarray(b), _dot_dims(a, b))


def dot_rhs_bar(g, a, b):
    """Cotangent of `b` in jnp.dot(a, b)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    return dot_general_rhs_bar(jnp.asarray(g), jnp.asarray(a), b, _dot_dims(a, b))


def matmul_lhs_bar(g, a, b):
    """Cotangent of `a` in a @ b (batch axes broadcast, 1-D operands promoted)."""
    a2, b2, g2 = _matmul_promote(g, a, b)
    out = jnp.matmul(g2, jnp.swapaxes(b2, -1, -2))
    if np.ndim(a) == 1:
        out = jnp.squeeze(out, -2)
    return unbroadcast(out, a)


def matmul_rhs_bar(g, a, b):
    """Cotangent of `b` in a @ b."""
    a2, b2, g2 = _matmul_promote(g, a, b)
    out = jnp.matmul(jnp.swapaxes(a2, -1, -2), g2)
    if np.ndim(b) == 1:
        out = jnp.squeeze(out, -1)
    return unbroadcast(out, b)


def _matmul_promote(g, a, b):
    a2 = jnp.expand_dims(a, 0) if np.ndim(a) == 1 else jnp.asarray(a)
    b2 = jnp.expand_dims(b, -1) if np.ndim(b) == 1 else jnp.asarray(b)
    g2 = jnp.asarray(g)
    if np.ndim(a) == 1:
        g2 = jnp.expand_dims(g2, -2 if np.ndim(b) > 1 else 0)
    if np.ndim(b) == 1:
        g2 = jnp.expand_dims(g2, -1)
    return a2, b2, g2


# ---- sequences -----------------------------------------------------------------------------------

def unstack(g, axis: int = 0) -> list:
    """The cotangent of jnp.stack(items, axis): one slice of g per item."""
    g = jnp.asarray(g)
    return [jnp.take(g, i, axis=axis) for i in range(g.shape[axis])]


def split_like(g, arrays, axis: int = 0) -> list:
    """The cotangent of jnp.concatenate(arrays, axis): g cut at the arrays' sizes."""
    g = jnp.asarray(g)
    if axis is None:
        sizes = [int(np.size(a)) for a in arrays]
        flat, out, start = jnp.ravel(g), [], 0
        for a, n in zip(arrays, sizes):
            out.append(jnp.reshape(flat[start:start + n], np.shape(a)))
            start += n
        return out
    out, start = [], 0
    for a in arrays:
        n = np.shape(a)[axis]
        index = [slice(None)] * g.ndim
        index[axis] = slice(start, start + n)
        out.append(g[tuple(index)])
        start += n
    return out


def unarray(g, obj):
    """The cotangent of jnp.array(obj): g itself, or nested lists of its slices."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(unarray(gi, oi) for gi, oi in zip(unstack(g, 0), obj))
    return unbroadcast(g, obj)


def shape_of(x) -> tuple:
    return np.shape(x) if not hasattr(x, "shape") else tuple(x.shape)


def untranspose(g, axes=None):
    """The cotangent of jnp.transpose(a, axes): the inverse permutation applied to g."""
    if axes is None:
        return jnp.transpose(g)
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a % len(axes)] = i
    return jnp.transpose(g, inverse)


def take_bar(g, a, indices, axis=None, mode=None):
    """The cotangent of jnp.take(a, indices, axis, mode): g added where take read, its
    indices mapped as take maps them (wrapped or clipped); with mode None or 'fill', the
    cotangent of a filled position (out of bounds) is dropped."""
    from redraft.numpy.indexing import at_add_mode, clamped_index, take_positions
    z = zeros_like(jnp.ravel(a)) if axis is None else zeros_like(a)
    axis = 0 if axis is None else axis % np.ndim(a)
    if mode in (None, "fill"):
        out = at_add_mode(z, (slice(None),) * axis + (jnp.asarray(indices),), g, "drop")
        return jnp.reshape(out, jnp.shape(a))
    positions = take_positions(jnp.asarray(indices), jnp.shape(z)[axis], mode)
    index = (slice(None),) * axis + (positions,)
    out = z.at[clamped_index(jnp.shape(z), index)].add(g)
    return jnp.reshape(out, jnp.shape(a))


def tangent_astype(t, dtype):
    """Tangents of a cast: cast along for inexact targets, none (zeros) for integer ones."""
    from redraft.runtime.dtypes import check_dtype_arg
    target = check_dtype_arg(dtype)
    if target.kind in "fc":
        return jnp.asarray(t).astype(target)
    return jnp.zeros(jnp.shape(t), np.float32)


def cotangent_astype(g, x, dtype=None):
    """Cotangents flow back through a cast in x's (inexact) dtype; none flow through a
    cast to an integer or bool `dtype` (its result has no derivative)."""
    if dtype is not None:
        from redraft.runtime.dtypes import check_dtype_arg
        if check_dtype_arg(dtype).kind not in "fc":
            return zeros_like(x)
    dtype = jnp.result_type(x)
    return jnp.asarray(g).astype(dtype if dtype.kind in "fc" else np.float32)


def dict_values(d: dict, keys: tuple) -> tuple:
    return tuple(d[k] for k in keys)


def _object_sources(obj, items) -> list[tuple[int, int]]:
    """For each leaf of `obj` (made by helpers.make_object from `items`), the (item, leaf)
    it is: the constructor stored the arguments' leaves. A leaf the constructor computed
    has no such source, and its derivative cannot be read this way: an error."""
    from redraft.runtime.pytree import tree_leaves
    where: dict[int, tuple[int, int]] = {}
    for i, item in enumerate(items):
        for j, leaf in enumerate(tree_leaves(item)):
            where.setdefault(id(leaf), (i, j))
    sources = []
    for leaf in tree_leaves(obj):
        if id(leaf) not in where:
            raise TypeError(
                f"{type(obj).__name__}(...) computes a leaf from its arguments in its "
                "constructor; transforms differentiate the construction of a pytree object "
                "only when it stores its arguments (build the object outside, or make the "
                "computation a function of its own)")
        sources.append(where[id(leaf)])
    return sources


def object_tangent(obj, items: tuple, items_dot: tuple):
    """The tangent of make_object(cls, items): obj's structure, each leaf the tangent of
    the argument leaf it stores."""
    from redraft.runtime.pytree import tree_leaves, tree_structure
    dots = [tree_leaves(d) for d in items_dot]
    leaves = []
    for i, j in _object_sources(obj, items):
        leaves.append(dots[i][j] if j < len(dots[i]) else zeros_like(tree_leaves(items[i])[j]))
    return tree_unflatten(tree_structure(obj), leaves)


def object_items_bar(g, obj, items: tuple) -> tuple:
    """The cotangents of make_object's arguments from the object's cotangent `g`: each
    argument leaf gets the cotangent of the object leaves that store it."""
    from redraft.runtime.pytree import tree_leaves, tree_structure
    bars = [[zeros_like(leaf) for leaf in tree_leaves(item)] for item in items]
    g_leaves = tree_leaves(g)
    sources = _object_sources(obj, items)
    if len(g_leaves) == len(sources):
        for (i, j), part in zip(sources, g_leaves):
            bars[i][j] = add(bars[i][j], part)
    return tuple(tree_unflatten(tree_structure(item), b) for item, b in zip(items, bars))


def unzip_spread(g, sequences):
    """The cotangent of zip(*sequences): g's item i, entry j, back to sequence j's item i
    (zero past the shortest sequence, or where g has none)."""
    seqs = list(sequences)
    n = min((len(s) for s in seqs), default=0)
    out = []
    for j, s in enumerate(seqs):
        s = list(s)
        items = [g[i][j] if g is not None and g[i] is not None else zeros_like(s[i])
                 for i in range(n)] + [zeros_like(v) for v in s[n:]]
        out.append(sequence_like(items, sequences[j]) if isinstance(
            sequences[j], (list, tuple)) else items)
    return sequence_like(out, sequences) if isinstance(sequences, (list, tuple)) else out


def sorted_order(items, key=None, reverse: bool = False) -> list[int]:
    """The positions of `items` in the order sorted(items, key, reverse) puts them (both
    stable, so equal items keep their order)."""
    items = list(items)
    by = key if key is not None else (lambda v: v)
    return sorted(range(len(items)), key=lambda i: by(items[i]), reverse=reverse)


def sorted_like(values, items, key=None, reverse: bool = False) -> list:
    """`values` (one per item of `items`) in the order sorted(items) has: the tangent of
    sorted(items)."""
    values = list(values)
    return [values[i] for i in sorted_order(items, key, reverse)]


def unsorted(g, items, key=None, reverse: bool = False):
    """The cotangent of sorted(items): g's entries put back at their items' places. Sorting
    a dict sorts its keys, which carry no derivative."""
    if isinstance(items, dict):
        return zeros_like(items)
    g = list(g)
    items_list = list(items)
    out = [zeros_like(v) for v in items_list]
    for pos, i in enumerate(sorted_order(items_list, key, reverse)):
        if pos < len(g) and g[pos] is not None:
            out[i] = g[pos]
    return sequence_like(out, items) if isinstance(items, (tuple, list)) else out


def dict_part(g: dict, like: dict, over: dict | None = None) -> dict:
    """The items of cotangent `g` for `like`'s keys, zero where `over` has the key too: the
    cotangent of `like` in merge_dicts(like, over) (over's items replaced like's there)."""
    return {k: zeros_like(v) if over is not None and k in over else g[k]
            for k, v in like.items()}


def overwritten_bar(g, key, container):
    """The cotangent of `container` from `g`, the cotangent of `set_item(container, key,
    value)`: g with the item `key` zero, shaped like the item the write replaced (the new
    value may have another shape), and without it where the write added a dict key."""
    if isinstance(container, dict) and key not in container:
        return {k: v for k, v in g.items() if k != key}
    return helpers.set_item(g, key, zeros_like(container[key]))


def dict_part_bar(ct: dict, g: dict, like: dict, over: dict | None = None) -> dict:
    """The cotangent of dict_part's `g`: ct at the keys it took, zero elsewhere."""
    return {k: ct[k] if k in like and not (over is not None and k in over) else zeros_like(v)
            for k, v in g.items()}


def unstack_jacobian(ct, rows, out, x, rows_first: bool = True) -> list:
    """The cotangent of stack_jacobian: ct cut back into one piece per row."""
    if _is_tree(out) or _is_tree(x):
        return _unstack_tree_jacobian(ct, rows, out, x, rows_first)
    n = len(rows)
    out_shape = jnp.shape(out)
    if rows_first:
        flat = jnp.reshape(ct, (n,) + jnp.shape(rows[0]))
        return [flat[i] for i in range(n)]
    flat = jnp.reshape(ct, out_shape + (n,))
    moved = jnp.moveaxis(flat, -1, 0)
    return [jnp.reshape(moved[i], jnp.shape(rows[i])) for i in range(n)]


# ---- Python sequences ------------------------------------------------------------------------

def sequence_like(items, like):
    """`items` (a list, tuple or array) as the kind of sequence `like` is: the cotangent of
    tuple(like) or list(like), whose rows are `like`'s elements (a dict's are its keys,
    which carry no derivative)."""
    if isinstance(like, dict):
        return zeros_like(like)
    if isinstance(like, (Array, np.ndarray)):
        return items if isinstance(items, Array) else jnp.stack(list(items))
    items = unstack(items, 0) if isinstance(items, Array) else list(items)
    return tuple(items) if isinstance(like, tuple) else items


def unsum_items(g, items):
    """The cotangent of the builtin sum(items): g, unbroadcast to each item."""
    out = [unbroadcast(g, v) for v in items]
    return sequence_like(out, items)


def sum_like(items, like):
    """The cotangent of unsum_items: the items broadcast to `like`'s shape, then added."""
    total = zeros_like(like)
    for v in items:
        total = add(total, broadcast_like(v, like))
    return total


# ---- Jacobians of pytrees ------------------------------------------------------------------

def _blocks(tree, lead: int = 0) -> tuple[list, object, list[tuple], list[int]]:
    """(leaves, treedef, leaf shapes, leaf offsets into the flattened elements), the first
    `lead` axes of every leaf (batch axes) left out of its shape."""
    leaves, treedef = tree_flatten(tree)
    shapes = [tuple(jnp.shape(v))[lead:] for v in leaves]
    offsets = [int(k) for k in np.cumsum([0] + [_count(sh) for sh in shapes])]
    return leaves, treedef, shapes, offsets


def _stack_tree_jacobian(rows: list, out, x, rows_first: bool):
    """stack_jacobian for pytrees: one block per (output leaf, input leaf) pair."""
    _, out_def, out_shapes, out_at = _blocks(out)
    _, x_def, x_shapes, x_at = _blocks(x)
    pieces = [tree_flatten(r)[0] for r in rows]
    blocks = []
    for j, o_shape in enumerate(out_shapes):
        row = []
        for k, x_shape in enumerate(x_shapes):
            if rows_first:  # rows: one input-shaped cotangent per output element
                stacked = jnp.stack([p[k] for p in pieces[out_at[j]:out_at[j + 1]]])
                row.append(jnp.reshape(stacked, o_shape + x_shape))
            else:  # rows: one output-shaped tangent per input element
                stacked = jnp.stack([p[j] for p in pieces[x_at[k]:x_at[k + 1]]])
                moved = jnp.moveaxis(stacked, 0, -1) if o_shape else stacked
                row.append(jnp.reshape(moved, o_shape + x_shape))
        blocks.append(tree_unflatten(x_def, row))
    return tree_unflatten(out_def, blocks)


def _unstack_tree_jacobian(ct, rows, out, x, rows_first: bool) -> list:
    """unstack_jacobian for pytrees: the blocks of `ct` cut back into rows."""
    _, _, out_shapes, out_at = _blocks(out)
    _, _, x_shapes, x_at = _blocks(x)
    leaves = tree_flatten(ct)[0]
    block = lambda j, k: leaves[j * len(x_shapes) + k]  # noqa: E731
    row_def = tree_flatten(rows[0])[1] if rows else None
    out_rows = []
    if rows_first:
        for j, o_shape in enumerate(out_shapes):
            for e in range(out_at[j + 1] - out_at[j]):
                parts = [jnp.reshape(block(j, k), (-1,) + x_shape)[e]
                         for k, x_shape in enumerate(x_shapes)]
                out_rows.append(tree_unflatten(row_def, parts))
        return out_rows
    for k, x_shape in enumerate(x_shapes):
        for e in range(x_at[k + 1] - x_at[k]):
            parts = [jnp.reshape(block(j, k), o_shape + (-1,))[..., e]
                     for j, o_shape in enumerate(out_shapes)]
            out_rows.append(tree_unflatten(row_def, parts))
    return out_rows


def custom_vjp_tangent(name: str):
    """The tangent of a custom_vjp function's result, which forward mode cannot make (its
    rules are for reverse mode): raises JAX's TypeError when it runs (jvp code holds it
    only where the tangent is read: jvp of the function itself, not of its gradient)."""
    raise TypeError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
                    f"({name}); give it a custom_jvp rule instead")


# ---- Jacobians as one batched jvp or backward pass (compiler/transforms/ad/jacobian.py) -------
# A Jacobian's tangents (cotangents) are the standard basis of the input (output) space, one
# basis vector per row, so that one batched jvp (backward pass) gives every column (row).
# Batch axes of vmaps around the Jacobian come in front of a leaf's own axes (and of the
# basis axis).

def standard_basis(x, lead: int = 0):
    """The standard basis of x's space, one basis vector per row: for an array, the identity
    reshaped to (n,) + x.shape, n = x.size; for a pytree, a tree like x whose leaves hold
    rows (n,) + leaf.shape, n counting the elements of every leaf (the identity cut leaf by
    leaf). Each leaf in its own inexact dtype (float32 for an integer or boolean leaf). The
    basis of one example where x's leaves carry `lead` batch axes."""
    leaves, treedef, shapes, offsets = _blocks(x, lead)
    n = offsets[-1]
    rows = []
    for leaf, shape, start, stop in zip(leaves, shapes, offsets, offsets[1:]):
        dtype = np.dtype(jnp.result_type(leaf))
        dtype = dtype if dtype.kind in "fc" else np.dtype(np.float32)
        eye = jnp.eye(n, stop - start, -start, dtype=dtype)
        rows.append(jnp.reshape(eye, (n,) + shape))
    return tree_unflatten(treedef, rows)


def jacobian_from_columns(columns, out, x, leads: tuple = (0, 0, 0)):
    """A batched jvp's results (a tree like `out`, each leaf's rows indexed by x's elements)
    as the Jacobian: a tree like `out` of trees like `x` of blocks out_leaf.shape +
    x_leaf.shape (one array out.shape + x.shape where both are arrays), as JAX's. `leads`:
    the batch axes in front of every leaf of columns, out and x (vmaps around this one)."""
    lead, out_lead, x_lead = leads
    out_leaves, out_def, out_shapes, _ = _blocks(out, out_lead)
    _, x_def, x_shapes, x_at = _blocks(x, x_lead)
    blocks = []
    for col, o_leaf, o_shape in zip(tree_flatten(columns)[0], out_leaves, out_shapes):
        batch = tuple(jnp.shape(col))[:lead]
        moved = jnp.moveaxis(col, lead, -1)  # batch + o_shape + (x elements,)
        row = [_weak_like(jnp.reshape(_cut(moved, -1, a, b, len(x_shapes)),
                                      batch + o_shape + x_shape), o_leaf)
               for x_shape, a, b in zip(x_shapes, x_at, x_at[1:])]
        blocks.append(tree_unflatten(x_def, row))
    return tree_unflatten(out_def, blocks)


def _weak_like(block, leaf):
    """`block` weakly typed where `leaf` is (a Python scalar, or a weak array), strongly
    typed where it is not: a forward Jacobian has its output's weak type and a reverse one
    its input's, as JAX's (jacfwd(f)(2.0) of a weak result promotes as 2.0 would)."""
    weak = leaf.weak_type if isinstance(leaf, Array) else (
        isinstance(leaf, (int, float)) and not isinstance(leaf, bool))
    if not isinstance(block, Array) or block.weak_type == weak:
        return block
    from redraft.numpy.promotion import convert
    return convert(block, block.dtype, weak)


def columns_of_jacobian(jac, out, x, leads: tuple = (0, 0, 0)):
    """The transpose of jacobian_from_columns: a Jacobian (or its cotangent) back as one
    tree like `out` whose leaves hold rows indexed by x's elements."""
    lead, out_lead, x_lead = leads
    _, out_def, out_shapes, _ = _blocks(out, out_lead)
    _, _, x_shapes, _ = _blocks(x, x_lead)
    blocks = tree_flatten(jac)[0]
    columns = []
    for j, o_shape in enumerate(out_shapes):
        parts = []
        for k, x_shape in enumerate(x_shapes):
            block = blocks[j * len(x_shapes) + k]
            batch = tuple(jnp.shape(block))[:lead]
            parts.append(jnp.reshape(block, batch + o_shape + (_count(x_shape),)))
        joined = parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=-1)
        columns.append(jnp.moveaxis(joined, -1, lead))
    return tree_unflatten(out_def, columns)


def jacobian_from_rows(rows, out, x, leads: tuple = (0, 0, 0)):
    """A batched backward pass's results (a tree like `x`, each leaf's rows indexed by out's
    elements) as the Jacobian, shaped as jacobian_from_columns's."""
    lead, out_lead, x_lead = leads
    _, out_def, out_shapes, out_at = _blocks(out, out_lead)
    x_leaves, x_def, x_shapes, _ = _blocks(x, x_lead)
    leaves = tree_flatten(rows)[0]
    blocks = []
    for o_shape, a, b in zip(out_shapes, out_at, out_at[1:]):
        row = []
        for leaf, x_leaf, x_shape in zip(leaves, x_leaves, x_shapes):
            batch = tuple(jnp.shape(leaf))[:lead]
            part = _cut(leaf, lead, a, b, len(out_shapes))
            row.append(_weak_like(jnp.reshape(part, batch + o_shape + x_shape), x_leaf))
        blocks.append(tree_unflatten(x_def, row))
    return tree_unflatten(out_def, blocks)


def rows_of_jacobian(jac, out, x, leads: tuple = (0, 0, 0)):
    """The transpose of jacobian_from_rows: a Jacobian (or its cotangent) back as one tree
    like `x` whose leaves hold rows indexed by out's elements."""
    lead, out_lead, x_lead = leads
    _, _, out_shapes, _ = _blocks(out, out_lead)
    _, x_def, x_shapes, _ = _blocks(x, x_lead)
    blocks = tree_flatten(jac)[0]
    rows = []
    for k, x_shape in enumerate(x_shapes):
        parts = []
        for j, o_shape in enumerate(out_shapes):
            block = blocks[j * len(x_shapes) + k]
            batch = tuple(jnp.shape(block))[:lead]
            parts.append(jnp.reshape(block, batch + (_count(o_shape),) + x_shape))
        rows.append(parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=lead))
    return tree_unflatten(x_def, rows)


def _cut(a, axis: int, start: int, stop: int, pieces: int):
    """a[..., start:stop, ...] along `axis`; all of `a` where it is the only piece."""
    if pieces == 1:
        return a
    index = [slice(None)] * len(jnp.shape(a))
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def _count(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))
