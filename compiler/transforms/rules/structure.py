"""Derivative rules of Python-structure helpers (lists built by comprehensions, dicts)."""
from redraft.compiler.core import helpers
from redraft.compiler.transforms import ad_helpers as ad
from redraft.compiler.transforms.registry import defjvp, defjvp_joint, defnondiff, defvjp

defjvp(helpers.append,
       lambda items_dot, ans, items, item: helpers.append(items_dot, ad.zeros_like(item)),
       lambda item_dot, ans, items, item: helpers.append(ad.zeros_like(items), item_dot))
defjvp_joint(helpers.append, lambda items_dot, item_dot, ans, items, item:
             helpers.append(items_dot, item_dot), ("items", "item"))
defvjp(helpers.append,
       lambda g, ans, items, item: g[:-1],
       lambda g, ans, items, item: g[-1])
defjvp(helpers.make_dict, lambda values_dot, ans, keys, values:
       helpers.make_dict(keys, values_dot), argnames=("values",))
defvjp(helpers.make_dict, lambda g, ans, keys, values: ad.dict_values(g, keys),
       argnames=("values",))
for _op in (helpers.check, helpers.raise_):
    defnondiff(_op, "no value")
