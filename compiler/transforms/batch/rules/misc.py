"""Batching entries for the operations no family file covers: type promotion (the same for
every example), data-dependent shapes (batchable only with `size=`), and the helper modules
whose functions are plain Python over redraft.numpy (batched through their source). The
convolutions and gathers declare their loops in their family files."""

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import (
    elementwise,
    loop,
    register_public_functions,
    static_or_none,
    unbatched_result,
)
from redraft.compiler.transforms.batch.batching import (
    defbatch,
    defnotbatchable,
)

import redraft.numpy as jnp
from redraft import lax, nn
from redraft.numpy import promotion


def _promote(b):
    """promote(a, b, ...): every example promotes alike; a list of the operands."""
    return b.call, bt.tup(b.ctx.type_of(a) for a in b.call.args)


defbatch(promotion.promote, _promote)
defbatch(promotion.promote_inexact, _promote)
defbatch(promotion.cast, elementwise(static=("dtype",)))
defbatch(promotion.convert, elementwise(static=("dtype", "weak")))
defbatch(jnp.broadcast_shapes, unbatched_result)
defbatch(jnp.finfo, unbatched_result)
defbatch(jnp.iinfo, unbatched_result)
for _name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128"):
    defbatch(getattr(jnp, _name), elementwise())  # jnp.float32(x): a cast


def _sized(b):
    """nonzero/argwhere/unique...: with `size=` every example has the same shape."""
    if static_or_none(b, "size") is None:
        b.fail(f"`{b.path}` of a batched value has a shape that depends on its values; pass "
               "size= (JAX raises ConcretizationTypeError here too)")
    return loop(b, "any")


for _name in ("nonzero", "argwhere", "flatnonzero", "unique", "unique_all", "unique_counts",
              "unique_inverse", "unique_values"):
    defbatch(getattr(jnp, _name), _sized)
defnotbatchable(jnp.trim_zeros, "its result's shape depends on the values of each example")

defbatch(lax.conv_dimension_numbers, unbatched_result)


def _register_helper_modules() -> None:
    from redraft.compiler.transforms.runtime import lad
    register_public_functions(lad)
    register_public_functions(core_helpers)
    register_public_functions(nn)
    from redraft.nn import scaled
    register_public_functions(scaled)


_register_helper_modules()


def register_numpy_library() -> None:
    """Batching entries for the redraft.numpy functions written on other redraft.numpy
    functions: vmap reads their source (or loops over examples where Core cannot say them);
    the set operations whose result size depends on the values cannot be batched. Run by
    batch/rules/__init__.py after every family's explicit rules, which win."""
    from redraft.numpy import (array_api_aliases, array_misc, bessel, dtype_queries,
                               functional, index_tricks, nan_reductions, number_parts,
                               polynomial_roots, polynomials, sets, statistics, windows)
    for fn in (sets.intersect1d, sets.setdiff1d, sets.setxor1d):
        defnotbatchable(fn, "its result's size depends on the values of each example")
    for fn in (array_misc.get_printoptions, array_misc.set_printoptions,
               array_misc.printoptions):
        defnotbatchable(fn, "configures how arrays print; it takes no arrays")
    for fn in (array_misc.compress, array_misc.extract):
        defnotbatchable(fn, "its result's size depends on the values of each example")
    for module in (array_api_aliases, array_misc, bessel, dtype_queries, functional,
                   index_tricks, nan_reductions, number_parts, polynomial_roots, polynomials,
                   sets, statistics, windows):
        register_public_functions(module)
del ir
