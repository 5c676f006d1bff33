"""Runtime helpers that Core code calls where Python syntax has no single operation.

Each is a small pure function. Those that touch differentiable values have rules in
compiler/transforms/ad/rules/, like any other operation.
"""
from __future__ import annotations


def check(cond, message="") -> None:
    """`assert cond, message` (kept under -O too: it guards user invariants)."""
    if not cond:
        raise AssertionError(message)


def raise_(exc) -> None:
    """`raise exc`."""
    if exc is None:
        raise RuntimeError("re-raise outside an except block")
    raise exc


def decide_try(decider, *values) -> tuple:
    """Which statements of a `try` run, decided on the values it reads when the function
    runs (compiler/frontend/static_try.py RunTimeTry): (statements that ran, handler index,
    the exception). Carries no derivative and is the same for every example."""
    return decider(*values)


def make_dict(keys: tuple, values: tuple) -> dict:
    """`{k: v, ...}`."""
    return dict(zip(keys, values))


def make_namedtuple(cls, items: tuple):
    """`Cls(a, b)` of a NamedTuple class, its fields given in order (the frontend binds
    keywords and defaults), so that transforms follow each field to its item."""
    return cls(*items)


def is_namedtuple_class(value) -> bool:
    """A class made by typing.NamedTuple or collections.namedtuple."""
    return (isinstance(value, type) and issubclass(value, tuple)
            and isinstance(getattr(value, "_fields", None), tuple))


def make_object(cls, items: tuple, names: tuple = ()):
    """`Cls(a, b, k=c)` of the user's class registered as a pytree: the arguments as one
    tuple (the last `names` by keyword), so that transforms follow each to the leaves the
    object holds."""
    n = len(items) - len(names)
    return cls(*items[:n], **dict(zip(names, items[n:])))


def is_pytree_class(value) -> bool:
    """A class of the user's registered as a pytree node (register_pytree_node_class,
    register_dataclass), whose objects the transforms see through."""
    from redraft.runtime.pytree import _REGISTRY
    return (isinstance(value, type) and value in _REGISTRY
            and not (value.__module__ or "").startswith("redraft."))


def zip_spread(sequences) -> list:
    """`zip(*sequences)` (a transpose: `ks, bs = zip(*pairs)`), as a list of tuples."""
    return list(zip(*sequences))


def merge_dicts(first: dict, second: dict) -> dict:
    """`{**first, **second}`: a new dict, second's items over first's."""
    return {**first, **second}


def append(items: list, item) -> list:
    """A new list: `items + [item]` (Core never mutates a value another name may hold)."""
    return items + [item]


def values_of(container):
    """`d.values()`: a dict's values as a list (a function of its own, so that transforms
    follow the values to the dict); any other object's own values()."""
    if isinstance(container, dict):
        return list(container.values())
    return container.values()


def items_of(container):
    """`d.items()`: a dict's (key, value) pairs as a list; any other object's own items()."""
    if isinstance(container, dict):
        return list(container.items())
    return container.items()


def keys_of(container):
    """`d.keys()`: a dict's keys as a list; any other object's own keys()."""
    if isinstance(container, dict):
        return list(container.keys())
    return container.keys()


def iterated(xs):
    """What `for v in xs` visits, as a sequence to index: a dict's keys (iterating a dict
    yields them), any other value itself. Loops over differentiated values read their items
    by position (ad/loops.py), and position k of a dict is its k-th key, not xs[k]."""
    if isinstance(xs, dict):
        return list(xs)
    return xs


def concat(left, right):
    """`left + right` where the source shows a list or tuple: the sequences joined (a
    function of its own, so that transforms never take it for array addition)."""
    return left + right


def set_item(container, key, value):
    """`container[key] = value` on a dict or list the function built, as a new container
    (Core never mutates a value another name may hold)."""
    if isinstance(container, dict):
        return {**container, key: value}
    if isinstance(container, list):
        out = list(container)
        out[key] = value
        return out
    raise TypeError("item assignment `x[i] = v` is not allowed: arrays are immutable. Use "
                    "`x = x.at[i].set(v)`")


def astype(x, dtype):
    """`x.astype(dtype)` for any array-like."""
    import redraft.numpy as jnp
    return jnp.asarray(x).astype(dtype)


def at_set(x, idx, v):
    """`x.at[idx].set(v)`."""
    return x.at[idx].set(v)


def at_add(x, idx, v):
    """`x.at[idx].add(v)`."""
    return x.at[idx].add(v)


def at_multiply(x, idx, v):
    return x.at[idx].multiply(v)


def at_divide(x, idx, v):
    return x.at[idx].divide(v)


def at_subtract(x, idx, v):
    return x.at[idx].subtract(v)


def at_power(x, idx, v):
    return x.at[idx].power(v)


def at_min(x, idx, v):
    return x.at[idx].min(v)


def at_max(x, idx, v):
    return x.at[idx].max(v)


def at_get(x, idx):
    return x.at[idx].get()


AT_UPDATES = {"set": at_set, "add": at_add, "multiply": at_multiply, "divide": at_divide,
              "subtract": at_subtract, "power": at_power, "min": at_min, "max": at_max,
              "get": at_get}


# ---- lax control flow lowered to Core (compiler/frontend/control_flow.py) ----------------------

def equals(a, b):
    """`a == b` on a switch index (a Python int, or an int array known at run time)."""
    return a == b


def clamp_index(index, n: int):
    """lax.switch's branch: the index clamped into range. A Python int stays one; an array
    index (known only when compiled code runs, or one per example under vmap) is clipped as
    an array, and the chain of branch tests compares it where it is known."""
    if isinstance(index, int):
        return min(max(index, 0), n - 1)
    return index.clip(0, n - 1)


def scan_length(xs, length) -> int:
    """The number of scan steps: `length`, or the leading size of every leaf of xs."""
    from redraft.runtime.pytree import tree_leaves
    import numpy as np
    sizes = {np.shape(leaf)[0] for leaf in tree_leaves(xs) if np.ndim(leaf) > 0}
    if length is not None:
        sizes.add(int(length))
    if len(sizes) > 1:
        raise ValueError(f"scan got inconsistent lengths: leading sizes and length {sorted(sizes)}")
    if not sizes:
        raise ValueError("scan needs xs with a leading axis, or length=")
    return sizes.pop()


def scan_indices(n: int, reverse: bool) -> range:
    """The order of a scan's steps."""
    return range(n - 1, -1, -1) if reverse else range(n)


def tree_index(xs, i):
    """Step i of a scan over a pytree: every leaf indexed at i (None stays None)."""
    from redraft.runtime.pytree import tree_map
    return tree_map(lambda leaf: leaf[i], xs)


def tree_index_add(xs, i, g):
    """Zeros shaped like xs with g added at step i (the cotangent of tree_index)."""
    from redraft.runtime.pytree import tree_map
    from redraft.compiler.transforms.runtime.ad import zeros_like
    return tree_map(lambda z, gi: z.at[i].add(gi), zeros_like(xs), g)


def tree_stack(ys: list, reverse: bool):
    """A scan's outputs, step by step, stacked leaf by leaf along a new first axis."""
    from redraft.runtime.pytree import tree_map
    import redraft.numpy as jnp
    if not ys:
        raise ValueError("scan of length 0 has no outputs to stack")
    items = list(reversed(ys)) if reverse else ys
    return tree_map(lambda *leaves: jnp.stack(leaves), *items)


def tree_unstack(stacked, ys: list, reverse: bool) -> list:
    """The cotangent of tree_stack: one slice of every leaf per step, in ys's order."""
    from redraft.runtime.pytree import tree_map
    n = len(ys)
    parts = [tree_map(lambda leaf: leaf[k], stacked) for k in range(n)]
    return list(reversed(parts)) if reverse else parts
