"""Pytrees: nested containers whose leaves are arrays, flattened and rebuilt by every transform.

Containers are None, tuples, lists, dicts (flattened in sorted key order), namedtuples and
classes registered with `register_pytree_node` / `register_pytree_node_class`. Anything
else is a leaf.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable,
                         unflatten_func: Callable) -> None:
    """flatten_func(x) -> (children, aux_data); unflatten_func(aux_data, children) -> x."""
    if nodetype in _REGISTRY or nodetype in _BUILTIN_TYPES:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _REGISTRY[nodetype] = (flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: `cls.tree_flatten()` and `cls.tree_unflatten(aux, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


_BUILTIN_TYPES = (tuple, list, dict, type(None))


@dataclass(frozen=True)
class PyTreeDef:
    """The structure of a pytree: node kind, auxiliary data, and child structures."""
    kind: Any  # None for a leaf, else the container type
    aux: Hashable
    children: tuple["PyTreeDef", ...]

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves: Iterable) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self) -> str:
        return f"PyTreeDef({self._show()})"

    def _show(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(c._show() for c in self.children)
        if self.kind is type(None):
            return "None"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c._show()}"
                                   for k, c in zip(self.aux, self.children)) + "}"
        return f"{self.kind.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def _children(x, is_leaf) -> tuple[Any, Hashable, list] | None:
    """(kind, aux, children) of a container node, or None for a leaf."""
    if is_leaf is not None and is_leaf(x):
        return None
    kind = type(x)
    if x is None:
        return type(None), None, []
    if kind is tuple or kind is list:
        return kind, None, list(x)
    if kind is dict:
        keys = sorted(x)
        return dict, tuple(keys), [x[k] for k in keys]
    if kind in _REGISTRY:
        children, aux = _REGISTRY[kind][0](x)
        return kind, aux, list(children)
    if _is_namedtuple(x):
        return kind, None, list(x)
    return None


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef): the leaves in a deterministic order and the structure around them."""
    leaves: list = []

    def walk(x) -> PyTreeDef:
        node = _children(x, is_leaf)
        if node is None:
            leaves.append(x)
            return _LEAF
        kind, aux, kids = node
        return PyTreeDef(kind, aux, tuple(walk(k) for k in kids))

    return leaves, walk(tree)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a tree of structure `treedef` from `leaves`."""
    it = iter(leaves)

    def build(td: PyTreeDef):
        if td.kind is None:
            leaf = next(it, _SENTINEL)
            if leaf is _SENTINEL:
                raise ValueError(f"too few leaves for tree structure {treedef}")
            return leaf
        kids = [build(c) for c in td.children]
        return _rebuild(td, kids)

    out = build(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef}")
    return out


_SENTINEL = object()


def _rebuild(td: PyTreeDef, kids: list):
    kind = td.kind
    if kind is type(None):
        return None
    if kind is tuple:
        return tuple(kids)
    if kind is list:
        return kids
    if kind is dict:
        return dict(zip(td.aux, kids))
    if kind in _REGISTRY:
        return _REGISTRY[kind][1](td.aux, kids)
    return kind(*kids)  # namedtuple


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """Apply `f` leaf-wise over `tree` and trees `rest` of the same structure."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {other_def}")
        others.append(other_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))


def tree_reduce(function: Callable, tree, *initializer):
    from functools import reduce
    return reduce(function, tree_leaves(tree), *initializer)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.kind is None


def all_leaves(iterable) -> bool:
    return all(tree_structure(x).kind is None for x in iterable)
