"""Python lists a staged `for` loop grows or shrinks by a fixed number of items an iteration,
held as stacked arrays so that the loop stays one IR loop.

Core builds a scan's outputs with `ys = append(ys, y)`, reverse-mode AD saves each iteration's
values with `tape = push(tape, saved)`, and the reverse pass walks the cotangents of the
outputs with `g = gs[-1]; gs = gs[:-1]`. A Python list changes structure every iteration, so
such loops used to be unrolled into the IR (compile time growing with the trip count). Here:

- a list or tape the body appends to exactly once an iteration is carried as one buffer per
  leaf of the item, of shape (trip count, *leaf shape), each iteration writing its row;
- a list of rows of stacked arrays (`Rows`) the body only reads from its end and drops items
  from its end is carried as its staged length;
- after the loop the names hold ordinary Python lists (tapes) again, whose items are rows of
  the stacked buffers (`Rows`), so code after the loop sees what it would have seen unrolled;
  `tree_stack` of such a list is the buffers themselves, and a loop over one stays a loop.

Any other use of such a name inside the body (its length, passing it to a function, a branch
on it) makes the candidate fail; the loop then stages as before or is unrolled.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core.abstract import ShapedArray
from redraft.compiler.staging.values import Unstageable, to_array
from redraft.compiler.transforms.runtime import ad as ad_runtime
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.pytree import tree_flatten, tree_unflatten


# ---- lists whose items are rows of stacked arrays ------------------------------------------

@dataclass(eq=False)
class Rows:
    """Stacked arrays (`leaves`, leading axis `length`) whose row k, or length-1-k where
    `reverse`, is item k of a list, rebuilt with `treedef`. The length is kept apart from
    the leaves: an item with no array leaves (a scan's `None` output) has none."""
    leaves: list
    treedef: object
    length: int
    reverse: bool = False

    def __len__(self) -> int:
        return self.length

    def items(self) -> list:
        """The list, as plain Python: one static slice of each leaf per item."""
        n = len(self)
        order = range(n - 1, -1, -1) if self.reverse else range(n)
        return [tree_unflatten(self.treedef, [leaf[k] for leaf in self.leaves]) for k in order]

    def row(self, index: Array):
        """Item `index` (a staged int32 scalar)."""
        from redraft.lax import dynamic_index_in_dim
        if self.reverse:
            index = (len(self) - 1) - index
        return tree_unflatten(self.treedef, [dynamic_index_in_dim(leaf, index, 0, False)
                                             for leaf in self.leaves])


class Known:
    """Which plain lists and tapes staging made from stacked rows (by identity: Core never
    mutates a list), so that tree_stack, tape_items and loops can use the stacks. Each
    entry keeps its object alive, so its id stays its own while the function stages."""

    def __init__(self):
        self._lists: dict[int, tuple[list, Rows]] = {}
        self._tapes: dict[int, tuple[tuple, Rows]] = {}

    def as_list(self, rows: Rows, prefix: list | None = None) -> list:
        items = list(prefix or []) + rows.items()
        if not prefix:
            self._lists[id(items)] = (items, rows)
        return items

    def as_tape(self, base, rows: Rows):
        """A tape (`(value, rest)` cons cells, transforms/runtime/ad.py) with rows pushed."""
        tape = base
        for value in rows.items():
            tape = (value, tape)
        if base is None and len(rows):
            self._tapes[id(tape)] = (tape, rows)
        return tape

    def rows_of(self, items) -> Rows | None:
        """The stacked rows behind the list `items`, if staging made it from them."""
        entry = self._lists.get(id(items))
        return entry[1] if entry is not None and entry[0] is items else None

    def tape_rows(self, tape) -> Rows | None:
        entry = self._tapes.get(id(tape))
        return entry[1] if entry is not None and entry[0] is tape else None


# ---- markers the loop body sees -------------------------------------------------------------

class MarkerMisuse(Unstageable):
    """A loop body used a list it grows or shrinks in a way a stack cannot follow."""


class _Marker:
    """A candidate list inside the loop body: any use other than the ones `route` knows
    marks it (and the marker it came from) failed and stops staging this body."""
    failed = False
    name = "?"
    origin = None

    def fail(self, what: str):
        self.failed = True
        if self.origin is not None:
            self.origin.failed = True
        raise MarkerMisuse(f"`{self.name}` is a list the loop grows or shrinks, used by "
                           f"{what}")

    def __getattr__(self, attr: str):
        self.fail(f"reading its attribute {attr!r}")

    def __len__(self):
        self.fail("len()")

    def __iter__(self):
        self.fail("iteration")

    def __bool__(self):
        self.fail("a truth test")

    def __eq__(self, other):
        self.fail("a comparison")

    __hash__ = object.__hash__


class Growing(_Marker):
    """A list or tape at the start of an iteration (`origin`, holding the carried buffers),
    and what the iteration appended to it so far."""

    def __init__(self, name: str, buffers=None, origin=None, pushed=(), kind=None):
        self.name, self.buffers = name, buffers
        self.origin = origin if origin is not None else self
        self.pushed, self.kind = list(pushed), kind

    def add(self, kind: str, item) -> "Growing":
        if self.kind not in (None, kind):
            self.fail(f"both {self.kind} and {kind} operations")
        return Growing(self.name, None, self.origin, self.pushed + [item], kind)


class Shrinking(_Marker):
    """A stacked list at the start of an iteration (`length`: its staged length then), and
    how many items the iteration dropped from its end so far."""

    def __init__(self, name: str, rows: Rows, length: Array, dropped: int = 0, origin=None):
        self.name, self.rows, self.length, self.dropped = name, rows, length, dropped
        self.origin = origin if origin is not None else self

    def item(self, key):
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key < 0:
            return self.rows.row(self.length - self.dropped + int(key))
        if isinstance(key, slice) and key.start in (None, 0) and key.step in (None, 1) and (
                isinstance(key.stop, (int, np.integer)) and key.stop < 0):
            return Shrinking(self.name, self.rows, self.length, self.dropped - int(key.stop),
                             self.origin)
        self.fail(f"indexing with {key!r}")


def route(known: Known, fn, args: list, kwargs: dict):
    """What the interpreter should return for `fn(*args)` where an argument is a marker or
    a list or tape with stacked rows behind it; NotImplemented for an ordinary call."""
    if len(args) == 2 and not kwargs:
        if fn is core_helpers.append and isinstance(args[0], Growing):
            return args[0].add("list", args[1])
        if fn is ad_runtime.push and isinstance(args[0], Growing):
            return args[0].add("tape", args[1])
        if fn is operator.getitem and isinstance(args[0], Shrinking):
            return args[0].item(args[1])
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, _Marker):
            a.fail(getattr(fn, "__name__", repr(fn)))
    if kwargs:
        return NotImplemented
    if fn is ad_runtime.tape_items and len(args) == 1:
        rows = known.tape_rows(args[0])
        if rows is not None:
            return known.as_list(Rows(rows.leaves, rows.treedef, rows.length, not rows.reverse))
    elif fn is core_helpers.tree_stack and len(args) == 2:
        rows = known.rows_of(args[0])
        if rows is not None:
            if rows.reverse == bool(args[1]):
                return tree_unflatten(rows.treedef, rows.leaves)
            from redraft.lax import rev
            return tree_unflatten(rows.treedef, [rev(leaf, (0,)) for leaf in rows.leaves])
    elif fn is core_helpers.tree_unstack and len(args) == 3 and isinstance(args[1], list):
        leaves, treedef = tree_flatten(args[0])
        n = len(args[1])
        if n and leaves and all(isinstance(v, Array) and v.ndim and v.shape[0] == n
                                for v in leaves):
            return known.as_list(Rows(leaves, treedef, n, bool(args[2])))
    return NotImplemented


# functions `route` may answer without markers around: the readers of stacked lists and tapes
ROUTED = frozenset({ad_runtime.tape_items, core_helpers.tree_stack, core_helpers.tree_unstack})


# ---- a loop's stacked names -----------------------------------------------------------------

@dataclass
class LoopStacks:
    """The names a staged for loop carries as stacks: `grow[name]` is (kind, treedef, leaf
    types) of the item appended each iteration, `shrink[name]` the items dropped from the
    end each iteration; `bases` their values before the loop."""
    n_steps: int
    grow: dict = field(default_factory=dict)
    shrink: dict = field(default_factory=dict)
    bases: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)  # shrinking name -> its Rows
    entered: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.grow or self.shrink)

    def initial(self) -> dict:
        """What each stacked name carries into the loop: buffers (grown), a length (shrunk)."""
        import redraft.numpy as jnp
        out = {}
        for name, (_, _, avals) in self.grow.items():
            out[name] = tuple(jnp.zeros((self.n_steps,) + a.shape, a.dtype) for a in avals)
        for name in self.shrink:
            out[name] = as_array(np.int32(len(self.rows[name])))
        return out

    def enter(self, env: dict) -> None:
        """Replace the carried values of stacked names with the markers the body sees."""
        for name in self.grow:
            self.entered[name] = env[name] = Growing(name, env[name])
        for name in self.shrink:
            self.entered[name] = env[name] = Shrinking(name, self.rows[name], env[name])

    def leave(self, env: dict, index: Array) -> None:
        """Turn the markers the body left back into carried values (its rows written)."""
        from redraft.lax import dynamic_update_index_in_dim
        for name, (_, treedef, _) in self.grow.items():
            g = env[name]
            if not isinstance(g, Growing) or g.origin is not self.entered[name] or len(
                    g.pushed) != 1:
                raise Unstageable(f"`{name}` is not appended to once an iteration")
            leaves, item_def = tree_flatten(g.pushed[0])
            if item_def != treedef:
                raise Unstageable(f"`{name}`'s items change structure in the loop")
            env[name] = tuple(
                dynamic_update_index_in_dim(buf, _as(to_array(v, name), buf.dtype), index, 0)
                for buf, v in zip(g.origin.buffers, leaves))
        for name, dropped in self.shrink.items():
            s = env[name]
            if not isinstance(s, Shrinking) or s.origin is not self.entered[name] or (
                    s.dropped != dropped):
                raise Unstageable(f"`{name}` does not shrink by {dropped} an iteration")
            env[name] = (s.length - dropped).astype(np.int32)

    def after(self, known: Known, results: dict) -> dict:
        """The Python values of the stacked names after the loop, from its results."""
        out = {}
        for name, (kind, treedef, _) in self.grow.items():
            rows = Rows(list(results[name]), treedef, self.n_steps)
            base = self.bases[name]
            out[name] = (known.as_tape(base, rows) if kind == "tape"
                         else known.as_list(rows, base))
        for name, dropped in self.shrink.items():
            rows = self.rows[name]
            keep = len(rows) - dropped * self.n_steps
            if keep < 0:
                raise IndexError(f"`{name}`: the loop drops more items than the list holds")
            out[name] = self.bases[name][:keep] if keep else []
        return out


def _as(v: Array, dtype) -> Array:
    if v.dtype == dtype:
        return v
    from redraft.numpy.promotion import convert
    return convert(v, dtype, False)


def probe(known: Known, written: list[str], env: dict) -> dict:
    """Markers for the names a loop might grow (lists, tapes, None) or shrink (lists with
    stacked rows behind), to stage its body with once and learn what it does to each."""
    markers = {}
    for name in written:
        if name not in env:
            continue  # a temporary of the body
        value = env[name]
        rows = known.rows_of(value) if type(value) is list else None
        if rows is not None:
            markers[name] = Shrinking(name, rows, as_array(np.int32(len(rows))))
        elif value is None or type(value) is list or _is_tape(value):
            markers[name] = Growing(name)
    return markers


def _is_tape(value) -> bool:
    return type(value) is tuple and len(value) == 2 and (value[1] is None
                                                         or type(value[1]) is tuple)


def learn(markers: dict, after: dict, n_steps: int, env: dict) -> LoopStacks:
    """The stacks a probe of the body showed: one item appended, or a fixed count dropped."""
    stacks = LoopStacks(n_steps)
    for name, m in markers.items():
        end = after.get(name)
        if isinstance(m, Shrinking):
            if isinstance(end, Shrinking) and end.origin is m and end.dropped > 0:
                stacks.shrink[name] = end.dropped
                stacks.bases[name], stacks.rows[name] = env[name], m.rows
            continue
        if not (isinstance(end, Growing) and end.origin is m and len(end.pushed) == 1):
            continue
        base = env.get(name)
        if (end.kind == "list") != isinstance(base, list):
            continue
        leaves, treedef = tree_flatten(end.pushed[0])
        try:
            avals = [_aval(to_array(v, name)) for v in leaves]
        except Unstageable:
            continue
        stacks.grow[name] = (end.kind, treedef, avals)
        stacks.bases[name] = base
    return stacks


def _aval(v: Array) -> ShapedArray:
    return ShapedArray(v.shape, v.dtype, v._weak)
