"""Batching rules of products: one batched contraction each, never a loop. `jnp.dot(mat, x)`
with x batched becomes `vm.dot(mat, x, False, True)`, which is `jnp.dot(x, mat.T)` for a
batch of vectors; einsum gains a batch letter; dot_general gains batch dimensions. lax.dot's
and dot_general's rules are here, not in their family file (compiler/primitives/linalg.py):
each picks a vm helper by which operands are batched and reads its static dimension numbers,
code over the call rather than a declared kind."""
import operator

from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import as_array, loop, static_or_none
from redraft.compiler.transforms.batch.batching import NotStatic, defbatch, static_value
from redraft.compiler.transforms.batch.vmap_refs import vm_ref

import redraft.numpy as jnp
from redraft.compiler.primitives import linalg


def _pair(helper: str, left: str, right: str, options: tuple = ()):
    """Rule of a product of two operands, through the helper `vm.<helper>`."""
    def rule(b):
        if any(b.has(o) and static_or_none(b, o) is not None for o in options):
            return loop(b)
        arrays = [as_array(b, n) for n in (left, right)]
        flags = [ir.Const(b.batched(n)) for n in (left, right)]
        return ir.Call(vm_ref(helper), (arrays[0], arrays[1], flags[0], flags[1])), bt.B
    return rule


defbatch(jnp.dot, _pair("dot", "a", "b", ("precision", "preferred_element_type")))
defbatch(jnp.matmul, _pair("matmul", "a", "b", ("precision", "preferred_element_type")))
defbatch(operator.matmul, _pair("matmul", "a", "b"))
defbatch(jnp.vdot, _pair("vdot", "a", "b", ("precision",)))
defbatch(jnp.outer, _pair("outer", "a", "b"))
defbatch(jnp.inner, _pair("inner", "a", "b"))
defbatch(linalg.dot, _pair("dot", "lhs", "rhs", ("precision", "preferred_element_type")))
defbatch(jnp.tensordot, lambda b: loop(b))


def _dot_general(b):
    dims = static_or_none(b, "dimension_numbers")
    if dims is ... or b.batched("dimension_numbers"):
        return loop(b)
    lhs, rhs = as_array(b, "lhs"), as_array(b, "rhs")
    flags = (ir.Const(b.batched("lhs")), ir.Const(b.batched("rhs")))
    call = ir.Call(vm_ref("dot_general"), (lhs, rhs, ir.Const(_const_dims(dims))) + flags)
    return call, bt.B


def _const_dims(dims):
    (lc, rc), (lb, rb) = dims
    return ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))


defbatch(linalg.dot_general_p, _dot_general)


# ---- einsum: a new letter for the batch axis ----------------------------------------------------

_LETTERS = "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"


def batched_subscripts(subscripts: str, batched: list[bool]) -> str:
    """`ij,j->i` with the second operand batched becomes `ij,zj->zi`."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if not arrow:
        counts = {c: inputs.count(c) for c in inputs if c.isalpha()}
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1))
    letter = next(c for c in _LETTERS if c not in spec)
    terms = [letter + t if flag else t for t, flag in zip(terms, batched)]
    return ",".join(terms) + "->" + letter + output


def _einsum(b):
    call = b.call
    try:
        subscripts = static_value(call.args[0]) if call.args else None
    except NotStatic:
        subscripts = None
    operands = call.args[1:]
    options = [k for k, v in call.kwargs if not (isinstance(v, ir.Const) and v.value is None)
               and k != "optimize"]
    if not isinstance(subscripts, str) or options:
        return loop(b)
    types = [b.ctx.type_of(a) for a in operands]
    if not all(bt.is_array(t) or not bt.is_batched(t) for t in types):
        return loop(b)
    new = batched_subscripts(subscripts, [bt.is_batched(t) for t in types])
    return ir.Call(call.fn, (ir.Const(new),) + operands, call.kwargs), bt.B


defbatch(jnp.einsum, _einsum)

# jnp.linalg.norm is batched through its source (batch/rules/linalg.py)
