"""Pytrees: nested containers whose leaves are arrays, flattened and rebuilt by every transform.

Containers are None, tuples, lists, dicts (flattened in sorted key order), namedtuples and
classes registered with `register_pytree_node` / `register_pytree_node_class` (or, naming
each child, `register_pytree_with_keys`). Anything else is a leaf.

Every leaf has a key path, the tuple of keys leading to it from the root: `SequenceKey(i)`
into tuples and lists, `DictKey(k)` into dicts, `GetAttrKey(name)` into namedtuples and
dataclasses, and `FlattenedIndexKey(i)` into registered nodes that do not name their
children; `keystr` prints a path as `['a'][0].b`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Iterator

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}
_KEYED: dict[type, Callable] = {}  # flatten_with_keys of nodes registered with keys


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

    def flatten_up_to(self, tree) -> list:
        return flatten_up_to(self, tree)

    def __hash__(self) -> int:
        # aux data may be unhashable (a dict of settings, as JAX allows): hash its contents
        return hash((self.kind, _hashable(self.aux), self.children))

    def node_data(self):
        """(node type, aux data), or None for a leaf."""
        return None if self.kind is None else (self.kind, self.aux)

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


def _hashable(value):
    """`value`, or for an unhashable dict, list or set a hashable stand-in of its contents
    (equal values give equal stand-ins, as treedef equality compares aux data by value)."""
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((repr(k), _hashable(v)) for k, v in value.items()))))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_hashable(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in value)))
    return ("unhashable", type(value).__name__, id(value))


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
    return leaves, _flatten_into(tree, is_leaf, leaves)


# The walks below are module functions that take their accumulator, not closures: a
# recursive closure refers to itself through its cell, so every call would leave a reference
# cycle holding the leaves (the user's arrays) until the cyclic collector runs.

def _flatten_into(x, is_leaf: Callable | None, leaves: list) -> PyTreeDef:
    node = _children(x, is_leaf)
    if node is None:
        leaves.append(x)
        return _LEAF
    kind, aux, kids = node
    return PyTreeDef(kind, aux, tuple(_flatten_into(k, is_leaf, leaves) for k in kids))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a tree of structure `treedef` from `leaves`."""
    it = iter(leaves)
    out = _build(treedef, it, treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef}")
    return out


def _build(td: PyTreeDef, it: Iterator, whole: PyTreeDef):
    if td.kind is None:
        leaf = next(it, _SENTINEL)
        if leaf is _SENTINEL:
            raise ValueError(f"too few leaves for tree structure {whole}")
        return leaf
    return _rebuild(td, [_build(c, it, whole) for c in td.children])


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
    columns = [leaves] + others  # read by index: transforms differentiate through it
    return tree_unflatten(treedef, [f(*[c[i] for c in columns]) for i in range(len(leaves))])


def tree_all(tree, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf is true."""
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(function: Callable, tree, *initializer, is_leaf: Callable | None = None):
    """functools.reduce over the leaves (with an initial value if one is given)."""
    from functools import reduce
    return reduce(function, tree_leaves(tree, is_leaf), *initializer)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.kind is None


def all_leaves(iterable) -> bool:
    return all(tree_structure(x).kind is None for x in iterable)


# ---- key paths -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a tuple or list."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    """The key of a child in a dict."""
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    """The attribute name of a child in a namedtuple or dataclass."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child among a registered node's flattened children."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any
KeyPath = tuple


def _simple(entry) -> str:
    for field in ("idx", "key", "name"):
        if hasattr(entry, field):
            return str(getattr(entry, field))
    return str(entry)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: `['a'][0].b`, or with simple=True the bare keys joined by
    `separator` (`a/0/b` for separator='/')."""
    if simple:
        return separator.join(_simple(k) for k in keys)
    return separator.join(str(k) for k in keys)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Like register_pytree_node, with flatten_with_keys(x) -> (((key, child), ...), aux)
    naming each child for key paths."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _KEYED[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: `cls.tree_flatten_with_keys()` and `cls.tree_unflatten(aux, children)`
    (and `cls.tree_flatten()` if the class has one)."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Iterable[str] | None = None,
                       meta_fields: Iterable[str] | None = None,
                       drop_fields: Iterable[str] = ()) -> type:
    """Register a dataclass: `data_fields` are children, `meta_fields` static data (part of
    the tree structure). Without them, fields marked `field(metadata=dict(static=True))` are
    meta fields and the others data fields."""
    import dataclasses
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                            "give data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in
                  set(drop_fields)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, aux)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


def register_static(cls: type) -> type:
    """Register `cls` as a node without children: its (hashable) instances are part of the
    tree structure, never leaves."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def _keyed_children(x, is_leaf) -> tuple[Any, Hashable, list, list] | None:
    """(kind, aux, keys, children) of a container node, or None for a leaf."""
    node = _children(x, is_leaf)
    if node is None:
        return None
    kind, aux, kids = node
    if kind is tuple or kind is list:
        keys = [SequenceKey(i) for i in range(len(kids))]
    elif kind is dict:
        keys = [DictKey(k) for k in aux]
    elif kind in _KEYED:
        keys = [k for k, _ in _KEYED[kind](x)[0]]
    elif kind in _REGISTRY or kind is type(None):
        keys = [FlattenedIndexKey(i) for i in range(len(kids))]
    else:  # namedtuple
        keys = [GetAttrKey(f) for f in kind._fields]
    return kind, aux, keys, kids


def tree_flatten_with_path(tree, is_leaf: Callable | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """([(key_path, leaf), ...], treedef), leaves in tree_flatten's order."""
    pairs: list = []
    return pairs, _flatten_with_path_into(tree, (), is_leaf, pairs)


def _flatten_with_path_into(x, path: tuple, is_leaf: Callable | None, pairs: list
                            ) -> PyTreeDef:
    node = _keyed_children(x, is_leaf)
    if node is None:
        pairs.append((path, x))
        return _LEAF
    kind, aux, keys, kids = node
    return PyTreeDef(kind, aux, tuple(_flatten_with_path_into(c, path + (k,), is_leaf, pairs)
                                      for k, c in zip(keys, kids)))


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    """[(key_path, leaf), ...]."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """tree_map where `f(path, leaf, *others)` also receives each leaf's key path."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            raise ValueError(f"tree_map_with_path: structures differ: {treedef} and "
                             f"{other_def}")
        others.append(other_leaves)
    outs = [f(pairs[i][0], pairs[i][1], *[o[i] for o in others])  # read by index, as tree_map
            for i in range(len(pairs))]
    return tree_unflatten(treedef, outs)


# ---- structure utilities ---------------------------------------------------------------------

def flatten_one_level(tree) -> tuple[list, Hashable]:
    """(children, aux data) of a container node; a leaf raises ValueError."""
    node = _children(tree, None)
    if node is None:
        raise ValueError(f"flatten_one_level: {type(tree).__name__} is a leaf, not a node")
    return node[2], node[1]


def flatten_one_level_with_keys(tree) -> tuple[list, Hashable]:
    """([(key, child), ...], aux data) of a container node; a leaf raises ValueError."""
    node = _keyed_children(tree, None)
    if node is None:
        raise ValueError(f"flatten_one_level_with_keys: {type(tree).__name__} is a leaf")
    return list(zip(node[2], node[3])), node[1]


def is_tree_node(x, is_leaf: Callable | None = None) -> bool:
    """Whether x is a container (with children or, like None, without), not a leaf."""
    return _children(x, is_leaf) is not None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return list(treedef.children)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have structures `treedefs`."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def flatten_up_to(treedef: PyTreeDef, tree) -> list:
    """The subtrees of `tree` at the leaves of `treedef`, a prefix of tree's structure."""
    out: list = []
    _up_to_into(treedef, tree, out, treedef, tree)
    return out


def _up_to_into(td: PyTreeDef, x, out: list, whole: PyTreeDef, tree) -> None:
    if td.kind is None:
        out.append(x)
        return
    node = _children(x, None)
    if node is None or node[0] is not td.kind or node[1] != td.aux or len(
            node[2]) != len(td.children):
        raise ValueError(f"tree structure {whole} is not a prefix of the tree's "
                         f"{tree_structure(tree)}")
    for c, k in zip(td.children, node[2]):
        _up_to_into(c, k, out, whole, tree)


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """`prefix_tree` with each leaf repeated over the matching subtree of `full_tree`."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = flatten_up_to(prefix_def, full_tree)
    pieces = [tree_map(lambda _, v=leaf: v, sub, is_leaf=is_leaf)
              for leaf, sub in zip(prefix_leaves, subtrees)]
    return tree_unflatten(prefix_def, pieces)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose):
    """An outer tree of inner trees turned into an inner tree of outer trees."""
    flat = flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0])
    inner_leaves = [flatten_up_to(inner_treedef, sub) for sub in flat]
    n_inner = inner_treedef.num_leaves
    columns = [tree_unflatten(outer_treedef, [row[i] for row in inner_leaves])
               for i in range(n_inner)]
    return tree_unflatten(inner_treedef, columns)


def tree_reduce_associative(operation: Callable, tree, *, identity: Any = _SENTINEL,
                            is_leaf: Callable | None = None):
    """Reduce the leaves with an associative `operation`, pairing neighbours level by level
    (a balanced tree of operations); an empty tree gives `identity`."""
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _SENTINEL:
            raise ValueError("tree_reduce_associative of an empty tree needs an identity")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        items = paired + ([items[-1]] if len(items) % 2 else [])
    return items[0]


class PyTreeRegistry:
    """The registry of pytree node types (redraft has one: `default_registry`)."""

    def flatten(self, tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
        return tree_flatten(tree, is_leaf)

    def register_node(self, nodetype: type, flatten_func: Callable,
                      unflatten_func: Callable) -> None:
        register_pytree_node(nodetype, flatten_func, unflatten_func)

    def __contains__(self, nodetype: type) -> bool:
        return nodetype in _REGISTRY or nodetype in _BUILTIN_TYPES


default_registry = PyTreeRegistry()
