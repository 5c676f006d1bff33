"""redraft.tree_util: pytrees (see redraft.runtime.pytree)."""
from redraft.runtime.pytree import (PyTreeDef, all_leaves, register_pytree_node,  # noqa: F401
                                    register_pytree_node_class, tree_all, tree_flatten,
                                    tree_leaves, tree_map, tree_reduce, tree_structure,
                                    tree_unflatten, treedef_is_leaf)
