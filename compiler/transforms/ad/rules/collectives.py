"""Derivative rules of the collectives (compiler/primitives/collectives.py).

Every device's output depends on every device's input, so a reverse rule gathers the
cotangents of all devices: psum's transpose is psum, pmean's pmean, all_gather's is
psum_scatter (each device keeps the summed cotangent of its own block) and psum_scatter's
all_gather; all_to_all's is all_to_all with the split and concat axes swapped; ppermute's
is ppermute along the inverse permutation. pmax/pmin pass the derivative to the devices
that hold the extremum, shared equally between ties.
"""
import numpy as np
from redraft.compiler.primitives import collectives as cl
from redraft.compiler.primitives.registry import defjvp, defnondiff, defvjp

import redraft.numpy as jnp
from redraft import lax

defjvp(lax.psum, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
       lax.psum(x_dot, axis_name, axis_index_groups=axis_index_groups))
defvjp(lax.psum, lambda g, ans, x, axis_name, axis_index_groups=None:
       lax.psum(g, axis_name, axis_index_groups=axis_index_groups))
defjvp(lax.pmean, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
       lax.pmean(x_dot, axis_name, axis_index_groups=axis_index_groups))
defvjp(lax.pmean, lambda g, ans, x, axis_name, axis_index_groups=None:
       lax.pmean(g, axis_name, axis_index_groups=axis_index_groups))

for _op in (lax.pmax, lax.pmin):
    defjvp(_op, lambda x_dot, ans, x, axis_name, axis_index_groups=None:
           lax.psum(jnp.where(x == ans, x_dot, jnp.zeros_like(x_dot)), axis_name,
                    axis_index_groups=axis_index_groups)
           / lax.psum(jnp.where(x == ans, jnp.ones_like(x), jnp.zeros_like(x)), axis_name,
                      axis_index_groups=axis_index_groups))
    defvjp(_op, lambda g, ans, x, axis_name, axis_index_groups=None:
           jnp.where(x == ans, lax.psum(g, axis_name, axis_index_groups=axis_index_groups),
                     jnp.zeros_like(g))
           / lax.psum(jnp.where(x == ans, jnp.ones_like(x), jnp.zeros_like(x)), axis_name,
                      axis_index_groups=axis_index_groups))

defjvp(lax.all_gather, lambda x_dot, ans, x, axis_name, axis_index_groups=None, axis=0,
       tiled=False: lax.all_gather(x_dot, axis_name, axis_index_groups=axis_index_groups,
                                   axis=axis, tiled=tiled))
defvjp(lax.all_gather, lambda g, ans, x, axis_name, axis_index_groups=None, axis=0,
       tiled=False: lax.psum_scatter(g, axis_name, scatter_dimension=axis,
                                     axis_index_groups=axis_index_groups, tiled=tiled))
defjvp(lax.psum_scatter, lambda x_dot, ans, x, axis_name, scatter_dimension=0,
       axis_index_groups=None, tiled=False:
       lax.psum_scatter(x_dot, axis_name, scatter_dimension=scatter_dimension,
                        axis_index_groups=axis_index_groups, tiled=tiled))
defvjp(lax.psum_scatter, lambda g, ans, x, axis_name, scatter_dimension=0,
       axis_index_groups=None, tiled=False:
       lax.all_gather(g, axis_name, axis_index_groups=axis_index_groups,
                      axis=scatter_dimension, tiled=tiled))
defjvp(lax.all_to_all, lambda x_dot, ans, x, axis_name, split_axis, concat_axis,
       axis_index_groups=None, tiled=False:
       lax.all_to_all(x_dot, axis_name, split_axis, concat_axis, tiled=tiled))
defvjp(lax.all_to_all, lambda g, ans, x, axis_name, split_axis, concat_axis,
       axis_index_groups=None, tiled=False:
       lax.all_to_all(g, axis_name, concat_axis, split_axis, tiled=tiled))
defjvp(lax.ppermute, lambda x_dot, ans, x, axis_name, perm: lax.ppermute(x_dot, axis_name, perm))
defvjp(lax.ppermute, lambda g, ans, x, axis_name, perm:
       lax.ppermute(g, axis_name, cl.inverse_perm(perm)))
defjvp(lax.pshuffle, lambda x_dot, ans, x, axis_name, perm: lax.pshuffle(x_dot, axis_name, perm))
defvjp(lax.pshuffle, lambda g, ans, x, axis_name, perm:
       lax.pshuffle(g, axis_name, np.argsort(perm)))

defnondiff(lax.axis_index, "integer-valued: the device's position along the axis")
defnondiff(lax.axis_size, "a Python int: the number of devices along the axis")
defnondiff(cl.inverse_perm, "it reverses the static pairs of a permutation")
