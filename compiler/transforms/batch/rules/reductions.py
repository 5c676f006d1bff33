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
from redraft.compiler.primitives.registry import AxisBatching
from redraft.compiler.transforms.batch.batching import RULE_KINDS, defbatch

import redraft.numpy as jnp

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
# NumPy's own reductions call a redraft Array's method (np.sum(x) is x.sum(), as on JAX's)
for _name in ("sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any", "var", "std"):
    defbatch(getattr(np, _name), reduction(extra=("where",)))

# ---- over axis (None: the raveled example) ---------------------------------------------------

for _name in ("argmax", "argmin", "cumsum", "cumprod"):
    defbatch(getattr(jnp, _name), reduction(none="flatten"))
    defbatch(getattr(np, _name), reduction(none="flatten"))
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

# ---- lax: explicit axes, the kind of rule the reductions family declares ----------------------


def lax_axis(spec: AxisBatching):
    """The rule AxisBatching(param, default) declares: the operand batched at axis 0 and the
    static axis argument shifted past it (a loop where the axis is not static)."""
    def rule(b):
        value = static_or_none(b, spec.param, spec.default)
        if value is ... or any(b.batched(n) for n in b.bound if n != spec.operand):
            return loop(b)
        return b.rebuild(**{spec.operand: as_array(b, spec.operand),
                            spec.param: shift(value)}), bt.B
    return rule


RULE_KINDS[AxisBatching] = lax_axis
del ir
