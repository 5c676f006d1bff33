"""Batching rules of array creation: `*_like` of a batched array is batched; jnp.array of a
tuple of batched values stacks them behind the batch axis; creation from batched sizes or
values goes through a loop (its shape may differ between examples, as JAX refuses)."""
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import as_array, loop, static_or_none
from redraft.compiler.transforms.batch.batching import defbatch

import redraft.numpy as jnp
from redraft.runtime import convert


def _like(b):
    """zeros_like(x) / full_like(x, v): of a batched shape, every example's own."""
    others = any(b.batched(n) for n in b.bound if n != "a")
    if others or static_or_none(b, "shape") is not None:
        return loop(b)
    return b.rebuild(a=as_array(b, "a")), bt.B


def _array(name: str):
    """jnp.array(obj): a batched array as it is, a tuple of batched values stacked."""
    def rule(b):
        if any(b.batched(n) for n in b.bound if n != name):
            return loop(b)
        return b.rebuild(**{name: as_array(b, name)}), bt.B
    return rule


for _name in ("zeros_like", "ones_like", "empty_like"):
    defbatch(getattr(jnp, _name), _like)
defbatch(jnp.full_like, _like)
defbatch(jnp.array, _array("object"))
defbatch(jnp.asarray, _array("a"))
defbatch(convert.as_array, _array("value"))  # how library functions take their operands
for _name in ("zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace",
              "logspace", "tri", "iota"):
    defbatch(getattr(jnp, _name), lambda b: loop(b))
for _name in ("result_type", "promote_types"):
    defbatch(getattr(jnp, _name), lambda b: (b.call, bt.U))
del ir
