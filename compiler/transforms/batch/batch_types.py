"""Batch types: what the vmap transform knows, per name, about which values carry a batch axis.

The convention of redraft's vmap: a batched array carries its batch axis at position 0, always.
An inner vmap's batch axis therefore sits just behind the batch axes of the vmaps around it,
and every rule can shift axes by a constant known when the source is rewritten.

A batch type is a small frozen, hashable value (generated code passes it as a constant):

    False (U)               unbatched: no leaf of the value carries a batch axis
    True (B)                an array (a pytree leaf) whose axis 0 is the batch axis
    Tuple(t0, t1, ...)      a tuple or list of known length, item by item
    Seq(t)                  a tuple or list of unknown length whose items all have type t
    Tape(t)                 a reverse-mode tape (cons cells (value, rest)) of values of type t
    Dict(keys, types)       a dict with these keys, key by key
    Tree() (TREE)           a pytree of unknown structure, every leaf batched at axis 0

Each container type's repr is the expression generated source rebuilds it with
(`vm.Tuple(vm.U, vm.B)`: the `vm` library exports these classes and U, B), so the Core
printer, which prints a constant by its repr, emits it readably.

Types only grow during inference (`join`), so the fixpoint over loops terminates; a value
assigned with a smaller type than its name's is converted (unbatched leaves broadcast).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union


def _source(t: "BType") -> str:
    """A batch type as generated source spells it (the `vm` library exports U and B)."""
    if isinstance(t, bool):
        return "vm.B" if t else "vm.U"
    return repr(t)


@dataclass(frozen=True, init=False)
class Tuple:
    """A tuple or list of known length: one batch type per item."""
    items: tuple

    def __init__(self, *items: "BType"):
        object.__setattr__(self, "items", tuple(items))

    def __repr__(self) -> str:
        return f"vm.Tuple({', '.join(_source(i) for i in self.items)})"


@dataclass(frozen=True)
class Seq:
    """A tuple or list of unknown length whose items all have batch type `item`."""
    item: "BType"

    def __repr__(self) -> str:
        return f"vm.Seq({_source(self.item)})"


@dataclass(frozen=True)
class Tape:
    """A reverse-mode tape, cons cells (value, rest), of values of batch type `item`."""
    item: "BType"

    def __repr__(self) -> str:
        return f"vm.Tape({_source(self.item)})"


@dataclass(frozen=True)
class Dict:
    """A dict with exactly these keys (in order), `types[i]` the batch type of `keys[i]`."""
    keys: tuple
    types: tuple

    def __repr__(self) -> str:
        types = ", ".join(_source(t) for t in self.types)
        return f"vm.Dict({self.keys!r}, ({types}{',' if len(self.types) == 1 else ''}))"


@dataclass(frozen=True)
class Tree:
    """A pytree of unknown structure whose every leaf is batched at axis 0."""

    def __repr__(self) -> str:
        return "vm.Tree()"


BType = Union[bool, Tuple, Seq, Tape, Dict, Tree]
CONTAINERS = (Tuple, Seq, Tape, Dict)

U: BType = False
B: BType = True
TREE: BType = Tree()
_MAX_DEPTH = 6


def tup(items) -> BType:
    return Tuple(*items)


def seq(elem: BType) -> BType:
    return Seq(elem)


def tape(elem: BType) -> BType:
    return Tape(elem)


def dct(keys, types) -> BType:
    return Dict(tuple(keys), tuple(types))


def is_sequence(t: BType) -> bool:
    """A tuple or list type, of known length or not."""
    return isinstance(t, (Tuple, Seq))


def is_batched(t: BType) -> bool:
    """Whether any leaf of a value of type `t` carries a batch axis."""
    if isinstance(t, bool):
        return t
    if isinstance(t, Tree):
        return True
    if isinstance(t, (Tuple, Dict)):
        return any(is_batched(i) for i in items_of(t))
    return is_batched(t.item)


def is_array(t: BType) -> bool:
    """A batched value that array operations see as one array (B, or a tree leaf of P)."""
    return t is True or isinstance(t, Tree)


def items_of(t: BType) -> tuple[BType, ...] | None:
    """The item types of a Tuple, or the value types of a Dict; None for other types."""
    if isinstance(t, Dict):
        return t.types
    return t.items if isinstance(t, Tuple) else None


def element(t: BType) -> BType:
    """The type of any one item of a container type (U for unbatched values)."""
    if isinstance(t, (Tuple, Dict)):
        out: BType = U
        for i in items_of(t):
            out = join(out, i)
        return out
    if isinstance(t, (Seq, Tape)):
        return t.item
    if isinstance(t, Tree):
        return TREE
    return U


def depth(t: BType) -> int:
    if isinstance(t, (Tuple, Dict)):
        return 1 + max((depth(i) for i in items_of(t)), default=0)
    if isinstance(t, (Seq, Tape)):
        return 1 + depth(t.item)
    return 0


def uniform(t: BType) -> BType:
    """`t` with every item converted to the type of any one item (bt.element): the type a
    container needs before an item is read at a key known only at run time."""
    if isinstance(t, Dict):
        return Dict(t.keys, (element(t),) * len(t.keys))
    if isinstance(t, Tuple):
        return Tuple(*((element(t),) * len(t.items)))
    return t


def iterated(t: BType) -> BType:
    """The type a for loop over a value of type `t` binds: a dict's keys are unbatched; any
    other container binds its items."""
    return U if isinstance(t, Dict) else element(t)


def join(a: BType, b: BType) -> BType:
    """The least type both `a` and `b` convert to."""
    out = _join(a, b)
    return TREE if depth(out) > _MAX_DEPTH else out


def _join(a: BType, b: BType) -> BType:
    if a == b:
        return a
    if a is False:
        return b
    if b is False:
        return a
    if isinstance(a, Tree) or isinstance(b, Tree):
        return TREE
    if isinstance(a, Tuple) and isinstance(b, Tuple):
        if len(a.items) == len(b.items):
            return tup(join(x, y) for x, y in zip(a.items, b.items))
        return seq(join(element(a), element(b)))
    if is_sequence(a) and is_sequence(b):
        return seq(join(element(a), element(b)))
    if isinstance(a, Tape) and isinstance(b, Tape):
        return tape(join(a.item, b.item))
    if isinstance(a, Dict) and isinstance(b, Dict) and a.keys == b.keys:
        return dct(a.keys, (join(x, y) for x, y in zip(a.types, b.types)))
    return TREE  # an array on one path, a container on another: only leaves are known


def leq(a: BType, b: BType) -> bool:
    """Whether a value of type `a` converts to type `b` (a is at most b)."""
    return join(a, b) == b


def batchify(t: BType) -> BType:
    """The type of a value selected per example (`where(mask, a, b)`): every leaf batched."""
    if isinstance(t, bool):
        return B
    if isinstance(t, Tuple):
        return tup(batchify(i) for i in t.items)
    if isinstance(t, Seq):
        return seq(batchify(t.item))
    if isinstance(t, Tape):
        return tape(batchify(t.item))
    if isinstance(t, Dict):
        return dct(t.keys, (batchify(i) for i in t.types))
    return TREE


def item(t: BType, index: Any) -> BType:
    """The type of `value[index]` for a container type and a static index."""
    if isinstance(t, Tuple):
        if isinstance(index, bool) or not isinstance(index, (int, slice)):
            return element(t)
        if isinstance(index, slice):
            return tup(t.items[index])
        try:
            return t.items[index]
        except IndexError:
            return element(t)
    if isinstance(t, Seq):
        return t if isinstance(index, slice) else t.item
    if isinstance(t, Dict):
        try:
            return t.types[t.keys.index(index)] if index in t.keys else element(t)
        except TypeError:
            return element(t)
    return element(t)


def needs_conversion(from_t: BType, to_t: BType) -> bool:
    """Whether some leaf of a from_t value must be broadcast to be a to_t value."""
    if from_t == to_t or not is_batched(to_t):
        return False
    if from_t is U:
        return True
    if from_t is B:
        return False
    keyed = (Tuple, Dict)
    if isinstance(to_t, Tree):
        if isinstance(from_t, keyed):
            return any(needs_conversion(i, TREE) for i in items_of(from_t))
        return isinstance(from_t, (Seq, Tape)) and needs_conversion(from_t.item, TREE)
    if type(from_t) is type(to_t) and isinstance(from_t, keyed):
        return any(needs_conversion(a, b) for a, b in zip(items_of(from_t),
                                                          items_of(to_t)))
    if isinstance(from_t, Tuple):
        return any(needs_conversion(a, element(to_t)) for a in from_t.items)
    return needs_conversion(element(from_t), element(to_t))


def describe(t: BType) -> str:
    """A short readable form for error messages: B, U, (B, U), [B...], tree."""
    if isinstance(t, bool):
        return "B" if t else "U"
    if isinstance(t, Tuple):
        inner = ", ".join(describe(i) for i in t.items)
        return f"({inner}{',' if len(t.items) == 1 else ''})"
    if isinstance(t, Seq):
        return f"[{describe(t.item)}...]"
    if isinstance(t, Tape):
        return f"tape[{describe(t.item)}]"
    if isinstance(t, Dict):
        return "{" + ", ".join(f"{key!r}: {describe(i)}" for key, i in zip(t.keys, t.types)) + "}"
    return "tree"
