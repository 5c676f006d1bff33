"""redraft.tree and the tree_util additions: key paths, dataclasses, Partial, broadcast,
transpose, associative reduction (expected values as JAX 0.10.2 gives them)."""
import collections
import dataclasses

import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import tree, tree_util
from redraft.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

P = collections.namedtuple("P", "x y")
TREE = {"a": [1, (2, P(3, 4))], "b": None}


def test_flatten_with_path_names_every_leaf():
    pairs, treedef = tree_util.tree_flatten_with_path(TREE)
    assert [leaf for _, leaf in pairs] == [1, 2, 3, 4]
    assert pairs[3][0] == (DictKey("a"), SequenceKey(1), SequenceKey(1), GetAttrKey("y"))
    assert treedef == tree_util.tree_structure(TREE)
    assert tree_util.keystr(pairs[3][0]) == "['a'][1][1].y"
    assert tree_util.keystr(pairs[3][0], simple=True, separator="/") == "a/1/1/y"
    assert tree.leaves_with_path(TREE) == pairs


def test_map_with_path():
    out = tree.map_with_path(lambda path, v: tree_util.keystr(path) + str(v), {"a": 1, "b": [2]})
    assert out == {"a": "['a']1", "b": ["['b'][0]2"]}


def test_registered_nodes_with_and_without_keys():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        name: str = tree.static(default="dense")

    layer = Layer(jnp.ones(2), jnp.zeros(1))
    pairs, treedef = tree.flatten_with_path(layer)
    assert [p for p, _ in pairs] == [(GetAttrKey("w"),), (GetAttrKey("b"),)]
    again = tree.unflatten(treedef, [1.0, 2.0])
    assert again == Layer(1.0, 2.0, "dense")
    doubled = tree.map(lambda v: v * 2, layer)
    assert doubled.name == "dense" and float(doubled.w[0]) == 2.0
    part = tree_util.Partial(np.add, 1.0)
    pairs, _ = tree.flatten_with_path(part)
    assert pairs == [((FlattenedIndexKey(0), SequenceKey(0)), 1.0)]
    assert tree.map(lambda v: v * 3, part)(1.0) == 4.0


def test_static_and_keyed_registration():
    @tree_util.register_static
    class Tag:
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return isinstance(other, Tag) and other.name == self.name

        def __hash__(self):
            return hash(self.name)

    assert tree.leaves([Tag("t"), 1]) == [1]
    assert tree.structure([Tag("t"), 1]) != tree.structure([Tag("u"), 1])

    @tree_util.register_pytree_with_keys_class
    class Pair:
        def __init__(self, left, right):
            self.left, self.right = left, right

        def tree_flatten_with_keys(self):
            return ((GetAttrKey("left"), self.left), (GetAttrKey("right"), self.right)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    pairs, _ = tree.flatten_with_path(Pair(1, [2]))
    assert [tree_util.keystr(p) for p, _ in pairs] == [".left", ".right[0]"]


def test_broadcast_transpose_reduce():
    assert tree.broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    assert tree.transpose(tree.structure([0, 0]), tree.structure((0, 0)),
                          [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4, 5]) == 15
    with pytest.raises(ValueError):
        tree.reduce_associative(lambda a, b: a + b, [])
    assert tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    assert tree.reduce(lambda a, b: a * b, [2, (3, 4)], 1) == 24
    assert tree.all([True, {"a": 1}]) and not tree.all([True, 0])
    with pytest.raises(ValueError, match="prefix"):
        tree.broadcast([1, 2], [(3, 4)])


def test_one_level_and_treedef_helpers():
    children, aux = tree_util.flatten_one_level({"b": 1, "a": 2})
    assert children == [2, 1] and aux == ("a", "b")
    keyed, _ = tree_util.flatten_one_level_with_keys([5, 6])
    assert keyed == [(SequenceKey(0), 5), (SequenceKey(1), 6)]
    with pytest.raises(ValueError):
        tree_util.flatten_one_level(3.0)
    assert tree_util.is_tree_node(None) and not tree_util.is_tree_node(jnp.ones(2))
    td = tree_util.treedef_tuple([tree.structure([0]), tree.structure(0)])
    assert td == tree.structure(([1], 2))
    assert tree_util.treedef_children(td) == [tree.structure([0]), tree.structure(0)]
    assert dict in tree_util.default_registry or tuple in tree_util.default_registry
