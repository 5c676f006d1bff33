"""Pytrees: flattening and rebuilding nested containers, as in jax.tree_util."""
from __future__ import annotations

from collections import namedtuple

import pytest

import redraft.numpy as jnp
from redraft import tree_util


@tree_util.register_pytree_node_class
class Point:
    """The registered class of SPEC.md's pytree example."""

    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def __repr__(self) -> str:
        return f"Point({self.x}, {self.y}, {self.z})"

    def tree_flatten(self):
        return ((self.x, self.y, self.z), None)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children)


class Tagged:
    """A class registered with register_pytree_node and auxiliary data."""

    def __init__(self, tag: str, value):
        self.tag = tag
        self.value = value


tree_util.register_pytree_node(Tagged, lambda t: ((t.value,), t.tag),
                               lambda tag, children: Tagged(tag, *children))

Pair = namedtuple("Pair", "first second")


def round_trip(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    return leaves, tree_util.tree_unflatten(treedef, leaves)


def test_none_is_an_empty_node():
    leaves, back = round_trip(None)
    assert leaves == [] and back is None
    assert tree_util.tree_leaves([None, 1, (None,)]) == [1]
    assert tree_util.tree_map(lambda v: v * 2, None) is None


def test_leaf_alone():
    leaves, treedef = tree_util.tree_flatten(3.0)
    assert leaves == [3.0] and tree_util.treedef_is_leaf(treedef)
    assert tree_util.tree_unflatten(treedef, [4.0]) == 4.0


def test_tuples_and_lists():
    tree = (1, [2, (3, 4)], [])
    leaves, back = round_trip(tree)
    assert leaves == [1, 2, 3, 4]
    assert back == tree and type(back[1]) is list and type(back[1][1]) is tuple


def test_dicts_flatten_in_sorted_key_order():
    tree = {"b": 1, "a": 2, "c": {"z": 3, "y": 4}}
    leaves, back = round_trip(tree)
    assert leaves == [2, 1, 4, 3]
    assert back == tree


def test_namedtuples():
    tree = Pair(1, Pair(2, 3))
    leaves, back = round_trip(tree)
    assert leaves == [1, 2, 3]
    assert type(back) is Pair and type(back.second) is Pair and back == tree


def test_registered_class():
    leaves, back = round_trip(Point(1.0, 2.0, 3.0))
    assert leaves == [1.0, 2.0, 3.0]
    assert isinstance(back, Point) and (back.x, back.y, back.z) == (1.0, 2.0, 3.0)


def test_register_pytree_node_keeps_aux_data():
    leaves, treedef = tree_util.tree_flatten(Tagged("w", [1, 2]))
    assert leaves == [1, 2]
    back = tree_util.tree_unflatten(treedef, [5, 6])
    assert isinstance(back, Tagged) and back.tag == "w" and back.value == [5, 6]
    assert tree_util.tree_structure(Tagged("w", 0)) != tree_util.tree_structure(Tagged("v", 0))


def test_tree_leaves_of_the_spec_example():
    leaves = tree_util.tree_leaves({"a": Point(1.0, 2.0, 3.0), "b": [4.0, (5.0,)]})
    assert [float(v) for v in leaves] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_arrays_are_leaves():
    x = jnp.arange(3)
    leaves = tree_util.tree_leaves({"x": x, "n": 2})
    assert leaves[0] == 2 and leaves[1] is x


def test_tree_map_over_several_trees():
    a = {"p": Point(1, 2, 3), "q": [4, (5,)]}
    b = {"p": Point(10, 20, 30), "q": [40, (50,)]}
    out = tree_util.tree_map(lambda u, v: u + v, a, b)
    assert isinstance(out["p"], Point)
    assert tree_util.tree_leaves(out) == [11, 22, 33, 44, 55]


def test_tree_map_on_arrays():
    tree = (jnp.arange(3.0), [jnp.ones(2)])
    out = tree_util.tree_map(lambda v: v * 2, tree)
    assert [list(map(float, leaf)) for leaf in tree_util.tree_leaves(out)] == [[0, 2, 4], [2, 2]]


@pytest.mark.parametrize("other", [[1, 2], (1, 2, 3), {"a": 1, "b": 2}, (1, (2,))],
                         ids=["list", "longer", "dict", "nested"])
def test_tree_map_structure_mismatch_raises(other):
    with pytest.raises(ValueError, match="structure"):
        tree_util.tree_map(lambda u, v: u, (1, 2), other)


def test_tree_map_dict_keys_must_match():
    with pytest.raises(ValueError):
        tree_util.tree_map(lambda u, v: u, {"a": 1}, {"b": 1})


def test_is_leaf_stops_descent():
    tree = [[1, 2], [3]]
    out = tree_util.tree_map(len, tree, is_leaf=lambda v: isinstance(v, list) and v != tree)
    assert out == [2, 1]


def test_tree_structure_equality_and_counts():
    s1 = tree_util.tree_structure((1, [2, 3]))
    s2 = tree_util.tree_structure(("a", ["b", "c"]))
    assert s1 == s2
    assert s1 != tree_util.tree_structure((1, (2, 3)))
    assert s1.num_leaves == 3 and s1.num_nodes == 5
    assert s1.unflatten([7, 8, 9]) == (7, [8, 9])


def test_treedef_repr():
    assert repr(tree_util.tree_structure((1, [2, 3]))) == "PyTreeDef((*, [*, *]))"
    assert repr(tree_util.tree_structure({"b": 1, "a": None})) == "PyTreeDef({'a': None, 'b': *})"
    assert repr(tree_util.tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tree_util.tree_structure((1,))) == "PyTreeDef((*,))"


def test_unflatten_with_too_many_leaves_raises():
    treedef = tree_util.tree_structure((1, 2))
    with pytest.raises(ValueError):
        tree_util.tree_unflatten(treedef, [1, 2, 3])


def test_unflatten_with_too_few_leaves_raises_value_error():
    treedef = tree_util.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError):
        tree_util.tree_unflatten(treedef, [1, 2])


def test_registering_twice_or_a_builtin_raises():
    with pytest.raises(ValueError):
        tree_util.register_pytree_node(Point, lambda p: ((), None), lambda aux, kids: None)
    with pytest.raises(ValueError):
        tree_util.register_pytree_node(tuple, lambda t: ((), None), lambda aux, kids: ())


def test_tree_reduce_and_all():
    assert tree_util.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tree_util.tree_reduce(lambda a, b: a + b, [], 10) == 10
    assert tree_util.tree_all([True, (1, [2])]) is True
    assert tree_util.tree_all([True, (0,)]) is False


def test_all_leaves():
    assert tree_util.all_leaves([1, 2.0, jnp.ones(2)])
    assert not tree_util.all_leaves([1, (2,)])


class _Leaf:
    """A leaf that can be watched through a weak reference."""


@pytest.mark.parametrize("walk", ["flatten", "unflatten", "with_path", "up_to"])
def test_walks_leave_no_reference_cycle(walk):
    """A tree walk must not keep its leaves alive until the cyclic collector runs: with a
    recursive closure each call left a cycle, and big arrays (a pmap's all-reduced gradient)
    stayed allocated, so every call faulted in fresh pages."""
    import gc
    import weakref
    leaf = _Leaf()
    tree = {"a": [leaf, (1, 2)], "b": None}
    gc.disable()
    try:
        leaves, treedef = tree_util.tree_flatten(tree)
        if walk == "unflatten":
            tree_util.tree_unflatten(treedef, leaves)
        elif walk == "with_path":
            tree_util.tree_flatten_with_path(tree)
        elif walk == "up_to":
            treedef.flatten_up_to(tree)
        watch = weakref.ref(leaf)
        del leaf, tree, leaves
        assert watch() is None
    finally:
        gc.enable()
