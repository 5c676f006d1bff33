"""redraft.tree_util: pytrees (see redraft.runtime.pytree) and `Partial`, a partial
application that is itself a pytree (its arguments are leaves, its function structure)."""
from __future__ import annotations

import functools

from redraft.runtime.pytree import (DictKey, FlattenedIndexKey, GetAttrKey,  # noqa: F401
                                    KeyEntry, KeyPath, PyTreeDef, SequenceKey, all_leaves,
                                    default_registry, flatten_one_level,
                                    flatten_one_level_with_keys, is_tree_node, keystr,
                                    register_dataclass, register_pytree_node,
                                    register_pytree_node_class, register_pytree_with_keys,
                                    register_pytree_with_keys_class, register_static,
                                    tree_all, tree_broadcast, tree_flatten,
                                    tree_flatten_with_path, tree_leaves, tree_leaves_with_path,
                                    tree_map, tree_map_with_path, tree_reduce,
                                    tree_reduce_associative, tree_structure, tree_transpose,
                                    tree_unflatten, treedef_children, treedef_is_leaf,
                                    treedef_tuple)


class Partial(functools.partial):
    """functools.partial whose bound arguments are pytree leaves and whose function is part
    of the structure, so it can be passed into and out of transformed functions."""


def _partial_flatten(p: Partial):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func, children) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)
