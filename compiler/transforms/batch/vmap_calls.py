"""Batching one call: by its operation's rule, by a loop over the examples, or by calling the
batched version of a function whose source redraft reads (the user's, or a helper's)."""
from __future__ import annotations

import inspect

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.batch.batching import (BatchEntry, RuleCall, batch_entry,
                                                        bind_arguments)
from redraft.compiler.transforms.common import (
    GETITEM,
    TransformError,
    is_transformable_callable,
    positional_args,
    where,
)
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state, identity
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref

RANGE = ir.Ref(range, "range")
APPEND = ir.Ref(core_helpers.append, "append")


def batch_call(ctx, call: ir.Call, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """(expression, batch type) of `call` inside the batched function `ctx`."""
    atoms = list(call.args) + [v for _, v in call.kwargs]
    if call.star_args is not None:
        atoms.append(call.star_args)
    if not any(bt.is_batched(ctx.type_of(a)) for a in atoms):
        return call, bt.U
    fn = call.fn
    if isinstance(fn, ir.Attr):
        return method_call(ctx, call, origin)
    if isinstance(fn, ir.Var):
        raise TransformError(f"{where(origin)}vmap: a call through the function value "
                             f"`{fn.name}` with batched arguments cannot be batched; call a "
                             "function defined at module level")
    if call.star_args is not None and bt.is_batched(ctx.type_of(call.star_args)):
        raise TransformError(f"{where(origin)}vmap: `{fn.path}(*args)` with batched *args is "
                             "not supported; pass the arguments one by one")
    entry = batch_entry(fn.value)
    if entry is None:
        if is_transformable_callable(fn.value):
            return user_call(ctx, call, origin, out)
        raise TransformError(
            f"{where(origin)}vmap: redraft has no batching rule for `{fn.path}` and cannot "
            "read its source to batch it")
    if entry.kind == "rule":
        return rule_call(ctx, call, entry, origin, out)
    if entry.kind == "loop":
        return loop_call(ctx, call, entry, origin, out)
    if entry.kind == "source":
        return user_call(ctx, call, origin, out)
    raise TransformError(f"{where(origin)}vmap: `{fn.path}` cannot be batched: {entry.reason}")


def rule_call(ctx, call: ir.Call, entry, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    bound = bind_arguments(call.fn.value, call)
    if bound is None:
        bound = {f"arg{i}": a for i, a in enumerate(call.args)}
        bound.update(dict(call.kwargs))
    types = {k: (bt.tup(ctx.type_of(x) for x in v) if isinstance(v, tuple) else ctx.type_of(v))
             for k, v in bound.items()}
    return entry.rule(RuleCall(ctx, call, types, bound, origin, out))


def method_call(ctx, call: ir.Call, origin) -> tuple[ir.Expr, bt.BType]:
    """`obj.method(...)` on a non-array value: kept as written (`"{}".format(x)` formats the
    batched value), refused on a batched receiver."""
    receiver = call.fn.obj
    if bt.is_batched(ctx.type_of(receiver)):
        raise TransformError(f"{where(origin)}vmap: the method `.{call.fn.name}()` of a "
                             "batched value cannot be batched")
    return call, bt.U


# ---- the user's functions and helpers written in Python ---------------------------------------


def batch_core_of(fn) -> ir.Function:
    """The Core vmap batches for `fn`: its own source for helpers marked `source` (which
    have derivative rules, so core_of would wrap them as one operation), else core_of."""
    from redraft.compiler.transforms.calls.callable_core import core_of
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):  # batched as its function (callees.vmap_of batches its rule too)
        return core_of(fn.fun)
    entry = batch_entry(fn)
    if entry is None or entry.kind != "source":
        return core_of(fn)
    from redraft.compiler.frontend.normalize import lower_function
    from redraft.compiler.frontend.ssa import to_ssa
    return TRANSFORM_CACHE.get(fn, "batch source",
                               lambda: to_ssa(lower_function(fn), coalesce=False))


def _vmap_of_callee(fn, in_types: tuple) -> tuple[ir.Function, ir.Function]:
    """A called function's Core and its batched version, by a loop over the examples where
    it cannot be vectorised as a whole: callees.vmap_of's transform (installed below)."""
    from redraft.compiler.transforms.batch.vmap import NeedsExampleLoop, vmap_function
    core = batch_core_of(fn)
    try:
        return core, vmap_function(core, in_types)
    except NeedsExampleLoop:
        return core, example_loop_function(fn, core, in_types)


callees.install_transformer("vmap", _vmap_of_callee)


def user_call(ctx, call: ir.Call, origin, out: list) -> tuple[ir.Expr, bt.BType]:
    """`g(a, b)` becomes `g_batched(a, b, axis_size)`; a library helper that cannot be
    vectorised (and a function that needs it) is called once per example instead."""
    from redraft.compiler.frontend.normalize import UnsupportedSyntaxError
    from redraft.compiler.transforms.batch.vmap import NeedsExampleLoop
    fn = call.fn.value
    entry = batch_entry(fn)
    fallible = (NeedsExampleLoop,) if entry is None else (TransformError,
                                                          UnsupportedSyntaxError)
    try:
        core = batch_core_of(fn)
        args = _positional_args(core, call, origin)
        types = tuple(ctx.type_of(a) for a in args)
        result = callee_result_type(fn, core, types)
    except fallible:
        return loop_call(ctx, call, BatchEntry(fn, "loop", returns="any"), origin, out)
    callee = callees.vmap_of(fn, types)
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):  # a batched custom_jvp: called as itself, rules and all
        callee = callee.fn
    ref = ir.Ref(callee, f"{call.fn.path.replace('.', '_')}_batched")
    return ir.Call(ref, tuple(args) + (ir.Var(ctx.size),)), result


def _positional_args(core: ir.Function, call: ir.Call, origin) -> list:
    """The call's arguments in the callee's parameter order, defaults filled in."""
    return list(positional_args(call, origin, _callee_signature(core, call.fn.value),
                                every=True))


def _callee_signature(core: ir.Function, fn) -> inspect.Signature:
    """The callee's parameters as its Core takes them (each by position or keyword), with
    the defaults of its Core and of the function object."""
    params = core.params
    defaults = dict(zip(params[len(params) - len(core.defaults):], core.defaults))
    try:
        defaults.update({p.name: p.default for p in inspect.signature(fn).parameters.values()
                         if p.default is not inspect.Parameter.empty})
    except (TypeError, ValueError):
        pass
    kind, empty = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty
    # a keyword-only parameter with a default may come before one without in Core's order
    return inspect.Signature([inspect.Parameter(p, kind, default=defaults.get(p, empty))
                              for p in params], __validate_parameters__=False)


_RESULTS: dict = {}
_PROVISIONAL: dict = {}
_ACTIVE: set = set()


def callee_result_type(fn, core: ir.Function, types: tuple) -> bt.BType:
    """The batch type of `fn`'s result for arguments of `types` (recursion: the analysis
    repeats from a provisional result until it agrees with itself)."""
    from redraft.compiler.transforms.calls.custom import is_custom
    from redraft.compiler.transforms.batch.vmap import NeedsExampleLoop, result_type
    if is_custom(fn):  # its Core calls itself; its function's Core says what it returns
        core = batch_core_of(fn)
    key = (identity(fn), code_state(fn), types)
    if key in _RESULTS:
        return _RESULTS[key]
    if key in _ACTIVE:
        return _PROVISIONAL.get(key, bt.U)
    _ACTIVE.add(key)
    try:
        for _ in range(8):
            guess = _PROVISIONAL.get(key, bt.U)
            try:
                found = result_type(core, types)
            except NeedsExampleLoop:
                found = bt.TREE
                break
            if found == guess:
                break
            _PROVISIONAL[key] = bt.join(guess, found)
        _RESULTS[key] = found
        return found
    finally:
        _ACTIVE.discard(key)


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
    return stacked, {"list": bt.seq(bt.B), "any": bt.TREE}.get(entry.returns, bt.B)


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
