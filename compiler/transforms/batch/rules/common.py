"""Building blocks of batching rules: operand alignment, axis arguments, rule families."""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from redraft.compiler.core import ir
from redraft.compiler.frontend.normalize import UnsupportedSyntaxError, lower_function
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.primitives.registry import ElementwiseBatching
from redraft.compiler.transforms.batch.batching import (BATCH_RULES, RULE_KINDS, NotStatic,
                                                       RuleCall, defbatch, defbatch_lazily,
                                                       defbatch_source)
from redraft.compiler.transforms.batch.vmap_ranks import covers
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref

SCALARS = (int, float, bool, complex, type(None))


def getitem_ref() -> ir.Ref:
    from redraft.compiler.transforms.common import GETITEM
    return GETITEM


def is_scalar_atom(a) -> bool:
    """A Python number, or a constant array of rank 0: nothing to align against."""
    if isinstance(a, ir.Const):
        return isinstance(a.value, SCALARS)
    if isinstance(a, ir.Ref):
        return isinstance(a.value, SCALARS) or getattr(a.value, "ndim", None) == 0
    return False


# ---- operands ------------------------------------------------------------------------------

def as_array(b: RuleCall, name: str) -> ir.Atom:
    """Argument `name`, batched, as one array (a tuple of batched items is stacked)."""
    return array_atom(b, b.arg(name), b.type(name))


def array_atom(b: RuleCall, a: ir.Atom, t: bt.BType) -> ir.Atom:
    """`a` of batch type t as one batched array: a tuple of batched items (`jnp.array((x,
    y))` per example) is stacked behind the batch axis."""
    if bt.is_array(t) or not bt.is_batched(t):
        return a
    if isinstance(t, bt.Tuple):
        items = [b.emit(ir.Call(getitem_ref(), (a, ir.Const(i)))) for i in range(len(t.items))]
        items = [b.ctx.convert(x, it, bt.batchify(it), b.out, b.origin)
                 for x, it in zip(items, t.items)]
        items = [array_atom(b, x, bt.batchify(it)) for x, it in zip(items, t.items)]
        packed = b.emit(ir.Tuple(tuple(items)))
        return b.emit(b.call_ref(jnp_ref("stack"), packed, axis=1))
    b.fail(f"`{b.path}` of a {bt.describe(t)} value: pass an array")


def aligned(b: RuleCall, operands: list[str]) -> dict[str, ir.Atom]:
    """The batched operands (by parameter name) aligned for per-example broadcasting."""
    present = [(n, b.arg(n), b.type(n)) for n in operands if b.has(n)]
    return align_atoms(b, present)


def align_atoms(b: RuleCall, operands: list) -> dict:
    """{key: atom} for the batched ones of `operands` [(key, atom, type)]: each with size-1
    axes inserted after its batch axis where another operand has a higher per-example rank,
    so that NumPy broadcasting pairs per-example axes. An operand whose rank is known to be
    at least the other's needs no alignment against it (vmap_ranks.py)."""
    out = {}
    ranks = b.ctx.ranks
    pair = _unknown_pair(b, operands)
    if pair is not None:
        return pair
    for key, a, t in operands:
        if not bt.is_batched(t) or a is None:
            continue
        x = array_atom(b, a, t)
        have = ranks.sources(a) if x is a else None
        for other_key, other, other_t in operands:
            if other_key == key or other is None or other == a or is_scalar_atom(other):
                continue
            theirs = ranks.sources(other)
            if covers(have, theirs):
                continue
            x = b.emit(ir.Call(vm_ref("align"), (x, other, ir.Const(bt.is_batched(other_t)))))
            have = have | theirs if have is not None and theirs is not None else None
        out[key] = x
    return out


def _unknown_pair(b: RuleCall, operands: list) -> dict | None:
    """`a2, b2 = vm.align_pair(a, b)` where two batched arrays of unrelated ranks are the
    only operands that are not numbers; None elsewhere."""
    present = [(key, a, t) for key, a, t in operands if a is not None and not is_scalar_atom(a)]
    if len(present) != 2 or present[0][1] == present[1][1]:
        return None
    if not all(bt.is_batched(t) and bt.is_array(t) for _, _, t in present):
        return None
    (k1, a1, _), (k2, a2, _) = present
    r1, r2 = b.ctx.ranks.sources(a1), b.ctx.ranks.sources(a2)
    if covers(r1, r2) or covers(r2, r1):
        return None
    n1, n2 = b.ctx.names.fresh("t"), b.ctx.names.fresh("t")
    b.out.append(ir.Assign((n1, n2), ir.Call(vm_ref("align_pair"), (a1, a2)), b.origin))
    return {k1: ir.Var(n1), k2: ir.Var(n2)}


# ---- rule families ---------------------------------------------------------------------------

def elementwise(static: tuple = (), kw_operands: tuple = (), result=bt.B) -> Callable:
    """Rule of an elementwise operation: every positional argument is an operand unless its
    position or name is in `static`; keywords are static unless named in `kw_operands`."""
    def rule(b: RuleCall):
        call = b.call
        names = positional_names(b)
        operands, fixed = [], []
        for i, a in enumerate(call.args):
            name = names[i] if i < len(names) else None
            (fixed if i in static or name in static else operands).append((("p", i), a))
        for k, a in call.kwargs:
            (operands if k in kw_operands else fixed).append((("k", k), a))
        if any(bt.is_batched(b.ctx.type_of(a)) for _, a in fixed):
            return loop(b)
        new = align_atoms(b, [(key, a, b.ctx.type_of(a)) for key, a in operands])
        args = [new.get(("p", i), a) for i, a in enumerate(call.args)]
        kwargs = [(k, new.get(("k", k), a)) for k, a in call.kwargs]
        return ir.Call(call.fn, tuple(args), tuple(kwargs), call.star_args), result
    rule.rank_exact = not static and result is bt.B  # vmap_ranks.py: max of operand ranks
    return rule


RULE_KINDS[ElementwiseBatching] = lambda spec: elementwise(spec.static, spec.kw_operands)


def positional_names(b: RuleCall) -> list:
    sig = b.signature()
    if sig is None:
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def loop(b: RuleCall, returns: str = "array"):
    """Batch this call by a loop over the examples (a rule's fallback). `returns` says how
    per-example results stack: "array", "list" (a list of arrays), "list of trees" (a scan's
    ys, tuples perhaps) or "any" (a pytree)."""
    from redraft.compiler.transforms.batch.batching import BatchEntry
    from redraft.compiler.transforms.batch.vmap_calls import loop_call
    entry = BatchEntry(b.call.fn.value, "loop", returns=returns)
    return loop_call(b.ctx, b.call, entry, b.origin, b.out)


def loop_rule(b: RuleCall):
    return loop(b)


def loop_returning(returns: str):
    return lambda b: loop(b, returns)


def same_type_of(name: str) -> Callable:
    """Rule of an operation that maps a value to one of the same structure (zeros_like)."""
    def rule(b: RuleCall):
        return b.call, b.type(name)
    return rule


def unbatched_result(b: RuleCall):
    """Rule of an operation whose result does not depend on the examples (print)."""
    return b.call, bt.U


# ---- axis arguments --------------------------------------------------------------------------

def shift(axis, k: int = 1):
    """A static axis (int or tuple) of the per-example value, as an axis of the batched one."""
    if isinstance(axis, (tuple, list)):
        return tuple(shift(a, k) for a in axis)
    return axis + k if axis >= 0 else axis


def axis_arg(b: RuleCall, name: str, operand: ir.Atom, default=None) -> ir.Atom:
    """The new value of axis argument `name`: shifted past the batch axis in the source when
    static; `None` (every axis) becomes every per-example axis."""
    try:
        value = b.static(name, default)
    except NotStatic:
        return b.emit(ir.Call(vm_ref("shift_axis"), (b.arg(name), operand)))
    if value is None:
        return b.emit(ir.Call(vm_ref("example_axes"), (operand,)))
    return ir.Const(shift(value))


def static_or_none(b: RuleCall, name: str, default=None):
    """The static value of `name`, or Ellipsis when it is known only at run time."""
    try:
        return b.static(name, default)
    except NotStatic:
        return ...


def flat(b: RuleCall, operand: ir.Atom) -> ir.Atom:
    """Each example raveled: shape (batch, -1)."""
    return b.emit(ir.Call(vm_ref("flat_examples"), (operand,)))


def reduction(operand: str = "a", axis: str = "axis", none: str = "all",
              extra: tuple[str, ...] = (), default=None) -> Callable:
    """Rule of a reduction over `axis` (None: every per-example axis, or, with
    none='flatten', over the raveled example, as NumPy's argmax and cumsum do). Batched
    arguments named in `extra` broadcast against the operand (sum's `where=`)."""
    def rule(b: RuleCall):
        others = [n for n in b.bound if n not in (operand, axis) and b.batched(n)]
        if not b.has(operand) or (others and not set(others) <= set(extra)):
            return loop(b)
        repl = aligned(b, [operand] + list(extra)) if extra else {}
        x = repl.get(operand, as_array(b, operand))
        repl[operand] = x
        value = static_or_none(b, axis, default)
        if value is None and none == "flatten":
            repl[operand] = flat(b, x)
            repl[axis] = ir.Const(1)
        else:
            repl[axis] = axis_arg(b, axis, x, default)
        return b.rebuild(**repl), bt.B
    return rule


def axis_op(operand: str, *axes: str, defaults: tuple = ()) -> Callable:
    """Rule of an operation whose static axis arguments `axes` name per-example axes that
    are all shifted past the batch axis (swapaxes, moveaxis, expand_dims, flip...)."""
    def rule(b: RuleCall):
        if any(b.batched(n) for n in b.bound if n != operand):
            return loop(b)
        repl = {operand: as_array(b, operand)}
        for name, default in zip(axes, defaults + (None,) * len(axes)):
            if b.has(name) or default is not None:
                repl[name] = axis_arg(b, name, repl[operand], default)
        return b.rebuild(**repl), bt.B
    return rule


def register_public_functions(module, skip=()) -> None:
    """Every public function of `module` without an entry: through its source when Core can
    express it, else by a loop over the examples, decided when vmap first meets it (reading
    the sources of all of them took most of `import redraft`)."""
    for name, fn in vars(module).items():
        if (not inspect.isfunction(fn) or fn.__module__ != module.__name__
                or name.startswith("_") or name in skip or fn in BATCH_RULES):
            continue
        defbatch_lazily(fn, functools.partial(_source_or_loop, fn))


def _source_or_loop(fn) -> None:
    """Register `fn` as batched through its source if Core can express it, else by a loop."""
    try:
        lower_function(fn)
        defbatch_source(fn)
    except (UnsupportedSyntaxError, OSError, TypeError):
        defbatch(fn, loop_returning("any"))
