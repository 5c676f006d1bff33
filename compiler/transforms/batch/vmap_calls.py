"""Batching one call: by its operation's rule, by a loop over the examples, or by calling the
batched version of a function whose source redraft reads (the user's, or a helper's)."""
from __future__ import annotations

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees, value_calls
from redraft.compiler.transforms.batch.batching import BatchEntry, built_rule, rule_call
from redraft.compiler.transforms.batch.infer import (  # noqa: F401 (callee_result_type:
    LOOP_RESULTS,                                      # redraft/vmap.py reads it here)
    NeedsExampleLoop,
    batch_core_of,
    call_kind,
    callee_call,
    callee_result_type,
    settled_inference,
)
from redraft.compiler.transforms.common import GETITEM
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref

RANGE = ir.Ref(range, "range")
APPEND = ir.Ref(core_helpers.append, "append")


def batch_call(ctx, call: ir.Call, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """(expression, batch type) of `call` inside the batched function `ctx` (how it is
    batched: infer.call_kind)."""
    kind, entry = call_kind(ctx.type_of, call, origin)
    if kind in ("unbatched", "method"):  # kept as written: `"{}".format(x)` formats x
        return call, bt.U
    if kind == "user":
        return user_call(ctx, call, origin, out)
    if kind == "value":
        return value_call(ctx, call, origin, out)
    if kind == "loop":
        return loop_call(ctx, call, entry, origin, out)
    rule = entry.rule if callable(entry.rule) else built_rule(entry.rule)
    return rule(rule_call(ctx, call, origin, out))


# ---- the user's functions and helpers written in Python ---------------------------------------


def _vmap_of_callee(fn, in_types: tuple) -> tuple[ir.Function, ir.Function]:
    """A called function's Core and its batched version, by a loop over the examples where
    it cannot be vectorised as a whole: callees.vmap_of's transform (installed below)."""
    from redraft.compiler.transforms.batch.vmap import vmap_function
    core = batch_core_of(fn)
    try:
        return core, vmap_function(core, in_types,
                                   inferred=settled_inference(fn, core, tuple(in_types)))
    except NeedsExampleLoop:
        return core, example_loop_function(fn, core, in_types)


callees.install_transformer("vmap", _vmap_of_callee)


def user_call(ctx, call: ir.Call, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """`g(a, b)` becomes `g_batched(a, b, axis_size)`; a library helper that cannot be
    vectorised (and a function that needs it) is called once per example instead."""
    found = callee_call(ctx.type_of, call, origin)
    if found is None:
        return loop_call(ctx, call, BatchEntry(call.fn.value, "loop", returns="any"), origin,
                         out)
    _, args, result = found
    fn = call.fn.value
    callee = callees.vmap_of(fn, tuple(ctx.type_of(a) for a in args))
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):  # a batched custom_jvp: called as itself, rules and all
        callee = callee.fn
    ref = ir.Ref(callee, f"{call.fn.path.replace('.', '_')}_batched")
    return ir.Call(ref, tuple(args) + (ir.Var(ctx.size),)), result


def value_call(ctx, call: ir.Call, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """`f(a)` through a function value (or a method `o.m(a)`) becomes `f_batched =
    value_calls.batched_of(f, *types)` and `f_batched(f, a, axis_size)`: batched when it
    runs, every leaf of its result batched."""
    operands = value_calls.operands(call, origin)
    types = tuple(ctx.type_of(a) for a in operands)
    callee = ctx.names.fresh(f"{value_calls.callee_name(call)}_batched")
    out.append(ir.Assign((callee,), value_calls.transform_request(call, "batched", types),
                         origin))
    return ir.Call(ir.Var(callee), operands + (ir.Var(ctx.size),)), bt.TREE


# ---- a loop over the examples -----------------------------------------------------------------

def loop_call(ctx, call: ir.Call, entry, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """`op(x, y)` with x batched becomes a loop calling op once per example:

        pieces = []
        for k in range(axis_size):
            x_k = x[k]
            r = op(x_k, y)
            pieces = append(pieces, r)
        out = jnp.stack(pieces)
    """
    names = ctx.names
    pieces, k, r = names.fresh("pieces"), names.fresh("k"), names.fresh("r")
    indices = names.fresh("examples")
    out.append(ir.Assign((pieces,), ir.List(()), origin))
    out.append(ir.Assign((indices,), ir.Call(RANGE, (ir.Var(ctx.size),)), origin))
    body: list[ir.Stmt] = []

    def example(a):
        t = ctx.type_of(a)
        if not bt.is_batched(t):
            return a
        return _example_of(ctx, a, t, ir.Var(k), body, origin)

    args = tuple(example(a) for a in call.args)
    kwargs = tuple((name, example(a)) for name, a in call.kwargs)
    body.append(ir.Assign((r,), ir.Call(call.fn, args, kwargs, call.star_args), origin))
    body.append(ir.Assign((pieces,), ir.Call(APPEND, (ir.Var(pieces), ir.Var(r))), origin))
    out.append(ir.For(k, ir.Var(indices), body, origin))
    if entry.returns == "array":
        return ir.Call(jnp_ref("stack"), (ir.Var(pieces),)), bt.B
    stacked = ir.Call(vm_ref("stack_examples"), (ir.Var(pieces),))
    return stacked, LOOP_RESULTS.get(entry.returns, bt.B)


def _example_of(ctx, a: ir.Atom, t: bt.BType, k: ir.Var, body: list, origin) -> ir.Atom:
    """Example k of the batched value `a` (a tuple of known length item by item; a tree of
    batched leaves, such as a list of arrays, leaf by leaf)."""
    if t is bt.B:
        name = ctx.names.fresh(f"{a.name}_k" if isinstance(a, ir.Var) else "x_k")
        body.append(ir.Assign((name,), ir.Call(GETITEM, (a, k)), origin))
        return ir.Var(name)
    if isinstance(t, bt.Tuple):
        items = []
        for i, it in enumerate(t.items):
            item = ctx.names.fresh("item")
            body.append(ir.Assign((item,), ir.Call(GETITEM, (a, ir.Const(i))), origin))
            items.append(_example_of(ctx, ir.Var(item), it, k, body, origin)
                         if bt.is_batched(it) else ir.Var(item))
        name = ctx.names.fresh("items_k")
        body.append(ir.Assign((name,), ir.Tuple(tuple(items)), origin))
        return ir.Var(name)
    name = ctx.names.fresh("x_k")
    body.append(ir.Assign((name,), ir.Call(vm_ref("take_example"), (a, ir.Const(t), k)),
                          origin))
    return ir.Var(name)


class _LoopContext:
    """What loop_call needs of a transform, for a function batched as a whole by a loop."""

    def __init__(self, core: ir.Function, types: tuple):
        from redraft.compiler.transforms.common import Names
        self.names = Names(core)
        self.size = self.names.fresh("axis_size")
        self.types = dict(zip(core.params, types))

    def type_of(self, a) -> bt.BType:
        return self.types.get(a.name, bt.U) if isinstance(a, ir.Var) else bt.U


def example_loop_function(fn, core: ir.Function, types: tuple) -> ir.Function:
    """`def f_batched(x, axis_size)` calling f once per example and stacking the results."""
    from redraft.compiler.frontend.ssa import to_ssa
    ctx = _LoopContext(core, types)
    origin = (core.filename, core.firstline)
    call = ir.Call(ir.Ref(fn, core.name.replace(".", "_")), tuple(ir.Var(p) for p in core.params))
    body: list[ir.Stmt] = []
    expr, _ = loop_call(ctx, call, BatchEntry(fn, "loop", returns="any"), origin, body)
    result = ctx.names.fresh("out")
    body.append(ir.Assign((result,), expr, origin))
    body.append(ir.Return(ir.Var(result), origin))
    out = ir.Function(f"{core.name}_batched", core.params + (ctx.size,), body, (),
                      core.filename, core.firstline, None, {})
    out = to_ssa(out, coalesce=False)
    out.meta = ir.FunctionMeta(out.meta.source_fn, "vmap", tuple(types), bt.TREE)
    return out
