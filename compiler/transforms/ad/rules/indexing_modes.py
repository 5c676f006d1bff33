"""Derivatives of the out-of-bounds-aware indexing forms (redraft/numpy/indexing.py):
x.at[idx].get(mode=..., fill_value=...) and x.at[idx].set/add(values, mode=...).

A read is linear in x (the fill value is a constant): its tangent reads the tangent with
fill 0, its cotangent adds g back where it was read (nothing for filled places). An update's
tangent updates the tangents; its cotangents are g with the updated places zeroed (set) or
g itself (add) for x, and g read back at the updated places (0 where dropped), summed to
the values' shape, for the values. Each rule is built of these same forms, so derivatives
of any order exist.
"""
import redraft.numpy as jnp
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.primitives.registry import (defjvp, defjvp_joint, defnondiff, defstatic,
                                                  defvjp)
from redraft.numpy import indexing as ix

defjvp(ix.at_get_mode, lambda x_dot, ans, x, idx, mode=None, fill_value=None,
       indices_are_sorted=False, unique_indices=False, wrap_negative_indices=True:
       ix.at_get_mode(x_dot, idx, mode, 0, wrap_negative_indices=wrap_negative_indices),
       argnames=("x",))
defvjp(ix.at_get_mode, lambda g, ans, x, idx, mode=None, fill_value=None,
       indices_are_sorted=False, unique_indices=False, wrap_negative_indices=True:
       ix.at_add_mode(jnp.zeros_like(x), idx, g, ix.transpose_update_mode(mode),
                      wrap_negative_indices=wrap_negative_indices), argnames=("x",))

defjvp_joint(ix.at_set_mode, lambda x_dot, values_dot, ans, x, idx, values, mode=None,
             indices_are_sorted=False, unique_indices=False, wrap_negative_indices=True:
             ix.at_set_mode(x_dot, idx, values_dot, mode,
                            wrap_negative_indices=wrap_negative_indices), ("x", "values"))
defjvp(ix.at_set_mode,
       lambda x_dot, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ix.at_set_mode(x_dot, idx, 0.0, mode, wrap_negative_indices=wrap_negative_indices),
       lambda values_dot, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ix.at_set_mode(jnp.zeros_like(ans), idx, values_dot, mode,
                      wrap_negative_indices=wrap_negative_indices),
       argnames=("x", "values"))
defvjp(ix.at_set_mode,
       lambda g, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ix.at_set_mode(g, idx, 0.0, mode, wrap_negative_indices=wrap_negative_indices),
       lambda g, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ad.unbroadcast(ix.at_get_mode(g, idx, ix.transpose_read_mode(mode), 0,
                                     wrap_negative_indices=wrap_negative_indices), values),
       argnames=("x", "values"))

defjvp_joint(ix.at_add_mode, lambda x_dot, values_dot, ans, x, idx, values, mode=None,
             indices_are_sorted=False, unique_indices=False, wrap_negative_indices=True:
             ix.at_add_mode(x_dot, idx, values_dot, mode,
                            wrap_negative_indices=wrap_negative_indices), ("x", "values"))
defjvp(ix.at_add_mode,
       lambda x_dot, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True: x_dot,
       lambda values_dot, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ix.at_add_mode(jnp.zeros_like(ans), idx, values_dot, mode,
                      wrap_negative_indices=wrap_negative_indices),
       argnames=("x", "values"))
defvjp(ix.at_add_mode,
       lambda g, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True: g,
       lambda g, ans, x, idx, values, mode=None, indices_are_sorted=False,
       unique_indices=False, wrap_negative_indices=True:
       ad.unbroadcast(ix.at_get_mode(g, idx, ix.transpose_read_mode(mode), 0,
                                     wrap_negative_indices=wrap_negative_indices), values),
       argnames=("x", "values"))

for _op in (ix.at_get_mode, ix.at_set_mode, ix.at_add_mode, ix.at_update_mode):
    defstatic(_op, "idx")
for _op in (ix.transpose_read_mode, ix.transpose_update_mode):
    defnondiff(_op, "maps a mode name to a mode name")
defnondiff(ix.clamped_index_of, "computes integer indices")
defstatic(ix.clamped_index_of, "idx")
