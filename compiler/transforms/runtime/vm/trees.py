"""Batched values of any structure: conversion between batch types (unbatched leaves
broadcast), one example of a value, and the steps of a scan, walked leaf by leaf with the
value's batch type (compiler/transforms/batch/batch_types.py)."""
from __future__ import annotations

from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.runtime.vm.shapes import broadcast, unbroadcast
from redraft.runtime.pytree import tree_map

import redraft.numpy as jnp


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
    if bt.is_array(to_t) and from_t is bt.U:
        return _broadcast_leaves(x, n, outer, reverse)
    if isinstance(to_t, bt.Tree) and not isinstance(x, dict):
        if isinstance(x, (tuple, list)) and bt.is_sequence(from_t):
            items = [_convert(v, _item(from_t, i), bt.TREE, n, _items(outer, i), reverse)
                     for i, v in enumerate(x)]
            return _rebuild(x, items)
        return x
    if isinstance(x, (tuple, list)) and bt.is_sequence(to_t):
        items = [_convert(v, _item(from_t, i), _item(to_t, i), n, _items(outer, i), reverse)
                 for i, v in enumerate(x)]
        return _rebuild(x, items)
    if isinstance(x, dict) and isinstance(to_t, (bt.Dict, bt.Tree)):
        return {key: _convert(v, _item(from_t, key), _item(to_t, key) if isinstance(to_t, bt.Dict)
                              else bt.TREE, n, _items(outer, key), reverse)
                for key, v in x.items()}
    if isinstance(to_t, bt.Tape) and isinstance(x, tuple) and len(x) == 2:
        head = _convert(x[0], _item(from_t, 0), to_t.item, n, _items(outer, 0), reverse)
        rest = _convert(x[1], from_t, to_t, n, outer, reverse)
        return (head, rest)
    raise TypeError(f"vmap: cannot convert a {type(x).__name__} of batch type "
                    f"{bt.describe(from_t)} to {bt.describe(to_t)}")


def take_example(x, t, k: int):
    """Example k of a value of batch type t: batched leaves indexed, the rest as they are."""
    if not bt.is_batched(t) or x is None:
        return x
    if bt.is_array(t):
        return tree_map(lambda leaf: leaf[k], x)
    if isinstance(x, dict):
        return {key: take_example(v, _item(t, key), k) for key, v in x.items()}
    if isinstance(x, (tuple, list)):
        if isinstance(t, bt.Tape):
            return (take_example(x[0], t.item, k), take_example(x[1], t, k))
        return _rebuild(x, [take_example(v, _item(t, i), k) for i, v in enumerate(x)])
    raise TypeError(f"vmap: cannot take one example of a {type(x).__name__} of batch type "
                    f"{bt.describe(t)}")


def tree_index(xs, t, i):
    """Step i of a scan over xs (batch type t): batched leaves indexed behind their batch
    axis, the others at their front."""
    if xs is None:
        return None
    if bt.is_array(t):
        return tree_map(lambda leaf: leaf[:, i], xs)
    if not bt.is_batched(t):
        return tree_map(lambda leaf: leaf[i], xs)
    if isinstance(xs, dict):
        return {key: tree_index(v, _item(t, key), i) for key, v in xs.items()}
    if isinstance(xs, (tuple, list)):
        return _rebuild(xs, [tree_index(v, _item(t, j), i) for j, v in enumerate(xs)])
    raise TypeError(f"vmap: cannot scan over a {type(xs).__name__} of batch type "
                    f"{bt.describe(t)}")


def tree_index_bar(xs, t, i, g):
    """The cotangent of tree_index: zeros like xs with g at step i."""
    from redraft.compiler.transforms.runtime.ad import zeros_like
    if xs is None:
        return None
    if bt.is_array(t):
        return tree_map(lambda z, gi: z.at[:, i].add(gi), zeros_like(xs), g)
    if not bt.is_batched(t):
        return tree_map(lambda z, gi: z.at[i].add(gi), zeros_like(xs), g)
    if isinstance(xs, dict):
        return {key: tree_index_bar(v, _item(t, key), i, g[key]) for key, v in xs.items()}
    return _rebuild(xs, [tree_index_bar(v, _item(t, j), i, g[j]) for j, v in enumerate(xs)])


def tree_unstack(g, ys: list, t, reverse: bool) -> list:
    """The cotangent of tree_stack: one step of every leaf per item of ys."""
    n = len(ys)
    parts = [tree_index(g, t, k) for k in range(n)]
    return list(reversed(parts)) if reverse else parts


def take_example_bar(x, t, k: int, g):
    """The cotangent of take_example: zeros like x with g at example k."""
    from redraft.compiler.transforms.runtime.ad import zeros_like
    if not bt.is_batched(t) or x is None:
        return g
    if bt.is_array(t):
        return tree_map(lambda z, gi: z.at[k].add(gi), zeros_like(x), g)
    if isinstance(x, dict):
        return {key: take_example_bar(v, _item(t, key), k, g[key]) for key, v in x.items()}
    if isinstance(t, bt.Tape):
        return (take_example_bar(x[0], t.item, k, g[0]), take_example_bar(x[1], t, k, g[1]))
    return _rebuild(x, [take_example_bar(v, _item(t, j), k, g[j]) for j, v in enumerate(x)])


def tree_stack(ys: list, t, reverse: bool):
    """A scan's per-step outputs (each of batch type t) stacked along a new step axis:
    behind the batch axis for batched leaves, in front for the others."""
    if not ys:
        raise ValueError("scan of length 0 has no outputs to stack")
    items = list(reversed(ys)) if reverse else list(ys)
    return _stack_steps(items, t)


def _stack_steps(items: list, t):
    first = items[0]
    if first is None:
        return None
    if bt.is_array(t):
        return tree_map(lambda *leaves: jnp.stack(leaves, 1), *items)
    if not bt.is_batched(t):
        return tree_map(lambda *leaves: jnp.stack(leaves), *items)
    if isinstance(first, dict):
        return {key: _stack_steps([x[key] for x in items], _item(t, key)) for key in first}
    if isinstance(first, (tuple, list)):
        return _rebuild(first, [_stack_steps([x[j] for x in items], _item(t, j))
                                for j in range(len(first))])
    raise TypeError(f"vmap: cannot stack scan outputs of batch type {bt.describe(t)}")


def _item(t, i):
    if isinstance(t, bt.Tape):
        return t.item if i == 0 else t
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
    if any(not (t is bt.U or bt.is_array(t)) for t in outer):
        raise TypeError("vmap: cannot broadcast a nested structure batched by an outer vmap")
    if reverse:
        return tree_map(lambda g: unbroadcast(g, k), x)
    return tree_map(lambda leaf: broadcast(leaf, n, k), x)



def static_key(item):
    """The sort key of an item of a batched container: the item with each array leaf (it
    differs from example to example) standing in as a value that refuses comparison
    (tuples and lists rebuilt). `sorted(pairs, key=vm.static_key)` therefore orders a dict's
    (key, value) pairs, or (name, array) tuples, by what is the same in every example, once
    for all examples, and a comparison that would reach the arrays raises, as JAX's does on
    a tracer."""
    if isinstance(item, (tuple, list)) and not hasattr(type(item), "_fields"):
        return type(item)(static_key(v) for v in item)
    if item is None or isinstance(item, (str, bytes, bool, int, float)):
        return item
    return _PerExample()


class ExampleKey:
    """A sort key function of the user's, batched (it takes one more argument, the number
    of examples), as a function of one item: what `sorted(items, key=...)` calls when the
    key is the same in every example (compiler/transforms/batch/rules/structure.py)."""

    def __init__(self, batched, n: int):
        self.batched = batched
        self.n = n

    def __call__(self, item):
        return self.batched(item, self.n)


class _PerExample:
    """A value that differs from example to example, inside an item being ordered: any
    comparison of it raises (there is no one answer for every example)."""

    def _refuse(self, other):
        raise TypeError("vmap: sorted(), max() or min() compares values that differ from "
                        "example to example (JAX: TracerBoolConversionError); order by keys "
                        "that are the same for every example (strings, numbers), or use "
                        "jnp.sort / jnp.argsort")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _refuse
    __hash__ = None
