"""Batch-type inference: the batch type (batch_types.py) of every name of a Core function,
an analysis of its own that the rewriter (vmap.py) reads and never runs.

One round walks the function once: a statement's type comes from its operation and its
operands' types, and a name's type is the join of every type assigned to it. Rounds repeat
until no type grows (loops carry types round, so a loop's body may batch a name its head
read as unbatched). Control flow, as the rewriter will treat it:

- `if` on a batched condition runs both branches and selects per example, so every name
  the branches assign (the SSA merges) is batched; on an unbatched one, types join;
- `while` on a batched condition runs until no example's condition holds, keeping the old
  values of finished examples, so every name it carries is batched (a reverse-mode tape
  carried so cannot be: NeedsExampleLoop);
- `for` over a batched array iterates its per-example axis.

A call's type comes from what batches it (vmap_calls.py): a user's function, the type its
own Core infers to (callee_result_type); a loop over the examples, the stacked type; an
operation's batching rule, `batching.rule_result_type` (stated by the declared kinds of rule,
and for rules written as code, read from the rule run on a throwaway statement list: see
`RuleQuery`).
"""
from __future__ import annotations

import inspect
from collections import ChainMap
from dataclasses import dataclass

from redraft.compiler.core import ir
from redraft.compiler.core.names import Names
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.batching import (RuleContext, batch_entry,
                                                        raw_batch_entry, rule_call,
                                                        rule_result_type)
from redraft.compiler.transforms.batch.vmap_ranks import RankSources
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state, identity
from redraft.compiler.transforms.common import (TransformError, is_transformable_callable,
                                                positional_args, where)

_MAX_ROUNDS = 30
# the result of a loop over the examples, by what the loop's entry says it returns
# methods of Python's strings and containers, kept as written: `"{}".format(x)` formats x
PYTHON_METHODS = frozenset(("format", "join", "split", "replace", "startswith", "endswith",
                            "strip", "append", "extend", "insert", "pop", "copy", "get",
                            "keys", "values", "items", "update", "setdefault", "index",
                            "count"))
LOOP_RESULTS = {"array": bt.B, "list": bt.seq(bt.B), "list of trees": bt.seq(bt.TREE),
                "any": bt.TREE}


class NeedsExampleLoop(TransformError):
    """The function cannot be vectorised as a whole (a batched while loop that records a
    reverse-mode tape runs a different number of steps per example); the caller batches
    it by a loop over the examples instead."""


@dataclass(frozen=True)
class Inferred:
    """What the analysis found: each name's batch type and the function's result type."""
    types: dict
    result: bt.BType


def infer(fn: ir.Function, in_types: tuple) -> Inferred:
    """The batch types of `fn`'s names for parameters of types `in_types`."""
    if len(in_types) != len(fn.params):
        raise TransformError(f"vmap of {fn.name}: {len(in_types)} batch types for "
                             f"{len(fn.params)} parameters")
    return Inference(fn, tuple(in_types)).run()


def result_type(fn: ir.Function, in_types: tuple) -> bt.BType:
    """The batch type of `fn`'s result for parameters of types `in_types`."""
    return infer(fn, in_types).result


class Inference:
    """The fixpoint over one function (see the module doc)."""

    def __init__(self, fn: ir.Function, in_types: tuple):
        self.fn = fn
        self.types: dict[str, bt.BType] = dict(zip(fn.params, in_types))
        self.constants = ir.constant_names(fn)
        self.result: bt.BType = bt.U
        self.defined: set[str] = set()
        self.changed = False
        self._query: RuleQuery | None = None
        self._writes: dict[int, set[str]] = {}  # id of a statement of fn -> what it writes

    def run(self) -> Inferred:
        for _ in range(_MAX_ROUNDS):
            self.changed = False
            self.defined = set(self.fn.params)
            self.block(self.fn.body)
            if not self.changed:
                return Inferred(self.types, self.result)
        raise TransformError(f"{self.fn.filename}:{self.fn.firstline}: vmap: the batch "
                             f"types of {self.fn.name} do not settle")

    def type_of(self, a) -> bt.BType:
        if isinstance(a, ir.Var):
            return self.types.get(a.name, bt.U)
        return bt.U

    def set_type(self, name: str, t: bt.BType) -> None:
        old = self.types.get(name, bt.U)
        new = bt.join(old, t)
        if new != old:
            self.types[name] = new
            self.changed = True

    # ---- statements --------------------------------------------------------------------------
    def block(self, body: list[ir.Stmt]) -> None:
        for s in body:
            self.stmt(s)
            self.defined |= self.writes(s)

    def writes(self, s: ir.Stmt) -> set[str]:
        """ir.stmt_writes(s), found once per statement for all rounds (a nested block's
        names were gathered again for every statement around it, in every round)."""
        found = self._writes.get(id(s))
        if found is None:
            if isinstance(s, ir.Assign):
                found = set(s.targets)
            else:
                found = {s.target} if isinstance(s, ir.For) else set()
                for block in ir.child_blocks(s):
                    for inner in block:
                        found |= self.writes(inner)
            self._writes[id(s)] = found
        return found

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Assign):
            t = self.expr(s.expr, s.origin)
            items = (t,) if len(s.targets) == 1 else unpack_types(t, len(s.targets), s.origin)
            for name, it in zip(s.targets, items):
                self.set_type(name, it)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.expr, s.origin)
        elif isinstance(s, ir.Return):
            self.result = bt.join(self.result, self.type_of(s.value))
        elif isinstance(s, ir.If):
            self.if_(s)
        elif isinstance(s, ir.For):
            self.for_(s)
        elif isinstance(s, ir.While):
            self.while_(s)
        else:
            raise TypeError(f"not a Core statement: {s!r}")

    def if_(self, s: ir.If) -> None:
        before = set(self.defined)
        batched = bt.is_array(self.type_of(s.cond))
        self.block(s.body)
        self.defined = set(before)
        self.block(s.orelse)
        if batched:  # both branches run, then each name they assign is selected
            for w in merged_names(s, before):
                self.set_type(w, bt.batchify(self.types.get(w, bt.U)))

    def for_(self, s: ir.For) -> None:
        it = self.type_of(s.iter)
        self.set_type(s.target, it if bt.is_array(it) else bt.iterated(it))
        self.block(s.body)

    def while_(self, s: ir.While) -> None:
        before = set(self.defined)
        self.block(s.cond_body)  # the condition's type comes from its block
        self.defined = set(before)
        batched = bt.is_array(self.type_of(s.cond))
        self.block(s.cond_body)
        self.block(s.body)
        if not batched:
            return
        for w in carried_names(s, before):
            if isinstance(self.types.get(w, bt.U), bt.Tape):
                raise NeedsExampleLoop(f"{where(s.origin)}vmap: a while loop on a batched "
                                       "condition that records a reverse-mode tape")
            self.set_type(w, bt.batchify(self.types.get(w, bt.U)))

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e: ir.Expr, origin) -> bt.BType:
        if isinstance(e, ir.Var):
            return self.type_of(e)
        if isinstance(e, (ir.Const, ir.Ref)):
            return bt.U
        if isinstance(e, (ir.Tuple, ir.List)):
            return bt.tup(self.type_of(a) for a in e.items)
        if isinstance(e, ir.Attr):
            return attr_type(e, self.type_of(e.obj), origin)
        if isinstance(e, ir.Call):
            return self.call(e, origin)
        raise TypeError(f"not a Core expression: {e!r}")

    def call(self, call: ir.Call, origin) -> bt.BType:
        kind, entry = call_kind(self.type_of, call, origin)
        if kind in ("unbatched", "method"):
            return bt.U
        if kind == "value":
            return bt.TREE
        if kind == "user":
            return user_call_type(self.type_of, call, origin)
        if kind == "loop":
            return LOOP_RESULTS.get(entry.returns, bt.B)
        query = self.query()
        return rule_result_type(entry, rule_call(query.fresh(), call, origin, []))

    def query(self) -> "RuleQuery":
        if self._query is None:
            self._query = RuleQuery(self)
        return self._query


class RuleQuery(RuleContext):
    """The `b.ctx` a rule sees when the analysis asks it for its result type: the
    analysis's types (read live), its own fresh names and `axis_size`, and a layer for the
    types of the temporaries a rule records (`b.emit(..., typ=)`), emptied before each call.

    This is the one adapter between rules and the analysis: a rule written as code returns
    its type from the same case analysis that builds its expression, so the analysis runs it
    and keeps the type, throwing the statement list it emitted away (the declared kinds of
    rule state their type instead: batching.RESULT_TYPES). Nothing it does reaches the
    rewriter: its names come from a generator of its own."""

    def __init__(self, inference: Inference):
        self.names = Names(inference.fn)
        self.size = self.names.fresh("axis_size")
        self.temps: dict[str, bt.BType] = {}
        self.types = ChainMap(self.temps, inference.types)
        self.constants = inference.constants
        self.ranks = RankSources(inference.fn, self.type_of)

    def fresh(self) -> "RuleQuery":
        self.temps.clear()
        return self


# ---- shared with the rewriter -------------------------------------------------------------------

def merged_names(s: ir.If, before: set[str]) -> list[str]:
    """The names a batched `if` selects per example after its branches: those assigned on
    either path that were defined before it, or assigned on both (the SSA merges)."""
    w_then, w_else = ir.block_writes(s.body), ir.block_writes(s.orelse)
    return sorted(w for w in w_then | w_else if w in before or (w in w_then and w in w_else))


def carried_names(s: ir.While, before: set[str]) -> list[str]:
    """The names a batched `while` carries: defined before it and assigned in it."""
    return sorted(w for w in ir.block_writes(s.body) | ir.block_writes(s.cond_body)
                  if w in before)


def unpack_types(t: bt.BType, n: int, origin) -> tuple:
    """The types of `a, b, ... = value` for a value of type t."""
    if isinstance(t, bt.Tuple):
        if len(t.items) != n:
            raise TransformError(f"{where(origin)}vmap: cannot unpack {len(t.items)} values "
                                 f"into {n} names")
        return t.items
    if bt.is_array(t):
        return (t,) * n
    return (bt.element(t),) * n


def attr_type(e: ir.Attr, t: bt.BType, origin) -> bt.BType:
    """The type of `obj.name` for an `obj` of type t (shape, ndim and size of a batched
    array are the per-example ones: unbatched)."""
    if not bt.is_batched(t) or e.name in ("dtype", "weak_type", "itemsize"):
        return bt.U
    if e.name in ("shape", "ndim", "size") and bt.is_array(t):
        return bt.U
    if isinstance(t, bt.Tree):
        return bt.TREE  # a field of a pytree whose leaves are all batched
    if isinstance(t, bt.Tuple):
        return bt.element(t)
    raise TransformError(f"{where(origin)}vmap: attribute `.{e.name}` of a batched "
                         "array is not supported")


def call_kind(type_of, call: ir.Call, origin) -> tuple[str, object]:
    """How a call is batched, with its batching entry: "unbatched" (no batched argument,
    nor a batched value called), "method" (a method of Python's on an unbatched value),
    "value" (a call through a function value or a method, batched when it runs), "rule",
    "loop", or "user" (the batched version of a function whose source redraft reads);
    raises where it cannot be."""
    atoms = list(call.args) + [v for _, v in call.kwargs]
    if call.star_args is not None:
        atoms.append(call.star_args)
    if isinstance(call.fn, ir.Var):  # a model per example: `m(x)` with m batched
        atoms.append(call.fn)
    elif isinstance(call.fn, ir.Attr) and isinstance(call.fn.obj, ir.Var):
        atoms.append(call.fn.obj)
    if not any(bt.is_batched(type_of(a)) for a in atoms):
        return "unbatched", None
    fn = call.fn
    if isinstance(fn, ir.Attr) and fn.name in PYTHON_METHODS:
        if bt.is_batched(type_of(fn.obj)):
            raise TransformError(f"{where(origin)}vmap: the method `.{fn.name}()` of a "
                                 "batched value cannot be batched")
        return "method", None  # `"{}".format(x)` formats the batched value
    if isinstance(fn, (ir.Var, ir.Attr)):  # batched when it runs: calls/value_calls.py
        if call.kwargs or call.star_args is not None:
            raise NeedsExampleLoop(f"{where(origin)}vmap: a call through the function value "
                                   f"`{fn.name}` with keyword or * arguments runs once per "
                                   "example")
        return "value", None
    if call.star_args is not None and bt.is_batched(type_of(call.star_args)):
        raise TransformError(f"{where(origin)}vmap: `{fn.path}(*args)` with batched *args is "
                             "not supported; pass the arguments one by one")
    entry = raw_batch_entry(fn.value)
    if entry is None:
        if is_transformable_callable(fn.value):
            return "user", None
        raise TransformError(
            f"{where(origin)}vmap: redraft has no batching rule for `{fn.path}` and cannot "
            "read its source to batch it")
    if entry.kind in ("rule", "loop"):
        return entry.kind, entry
    if entry.kind == "source":
        return "user", entry
    raise TransformError(f"{where(origin)}vmap: `{fn.path}` cannot be batched: {entry.reason}")


# ---- calls of the user's functions ---------------------------------------------------------------

def user_call_type(type_of, call: ir.Call, origin) -> bt.BType:
    """The type of `g(a, b)` batched: g's result type for its arguments' types, or a tree
    where g is called once per example (see `callee_call`)."""
    found = callee_call(type_of, call, origin)
    return bt.TREE if found is None else found[2]


def callee_call(type_of, call: ir.Call, origin) -> tuple[ir.Function, list, bt.BType] | None:
    """(the callee's Core, the call's arguments in its parameter order, its result type);
    None where it is batched by a loop over the examples instead (a library helper that
    cannot be vectorised, a function that needs one)."""
    from redraft.compiler.frontend.normalize import UnsupportedSyntaxError
    fn = call.fn.value
    fallible = ((NeedsExampleLoop,) if batch_entry(fn) is None
                else (TransformError, UnsupportedSyntaxError))
    try:
        core = batch_core_of(fn)
        args = callee_args(core, call, origin)
        return core, args, callee_result_type(fn, core, tuple(type_of(a) for a in args))
    except fallible:
        return None


def batch_core_of(fn) -> ir.Function:
    """The Core vmap batches for `fn`: its own source for helpers marked `source` (which
    have derivative rules, so core_of would wrap them as one operation), else core_of."""
    from redraft.compiler.transforms.calls.callable_core import core_of
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):  # batched as its function (callees.vmap_of batches its rule too)
        return core_of(fn.fun)
    entry = batch_entry(fn)
    if entry is not None and entry.kind in ("rule", "loop") and inspect.isfunction(fn):
        # vmap(random.fold_in) itself: a call of the operation, which its rule batches (its
        # source reads host key words, which no batched source can)
        from redraft.compiler.transforms.calls.callable_core import operation_core
        return operation_core(fn)
    if entry is None or entry.kind != "source":
        from redraft.compiler.tracing.tracer import StructureUnknownError
        try:
            return core_of(fn)
        except StructureUnknownError as e:  # traced per structure: run once per example
            raise NeedsExampleLoop(str(e)) from None
    from redraft.compiler.frontend.normalize import lower_function
    from redraft.compiler.frontend.ssa import to_ssa
    return TRANSFORM_CACHE.get(fn, "batch source",
                               lambda: to_ssa(lower_function(fn), coalesce=False))


def callee_args(core: ir.Function, call: ir.Call, origin) -> list:
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


# a result being found -> its provisional type, while its analysis runs (a recursive call)
_IN_PROGRESS: dict = {}
# the results in progress whose provisional type a (recursive) call has read
_PROVISIONAL_READ: set = set()
_READS = [0]  # provisional types read so far, by any analysis


def callee_result_type(fn, core: ir.Function, types: tuple) -> bt.BType:
    """The batch type of `fn`'s result for arguments of `types` (cached with `fn`'s other
    transforms; recursion: the analysis repeats from a provisional result until it agrees
    with itself)."""
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(fn):  # its Core calls itself; its function's Core says what it returns
        core = batch_core_of(fn)
    kind = ("batch result", code_state(fn), types)
    running = (identity(fn),) + kind
    if running in _IN_PROGRESS:
        _PROVISIONAL_READ.add(running)
        _READS[0] += 1
        return _IN_PROGRESS[running]
    return TRANSFORM_CACHE.get(fn, kind, lambda: _settled_result(fn, core, types, running))


def settled_inference(fn, core: ir.Function, types: tuple) -> Inferred | None:
    """The analysis of `core` (fn's) for `types` that finding its result type made, where
    that one read no provisional result (so it is the one vmap_function would make);
    None where there is none."""
    found = TRANSFORM_CACHE.get(fn, ("batch inference", code_state(fn), types), lambda: None)
    return found[1] if found is not None and found[0] is core else None


def _settled_result(fn, core: ir.Function, types: tuple, running: tuple) -> bt.BType:
    """The analysis of `core` repeated from a provisional result until it agrees with
    itself; once, where no call read the provisional result (no recursion reached it, so
    another round would find the same: every callee of a first call's gradients was
    analysed twice). An analysis that read no provisional result at all is kept for
    vmap_function (settled_inference)."""
    _IN_PROGRESS[running] = bt.U
    try:
        for _ in range(8):
            guess = _IN_PROGRESS[running]
            _PROVISIONAL_READ.discard(running)
            reads = _READS[0]
            try:
                inferred = infer(core, types)
            except NeedsExampleLoop:
                return bt.TREE
            found = inferred.result
            if found == guess or running not in _PROVISIONAL_READ:
                break
            _IN_PROGRESS[running] = bt.join(guess, found)
        if reads == _READS[0]:
            TRANSFORM_CACHE.get(fn, ("batch inference", code_state(fn), types),
                                lambda: (core, inferred))
        return found
    finally:
        del _IN_PROGRESS[running]
        _PROVISIONAL_READ.discard(running)
