"""Derivative rules of Python-structure helpers (lists built by comprehensions, dicts) and of
the builtins tuple, list and sum over sequences."""
import inspect

from redraft.compiler.core import helpers
from redraft.compiler.transforms.runtime import ad
from redraft.runtime import pytree
from redraft.compiler.primitives.registry import (defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp)

defjvp(helpers.append,
       lambda items_dot, ans, items, item: helpers.append(items_dot, ad.zeros_like(item)),
       lambda item_dot, ans, items, item: helpers.append(ad.zeros_like(items), item_dot))
defjvp_joint(helpers.append, lambda items_dot, item_dot, ans, items, item:
             helpers.append(items_dot, item_dot), ("items", "item"))
defvjp(helpers.append,
       lambda g, ans, items, item: g[:-1],
       lambda g, ans, items, item: g[-1])
defjvp(helpers.values_of, lambda container_dot, ans, container:
       helpers.values_of(container_dot))
defvjp(helpers.values_of, lambda g, ans, container: ad.values_bar(g, container))
defjvp(helpers.items_of, lambda container_dot, ans, container: helpers.items_of(container_dot))
defvjp(helpers.items_of, lambda g, ans, container: ad.items_bar(g, container))
defjvp(ad.values_bar, lambda g_dot, ans, g, container: ad.values_bar(g_dot, container),
       argnames=("g",))
defvjp(ad.values_bar, lambda ct, ans, g, container: helpers.values_of(ct), argnames=("g",))
defstatic(ad.values_bar, "container")
defjvp(ad.items_bar, lambda g_dot, ans, g, container: ad.items_bar(g_dot, container),
       argnames=("g",))
defvjp(ad.items_bar, lambda ct, ans, g, container: helpers.items_of(ct), argnames=("g",))
defstatic(ad.items_bar, "container")
defnondiff(helpers.keys_of, "a dict's keys")
defnondiff(helpers.decide_try, "which statements of a try run")
defjvp(helpers.iterated, lambda xs_dot, ans, xs: ad.iterated_tangent(xs, xs_dot))
defvjp(helpers.iterated, lambda g, ans, xs: ad.iterated_bar(g, xs))
defjvp(ad.iterated_tangent, lambda xs_dot_dot, ans, xs, xs_dot:
       ad.iterated_tangent(xs, xs_dot_dot), argnames=("xs_dot",))
defvjp(ad.iterated_tangent, lambda ct, ans, xs, xs_dot: ad.iterated_bar(ct, xs),
       argnames=("xs_dot",))
defstatic(ad.iterated_tangent, "xs")
defjvp(ad.iterated_bar, lambda g_dot, ans, g, xs: ad.iterated_bar(g_dot, xs), argnames=("g",))
defvjp(ad.iterated_bar, lambda ct, ans, g, xs: ad.iterated_tangent(xs, ct), argnames=("g",))
defstatic(ad.iterated_bar, "xs")
defjvp(helpers.concat, lambda left_dot, ans, left, right:
       helpers.concat(left_dot, ad.zeros_like(right)),
       lambda right_dot, ans, left, right: helpers.concat(ad.zeros_like(left), right_dot))
defjvp_joint(helpers.concat, lambda left_dot, right_dot, ans, left, right:
             helpers.concat(left_dot, right_dot), ("left", "right"))
defvjp(helpers.concat,
       lambda g, ans, left, right: ad.sequence_like(g[:len(left)], left),
       lambda g, ans, left, right: ad.sequence_like(g[len(left):], right))
defjvp(helpers.make_dict, lambda values_dot, ans, keys, values:
       helpers.make_dict(keys, values_dot), argnames=("values",))
defvjp(helpers.make_dict, lambda g, ans, keys, values: ad.dict_values(g, keys),
       argnames=("values",))
defstatic(helpers.make_dict, "keys")
defjvp(helpers.make_namedtuple, lambda items_dot, ans, cls, items:
       helpers.make_namedtuple(cls, items_dot), argnames=("items",))
defvjp(helpers.make_namedtuple, lambda g, ans, cls, items: tuple(g),
       argnames=("items",))
defstatic(helpers.make_namedtuple, "cls")
defjvp(helpers.make_object, lambda items_dot, ans, cls, items, names=():
       ad.object_tangent(ans, items, items_dot), argnames=("items",))
defvjp(helpers.make_object, lambda g, ans, cls, items, names=():
       ad.object_items_bar(g, ans, items), argnames=("items",))
defstatic(helpers.make_object, "cls")
defjvp(ad.object_tangent, lambda items_dot_dot, ans, obj, items, items_dot:
       ad.object_tangent(obj, items, items_dot_dot), argnames=("items_dot",))
defvjp(ad.object_tangent, lambda ct, ans, obj, items, items_dot:
       ad.object_items_bar(ct, obj, items), argnames=("items_dot",))
defjvp(ad.object_items_bar, lambda g_dot, ans, g, obj, items:
       ad.object_items_bar(g_dot, obj, items), argnames=("g",))
defvjp(ad.object_items_bar, lambda ct, ans, g, obj, items: ad.object_tangent(obj, items, ct),
       argnames=("g",))
defjvp(helpers.zip_spread, lambda sequences_dot, ans, sequences:
       helpers.zip_spread(sequences_dot))
defvjp(helpers.zip_spread, lambda g, ans, sequences: ad.unzip_spread(g, sequences))
defjvp(ad.unzip_spread, lambda g_dot, ans, g, sequences: ad.unzip_spread(g_dot, sequences),
       argnames=("g",))
defvjp(ad.unzip_spread, lambda ct, ans, g, sequences: helpers.zip_spread(ct), argnames=("g",))
defjvp(helpers.merge_dicts,
       lambda first_dot, ans, first, second:
       helpers.merge_dicts(first_dot, ad.zeros_like(second)),
       lambda second_dot, ans, first, second:
       helpers.merge_dicts(ad.zeros_like(first), second_dot))
defjvp_joint(helpers.merge_dicts, lambda first_dot, second_dot, ans, first, second:
             helpers.merge_dicts(first_dot, second_dot), ("first", "second"))
defvjp(helpers.merge_dicts,
       lambda g, ans, first, second: ad.dict_part(g, first, second),
       lambda g, ans, first, second: ad.dict_part(g, second))
defjvp(ad.dict_part, lambda g_dot, ans, g, like, over=None: ad.dict_part(g_dot, like, over),
       argnames=("g",))
defvjp(ad.dict_part, lambda ct, ans, g, like, over=None: ad.dict_part_bar(ct, g, like, over),
       argnames=("g",))
defjvp(ad.dict_part_bar, lambda ct_dot, ans, ct, g, like, over=None:
       ad.dict_part_bar(ct_dot, g, like, over), argnames=("ct",))
defvjp(ad.dict_part_bar, lambda h, ans, ct, g, like, over=None: ad.dict_part(h, like, over),
       argnames=("ct",))  # a dict's keys are names, never differentiated
defjvp(helpers.set_item,
       lambda container_dot, ans, container, key, value:
       helpers.set_item(container_dot, key, ad.zeros_like(value)),
       lambda value_dot, ans, container, key, value:
       helpers.set_item(ad.zeros_like(container), key, value_dot),
       argnames=("container", "value"))
defjvp_joint(helpers.set_item, lambda container_dot, value_dot, ans, container, key, value:
             helpers.set_item(container_dot, key, value_dot), ("container", "value"))
defvjp(helpers.set_item,
       lambda g, ans, container, key, value: ad.overwritten_bar(g, key, container),
       lambda g, ans, container, key, value: g[key],
       argnames=("container", "value"))
defstatic(helpers.set_item, "key")
# overwritten_bar maps a cotangent of the written container to one of the original (the item
# `key` zero, or gone): its transpose puts a zero of the written value's shape back at `key`
defjvp(ad.overwritten_bar, lambda g_dot, ans, g, key, container:
       ad.overwritten_bar(g_dot, key, container), argnames=("g",))
defvjp(ad.overwritten_bar, lambda h, ans, g, key, container:
       helpers.set_item(h, key, ad.zeros_like(g[key])), argnames=("g",))
defstatic(ad.overwritten_bar, "key")
# ---- pytree leaves: a list of a tree's leaves, and back ------------------------------------------
defjvp(pytree.tree_leaves, lambda tree_dot, ans, tree, is_leaf=None:
       pytree.tree_leaves(tree_dot, is_leaf), argnames=("tree",))
defvjp(pytree.tree_leaves, lambda g, ans, tree, is_leaf=None: ad.unflatten_like(g, tree),
       argnames=("tree",))
defjvp(pytree.tree_flatten, lambda tree_dot, ans, tree, is_leaf=None:
       (pytree.tree_leaves(tree_dot, is_leaf), ans[1]), argnames=("tree",))
defvjp(pytree.tree_flatten, lambda g, ans, tree, is_leaf=None:
       ad.unflatten_like(g[0], tree), argnames=("tree",))
defjvp(pytree.tree_unflatten, lambda leaves_dot, ans, treedef, leaves:
       pytree.tree_unflatten(treedef, leaves_dot), argnames=("leaves",))
defvjp(pytree.tree_unflatten, lambda g, ans, treedef, leaves:
       ad.sequence_like(pytree.tree_leaves(g), leaves), argnames=("leaves",))
defstatic(pytree.tree_unflatten, "treedef")
defjvp(ad.unflatten_like, lambda leaves_dot, ans, leaves, like:
       ad.unflatten_like(leaves_dot, like), argnames=("leaves",))
defvjp(ad.unflatten_like, lambda ct, ans, leaves, like: pytree.tree_leaves(ct),
       argnames=("leaves",))
defstatic(ad.unflatten_like, "like")
defjvp(pytree.tree_flatten_with_path, lambda tree_dot, ans, tree, is_leaf=None:
       pytree.tree_flatten_with_path(tree_dot, is_leaf), argnames=("tree",))
defvjp(pytree.tree_flatten_with_path, lambda g, ans, tree, is_leaf=None:
       ad.paths_bar_to_tree(g, tree), argnames=("tree",))
defjvp(ad.paths_bar_to_tree, lambda g_dot, ans, g, like: ad.paths_bar_to_tree(g_dot, like),
       argnames=("g",))
defvjp(ad.paths_bar_to_tree, lambda ct, ans, g, like: pytree.tree_flatten_with_path(ct),
       argnames=("g",))
defstatic(ad.paths_bar_to_tree, "like")
for _op in (helpers.check, helpers.raise_):
    defnondiff(_op, "no value")
EXCEPTIONS = (Exception, ValueError, TypeError, KeyError, IndexError, AssertionError,
              RuntimeError, NotImplementedError, AttributeError, ZeroDivisionError)
for _op in EXCEPTIONS:  # `raise ValueError(f"... {treedef}")` in a function transformed
    defnondiff(_op, "an exception carries no derivative")
for _op in (str, repr, pytree.keystr):  # a key path's text (optax-style masks by name)
    defnondiff(_op, "text carries no derivative")

# ---- builtins over sequences: tuple(xs), list(xs), sum(xs) ---------------------------------------

_ITERABLE = inspect.Signature([inspect.Parameter("iterable", inspect.Parameter.POSITIONAL_ONLY)])
_SUM = inspect.Signature([inspect.Parameter("iterable", inspect.Parameter.POSITIONAL_ONLY),
                          inspect.Parameter("start", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=0)])
defjvp(tuple, lambda iterable_dot, ans, iterable: tuple(iterable_dot), signature=_ITERABLE)
defvjp(tuple, lambda g, ans, iterable: ad.sequence_like(g, iterable), signature=_ITERABLE)
defjvp(list, lambda iterable_dot, ans, iterable: list(iterable_dot), signature=_ITERABLE)
defvjp(list, lambda g, ans, iterable: ad.sequence_like(g, iterable), signature=_ITERABLE)
defjvp(ad.sequence_like, lambda items_dot, ans, items, like:
       ad.sequence_like(items_dot, like), argnames=("items",))
defvjp(ad.sequence_like, lambda g, ans, items, like: ad.sequence_like(g, items),
       argnames=("items",))
defstatic(ad.sequence_like, "like")
_SORTED = inspect.Signature([
    inspect.Parameter("iterable", inspect.Parameter.POSITIONAL_ONLY),
    inspect.Parameter("key", inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter("reverse", inspect.Parameter.KEYWORD_ONLY, default=False)])
defjvp(sorted, lambda iterable_dot, ans, iterable, key=None, reverse=False:
       ad.sorted_like(iterable_dot, iterable, key, reverse), signature=_SORTED)
defvjp(sorted, lambda g, ans, iterable, key=None, reverse=False:
       ad.unsorted(g, iterable, key, reverse), signature=_SORTED)
defstatic(sorted, "key", "reverse")
defjvp(ad.sorted_like, lambda values_dot, ans, values, items, key=None, reverse=False:
       ad.sorted_like(values_dot, items, key, reverse), argnames=("values",))
defvjp(ad.sorted_like, lambda g, ans, values, items, key=None, reverse=False:
       ad.unsorted(g, items, key, reverse), argnames=("values",))
defjvp(ad.unsorted, lambda g_dot, ans, g, items, key=None, reverse=False:
       ad.unsorted(g_dot, items, key, reverse), argnames=("g",))
defvjp(ad.unsorted, lambda ct, ans, g, items, key=None, reverse=False:
       ad.sorted_like(ct, items, key, reverse), argnames=("g",))
defjvp(sum, lambda iterable_dot, ans, iterable, start=0: sum(iterable_dot), signature=_SUM)
defvjp(sum, lambda g, ans, iterable, start=0: ad.unsum_items(g, iterable), signature=_SUM)
defjvp(ad.unsum_items, lambda g_dot, ans, g, items: ad.unsum_items(g_dot, items))
defvjp(ad.unsum_items, lambda ct, ans, g, items: ad.sum_like(ct, g))
defstatic(ad.unsum_items, "items")
defjvp(ad.sum_like, lambda items_dot, ans, items, like: ad.sum_like(items_dot, like))
defvjp(ad.sum_like, lambda ct, ans, items, like: ad.unsum_items(ct, items))
defstatic(ad.sum_like, "like")

# ---- dict values, the cotangent of a dict literal ------------------------------------------------

defjvp(ad.dict_values, lambda d_dot, ans, d, keys: ad.dict_values(d_dot, keys), argnames=("d",))
defvjp(ad.dict_values, lambda g, ans, d, keys: helpers.make_dict(keys, g), argnames=("d",))
defstatic(ad.dict_values, "keys")

# ---- getattr(obj, name): a field of a pytree node (attr_add's cotangent reads one) -------------

_GETATTR = inspect.Signature([inspect.Parameter("object", inspect.Parameter.POSITIONAL_ONLY),
                              inspect.Parameter("name", inspect.Parameter.POSITIONAL_ONLY)])
defjvp(getattr, lambda object_dot, ans, object, name: ad.attr_tangent(object, object_dot, name),
       signature=_GETATTR)
defvjp(getattr, lambda g, ans, object, name: ad.attr_add(object, name, g), signature=_GETATTR)
defstatic(getattr, "name")
