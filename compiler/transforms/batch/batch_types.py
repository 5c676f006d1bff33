"""Batch types: what the vmap transform knows, per name, about which values carry a batch axis.

The convention of redraft's vmap: a batched array carries its batch axis at position 0, always.
An inner vmap's batch axis therefore sits just behind the batch axes of the vmaps around it,
and every rule can shift axes by a constant known when the source is rewritten.

A batch type is a small hashable Python value (so generated code can pass it as a constant):

    False                   unbatched: no leaf of the value carries a batch axis
    True                    an array (a pytree leaf) whose axis 0 is the batch axis
    ("T", (t0, t1, ...))    a tuple or list of known length, item by item
    ("L", t)                a tuple or list of unknown length whose items all have type t
    ("tape", t)             a reverse-mode tape (cons cells (value, rest)) of values of type t
    ("D", keys, types)      a dict with these keys, key by key
    ("P",)                  a pytree of unknown structure, every leaf batched at axis 0

Types only grow during inference (`join`), so the fixpoint over loops terminates; a value
assigned with a smaller type than its name's is converted (unbatched leaves broadcast).
"""
from __future__ import annotations

from typing import Any, Union

BType = Union[bool, tuple]

U: BType = False
B: BType = True
TREE: BType = ("P",)
_MAX_DEPTH = 6


def tup(items) -> BType:
    return ("T", tuple(items))


def seq(elem: BType) -> BType:
    return ("L", elem)


def tape(elem: BType) -> BType:
    return ("tape", elem)


def dct(keys, types) -> BType:
    return ("D", tuple(keys), tuple(types))


def kind(t: BType) -> str:
    """'U', 'B', 'T', 'L', 'tape', 'D' or 'P'."""
    if t is False:
        return "U"
    if t is True:
        return "B"
    return t[0]


def is_batched(t: BType) -> bool:
    """Whether any leaf of a value of type `t` carries a batch axis."""
    k = kind(t)
    if k in ("U",):
        return False
    if k in ("B", "P"):
        return True
    if k == "T":
        return any(is_batched(i) for i in t[1])
    if k == "D":
        return any(is_batched(i) for i in t[2])
    return is_batched(t[1])


def is_array(t: BType) -> bool:
    """A batched value that array operations see as one array (B, or a tree leaf of P)."""
    return t is True or t == TREE


def items_of(t: BType) -> tuple[BType, ...] | None:
    if kind(t) == "D":
        return t[2]
    return t[1] if kind(t) == "T" else None


def element(t: BType) -> BType:
    """The type of any one item of a container type (U for unbatched values)."""
    k = kind(t)
    if k in ("T", "D"):
        out: BType = U
        for i in items_of(t):
            out = join(out, i)
        return out
    if k in ("L", "tape"):
        return t[1]
    if k == "P":
        return TREE
    return U


def depth(t: BType) -> int:
    k = kind(t)
    if k in ("T", "D"):
        return 1 + max((depth(i) for i in items_of(t)), default=0)
    if k in ("L", "tape"):
        return 1 + depth(t[1])
    return 0


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
    ka, kb = kind(a), kind(b)
    if "P" in (ka, kb):
        return TREE
    if ka == kb == "T":
        if len(a[1]) == len(b[1]):
            return tup(join(x, y) for x, y in zip(a[1], b[1]))
        return seq(join(element(a), element(b)))
    if {ka, kb} <= {"T", "L"}:
        return seq(join(element(a), element(b)))
    if ka == kb == "tape":
        return tape(join(a[1], b[1]))
    if ka == kb == "D" and a[1] == b[1]:
        return dct(a[1], (join(x, y) for x, y in zip(a[2], b[2])))
    return TREE  # an array on one path, a container on another: only leaves are known


def leq(a: BType, b: BType) -> bool:
    """Whether a value of type `a` converts to type `b` (a is at most b)."""
    return join(a, b) == b


def batchify(t: BType) -> BType:
    """The type of a value selected per example (`where(mask, a, b)`): every leaf batched."""
    k = kind(t)
    if k in ("U", "B"):
        return B
    if k == "T":
        return tup(batchify(i) for i in t[1])
    if k == "L":
        return seq(batchify(t[1]))
    if k == "tape":
        return tape(batchify(t[1]))
    if k == "D":
        return dct(t[1], (batchify(i) for i in t[2]))
    return TREE


def item(t: BType, index: Any) -> BType:
    """The type of `value[index]` for a container type and a static index."""
    k = kind(t)
    if k == "T":
        items = t[1]
        if isinstance(index, bool) or not isinstance(index, (int, slice)):
            return element(t)
        if isinstance(index, slice):
            return tup(items[index])
        try:
            return items[index]
        except IndexError:
            return element(t)
    if k == "L":
        return t if isinstance(index, slice) else t[1]
    if k == "D":
        try:
            return t[2][t[1].index(index)] if index in t[1] else element(t)
        except TypeError:
            return element(t)
    return element(t)


def describe(t: BType) -> str:
    """A short readable form for error messages: B, U, (B, U), [B...], tree."""
    k = kind(t)
    if k in ("U", "B"):
        return k
    if k == "T":
        inner = ", ".join(describe(i) for i in t[1])
        return f"({inner}{',' if len(t[1]) == 1 else ''})"
    if k == "L":
        return f"[{describe(t[1])}...]"
    if k == "tape":
        return f"tape[{describe(t[1])}]"
    if k == "D":
        return "{" + ", ".join(f"{key!r}: {describe(i)}" for key, i in zip(t[1], t[2])) + "}"
    return "tree"


