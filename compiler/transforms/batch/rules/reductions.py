"""Batching rules of reductions and scans: axis arguments move past the batch axis; `axis=None`
reduces every per-example axis (argmax/cumsum/sort-like ones ravel each example instead)."""
import numpy as np
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import (
    as_array,
    loop,
    reduction,
    shift,
    static_or_none,
)
from redraft.compiler.transforms.batch.batching import defbatch

import redraft.numpy as jnp
from redraft import lax

# ---- over axis (None: every per-example axis) ---------------------------------------------------

for _name in ("sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any"):
    defbatch(getattr(jnp, _name), reduction(extra=("where",)))
for _name in ("var", "std"):
    defbatch(getattr(jnp, _name), reduction(extra=("where",)))
for _name in ("count_nonzero", "ptp", "median", "nanmedian"):
    defbatch(getattr(jnp, _name), reduction())
for _name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
    defbatch(getattr(jnp, _name), reduction())  # q must be the same for every example
defbatch(jnp.logsumexp, reduction(extra=("b",)))

# ---- over axis (None: the raveled example) ---------------------------------------------------

for _name in ("argmax", "argmin", "cumsum", "cumprod"):
    defbatch(getattr(jnp, _name), reduction(none="flatten"))
for _name in ("sort", "argsort"):
    defbatch(getattr(jnp, _name), reduction(none="flatten", default=-1))
defbatch(np.argsort, reduction(none="flatten", default=-1))


def _average(b):
    if b.batched("weights") or b.batched("returned"):
        return loop(b)
    return reduction()(b)


defbatch(jnp.average, _average)


def _two_axes(operand: str):
    """trace/diagonal: axis1 and axis2 both shift."""
    def rule(b):
        if any(b.batched(n) for n in b.bound if n != operand):
            return loop(b)
        a1, a2 = static_or_none(b, "axis1", 0), static_or_none(b, "axis2", 1)
        if a1 is ... or a2 is ...:
            return loop(b)
        x = as_array(b, operand)
        return b.rebuild(**{operand: x, "axis1": shift(a1), "axis2": shift(a2)}), bt.B
    return rule


defbatch(jnp.trace, _two_axes("a"))
defbatch(jnp.diagonal, _two_axes("a"))

# ---- lax: explicit axes ------------------------------------------------------------------------


def _lax_axes(param: str):
    def rule(b):
        value = static_or_none(b, param)
        if value is ... or any(b.batched(n) for n in b.bound if n != "operand"):
            return loop(b)
        return b.rebuild(operand=as_array(b, "operand"), **{param: shift(value)}), bt.B
    return rule


for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
              "reduce_or"):
    defbatch(getattr(lax, _name), _lax_axes("axes"))
for _name in ("argmax", "argmin"):
    defbatch(getattr(lax, _name), _lax_axes("axis"))


def _lax_scan_axis(param: str, default: int):
    def rule(b):
        value = static_or_none(b, param, default)
        if value is ... or any(b.batched(n) for n in b.bound if n != "operand"):
            return loop(b)
        return b.rebuild(operand=as_array(b, "operand"), **{param: shift(value)}), bt.B
    return rule


for _name in ("cumsum", "cumprod", "cummax", "cummin"):
    defbatch(getattr(lax, _name), _lax_scan_axis("axis", 0))
defbatch(lax.sort, _lax_scan_axis("dimension", -1))
defbatch(lax.argsort, _lax_scan_axis("dimension", -1))
del ir
