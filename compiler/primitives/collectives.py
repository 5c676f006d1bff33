"""Collectives over a named mapped axis: psum, pmax, pmin, pmean, all_gather, all_to_all,
psum_scatter, ppermute, axis_index.

Each is a primitive whose eager rule exchanges host buffers with the other participants of
the axis (runtime/collectives.py); under jit it is staged as an equation like any other, and
the compiled code calls back into the runtime at that point (backend/llvm/collectives.py),
so one compiled body serves every device. The axis name and, where the result's shape
depends on it, the axis size are static parameters, read from the axis the calling thread
is bound to: a name no pmap binds raises NameError, as in JAX. As a family file it also
declares their jvp/vjp rules and batching (compiler/primitives/registry.py).
"""
from __future__ import annotations

import numpy as np
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.runtime import collectives as rc
from redraft.runtime.convert import as_array
from redraft.runtime.eager import bind as bind_now, impl_rules
from redraft.runtime.staged import StagedBuf
from redraft.runtime.pytree import tree_map
from redraft.runtime.staging_context import active_builder
from redraft.compiler.primitives.registry import (LeadingAxesBatching, defbatch, defjvp,
                                                  defnondiff, defnotbatchable, defstatic,
                                                  defvjp, jnp, lax, names_primitive)

FAMILY = "collectives"


def _same(x: ShapedArray, **params) -> ShapedArray:
    return x


def _all_reduce_p(name: str, op: str) -> Primitive:
    prim = Primitive(name, FAMILY)

    def impl(x, *, axis_name, groups=None):
        if groups is None:
            return rc.all_reduce(x, axis_name, op, f"lax.{name}")
        return rc.grouped_all_reduce(x, axis_name, op, groups, f"lax.{name}")
    impl_rules[prim] = impl
    abstract_eval_rules[prim] = _same
    return prim


psum_p = _all_reduce_p("psum", "sum")
pmax_p = _all_reduce_p("pmax", "max")
pmin_p = _all_reduce_p("pmin", "min")

all_gather_p = Primitive("all_gather", FAMILY)
psum_scatter_p = Primitive("psum_scatter", FAMILY)
ppermute_p = Primitive("ppermute", FAMILY)
all_to_all_p = Primitive("all_to_all", FAMILY)
axis_index_p = Primitive("axis_index", FAMILY, WeakRule.NEVER)


def _gather_impl(x, *, axis_name, axis_size, axis, tiled, groups=None):
    stacked = rc.all_gather(x, axis_name, "lax.all_gather")
    if groups is not None:  # only the rows of this participant's group, in group order
        stacked = stacked[list(rc.group_of(axis_name, groups, "lax.all_gather"))]
    _check_size(stacked.shape[0], axis_size, "lax.all_gather")
    out = np.moveaxis(stacked, 0, axis)
    if tiled:
        shape = list(x.shape)
        shape[axis] *= axis_size
        out = out.reshape(shape)
    return np.ascontiguousarray(out)


def _gather_eval(x: ShapedArray, *, axis_name, axis_size, axis, tiled, groups=None
                 ) -> ShapedArray:
    shape = list(x.shape)
    if tiled:
        shape[axis] *= axis_size
    else:
        shape.insert(axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _scatter_impl(x, *, axis_name, axis_size, scatter_dimension, tiled, groups=None):
    what = "lax.psum_scatter"
    if groups is None:
        _check_size(rc.axis_size(axis_name, what), axis_size, what)
        total = rc.all_reduce(x, axis_name, "sum", what)
        index = rc.axis_index(axis_name, what)
    else:  # the group's sum; the block of this participant's position in its group
        group = rc.group_of(axis_name, groups, what)
        _check_size(len(group), axis_size, what)
        total = rc.grouped_all_reduce(x, axis_name, "sum", groups, what)
        index = group.index(rc.axis_index(axis_name, what))
    chunk = x.shape[scatter_dimension] // axis_size
    out = np.take(total, np.arange(index * chunk, (index + 1) * chunk), axis=scatter_dimension)
    return out if tiled else np.squeeze(out, scatter_dimension)


def _scatter_eval(x: ShapedArray, *, axis_name, axis_size, scatter_dimension, tiled,
                  groups=None) -> ShapedArray:
    n = x.shape[scatter_dimension] if scatter_dimension < len(x.shape) else None
    if n is None or (n != axis_size if not tiled else n % axis_size):
        raise ValueError(f"lax.psum_scatter: dimension {scatter_dimension} of {x} must "
                         f"{'be a multiple of' if tiled else 'equal'} the axis size "
                         f"{axis_size}")
    shape = list(x.shape)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_impl(x, *, axis_name, axis_size, split_axis, concat_axis, tiled):
    """Block j of `x` along split_axis goes to participant j; participant i concatenates
    (or stacks) the blocks it receives, in sender order, along concat_axis."""
    gathered = rc.all_gather(x, axis_name, "lax.all_to_all")   # (senders, *x.shape)
    _check_size(gathered.shape[0], axis_size, "lax.all_to_all")
    index = rc.axis_index(axis_name, "lax.all_to_all")
    chunk = x.shape[split_axis] // axis_size
    mine = np.take(gathered, np.arange(index * chunk, (index + 1) * chunk), axis=split_axis + 1)
    if not tiled:
        mine = np.squeeze(mine, split_axis + 1)             # (senders, *rest)
        return np.ascontiguousarray(np.moveaxis(mine, 0, concat_axis))
    return np.concatenate(list(mine), axis=concat_axis)


def _all_to_all_eval(x: ShapedArray, *, axis_name, axis_size, split_axis, concat_axis, tiled
                     ) -> ShapedArray:
    n = x.shape[split_axis]
    if (n != axis_size) if not tiled else (n % axis_size):
        raise ValueError(f"lax.all_to_all: dimension {split_axis} of {x} must "
                         f"{'be a multiple of' if tiled else 'equal'} the axis size "
                         f"{axis_size}")
    shape = list(x.shape)
    if tiled:
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
    else:
        del shape[split_axis]
        shape.insert(concat_axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _axis_index_impl(*, axis_name):
    return np.asarray(rc.axis_index(axis_name, "lax.axis_index"), np.int32)


def _check_size(found: int, expected: int, what: str) -> None:
    if found != expected:
        raise rc.CollectiveError(f"{what} was compiled for an axis of size {expected}, but runs "
                                 f"over {found} participants")


impl_rules[all_gather_p] = _gather_impl
abstract_eval_rules[all_gather_p] = _gather_eval
impl_rules[psum_scatter_p] = _scatter_impl
abstract_eval_rules[psum_scatter_p] = _scatter_eval
impl_rules[ppermute_p] = lambda x, *, axis_name, perm: rc.permute(x, axis_name, perm,
                                                                   "lax.ppermute")
abstract_eval_rules[ppermute_p] = _same
impl_rules[all_to_all_p] = _all_to_all_impl
abstract_eval_rules[all_to_all_p] = _all_to_all_eval
impl_rules[axis_index_p] = _axis_index_impl
abstract_eval_rules[axis_index_p] = lambda *, axis_name: ShapedArray((), np.dtype(np.int32))


# ---- the lax functions ----------------------------------------------------------------------

def _name(axis_name):
    """One hashable axis name (a 1-tuple names the same axis)."""
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise NotImplementedError(f"a collective over several axes {tuple(axis_name)!r}: "
                                      "redraft reduces over one named axis at a time")
        return axis_name[0]
    return axis_name


def _no_groups(axis_index_groups, what: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{what} with axis_index_groups: redraft groups psum, pmax, "
                                  "pmin, pmean, all_gather and psum_scatter; this one spans "
                                  "the whole axis")


def _groups(axis_index_groups, size: int, what: str) -> tuple[tuple[int, ...], ...] | None:
    """axis_index_groups as a static parameter: a partition of range(size) into groups of
    one size, each a tuple of axis indices (JAX's requirement)."""
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    members = sorted(i for g in groups for i in g)
    if members != list(range(size)):
        raise ValueError(f"{what}: axis_index_groups {groups} must hold every index of the "
                         f"axis (size {size}) exactly once")
    if len({len(g) for g in groups}) != 1:
        raise ValueError(f"{what}: the groups of axis_index_groups {groups} must all have "
                         "the same size")
    return groups


def bind(prim: Primitive, *args, **params):
    """Bind a collective. While a function compiles it is always staged, on known operands
    too: run at compile time, its rendezvous would need every device to be compiling at that
    moment, and a jitted body is compiled once, by one device's thread, for all of them."""
    builder = active_builder()
    if builder is not None and not any(type(a._buf) is StagedBuf for a in args):
        return builder.stage(prim, list(args), params)
    return bind_now(prim, *args, **params)


def _reduce(prim: Primitive, what: str, x, axis_name, axis_index_groups):
    name = _name(axis_name)
    size = rc.frame_of(name, what).size
    params = {"axis_name": name}
    groups = _groups(axis_index_groups, size, what)
    if groups is not None:
        params["groups"] = groups
    return tree_map(lambda leaf: bind(prim, as_array(leaf), **params), x)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` (a pytree) over every participant of the axis `axis_name` (or of the
    participant's group in `axis_index_groups`)."""
    return _reduce(psum_p, "lax.psum", x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The elementwise maximum of `x` over the axis (or the participant's group)."""
    return _reduce(pmax_p, "lax.pmax", x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The elementwise minimum of `x` over the axis (or the participant's group)."""
    return _reduce(pmin_p, "lax.pmin", x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the axis (psum divided by the number summed)."""
    n = rc.frame_of(_name(axis_name), "lax.pmean").size
    if axis_index_groups is not None:
        n = len(next(iter(axis_index_groups)))
    total = _reduce(psum_p, "lax.pmean", x, axis_name, axis_index_groups)
    return tree_map(lambda leaf: leaf / n, total)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every participant's `x` stacked along a new axis `axis` (concatenated along `axis`
    when `tiled`), in axis-index order; with axis_index_groups, the participant's group's."""
    name = _name(axis_name)
    n = rc.frame_of(name, "lax.all_gather").size
    groups = _groups(axis_index_groups, n, "lax.all_gather")
    params = {} if groups is None else {"groups": groups}
    n = n if groups is None else len(groups[0])

    def gather(leaf):
        leaf = as_array(leaf)
        ax = int(axis) % (leaf.ndim + (0 if tiled else 1))
        return bind(all_gather_p, leaf, axis_name=name, axis_size=n, axis=ax, tiled=bool(tiled),
                    **params)
    return tree_map(gather, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum, of which each participant keeps only its block along `scatter_dimension`."""
    name = _name(axis_name)
    n = rc.frame_of(name, "lax.psum_scatter").size
    groups = _groups(axis_index_groups, n, "lax.psum_scatter")
    params = {} if groups is None else {"groups": groups}
    n = n if groups is None else len(groups[0])

    def scatter(leaf):
        leaf = as_array(leaf)
        return bind(psum_scatter_p, leaf, axis_name=name, axis_size=n,
                    scatter_dimension=int(scatter_dimension) % max(leaf.ndim, 1),
                    tiled=bool(tiled), **params)
    return tree_map(scatter, x)


def ppermute(x, axis_name, perm):
    """Send `x` from participant `src` to participant `dst` for each (src, dst) in `perm`;
    a participant no pair sends to gets zeros."""
    name = _name(axis_name)
    rc.frame_of(name, "lax.ppermute")
    pairs = tuple((int(s), int(d)) for s, d in perm)
    return tree_map(lambda leaf: bind(ppermute_p, as_array(leaf), axis_name=name, perm=pairs),
                    x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Split `x` into axis-size blocks along `split_axis`, send block j to participant j, and
    put the blocks received along `concat_axis` (a new axis there unless `tiled`)."""
    _no_groups(axis_index_groups, "lax.all_to_all")
    name = _name(axis_name)
    n = rc.frame_of(name, "lax.all_to_all").size

    def exchange(leaf):
        leaf = as_array(leaf)
        split = int(split_axis) % leaf.ndim
        concat = int(concat_axis) % leaf.ndim  # the result has x's rank either way
        return bind(all_to_all_p, leaf, axis_name=name, axis_size=n, split_axis=split,
                    concat_axis=concat, tiled=bool(tiled))
    return tree_map(exchange, x)


def pshuffle(x, axis_name, perm):
    """Participant `i` receives `x` of participant `perm[i]`."""
    return ppermute(x, axis_name, tuple((int(p), i) for i, p in enumerate(perm)))


def axis_index(axis_name):
    """This participant's index along the axis `axis_name` (int32)."""
    name = _name(axis_name)
    rc.frame_of(name, "lax.axis_index")
    return bind(axis_index_p, axis_name=name)  # compiling: read when the code runs


def axis_size(axis_name) -> int:
    """The number of participants along `axis_name` (a Python int)."""
    return rc.axis_size(_name(axis_name))


def inverse_perm(perm) -> tuple:
    """The pairs of `perm` reversed: ppermute's transpose."""
    return tuple((int(d), int(s)) for s, d in perm)


LAX_FUNCTIONS = {f.__name__: f for f in (psum, pmax, pmin, pmean, all_gather, all_to_all,
                                         psum_scatter, ppermute, pshuffle, axis_index,
                                         axis_size)}


for _fn, _p in ((psum, psum_p), (pmax, pmax_p), (pmin, pmin_p), (all_gather, all_gather_p),
                (psum_scatter, psum_scatter_p), (ppermute, ppermute_p),
                (all_to_all, all_to_all_p), (axis_index, axis_index_p)):
    names_primitive(_fn, _p)

# ---- derivatives ---------------------------------------------------------------------------------
# Every device's output depends on every device's input, so a reverse rule gathers the
# cotangents of all devices: psum's transpose is psum, pmean's pmean, all_gather's is
# psum_scatter (each device keeps the summed cotangent of its own block) and psum_scatter's
# all_gather; all_to_all's is all_to_all with the split and concat axes swapped; ppermute's
# is ppermute along the inverse permutation. pmax/pmin pass the derivative to the devices
# that hold the extremum, shared equally between ties. pmean and pshuffle are functions on
# psum and ppermute, keyed by themselves.

defjvp(psum_p, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
       lax.psum(x_dot, axis_name, axis_index_groups=axis_index_groups))
defvjp(psum_p, lambda g, ans, x, axis_name, axis_index_groups=None:
       lax.psum(g, axis_name, axis_index_groups=axis_index_groups))
defjvp(pmean, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
       lax.pmean(x_dot, axis_name, axis_index_groups=axis_index_groups))
defvjp(pmean, lambda g, ans, x, axis_name, axis_index_groups=None:
       lax.pmean(g, axis_name, axis_index_groups=axis_index_groups))

for _op in (pmax_p, pmin_p):
    defjvp(_op, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
           lax.psum(jnp.where(x == ans, x_dot, jnp.zeros_like(x_dot)), axis_name,
                    axis_index_groups=axis_index_groups)
           / lax.psum(jnp.where(x == ans, jnp.ones_like(x), jnp.zeros_like(x)), axis_name,
                      axis_index_groups=axis_index_groups))
    defvjp(_op, lambda g, ans, x, axis_name, axis_index_groups=None:
           jnp.where(x == ans, lax.psum(g, axis_name, axis_index_groups=axis_index_groups),
                     jnp.zeros_like(g))
           / lax.psum(jnp.where(x == ans, jnp.ones_like(x), jnp.zeros_like(x)), axis_name,
                      axis_index_groups=axis_index_groups))

defjvp(all_gather_p, lambda x_dot, ans, x, axis_name, axis_index_groups=None, axis=0,
       tiled=False: lax.all_gather(x_dot, axis_name, axis_index_groups=axis_index_groups,
                                   axis=axis, tiled=tiled))
defvjp(all_gather_p, lambda g, ans, x, axis_name, axis_index_groups=None, axis=0,
       tiled=False: lax.psum_scatter(g, axis_name, scatter_dimension=axis,
                                     axis_index_groups=axis_index_groups, tiled=tiled))
defjvp(psum_scatter_p, lambda x_dot, ans, x, axis_name, scatter_dimension=0,
       axis_index_groups=None, tiled=False:
       lax.psum_scatter(x_dot, axis_name, scatter_dimension=scatter_dimension,
                        axis_index_groups=axis_index_groups, tiled=tiled))
defvjp(psum_scatter_p, lambda g, ans, x, axis_name, scatter_dimension=0,
       axis_index_groups=None, tiled=False:
       lax.all_gather(g, axis_name, axis_index_groups=axis_index_groups,
                      axis=scatter_dimension, tiled=tiled))
defjvp(all_to_all_p, lambda x_dot, ans, x, axis_name, split_axis, concat_axis,
       axis_index_groups=None, tiled=False:
       lax.all_to_all(x_dot, axis_name, split_axis, concat_axis, tiled=tiled))
defvjp(all_to_all_p, lambda g, ans, x, axis_name, split_axis, concat_axis,
       axis_index_groups=None, tiled=False:
       lax.all_to_all(g, axis_name, concat_axis, split_axis, tiled=tiled))
defjvp(ppermute_p, lambda x_dot, ans, x, axis_name, perm: lax.ppermute(x_dot, axis_name, perm))
defvjp(ppermute_p, lambda g, ans, x, axis_name, perm:
       lax.ppermute(g, axis_name, inverse_perm(perm)))
defjvp(pshuffle, lambda x_dot, ans, x, axis_name, perm: lax.pshuffle(x_dot, axis_name, perm))
defvjp(pshuffle, lambda g, ans, x, axis_name, perm:
       lax.pshuffle(g, axis_name, np.argsort(perm)))

defnondiff(axis_index_p, "integer-valued: the device's position along the axis")
defnondiff(axis_size, "a Python int: the number of devices along the axis")
defnondiff(inverse_perm, "it reverses the static pairs of a permutation")

for _p in (psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p):
    defstatic(_p, "axis_name")
defstatic(ppermute_p, "axis_name", "perm")
defstatic(all_to_all_p, "axis_name", "split_axis", "concat_axis")

# ---- batching: psum and friends combine each example with the same example on the other
# devices, so the batch axis in front is carried along (all_gather, psum_scatter and
# all_to_all shift their axis arguments: batch/rules/collectives.py) ----------------------------

for _op in (psum_p, pmax_p, pmin_p, ppermute_p, pmean, pshuffle):
    defbatch(_op, LeadingAxesBatching(("x",)))
for _op, _why in ((axis_index_p, "it takes an axis name, never an array"),
                  (axis_size, "it takes an axis name, never an array"),
                  (inverse_perm, "it reverses static pairs, never arrays")):
    defnotbatchable(_op, _why)
