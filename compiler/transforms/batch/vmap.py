"""Batching: Core -> Core. `f(x, y)` becomes `f_batched(x, y, axis_size)`.

Expects Core in SSA form (compiler/frontend/ssa.py), and the batch type of each parameter
(compiler/transforms/batch/batch_types.py: batched arrays carry their batch axis at 0). Guarantees:

- the output is Core in SSA form again (so grad, jvp and vmap apply to it);
- a statement that reads no batched value is kept exactly as written; one that does is
  rewritten by its operation's batching rule (compiler/transforms/batch/batching.py), which moves
  axis arguments past the batch axis in the source (`axis=0` becomes `axis=1`);
- every name has one batch type, which the analysis of compiler/transforms/batch/infer.py
  finds first (a fixpoint over the whole function); the rewriting then walks the function
  once, reading those types: a value assigned with a smaller type than its name's is
  converted where it is assigned (unbatched leaves broadcast to `axis_size` examples);
- `if` on a batched condition runs both branches and selects per example, name by name,
  for the names the branches assign (the SSA merges); `while` on a batched condition runs
  until no example's condition holds, each iteration keeping the old values of the
  examples that are done; `for` over a batched array iterates its per-example axis;
- calls of the user's other functions call their batched version (callees.vmap_of), made
  on demand, so recursion works.
"""
from __future__ import annotations

import re

from redraft.compiler.core import ir
from redraft.compiler.frontend.ssa import to_ssa
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.batch_types import needs_conversion
from redraft.compiler.transforms.batch.batching import RuleContext
from redraft.compiler.transforms.batch.infer import (Inferred, NeedsExampleLoop, attr_type,
                                                     carried_names, infer, merged_names,
                                                     unpack_types)
from redraft.compiler.transforms.common import Names, TransformError, where
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref
from redraft.compiler.transforms.tidy import tidy
from redraft.compiler.transforms.batch.vmap_ranks import RankSources


def vmap_function(fn: ir.Function, in_types: tuple, name: str | None = None,
                  inferred: Inferred | None = None) -> ir.Function:
    """The batched version of `fn` for parameters of batch types `in_types`; it takes one
    more parameter, `axis_size`, the number of examples. `inferred`: infer(fn, in_types),
    where the caller has it."""
    batching = Batching(fn, tuple(in_types), inferred)
    out = batching.run(name or f"{fn.name}_batched")
    out = tidy(to_ssa(out, coalesce=False))
    out.meta = ir.FunctionMeta(out.meta.source_fn, "vmap", tuple(in_types), batching.result)
    return out


class Batching(RuleContext):
    """One function's rewriting, reading the batch types infer.py found for its names (the
    context batching rules see as `b.ctx`)."""

    def __init__(self, fn: ir.Function, in_types: tuple, inferred: Inferred | None = None):
        inferred = inferred if inferred is not None else infer(fn, in_types)
        self.fn = fn
        self.in_types = in_types
        self.names = Names(self.fn)
        self.size = self.names.fresh("axis_size")
        self.types: dict[str, bt.BType] = dict(inferred.types)
        self.ranks = RankSources(self.fn, self.type_of)
        self.constants = ir.constant_names(self.fn)
        self.result: bt.BType = inferred.result
        self.defined: set[str] = set()

    # ---- the function ------------------------------------------------------------------------
    def run(self, name: str) -> ir.Function:
        self.defined = set(self.fn.params)
        out: list[ir.Stmt] = []
        origin = (self.fn.filename, self.fn.firstline)
        for p, t in zip(self.fn.params, self.in_types):
            final = self.types.get(p, bt.U)
            if needs_conversion(t, final):
                out.append(ir.Assign((p,), self.conversion(ir.Var(p), t, final), origin))
        out.extend(self.block(self.fn.body))
        return ir.Function(name, self.fn.params + (self.size,), out, (), self.fn.filename,
                           self.fn.firstline, None, {})

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            self.stmt(s, out)
            self.defined |= ir.stmt_writes(s)
        return out

    def stmt(self, s: ir.Stmt, out: list) -> None:
        if isinstance(s, ir.Assign):
            e, t = self.expr(s.expr, s.origin, out)
            self.bind(s.targets, e, t, s.origin, out)
        elif isinstance(s, ir.ExprStmt):
            e, _ = self.expr(s.expr, s.origin, out)
            out.append(ir.ExprStmt(e, s.origin))
        elif isinstance(s, ir.Return):
            out.append(s)
        elif isinstance(s, ir.If):
            self.if_(s, out)
        elif isinstance(s, ir.For):
            self.for_(s, out)
        elif isinstance(s, ir.While):
            self.while_(s, out)
        else:
            raise TypeError(f"not a Core statement: {s!r}")

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e: ir.Expr, origin, out: list) -> tuple[ir.Expr, bt.BType]:
        if isinstance(e, ir.Var):
            return e, self.type_of(e)
        if isinstance(e, (ir.Const, ir.Ref)):
            return e, bt.U
        if isinstance(e, (ir.Tuple, ir.List)):
            return e, bt.tup(self.type_of(a) for a in e.items)
        if isinstance(e, ir.Attr):
            return self.attr(e, origin)
        if isinstance(e, ir.Call):
            from redraft.compiler.transforms.batch.vmap_calls import batch_call
            return batch_call(self, e, origin, out)
        raise TypeError(f"not a Core expression: {e!r}")

    def attr(self, e: ir.Attr, origin) -> tuple[ir.Expr, bt.BType]:
        """`obj.name`: the shape, ndim and size of a batched array are its examples'."""
        t = self.type_of(e.obj)
        result = attr_type(e, t, origin)
        if bt.is_batched(t) and e.name in ("shape", "ndim", "size") and bt.is_array(t):
            return ir.Call(vm_ref(e.name), (e.obj, ir.Const(1))), result
        return e, result

    # ---- assignments and conversions ---------------------------------------------------------
    def bind(self, targets: tuple, e: ir.Expr, t: bt.BType, origin, out: list) -> None:
        """`targets = e`, converting to each target's type where it is larger."""
        if len(targets) == 1:
            item_types = (t,)
        else:
            item_types = unpack_types(t, len(targets), origin)
            if bt.is_array(t):  # unpacking an array iterates its per-example axis
                e = self.rows(self.atomize(e, origin, out), t)
        finals = [self.types.get(n, bt.U) for n in targets]
        for name, it, final in zip(targets, item_types, finals):
            if not bt.leq(it, final):
                raise TransformError(
                    f"{where(origin)}vmap: internal error: `{name}` is batched as "
                    f"{bt.describe(it)} where the batch-type analysis found "
                    f"{bt.describe(final)} (a batching rule and its stated result type "
                    "disagree)")
        temps = [self.names.fresh(n) if needs_conversion(it, f) else n
                 for n, it, f in zip(targets, item_types, finals)]
        out.append(ir.Assign(tuple(temps), e, origin))
        for name, tmp, it, f in zip(targets, temps, item_types, finals):
            if tmp != name:
                out.append(ir.Assign((name,), self.conversion(ir.Var(tmp), it, f), origin))

    def rows(self, a: ir.Atom, t: bt.BType) -> ir.Call:
        """What iterating (or unpacking) one example of `a` yields, batched."""
        if t is bt.B:
            return ir.Call(jnp_ref("moveaxis"), (a, ir.Const(1), ir.Const(0)))
        return ir.Call(vm_ref("rows"), (a,))

    def select(self, cond: ir.Atom, a: ir.Atom, b: ir.Atom, t: bt.BType,
               name: str | None = None) -> ir.Call:
        """Per example: `a` where cond holds, else `b` (both of batch type t); with the
        user's `name`, the two are checked to have one example shape. A Tree (every leaf
        batched) may be a dict or tuple when the code runs (a callee's gradient): selected
        leaf by leaf."""
        if t is bt.B:
            return ir.Call(vm_ref("select"), (cond, a, b, ir.Const(True), ir.Const(True),
                                              ir.Const(name)))
        return ir.Call(vm_ref("select_tree"), (cond, a, b), (("name", ir.Const(name)),))

    # ---- control flow ---------------------------------------------------------------------
    def if_(self, s: ir.If, out: list) -> None:
        if not bt.is_array(self.type_of(s.cond)):
            before = set(self.defined)
            body = self.block(s.body)
            self.defined = before
            orelse = self.block(s.orelse)
            out.append(ir.If(s.cond, body, orelse, s.origin))
            return
        self.batched_if(s, out)

    def batched_if(self, s: ir.If, out: list) -> None:
        """Both branches run; each name they assign is then selected per example."""
        before = set(self.defined)
        w_then, w_else = ir.block_writes(s.body), ir.block_writes(s.orelse)
        merged = merged_names(s, before)
        o = s.origin
        saved = {w: self.names.fresh(f"{w}_before") for w in merged if w in before}
        out.extend(ir.Assign((sv,), ir.Var(w), o) for w, sv in saved.items())
        out.extend(self.block(s.body))
        then_value = {}
        for w in merged:
            if w in w_then:
                then_value[w] = self.names.fresh(f"{w}_then")
                out.append(ir.Assign((then_value[w],), ir.Var(w), o))
            else:
                then_value[w] = saved[w]
        out.extend(ir.Assign((w,), ir.Var(saved[w]), o) for w in merged
                   if w in saved and w in w_then)
        self.defined = set(before)
        out.extend(self.block(s.orelse))
        for w in merged:
            else_value = ir.Var(w) if w in w_else else ir.Var(saved[w])
            t = self.types.get(w, bt.B)
            out.append(ir.Assign((w,), self.select(s.cond, ir.Var(then_value[w]), else_value,
                                                   t, user_name(w)), o))

    def for_(self, s: ir.For, out: list) -> None:
        it = self.type_of(s.iter)
        iterable: ir.Atom = s.iter
        if bt.is_array(it):  # a batched array iterates its per-example leading axis
            iterable = self.atomize(self.rows(s.iter, it), s.origin, out)
            item_t = it
        else:
            item_t = bt.iterated(it)
        target, head = s.target, []
        if needs_conversion(item_t, self.types.get(s.target, bt.U)):
            target = self.names.fresh(s.target)
            head = [ir.Assign((s.target,), self.conversion(
                ir.Var(target), item_t, self.types[s.target]), s.origin)]
        body = self.block(s.body)
        out.append(ir.For(target, iterable, head + body, s.origin))

    def while_(self, s: ir.While, out: list) -> None:
        if bt.is_array(self.type_of(s.cond)):
            self.batched_while(s, out)
            return
        cond_body = self.block(s.cond_body)
        body = self.block(s.body)
        out.append(ir.While(cond_body, s.cond, body, s.origin))

    def batched_while(self, s: ir.While, out: list) -> None:
        """Loop while any example's condition holds; finished examples keep their values.
        The condition's block runs before the loop and again at the end of each iteration,
        so the per-example mask is a loop-carried value (what compiled loops need):

            <cond block>                         # c: per example
            while True:
                any_running = vm.any_example(c)
                if not any_running: break
                x_old = x
                <body>
                x = vm.select(c, x, x_old, True, True)
                <cond block>
        """
        carried = carried_names(s, set(self.defined))
        o = s.origin
        out.extend(self.block(s.cond_body))
        running = self.names.fresh("any_running")
        cond_body = [ir.Assign((running,), ir.Call(vm_ref("any_example"), (s.cond,)), o)]
        saved = {w: self.names.fresh(f"{w}_old") for w in carried}
        body: list[ir.Stmt] = [ir.Assign((sv,), ir.Var(w), o) for w, sv in saved.items()]
        body.extend(self.block(s.body))
        for w in carried:
            t = self.types.get(w, bt.B)
            body.append(ir.Assign((w,), self.select(s.cond, ir.Var(w), ir.Var(saved[w]), t), o))
        body.extend(self.block(s.cond_body))
        out.append(ir.While(cond_body, ir.Var(running), body, o))


__all__ = ["Batching", "NeedsExampleLoop", "vmap_function"]


def user_name(name: str) -> str:
    """The user's name behind an SSA version (`y_2` was the user's `y`)."""
    return re.sub(r"(_\d+)+$", "", name) or name
