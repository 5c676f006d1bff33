"""Batching rules of operations, keyed by the Python callable user code calls.

The vmap transform (vmap.py) meets a call with at least one batched argument and asks this
table how to batch it. An entry is one of:

- a rule: `rule(b: RuleCall) -> (expr, batch_type)`. The rule sees which arguments are
  batched and their static values, may emit statements before the call (`b.emit`), and
  returns the expression that replaces the call and the batch type of its value. Rules are
  chosen by which arguments are batched, so `jnp.dot(mat, x)` with only `x` batched
  becomes one product, and an axis argument `axis=0` becomes `axis=1` in the source.
  A declared kind of rule (registry.ElementwiseBatching, ...) also states the type of its
  value without rewriting (`RESULT_TYPES`), which batch-type inference (infer.py) reads;
  `rule_result_type` says how the analysis gets it from any rule;
- `loop`: batched by a loop over the examples (written in Core, so it can be transformed
  again), for operations no vectorised rule covers yet (random numbers of many keys);
- `source`: transformed through its Python source, as the user's own functions are (the
  helpers that are written in plain redraft.numpy);
- not batchable, with the reason (what JAX raises too: a shape that depends on values).

A registry test walks every operation the AD registry, redraft.numpy and redraft.lax know
and fails for one without an entry here.
"""
from __future__ import annotations

import inspect
from collections.abc import MutableMapping
from dataclasses import replace
from typing import Any, Callable

from redraft.compiler.core import ir
from redraft.compiler.core.names import Names
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.primitives.registry import (BATCH_RULES, AxisBatching,  # noqa: F401
                                                  BatchEntry, ElementwiseBatching,
                                                  LeadingAxesBatching, batch_alias, defbatch,
                                                  defbatch_lazily, defbatch_loop,
                                                  defbatch_source, defnotbatchable, rules_for)
from redraft.compiler.transforms.cache import TRANSFORM_CACHE
from redraft.compiler.transforms.batch.vmap_refs import vm_ref

_MISSING = object()


# How a declared kind of rule (registry.ElementwiseBatching) becomes a rule function: filled
# by batch/rules/common.py, which writes the rules (it imports this module).
RULE_KINDS: dict[type, Callable] = {}
_BUILT: dict = {}  # declared rule -> its rule function


def raw_batch_entry(op) -> BatchEntry | None:
    """The entry for `op`, or for the operation the AD registry says it is an alias of, as
    registered (a declared kind of rule as its declaration)."""
    try:
        entry = _decided(BATCH_RULES.get(op))
    except TypeError:
        return None
    if entry is None:
        ad = rules_for(op)
        if ad is not None and ad.op is not op:
            entry = _decided(BATCH_RULES.get(ad.op))
    return entry


def _decided(entry: BatchEntry | None) -> BatchEntry | None:
    """`entry`, or for a lazy one (registry.defbatch_lazily) the entry its decision makes."""
    if entry is None or entry.kind != "lazy":
        return entry
    entry.rule()
    return BATCH_RULES.get(entry.op)


def batch_entry(op) -> BatchEntry | None:
    """raw_batch_entry, a declared kind of rule built into its rule function."""
    entry = raw_batch_entry(op)
    if entry is None or entry.kind != "rule" or callable(entry.rule):
        return entry
    return replace(entry, rule=built_rule(entry.rule))


def built_rule(spec):
    """The rule function of a declared kind of rule (built once)."""
    if spec not in _BUILT:
        _BUILT[spec] = RULE_KINDS[type(spec)](spec)
    return _BUILT[spec]


def has_batch_rule(op) -> bool:
    return batch_entry(op) is not None


# ---- the type of a rule's value, without rewriting -----------------------------------------------

def _batched_array(spec, b: "RuleCall") -> bt.BType:
    """ElementwiseBatching's and AxisBatching's value: one batched array (their loop over
    the examples, where a static argument is batched, stacks one too)."""
    return bt.B


def _leading_axes(spec: LeadingAxesBatching, b: "RuleCall") -> bt.BType:
    """LeadingAxesBatching's value: its `results` batched arrays (a tuple of them when more
    than one), or one stacked array where an argument other than its operands is batched
    (batched by a loop over the examples)."""
    if spec.results == 1 or any(b.batched(n) for n in b.bound if n not in spec.operands):
        return bt.B
    return bt.tup((bt.B,) * spec.results)


# The batch type each declared kind of rule gives its value: `(spec, b) -> BType`.
RESULT_TYPES: dict[type, Callable] = {
    ElementwiseBatching: _batched_array,
    AxisBatching: _batched_array,
    LeadingAxesBatching: _leading_axes,
}


def rule_result_type(entry: BatchEntry, b: "RuleCall") -> bt.BType:
    """The batch type of the value of the call `b` under `entry`'s rule (a raw entry):
    stated by a declared kind of rule (`RESULT_TYPES`) or by a rule function's own
    `result_type(b)` attribute; a rule written as code with neither returns its type from
    the same case analysis that builds its expression, so it is run, on `b`, whose context
    and statement list the caller throws away (infer.RuleQuery)."""
    spec = entry.rule
    if not callable(spec):
        return RESULT_TYPES[type(spec)](spec, b)
    stated = getattr(spec, "result_type", None)
    if stated is not None:
        return stated(b)
    return spec(b)[1]


# ---- what a rule sees --------------------------------------------------------------------------

class NotStatic(Exception):
    """An argument a rule needs as a constant is a value known only at run time."""


class RuleContext:
    """What a rule's `b.ctx` offers: fresh names (`names`), the name of the `axis_size`
    parameter (`size`), the batch type of each name (`types`, `type_of`; a rule records the
    types of the temporaries it emits there), the names the function assigns one constant
    (`constants`), their rank relations (`ranks`, vmap_ranks.RankSources), and conversions
    of a value to a larger batch type, emitted into a statement list. The rewriter
    (vmap.Batching) is one; the analysis's query context (infer.RuleQuery) is another."""

    names: Names
    size: str
    types: MutableMapping
    constants: dict
    ranks: Any

    def type_of(self, a) -> bt.BType:
        if isinstance(a, ir.Var):
            return self.types.get(a.name, bt.U)
        return bt.U

    def atomize(self, e: ir.Expr, origin, out: list) -> ir.Atom:
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return e
        name = self.names.fresh("t")
        out.append(ir.Assign((name,), e, origin))
        return ir.Var(name)

    def conversion(self, a: ir.Atom, from_t: bt.BType, to_t: bt.BType) -> ir.Expr:
        """The expression that makes `a` (of type from_t) a value of type to_t."""
        size = ir.Var(self.size)
        if from_t is bt.U and bt.is_array(to_t):
            return ir.Call(vm_ref("broadcast"), (a, size))
        return ir.Call(vm_ref("convert"), (a, ir.Const(from_t), ir.Const(to_t), size))

    def convert(self, a: ir.Atom, from_t: bt.BType, to_t: bt.BType, out: list,
                origin) -> ir.Atom:
        """`a` converted to type to_t, through a new temporary when anything changes."""
        if not bt.needs_conversion(from_t, to_t):
            return a
        return self.atomize(self.conversion(a, from_t, to_t), origin, out)


def rule_call(ctx: RuleContext, call: ir.Call, origin, out: list) -> "RuleCall":
    """What a rule sees of `call`: its arguments bound to the operation's parameter names
    (`arg0`, `arg1`, ... where the operation has no signature) and their batch types."""
    bound = bind_arguments(call.fn.value, call)
    if bound is None:
        bound = {f"arg{i}": a for i, a in enumerate(call.args)}
        bound.update(dict(call.kwargs))
    types = {k: (bt.tup(ctx.type_of(x) for x in v) if isinstance(v, tuple) else ctx.type_of(v))
             for k, v in bound.items()}
    return RuleCall(ctx, call, types, bound, origin, out)


class RuleCall:
    """One call being batched: its arguments bound to the operation's parameter names, their
    batch types, and ways to emit statements into the batched function."""

    def __init__(self, ctx, call: ir.Call, types: dict[str, bt.BType], bound: dict,
                 origin: ir.Origin | None, out: list):
        self.ctx = ctx  # a RuleContext: the rewriter, or the analysis's query
        self.call = call
        self.bound = bound
        self.types = types
        self.origin = origin
        self.out = out

    # ---- arguments ---------------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.call.fn.path if isinstance(self.call.fn, ir.Ref) else "<function value>"

    def arg(self, name: str, default: Any = _MISSING):
        if name in self.bound:
            return self.bound[name]
        if default is _MISSING:
            self.fail(f"`{self.path}` is called without its argument `{name}`")
        return default

    def has(self, name: str) -> bool:
        return name in self.bound

    def type(self, name: str) -> bt.BType:
        return self.types.get(name, bt.U)

    def batched(self, name: str) -> bool:
        return bt.is_batched(self.type(name))

    def batched_names(self) -> list[str]:
        return [n for n in self.bound if self.batched(n)]

    def is_static(self, name: str) -> bool:
        try:
            self.static(name)
            return True
        except NotStatic:
            return False

    def static_atom(self, a):
        """The Python value of atom `a` when it is a constant (raises NotStatic)."""
        return static_value(a, getattr(self.ctx, "constants", None))

    def static(self, name: str, default: Any = None):
        """The Python value of argument `name` when it is a constant (or absent: default)."""
        if name not in self.bound:
            return default
        return static_value(self.bound[name], getattr(self.ctx, "constants", None))

    # ---- emitting ---------------------------------------------------------------------------
    def emit(self, expr: ir.Expr, base: str = "t", typ: bt.BType | None = None) -> ir.Var:
        """A new temporary holding `expr`; `typ` records its batch type when later
        statements batch it again."""
        name = self.ctx.names.fresh(base)
        self.out.append(ir.Assign((name,), expr, self.origin))
        if typ is not None:
            self.ctx.types[name] = typ
        return ir.Var(name)

    def call_ref(self, ref: ir.Ref, *args, **kwargs) -> ir.Call:
        return ir.Call(ref, tuple(atom(a) for a in args),
                       tuple((k, atom(v)) for k, v in kwargs.items()))

    def rebuild(self, **replace) -> ir.Call:
        """The original call with the arguments named in `replace` replaced (added as
        keywords when the call left them out)."""
        return rebuild_call(self.call, self.bound, replace, self.signature())

    def signature(self) -> inspect.Signature | None:
        return op_signature(self.call.fn.value) if isinstance(self.call.fn, ir.Ref) else None

    @property
    def axis_size(self) -> ir.Var:
        return ir.Var(self.ctx.size)

    def to_batched(self, a: ir.Atom, t: bt.BType) -> ir.Atom:
        """`a` (of type t) with every leaf batched (unbatched leaves broadcast)."""
        return self.ctx.convert(a, t, bt.batchify(t), self.out, self.origin)

    def fail(self, message: str):
        from redraft.compiler.transforms.common import TransformError, where
        raise TransformError(f"{where(self.origin)}vmap: {message}")


def atom(v) -> ir.Atom:
    if isinstance(v, (ir.Var, ir.Const, ir.Ref)):
        return v
    return ir.Const(v)


def static_value(a, constants: dict | None = None):
    """The Python value of a constant atom (a tuple of constants, or a name the function
    assigns one constant, too); else NotStatic."""
    if isinstance(a, ir.Const):
        return a.value
    if isinstance(a, ir.Ref):
        return a.value
    if isinstance(a, ir.Var) and constants and a.name in constants:
        return constants[a.name]
    if isinstance(a, tuple):
        return tuple(static_value(x, constants) for x in a)
    raise NotStatic(a)


def op_signature(op) -> inspect.Signature | None:
    """The operation's own signature (the AD registry's, for builtins that have none)."""
    return TRANSFORM_CACHE.get(op, "signature", lambda: _signature_of(op))


def _signature_of(op) -> inspect.Signature | None:
    try:
        return inspect.signature(op)
    except (TypeError, ValueError):
        ad = rules_for(op)
        return ad.signature if ad is not None and ad.op is op else None


def bind_arguments(op, call: ir.Call) -> dict | None:
    """{parameter name: atom} for `call` (a tuple of atoms for *args), without defaults;
    None when `op` has no inspectable signature or the call does not fit it."""
    from redraft.compiler.transforms.common import bind_to_signature
    return bind_to_signature(op_signature(op), call)


def rebuild_call(call: ir.Call, bound: dict, replace: dict, sig) -> ir.Call:
    """`call` with bound parameters replaced, in the form the user wrote it (a parameter the
    call left out is added as a keyword; *args take a tuple of atoms)."""
    args = list(call.args)
    kwargs = dict(call.kwargs)
    positional: list[str] = []
    vararg_name = None
    if sig is not None:
        positional = [p.name for p in sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        vararg_name = next((p.name for p in sig.parameters.values()
                            if p.kind is p.VAR_POSITIONAL), None)
    for name, value in replace.items():
        if name == vararg_name:
            args = args[:len(positional)] + [atom(x) for x in value]
        elif name in positional and positional.index(name) < len(call.args):
            args[positional.index(name)] = atom(value)
        else:
            kwargs[name] = atom(value)
    return ir.Call(call.fn, tuple(args), tuple(kwargs.items()), call.star_args)
