"""Derivative rules of the jnp reductions: sum, mean, max/min, prod, var/std go through their
source. The lax reductions' rules are their primitives', in compiler/primitives/reductions.py."""
import numpy as np

import redraft.numpy as jnp
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.primitives.registry import alias, defjvp, defnondiff, defvjp

defjvp(jnp.sum, lambda a_dot, ans, a, axis=None, dtype=None, keepdims=False, initial=None,
       where=None: jnp.sum(a_dot, axis=axis, keepdims=keepdims, where=where))
defvjp(jnp.sum, lambda g, ans, a, axis=None, dtype=None, keepdims=False, initial=None,
       where=None: ad.unsum(g, a, axis, keepdims, where))
defjvp(jnp.mean, lambda a_dot, ans, a, axis=None, dtype=None, keepdims=False, where=None:
       jnp.mean(a_dot, axis=axis, keepdims=keepdims, where=where))
defvjp(jnp.mean, lambda g, ans, a, axis=None, dtype=None, keepdims=False, where=None:
       ad.unsum(g / ad.mean_count(a, axis, keepdims, where), a, axis, keepdims, where))
defjvp(jnp.max, lambda a_dot, ans, a, axis=None, out=None, keepdims=False, initial=None,
       where=None: jnp.sum(a_dot * ad.argext_mask(a, ans, axis, keepdims), axis=axis,
                           keepdims=keepdims))
defvjp(jnp.max, lambda g, ans, a, axis=None, out=None, keepdims=False, initial=None,
       where=None: ad.unsum(g, a, axis, keepdims) * ad.argext_mask(a, ans, axis, keepdims))
defjvp(jnp.min, lambda a_dot, ans, a, axis=None, out=None, keepdims=False, initial=None,
       where=None: jnp.sum(a_dot * ad.argext_mask(a, ans, axis, keepdims), axis=axis,
                           keepdims=keepdims))
defvjp(jnp.min, lambda g, ans, a, axis=None, out=None, keepdims=False, initial=None,
       where=None: ad.unsum(g, a, axis, keepdims) * ad.argext_mask(a, ans, axis, keepdims))
alias(jnp.amax, jnp.max)
alias(jnp.amin, jnp.min)
defjvp(jnp.cumsum, lambda a_dot, ans, a, axis=None, dtype=None: jnp.cumsum(a_dot, axis))
defvjp(jnp.cumsum, lambda g, ans, a, axis=None, dtype=None: ad.reverse_cumsum(g, a, axis))

for _op in (jnp.argmax, jnp.argmin, jnp.any, jnp.all, jnp.count_nonzero, jnp.argsort):
    defnondiff(_op, "integer- or bool-valued")

# NumPy's own reductions call a redraft Array's method (np.sum(x) is x.sum(), as on JAX's), so
# they differentiate as the jnp function of the same name (called with its parameters' names)
for _name in ("sum", "prod", "mean", "max", "min", "amax", "amin", "var", "std", "cumsum",
              "cumprod", "argmax", "argmin", "any", "all"):
    alias(getattr(np, _name), getattr(jnp, _name))
