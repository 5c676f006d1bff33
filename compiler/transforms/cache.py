"""Tables keyed by a callable's identity: the rule registries, and the one cache of what the
compiler computes per function.

`IdentityTable` is the registries' mapping (derivative rules, batching entries, static
constructors). A key is the operation object itself, compared with `is` rather than `==` (an
Array compares elementwise, a dataclass by value), and the table holds its keys: a registered
operation lives as long as the process, so an entry can never outlive its key.

`TRANSFORM_CACHE` holds what reading a function costs, by kind: its Core for staging
("staging"), for vmap ("batch source"), a rule's inlined Core ("rule"), an operation's
signature ("signature"), a vmapped callee. Its lifetime is the function's: an entry is
dropped by a weak reference when the function is freed (a WeakKeyDictionary), so a later
function can never see a freed one's entry. Objects that take no weak reference (builtins,
ufuncs) live as long as the process anyway, and unhashable callables are found by identity;
both are kept for good. `clear()` empties it (tests, a long session).
"""
from __future__ import annotations

import weakref
from collections.abc import Iterator, MutableMapping
from typing import Any, Callable


class _Identity:
    """An object as a dictionary key by identity, holding it."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self) -> int:
        return object.__hash__(self.obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj


class IdentityTable(MutableMapping):
    """A mapping keyed by object identity that keeps its keys alive (see the module doc)."""

    def __init__(self):
        self._items: dict[_Identity, Any] = {}

    def __getitem__(self, key):
        return self._items[_Identity(key)]

    def __setitem__(self, key, value) -> None:
        self._items[_Identity(key)] = value

    def __delitem__(self, key) -> None:
        del self._items[_Identity(key)]

    def __contains__(self, key) -> bool:
        return _Identity(key) in self._items

    def __iter__(self) -> Iterator:
        return (k.obj for k in self._items)

    def __len__(self) -> int:
        return len(self._items)


class TransformCache:
    """Per-function results, by kind, living as long as the function (see the module doc)."""

    def __init__(self):
        self._weak: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._kept = IdentityTable()  # no weak reference, or no hash: kept for good

    def get(self, fn, kind: str, compute: Callable[[], Any]):
        """The cached `kind` result for `fn`, computing it with `compute()` on a miss."""
        table = self._table(fn)
        entry = table.get(fn)
        if entry is not None and kind in entry:
            return entry[kind]
        value = compute()
        table.setdefault(fn, {})[kind] = value
        return value

    def _table(self, fn) -> MutableMapping:
        try:
            weakref.ref(fn)
            hash(fn)
        except TypeError:
            return self._kept
        return self._weak

    def forget(self, fn) -> None:
        """Drop every result kept for `fn` (its Core, its transforms), as if new."""
        self._table(fn).pop(fn, None)

    def clear(self) -> None:
        self._weak.clear()
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._weak) + len(self._kept)


TRANSFORM_CACHE = TransformCache()


def closure_state(fn) -> tuple:
    """What `fn`'s closure cells hold, by identity: part of a cache kind where the Core
    read from `fn` depends on them (a cell set to another value reads the source again)."""
    state = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            state.append(_Identity(cell.cell_contents))
        except ValueError:  # an empty cell
            state.append(None)
    return tuple(state)


def identity(obj) -> _Identity:
    """`obj` as part of a cache key: equal only to itself, and held while the key lives."""
    return _Identity(obj)


def code_state(fn) -> tuple:
    """`fn`'s code object and closure contents, by identity: the Core read from `fn` is
    the same while they are (a new closure, or reassigned code, reads the source again)."""
    return (identity(getattr(fn, "__code__", None)),) + closure_state(fn)
