"""Batching rules of the factorisations and the fft: each maps over leading axes already
(the fft over all but its trailing fft_lengths axes, triangular_solve broadcasting the batch
axes of its two operands), so a batched call is the same call with the batch axis in front."""
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.runtime import lah
from redraft.compiler.transforms.batch.rules.common import (as_array, loop,
                                                          register_public_functions,
                                                          static_or_none)
from redraft.compiler.primitives.registry import LeadingAxesBatching
from redraft.compiler.transforms.batch.batching import RULE_KINDS, defbatch, defbatch_source

import redraft.numpy as jnp
from redraft import lax


def _leading(operands: tuple, results) -> callable:
    """Rule of an operation on the trailing axes of `operands`; `results(b)` is the batch
    type of its value."""
    def rule(b):
        if any(b.batched(n) for n in b.bound if n not in operands):
            return loop(b)
        repl = {n: as_array(b, n) for n in operands if b.batched(n)}
        return b.rebuild(**repl), results(b)
    return rule


def _svd_results(b):
    """(s, u, vh) or s alone; a flag known only later: every leaf is batched (bt.TREE)."""
    flag = static_or_none(b, "compute_uv", True)
    if flag is ...:
        return bt.TREE
    return bt.tup((bt.B,) * 3) if flag else bt.B


def _eig_results(b):
    flag = static_or_none(b, "compute_right_eigenvectors", True)
    if flag is ...:
        return bt.TREE
    return bt.tup((bt.B,) * (2 if flag else 1))


def _declared(spec: LeadingAxesBatching):
    """The rule LeadingAxesBatching(operands, results) declares."""
    result = bt.B if spec.results == 1 else bt.tup((bt.B,) * spec.results)
    return _leading(spec.operands, lambda b: result)


RULE_KINDS[LeadingAxesBatching] = _declared
defbatch(lax.linalg.svd, _leading(("x",), _svd_results))
defbatch(lax.linalg.eig, _leading(("x",), _eig_results))

# jnp.linalg functions with derivative rules of their own map over leading axes too: a rule
# (not their source) keeps vmap(jnp.linalg.det) from reading det's source as a recursive call
defbatch(jnp.linalg.det, _leading(("a",), lambda b: bt.B))
defbatch(jnp.linalg.slogdet, _leading(("a",), lambda b: bt.tup((bt.B,) * 2)))
defbatch(jnp.linalg.eig, _leading(("a",), lambda b: bt.tup((bt.B,) * 2)))
defbatch(jnp.linalg.eigvals, _leading(("a",), lambda b: bt.B))


defbatch_source(jnp.linalg._euclidean_norm)


# jnp.linalg, jnp.fft and the derivative helpers are plain Python over these primitives:
# vmap reads their source
for _module in (jnp.linalg, jnp.fft, lah):
    register_public_functions(_module)
