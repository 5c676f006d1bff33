"""redraft.tree: the short names of jax.tree (`tree.map`, `tree.leaves`, ...) for the
functions of redraft.tree_util."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from redraft.runtime import pytree as _pt

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

flatten = _pt.tree_flatten
flatten_with_path = _pt.tree_flatten_with_path
leaves = _pt.tree_leaves
leaves_with_path = _pt.tree_leaves_with_path
map = _pt.tree_map  # noqa: A001
map_with_path = _pt.tree_map_with_path
structure = _pt.tree_structure
unflatten = _pt.tree_unflatten
broadcast = _pt.tree_broadcast
reduce_associative = _pt.tree_reduce_associative
all = _pt.tree_all  # noqa: A001


def reduce(function: Callable, tree: Any, *initializer: Any,
           is_leaf: Callable | None = None) -> Any:
    """functools.reduce over the leaves of `tree`."""
    return _pt.tree_reduce(function, tree, *initializer, is_leaf=is_leaf)


def transpose(outer_treedef, inner_treedef, pytree_to_transpose) -> Any:
    """An outer tree of inner trees turned into an inner tree of outer trees."""
    return _pt.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def static(**field_kwargs: Any) -> Any:
    """dataclasses.field(...) marked static: register_dataclass makes it part of the tree
    structure, not a leaf."""
    metadata = dict(field_kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **field_kwargs)
