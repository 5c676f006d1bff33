"""Reverse mode: Core -> Core, one flat function with a forward and a backward section.

Expects Core in SSA form with loop bodies ending in explicit carried copies (to_ssa with
coalesce=False). Guarantees: the output is Core (transformable again); straight-line code
gets no tape at all, since SSA keeps every forward value alive under its own name; a loop
that computes active values pushes its carried names and its index once an iteration, and
the backward loop pops them, recomputes that iteration's body, then runs its adjoint (so a
`while` with a data-dependent trip count reverses too); a `for` loop also pushes the results
of array operations its adjoint reads (values_to_save), so the reverse loop reads them
rather than computing them again (the user's functions it calls are inlined first,
ad/loops.py, so a scan's cell saves its own `tanh`); a branch is
reversed by the same condition, which is still in scope; cotangents are accumulated into
one name per variable, `x_bar`; calls to the user's other functions call their own
backward function, made on demand.

Modes: 'grad' (params) -> bars of a scalar output; 'vjp' (params, out_bar) -> (out, bars);
'bwd' (params, out_bar) -> bars; 'bwd_zero' (params, out_bar, out_zero) -> bars, where the
bool array out_zero marks out_bar's structural zeros (the caller's `where` did not take
those positions: see defzeros). With has_aux the function returns (out, aux).
"""
from __future__ import annotations

import operator
from dataclasses import replace

import redraft.numpy as jnp
from redraft.runtime import pytree
from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.transforms.runtime import ad, vm
from redraft.compiler.transforms.calls import callees, value_calls
from redraft.compiler.transforms.common import (ADD, GETITEM, Names, TransformError,
                                                active_names, bind_call, bind_defaults,
                                                broadcasting_simplifier, helper,
                                                is_transformable_callable, positional_args,
                                                unsupported_op, where)
from redraft.compiler.transforms.calls.custom import custom_vjp, is_custom
from redraft.compiler.transforms.calls.inline import inline, rule_args, substitute_atoms
from redraft.compiler.transforms.ad.loops import index_active_loops, inline_calls_in_loops
from redraft.compiler.primitives.registry import rules_for
from redraft.compiler.transforms.ad.stable_forms import fuse_stable_forms
from redraft.compiler.transforms.tidy import tidy

# operations on containers: their operands' cotangents may be lists or dicts, which add
# item by item (ad.add), never with `+`
STRUCTURAL_OPS = (operator.getitem, tuple, list, core_helpers.append, core_helpers.make_dict,
                  core_helpers.set_item, core_helpers.concat, core_helpers.values_of,
                  core_helpers.items_of, core_helpers.keys_of, core_helpers.iterated,
                  core_helpers.tree_index, core_helpers.tree_stack, core_helpers.tree_unstack)


def vjp_function(fn: ir.Function, active: tuple[bool, ...], mode: str = "vjp",
                 has_aux: bool = False, name: str | None = None,
                 single: bool | None = None) -> ir.Function:
    """The reverse-mode derivative of `fn` in the parameters flagged in `active`."""
    if mode not in ("grad", "value_and_grad", "vjp", "bwd", "bwd_zero"):
        raise ValueError(f"unknown reverse mode {mode!r}")
    active_params = {p for p, a in zip(fn.params, active) if a}
    fn = inline_calls_in_loops(bind_defaults(fn, len(active)), active_params)
    fn = index_active_loops(fuse_stable_forms(fn), active_params)
    if single is None:
        single = sum(active) == 1
    reverse = ReverseMode(fn, active, mode, has_aux, single)
    return tidy(reverse.run(name or f"{fn.name}_{mode}"))


class ReverseMode:
    def __init__(self, fn: ir.Function, active: tuple[bool, ...], mode: str, has_aux: bool,
                 single: bool):
        self.fn = fn
        self.single = single
        self.mode = mode
        self.has_aux = has_aux
        self.names = Names(fn)
        self.active_params = [p for p, a in zip(fn.params, active) if a]
        self.active = active_names(fn, set(self.active_params))
        self.defined: set[str] = set()  # bars that hold a value at this point of the code
        self.bar_of: dict[str, str] = {}  # bar name -> primal name
        self.tapes: dict[int, str] = {}
        # loop -> each copy of it in the code: (its body, its two push statements)
        self.records: dict[int, list[tuple[list[ir.Stmt], list[ir.Assign]]]] = {}
        # loop -> (the saved names its reversal reads, whether the push ends the iteration)
        self.kept: dict[int, tuple[list[str], bool]] = {}
        # loop -> {a saved name no parameter feeds: the name its reversal restores it under}
        self.restored: dict[int, dict[str, str]] = {}
        self.fed: set[str] | None = None  # the names some parameter feeds (made on demand)
        self.array_vars = _array_operands(fn)
        self.array_values = self.array_vars | _array_results(fn)
        self.sites = _assignment_sites(fn.body)
        self.filled: set[str] = set()  # primals whose bars some path fills with zeros
        self._tuples_built: set[str] | None = None  # see tuples_built
        self.loop_depth = 0  # how many reversed loops enclose the statements being reversed
        self.masks: dict[str, ir.Atom] = {}  # bar -> where it is structurally zero (defzeros)

    # ---- names -----------------------------------------------------------------------------
    def bar(self, var: str) -> str:
        name = self.names.derived_name(var, "bar")
        self.bar_of[name] = var
        return name

    def zeros(self, var: str, origin) -> ir.Assign:
        b = self.bar(var)
        self.masks.pop(b, None)
        return ir.Assign((b,), ir.Call(helper("zeros_like"), (ir.Var(var),)), origin)

    # ---- the function ------------------------------------------------------------------------
    def run(self, name: str) -> ir.Function:
        body, ret = self.fn.body[:-1], self.fn.body[-1]
        if not isinstance(ret, ir.Return):
            raise TransformError("Core function does not end in a return")
        out: list[ir.Stmt] = self.forward(body)
        result, aux = ret.value, None
        if self.has_aux:
            main, aux_name = self.names.fresh("out"), self.names.fresh("aux")
            stmt = ir.Assign((main, aux_name), result, ret.origin)
            body = body + [stmt]
            out.append(stmt)
            if isinstance(result, ir.Var) and result.name in self.active:
                self.active |= {main, aux_name}
            result, aux = ir.Var(main), ir.Var(aux_name)
        params = self.fn.params
        seed_active = isinstance(result, ir.Var) and result.name in self.active
        if self.mode in ("grad", "value_and_grad"):  # seeded with 1 from the output itself
            if seed_active:
                out.append(ir.Assign((self.bar(result.name),),
                                     ir.Call(helper("grad_seed"), (result,)), ret.origin))
            else:
                out.append(ir.ExprStmt(ir.Call(helper("grad_seed"), (result,)), ret.origin))
        else:
            seed = self.names.fresh("out_bar")
            params = params + (seed,)
            if seed_active:
                out.append(ir.Assign((self.bar(result.name),), ir.Var(seed), ret.origin))
            if self.mode == "bwd_zero":
                zero = self.names.fresh("out_zero")
                params = params + (zero,)
                if seed_active:
                    self.masks[self.bar(result.name)] = ir.Var(zero)
        if seed_active:
            self.defined.add(self.bar(result.name))
            out.extend(self.backward(body))
            _define_on_all_paths(out, self.filled, _assignment_sites(out))
        bars = []
        for p in self.active_params:
            if self.bar(p) not in self.defined:
                out.append(self.zeros(p, ret.origin))
            bars.append(ir.Var(self.bar(p)))
        out.extend(self.returns(result, aux, bars, ret.origin))
        defaults = self.fn.defaults if self.mode in ("grad", "value_and_grad") else ()
        return ir.Function(name, params, out, defaults, self.fn.filename, self.fn.firstline,
                           None, {"transform": self.mode})

    def returns(self, result, aux, bars, origin) -> list[ir.Stmt]:
        stmts: list[ir.Stmt] = []
        bars_atom: ir.Atom
        if self.single and self.mode in ("grad", "bwd", "bwd_zero"):
            bars_atom = bars[0]
        else:
            bars_atom = ir.Var(self.names.fresh("bars"))
            stmts.append(ir.Assign((bars_atom.name,), ir.Tuple(tuple(bars)), origin))
        if self.mode in ("bwd", "bwd_zero"):
            items = (bars_atom,)
        elif self.mode == "grad":
            items = (bars_atom, aux) if self.has_aux else (bars_atom,)
        else:
            items = (result, aux, bars_atom) if self.has_aux else (result, bars_atom)
        if len(items) == 1:
            stmts.append(ir.Return(items[0], origin))
            return stmts
        value = self.names.fresh("results")
        stmts.append(ir.Assign((value,), ir.Tuple(items), origin))
        stmts.append(ir.Return(ir.Var(value), origin))
        return stmts

    # ---- forward section: the primal, with tapes in loops that compute active values ----------
    def forward(self, body: list[ir.Stmt], recompute: bool = False) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.If):
                out.append(ir.If(s.cond, self.forward(s.body), self.forward(s.orelse), s.origin))
            elif isinstance(s, (ir.For, ir.While)) and self.loop_is_active(s):
                out.extend(self.taped_loop(s))
            else:
                out.append(self.primal_by_rule(s))
        return out

    def primal_by_rule(self, s: ir.Stmt) -> ir.Stmt:
        """`s`, or for an active call of a custom_vjp function (with no forward rule) the
        same call of its fwd rule's primal result: the gradient's code computes the value
        with fwd, as JAX's does, so forward mode over it differentiates fwd where jvp of
        the function itself is refused."""
        if not (isinstance(s, ir.Assign) and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref) and set(s.targets) & self.active):
            return s
        fn = s.expr.fn.value
        if not isinstance(fn, custom_vjp) or fn.jvp_rule is not None:
            return s
        ref = ir.Ref(fn.primal_by_fwd(), f"{s.expr.fn.path.replace('.', '_')}_fwd_primal")
        return ir.Assign(s.targets, replace(s.expr, fn=ref), s.origin)

    def loop_is_active(self, s) -> bool:
        blocks = [s.body] + ([s.cond_body] if isinstance(s, ir.While) else [])
        return any(isinstance(x, ir.Assign) and set(x.targets) & self.active
                   for b in blocks for x in ir.walk_stmts(b))

    def tape(self, s) -> str:
        if id(s) not in self.tapes:
            base = s.target if isinstance(s, ir.For) else "while"
            self.tapes[id(s)] = self.names.fresh(f"{base}_tape")
        return self.tapes[id(s)]

    def carried(self, s) -> list[str]:
        """Names an iteration reads before writing them, and writes: its carried state."""
        blocks = ([s.cond_body] if isinstance(s, ir.While) else []) + [s.body]
        flat = [x for b in blocks for x in b]
        start = {s.target} if isinstance(s, ir.For) else set()
        written = set().union(*(ir.block_writes(b) for b in blocks))
        return sorted(ir.upward_exposed(flat, start) & written)

    def saved_names(self, s) -> list[str]:
        return self.carried(s) + ([s.target] if isinstance(s, ir.For) else [])

    def taped_loop(self, s) -> list[ir.Stmt]:
        tape = self.tape(s)
        record = self.names.fresh("saved")
        names, at_end = self.kept.get(id(s), (self.saved_names(s), False))
        push = [ir.Assign((record,), ir.Tuple(tuple(ir.Var(n) for n in names)), s.origin),
                ir.Assign((tape,), ir.Call(helper("push"), (ir.Var(tape), ir.Var(record))),
                          s.origin)]
        init = ir.Assign((tape,), ir.Const(None), s.origin)
        if isinstance(s, ir.For):
            body = push + self.forward(s.body)
            self.records.setdefault(id(s), []).append((body, push))
            if at_end:
                _push_at_end(body, push, set(self.carried(s)))
            return [init, ir.For(s.target, s.iter, body, s.origin)]
        body = push + self.forward(s.body)
        self.records.setdefault(id(s), []).append((body, push))
        return [init, ir.While(self.forward(s.cond_body), s.cond, body, s.origin)]

    # ---- backward section ------------------------------------------------------------------------
    def backward(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in reversed(body):
            if isinstance(s, ir.Assign):
                start = len(out)
                self.reverse_assign(s, out)
                if not isinstance(s.expr, ir.Var):  # a copy's adjoint is a copy
                    _mark_adjoint(out[start:], s.origin)
            elif isinstance(s, ir.If):
                self.reverse_if(s, out)
            elif isinstance(s, (ir.For, ir.While)):
                if self.loop_is_active(s):
                    self.reverse_loop(s, out)
            elif isinstance(s, (ir.ExprStmt, ir.Return)):
                continue
            else:
                raise TypeError(f"not a Core statement: {s!r}")
        return out

    def reverse_if(self, s: ir.If, out: list) -> None:
        before, masks = set(self.defined), dict(self.masks)
        then = self.backward(s.body)
        then_defined = self.defined
        self.defined, self.masks = set(before), dict(masks)
        orelse = self.backward(s.orelse)
        else_defined = self.defined
        local = {self.bar(n) for n in _assigned_only_in(s, self.sites)}
        if self.loop_depth:  # a branch that skips `a = ...` keeps the earlier iteration's a
            local -= before
        union = (then_defined | else_defined) - local  # nothing before `s` reads its locals
        for b in sorted(union - then_defined):
            then.append(self.reset(b, s.origin) if b in before else self.fill(b, s.origin))
        for b in sorted(union - else_defined):
            orelse.append(self.reset(b, s.origin) if b in before else self.fill(b, s.origin))
        self.defined = union
        written = ir.block_writes(then) | ir.block_writes(orelse)
        self.masks = {b: m for b, m in masks.items() if b not in written}
        if then or orelse:
            out.append(ir.If(s.cond, then, orelse, s.origin))

    def fill(self, bar: str, origin) -> ir.Assign:
        """Zeros for `bar` on a path that gave it no value (the primal may be one that only
        some paths define: `define_on_all_paths` then binds it to None on the others)."""
        self.filled.add(self.bar_of[bar])
        return self.zeros(self.bar_of[bar], origin)

    def reset(self, bar: str, origin) -> ir.Assign:
        """`x_bar = zeros_like(x_bar)` for a bar that held a value before a statement that
        assigns x was reversed: the value x had before that statement gets no cotangent
        from what came after it."""
        self.masks.pop(bar, None)
        return ir.Assign((bar,), ir.Call(helper("zeros_like"), (ir.Var(bar),)), origin)

    def reverse_loop(self, s, out: list) -> None:
        """for saved in reversed(tape): restore, recompute the body, run its adjoint."""
        carried = self.carried(s)
        body = s.body
        reads_outside = {n for n in ir.block_reads(body) | (
            ir.block_reads(s.cond_body) if isinstance(s, ir.While) else set())
            if n in self.active and n not in ir.block_writes(body)}
        for var in sorted(reads_outside | {c for c in carried if c in self.active}):
            if self.bar(var) not in self.defined:
                out.append(self.zeros(var, s.origin))
                self.defined.add(self.bar(var))
        entry = set(self.defined)
        saved = self.names.fresh("saved")
        constants = self.constants_restored(s)
        restore = _unpack(self.saved_names(s), ir.Var(saved), s.origin, constants)
        copies = {id(x) for x in body if isinstance(x, ir.Assign) and len(x.targets) == 1
                  and x.targets[0] in carried and isinstance(x.expr, ir.Var)}
        recompute = [x for x in body if id(x) not in copies]
        if isinstance(s, ir.While) and ir.block_writes(s.cond_body) & ir.block_reads(body):
            recompute = list(s.cond_body) + recompute
        outer_filled, self.filled = self.filled, set()
        self.loop_depth += 1
        carried_masks = self.carry_masks(s, out)
        adjoint = self.backward(body)
        self.loop_depth -= 1
        # Each bar held on entry must hold a value again at the end of every reversed
        # iteration: zero for a name the iteration assigned (the earlier iteration's value
        # was overwritten unread), the reads' contributions for a carried one.
        for b in sorted(entry - self.defined):
            adjoint.append(self.reset(b, s.origin))
        self.defined = entry
        self.masks = self.masks_after_loop(carried_masks, adjoint, s.origin)
        replay = [restore] + [ir.Assign((n,), ir.Call(helper("tape_constant"), (ir.Var(raw),)),
                                        s.origin) for n, raw in constants.items()]
        replay += self.forward(recompute)
        _define_on_all_paths(replay, self.filled, _assignment_sites(replay + adjoint))
        self.filled = outer_filled | (self.filled - ir.block_writes(replay))
        replay = self.save_only_what_is_read(s, replay, adjoint, ir.Var(saved))
        # An inner loop's tape that only one branch of the replay fills is bound to None in
        # the other: nothing before the loop defines it (the forward section's copy is dead),
        # and a transform of this code must not take it for a value carried from there.
        tapes = set(self.tapes.values()) & ir.block_writes(replay)
        _define_on_all_paths(replay, tapes, _assignment_sites(replay + adjoint))
        order = self.names.fresh("reversed_tape")
        out.append(ir.Assign((order,), ir.Call(helper("tape_items"), (ir.Var(self.tape(s)),)),
                             s.origin))
        out.append(ir.For(saved, ir.Var(order), self.fresh_replay(replay, adjoint), s.origin))

    def constants_restored(self, s) -> dict[str, str]:
        """{a name the loop saves: the name its reversal restores it under}, for each saved
        name that no parameter of the function feeds (a range index, a while loop's
        counter): restored through ad.tape_constant, which has no derivative, so that a
        transform of this code (forward mode over the gradient) does not take it for a
        value read from the tape's arrays and differentiate it. A name some parameter
        feeds, active here or not, stays as it is: a later transform may differentiate
        with respect to that parameter."""
        if id(s) not in self.restored:
            if self.fed is None:
                self.fed = active_names(self.fn, set(self.fn.params))
            self.restored[id(s)] = {n: self.names.fresh(f"{n}_taped")
                                    for n in self.saved_names(s) if n not in self.fed}
        return self.restored[id(s)]

    def carry_masks(self, s, out: list) -> dict[str, str]:
        """Each structural-zero mask held on entry to a reversed loop, copied into a name of
        its own that the loop carries (`zero_1 = zero`), so the iterations keep the zeros
        the code after the loop made exact. Returns {bar: its mask's carried name}."""
        carried: dict[str, str] = {}
        for bar, mask in sorted(self.masks.items()):
            name = self.names.fresh("zero")
            out.append(ir.Assign((name,), mask, s.origin))
            carried[bar] = name
        self.masks = {bar: ir.Var(name) for bar, name in carried.items()}
        return carried

    def masks_after_loop(self, carried: dict[str, str], adjoint: list[ir.Stmt],
                         origin) -> dict[str, ir.Atom]:
        """The masks after a reversed loop: an iteration that rewrites a bar ends by writing
        the bar's new mask into its carried name (all False where no structural zero is left:
        a carried mask keeps one type, an array, through every iteration)."""
        written = ir.block_writes(adjoint)
        after: dict[str, ir.Atom] = {}
        for bar, name in carried.items():
            if bar in written:
                mask = self.masks.get(bar)
                if mask is None:
                    mask = ir.Call(helper("zero_mask"), (ir.Const(None), ir.Var(bar)))
                if mask != ir.Var(name):
                    adjoint.append(ir.Assign((name,), mask, origin))
            after[bar] = ir.Var(name)
        return after

    def save_only_what_is_read(self, s, replay: list[ir.Stmt], adjoint: list[ir.Stmt],
                               record: ir.Var) -> list[ir.Stmt]:
        """The replay with its restore (`replay[0]`) unpacking only the saved names that the
        replay's live statements or the adjoint read, and the values the iteration saves for
        its adjoint (their statements dropped from the replay); the loop's pushes save
        exactly those, at the end of the iteration when there are such values.
        Where none is read the pushes stay as they are (a tape of empty records would be a
        value of no batch type under vmap) and nothing is restored."""
        late = self.values_to_save(s, replay[1:], adjoint)
        rest = [x for x in replay[1:] if not (isinstance(x, ir.Assign)
                                              and set(x.targets) <= set(late))]
        reads = ir.block_reads(adjoint)
        reads |= ir.block_reads(_live_statements(rest, reads))
        needed = [n for n in self.saved_names(s) if n in reads] + late
        if not needed:
            return replay[1:]
        self.kept[id(s)] = (needed, bool(late))
        for body, push in self.records.get(id(s), []):
            push[0].expr = ir.Tuple(tuple(ir.Var(n) for n in needed))
            if late:
                _push_at_end(body, push, set(self.carried(s)))
        return [_unpack(needed, record, s.origin, self.constants_restored(s))] + rest

    def values_to_save(self, s, replay: list[ir.Stmt], adjoint: list[ir.Stmt]) -> list[str]:
        """The values an iteration computes that its adjoint reads, to save on the tape
        beside the carried state instead of recomputing them in the reverse loop (the cell's
        `tanh` output, say, so the reverse pass does not multiply `h @ W` again). Saved: the
        results of array operations (not of indexing or rearranging, which are cheap to
        redo) that the iteration's top level assigns from values it varies, when the loop is
        a `for` whose body writes its carried names only in the copies that end it (so the
        push can move to the end of the iteration). A value read only for its shape (the
        second argument of ad.unbroadcast) is recomputed: staging then drops its code."""
        if not isinstance(s, ir.For):
            return []
        carried = set(self.carried(s))
        tail = _tail_start(s.body, carried)
        if ir.block_writes(s.body[:tail]) & carried:
            return []
        varying = {s.target} | carried
        candidates: set[int] = set()
        for x in s.body[:tail]:
            if ir.stmt_reads(x) & varying:
                varying |= ir.stmt_writes(x)
                if (isinstance(x, ir.Assign) and set(x.targets) <= self.active
                        and _worth_saving(x.expr)):
                    candidates.add(id(x))
        values, shapes = _value_reads(adjoint), ir.block_reads(adjoint)
        saved: list[str] = []
        for x in reversed(replay):
            written = ir.stmt_writes(x)
            if written & values and id(x) in candidates:
                saved = list(x.targets) + saved
            elif written & values:
                values |= _value_reads([x])
                shapes |= ir.stmt_reads(x)
            elif written & shapes:
                shapes |= ir.stmt_reads(x)
        return saved

    def fresh_replay(self, replay: list[ir.Stmt], adjoint: list[ir.Stmt]) -> list[ir.Stmt]:
        """The backward loop's body, with the names its replay of an iteration writes renamed
        fresh: the forward values under the original names stay as the forward section left
        them, so the function stays in SSA form and can be differentiated again."""
        replay = _live_statements(replay, ir.block_reads(adjoint))
        mapping = {n: ir.Var(self.names.fresh(n)) for n in sorted(ir.block_writes(replay))}
        return [substitute_atoms(x, mapping) for x in replay + adjoint]

    # ---- one assignment ------------------------------------------------------------------------
    def reverse_assign(self, s: ir.Assign, out: list) -> None:
        if not set(s.targets) & self.active:
            return
        defined = [t for t in s.targets if self.bar(t) in self.defined]
        if not defined:
            return
        g = self.output_cotangent(s, out)
        if isinstance(g, ir.Var) and set(s.targets) & ir.expr_reads(s.expr):
            held = self.names.fresh("g")  # `x = f(x)`: x_bar is about to be reused for old x
            out.append(ir.Assign((held,), g, s.origin))
            g = ir.Var(held)
        for t in s.targets:
            self.defined.discard(self.bar(t))
        e = s.expr
        if (isinstance(e, ir.Var) and len(s.targets) > 1
                and e.name not in self.tuples_built()):  # `a, b = v`: v's own container
            like = self.names.fresh("t_bar")
            out.append(ir.Assign((like,), ir.Call(helper("container_like"), (e, g)), s.origin))
            g = ir.Var(like)
        if isinstance(e, ir.Var):
            zero = self.masks.get(self.bar(s.targets[0])) if len(s.targets) == 1 else None
            self.accumulate(e, g, out, s.origin, zero=zero)
        elif isinstance(e, (ir.Tuple, ir.List)):
            for k, item in enumerate(e.items):
                if isinstance(item, ir.Var) and item.name in self.active:
                    part = self.names.fresh("t")
                    out.append(ir.Assign((part,), ir.Call(GETITEM, (g, ir.Const(k))), s.origin))
                    self.accumulate(item, ir.Var(part), out, s.origin, structural=True)
        elif isinstance(e, ir.Attr):
            part = self.names.fresh("t")
            out.append(ir.Assign((part,), ir.Call(helper("attr_add"),
                                                  (e.obj, ir.Const(e.name), g)), s.origin))
            self.accumulate(e.obj, ir.Var(part), out, s.origin, structural=True)
        elif isinstance(e, ir.Call):
            self.reverse_call(s, g, out)

    def tuples_built(self) -> set[str]:
        """Names the function assigns a tuple display (`t = (a, b)`) or an operation's
        several results (`t = lax.linalg.lu(a)`, always a tuple) to: their unpacking's
        cotangent is a tuple already, and needs no container_like (whose reverse mode lost
        the second-order cotangent of an operation's results)."""
        if self._tuples_built is None:
            self._tuples_built = {s.targets[0] for s in ir.walk_stmts(self.fn.body)
                                  if isinstance(s, ir.Assign) and len(s.targets) == 1
                                  and (isinstance(s.expr, ir.Tuple) or _op_call(s.expr))}
        return self._tuples_built

    def output_cotangent(self, s: ir.Assign, out: list) -> ir.Atom:
        if len(s.targets) == 1:
            return ir.Var(self.bar(s.targets[0]))
        items = []
        for t in s.targets:
            if self.bar(t) in self.defined:
                items.append(ir.Var(self.bar(t)))
            else:
                z = self.names.fresh("zero")
                out.append(ir.Assign((z,), ir.Call(helper("zeros_like"), (ir.Var(t),)),
                                     s.origin))
                items.append(ir.Var(z))
        g = self.names.fresh("t_bar")
        out.append(ir.Assign((g,), ir.Tuple(tuple(items)), s.origin))
        return ir.Var(g)

    def reverse_call(self, s: ir.Assign, g: ir.Atom, out: list) -> None:
        call = s.expr
        if isinstance(call.fn, (ir.Var, ir.Attr)):
            self.reverse_function_value_call(s, g, out)
            return
        if not isinstance(call.fn, ir.Ref):
            raise unsupported_op(call, s.origin, "reverse-mode")
        rules = rules_for(call.fn.value)
        if rules is None:
            self.reverse_user_call(s, g, out)
            return
        if rules.refusal:
            raise TransformError(f"{where(s.origin)}{rules.refusal}")
        if rules.nondiff_reason:
            return
        bound = bind_call(rules, call, s.origin)
        ans = ir.Var(s.targets[0]) if len(s.targets) == 1 else ir.Var(s.targets[0])
        structural = call.fn.value in STRUCTURAL_OPS
        zero = self.masks.get(self.bar(s.targets[0])) if len(s.targets) == 1 else None
        for p, a in bound.items():
            if not (isinstance(a, ir.Var) and a.name in self.active) or p in rules.static:
                continue
            rule = rules.vjp.get(p)
            if rule is None:
                raise TransformError(f"{where(s.origin)}`{call.fn.path}` has no reverse rule "
                                     f"for its argument `{p}`")
            direct = self.bar(a.name) not in self.defined
            stmts, result = inline(rule, rule_args(rule, bound, [g, ans]),
                                   self.names.fresh, s.origin, broadcasting_simplifier(bound, p),
                                   result_name=self.bar(a.name) if direct else None)
            if zero is not None:
                stmts = _keep_structural_zeros(stmts, g, zero)
            out.extend(stmts)
            part_zero = self.contribution_mask(rules, p, bound, g, ans, zero, out, s.origin)
            if direct:
                self.defined.add(self.bar(a.name))
                self.set_mask(self.bar(a.name), part_zero)
            else:
                self.accumulate(a, result, out, s.origin, structural=structural,
                                zero=part_zero)

    def contribution_mask(self, rules, p: str, bound: dict, g: ir.Atom, ans: ir.Atom,
                          zero: ir.Atom | None, out: list, origin) -> ir.Atom | None:
        """Where the cotangent an elementwise op gives its argument `p` is structurally zero:
        where g is (`zero`), or where the op did not select `p` (its defzeros rule); for a
        rearranging op, where its own rule moves g's structural zeros."""
        if rules.rearranging and zero is not None:
            a = bound[p]
            if rules.op in STRUCTURAL_OPS and not (isinstance(a, ir.Var)
                                                   and a.name in self.array_values):
                return None  # a tuple or list indexed: its cotangent is no array
            rule = rules.vjp[p]
            indicator = self.mask_op("zero_indicator", zero, out=out, origin=origin)
            stmts, moved = inline(rule, rule_args(rule, bound, [indicator, ans]),
                                  self.names.fresh, origin)
            out.extend(stmts)
            return self.mask_op("indicator_zero", moved, out=out, origin=origin)
        if not rules.elementwise:
            return None
        own = rules.zeros.get(p)
        if own is not None:
            stmts, own_atom = inline(own, rule_args(own, bound, [g, ans]), self.names.fresh,
                                     origin)
            out.extend(stmts)
            zero = own_atom if zero is None else self.mask_op("zero_mask_or", zero, own_atom,
                                                              out=out, origin=origin)
        if zero is None:
            return None
        call = ir.Call(helper("unbroadcast_zero_mask"), (zero, bound[p]))
        if broadcasting_simplifier(bound, p)(ir.Call(helper("unbroadcast"), call.args)):
            return zero  # no operand broadcast: the mask has the argument's shape
        return self.mask_op("unbroadcast_zero_mask", zero, bound[p], out=out, origin=origin)

    def mask_op(self, name: str, *args: ir.Atom, out: list, origin) -> ir.Var:
        """`zero = ad.<name>(*args)`, a statement on structural-zero masks."""
        t = self.names.fresh("zero")
        out.append(ir.Assign((t,), ir.Call(helper(name), args), origin))
        return ir.Var(t)

    def set_mask(self, bar: str, zero: ir.Atom | None) -> None:
        if zero is None:
            self.masks.pop(bar, None)
        else:
            self.masks[bar] = zero

    def reverse_user_call(self, s: ir.Assign, g: ir.Atom, out: list) -> None:
        """`y = h(a, b)`: `a_c, b_c = h_bwd(a, b, y_bar)`, then accumulate."""
        call = s.expr
        if not is_transformable_callable(call.fn.value):
            raise unsupported_op(call, s.origin, "reverse-mode")
        args = positional_args(call, s.origin)
        mask = tuple(isinstance(a, ir.Var) and a.name in self.active for a in args)
        if not any(mask):
            return
        zero = self.masks.get(self.bar(s.targets[0])) if len(s.targets) == 1 else None
        if zero is not None and is_custom(call.fn.value):
            zero = None  # a custom rule takes the cotangent alone
        mode = "bwd" if zero is None else "bwd_zero"
        callee = callees.vjp_of(call.fn.value, mask, mode)
        ref = ir.Ref(callee, f"{call.fn.path.replace('.', '_')}_{mode}")
        active_args = [a for a, m in zip(args, mask) if m]
        parts = tuple(self.names.fresh("t") for _ in active_args)
        extra = (g,) if zero is None else (g, zero)
        out.append(ir.Assign(parts, ir.Call(ref, args + extra), s.origin))
        for a, part in zip(active_args, parts):
            self.accumulate(a, ir.Var(part), out, s.origin, structural=True)

    def reverse_function_value_call(self, s: ir.Assign, g: ir.Atom, out: list) -> None:
        """`y = f(a)` through a function value `f` (known when the code runs):
        `f_bwd = value_calls.bwd_of(f, mask)`, `f_c, a_c = f_bwd(f, a, y_bar)`, then
        accumulate (f's own cotangent is that of the arrays a model object holds); a method
        call `y = o.m(a)`, `m_bwd = value_calls.method_bwd_of(o, "m", mask)` and
        `o_c, a_c = m_bwd(o, a, y_bar)`."""
        call = s.expr
        operands = value_calls.operands(call, s.origin)
        mask = tuple(isinstance(a, ir.Var) and a.name in self.active for a in operands)
        if not any(mask):
            return
        callee = self.names.fresh(f"{value_calls.callee_name(call)}_bwd")
        request = value_calls.transform_request(call, "bwd", mask)
        out.append(ir.Assign((callee,), request, s.origin))
        active = [a for a, m in zip(operands, mask) if m]
        parts = tuple(self.names.fresh("t") for _ in active)
        bars = ir.Call(ir.Var(callee), operands + (g,))
        if len(parts) == 1:  # a tuple of one
            pack = self.names.fresh("t")
            out.append(ir.Assign((pack,), bars, s.origin))
            bars = ir.Call(GETITEM, (ir.Var(pack), ir.Const(0)))
        out.append(ir.Assign(parts, bars, s.origin))
        for a, part in zip(active, parts):
            self.accumulate(a, ir.Var(part), out, s.origin, structural=True)

    def accumulate(self, var: ir.Atom, contribution: ir.Atom, out: list, origin,
                   structural: bool = False, zero: ir.Atom | None = None) -> None:
        """var_bar = contribution, or var_bar = var_bar + contribution if it has one. `zero`:
        where the contribution is structurally zero (a sum is where both parts are)."""
        if not (isinstance(var, ir.Var) and var.name in self.active):
            return
        b = self.bar(var.name)
        if b not in self.defined:
            out.append(ir.Assign((b,), contribution, origin))
            self.defined.add(b)
            self.set_mask(b, zero)
            return
        old = self.masks.pop(b, None)
        if old is not None and zero is not None:
            self.masks[b] = self.mask_op("zero_mask_and", old, zero, out=out, origin=origin)
        if structural or var.name not in self.array_vars:
            expr = ir.Call(helper("add"), (ir.Var(b), contribution))
        else:
            expr = ir.Call(ADD, (ir.Var(b), contribution))
        out.append(ir.Assign((b,), expr, origin))


_PRODUCTS = (operator.mul, jnp.multiply, ad.safe_mul)
_QUOTIENTS = (operator.truediv, jnp.divide, jnp.true_divide, ad.safe_div)
_NEGATIONS = (operator.neg, jnp.negative)


def _vjp_of_callee(fn, mask: tuple[bool, ...], mode: str, has_aux: bool,
                   single: bool | None) -> tuple[ir.Function, ir.Function]:
    """A called function's Core and its reverse mode: callees.vjp_of's transform."""
    from redraft.compiler.transforms.calls.callable_core import core_of
    core = core_of(fn)
    return core, vjp_function(core, mask, mode, has_aux, single=single)


callees.install_transformer("vjp", _vjp_of_callee)


def _keep_structural_zeros(stmts: list[ir.Stmt], g: ir.Atom, zero: ir.Atom) -> list[ir.Stmt]:
    """An inlined elementwise rule with the products and quotients of `g` (and of what it
    scales or negates) made `ad.safe_mul/safe_div(..., zero)`: exactly 0 where g is a
    structural zero, whatever the partial there (the infinite exp of a branch not taken)."""
    if not isinstance(g, ir.Var):
        return stmts
    scaled, out = {g.name}, []
    for s in stmts:
        call = s.expr if isinstance(s, ir.Assign) and isinstance(s.expr, ir.Call) else None
        if call is None or not isinstance(call.fn, ir.Ref) or call.kwargs or len(
                call.args) < 1:
            out.append(s)
            continue
        fn, args = call.fn.value, call.args
        reads = [isinstance(a, ir.Var) and a.name in scaled for a in args]
        if fn in _PRODUCTS and len(args) >= 2 and (reads[0] or reads[1]):
            first, second = (args[0], args[1]) if reads[0] else (args[1], args[0])
            masked = ir.Call(helper("safe_mul"), (first, second), (("zero", zero),))
            s = ir.Assign(s.targets, masked, s.origin)
        elif fn in _QUOTIENTS and len(args) >= 2 and reads[0]:
            masked = ir.Call(helper("safe_div"), (args[0], args[1]), (("zero", zero),))
            s = ir.Assign(s.targets, masked, s.origin)
        elif not (fn in _NEGATIONS and reads[0]):
            out.append(s)
            continue
        scaled |= set(s.targets)
        out.append(s)
    return out


def _mark_adjoint(stmts: list[ir.Stmt], origin: ir.Origin | None) -> None:
    """In place: the statements that reverse the user's statement at `origin` say so (the
    printer heads them with a comment naming that line)."""
    if origin is None:
        return
    for s in ir.walk_stmts(stmts):
        s.origin = ir.AdjointOrigin(origin)


def _array_results(fn: ir.Function) -> set[str]:
    """Names that elementwise or rearranging array operations assign: arrays, surely."""
    out = set()
    for s in ir.walk_stmts(fn.body):
        if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref)):
            rules = rules_for(s.expr.fn.value)
            if rules is not None and s.expr.fn.value not in STRUCTURAL_OPS and (
                    rules.elementwise or rules.rearranging):
                out.add(s.targets[0])
    return out


def _live_statements(body: list[ir.Stmt], live: set[str]) -> list[ir.Stmt]:
    """`body` without the statements whose names nothing after them reads (`live`: what
    the code after `body` reads). A replay recomputes only what its adjoint needs."""
    kept: list[ir.Stmt] = []
    live = set(live)
    for s in reversed(body):
        if isinstance(s, (ir.Assign, ir.If, ir.For, ir.While)) and not ir.stmt_writes(s) & live:
            continue
        kept.append(s)
        live |= ir.stmt_reads(s)
    return kept[::-1]


def _tail_start(body: list[ir.Stmt], carried: set[str]) -> int:
    """Where the copies into carried names that end a loop body (`x_1 = x_2`) begin."""
    k = len(body)
    while k and isinstance(body[k - 1], ir.Assign) and len(body[k - 1].targets) == 1 and (
            body[k - 1].targets[0] in carried and isinstance(body[k - 1].expr, ir.Var)):
        k -= 1
    return k


def _push_at_end(body: list[ir.Stmt], push: list[ir.Assign], carried: set[str]) -> None:
    """In place: the tape's push moved from the start of the loop body to just before the
    copies that end it, where the iteration's values are computed and the carried names
    still hold the values the iteration started with."""
    body[:] = [x for x in body if not any(x is p for p in push)]
    k = _tail_start(body, carried)
    body[k:k] = push


# helpers that read these arguments for their shape or structure alone
_SHAPE_READERS = {ad.unbroadcast: (1,), ad.unsum: (1,), ad.broadcast_like: (1,),
                  ad.zeros_like: (0,), ad.ones_like: (0,), ad.container_like: (0,),
                  ad.shape_of: (0,), ad.size: (0,), core_helpers.tree_unstack: (1,)}


def _value_reads(stmts: list[ir.Stmt]) -> set[str]:
    """Names the statements read for their values: not those only a shape reader reads."""
    out: set[str] = set()
    for x in ir.walk_stmts(stmts):
        if isinstance(x, (ir.Assign, ir.ExprStmt)):
            e = x.expr
            if isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and not e.kwargs and (
                    e.star_args is None):
                skip = next((v for k, v in _SHAPE_READERS.items() if k is e.fn.value), ())
                out |= {a.name for k, a in enumerate(e.args)
                        if isinstance(a, ir.Var) and k not in skip}
            else:
                out |= ir.expr_reads(e)
        elif isinstance(x, ir.Return):
            out |= ir.expr_reads(x.value)
        else:  # a compound statement's own reads (walk_stmts visits its blocks)
            own = x.cond if isinstance(x, (ir.If, ir.While)) else x.iter
            out |= ir.expr_reads(own)
    return out


def _worth_saving(e: ir.Expr) -> bool:
    """An array operation whose result is worth a row of the tape rather than recomputing:
    not indexing, a container operation or a rearrangement (cheap to redo)."""
    if not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref)):
        return False
    rules = rules_for(e.fn.value)
    return (rules is not None and not rules.nondiff_reason and not rules.rearranging
            and e.fn.value not in STRUCTURAL_OPS
            and not any(e.fn.value is h for h in _ANY_VALUE_HELPERS))


def _unpack(names: list[str], record: ir.Var, origin, renamed: dict[str, str]) -> ir.Assign:
    """`a, b = record`; with one name `a = record[0]` (a one-target Assign does not unpack);
    a name in `renamed` is bound under its new name."""
    names = [renamed.get(n, n) for n in names]
    if len(names) == 1:
        return ir.Assign((names[0],), ir.Call(GETITEM, (record, ir.Const(0))), origin)
    return ir.Assign(tuple(names), record, origin)


def _assignment_sites(body: list[ir.Stmt]) -> dict[str, int]:
    """How many statements (nested ones included) assign each name."""
    sites: dict[str, int] = {}
    for s in ir.walk_stmts(body):
        targets = s.targets if isinstance(s, ir.Assign) else (
            (s.target,) if isinstance(s, ir.For) else ())
        for t in targets:
            sites[t] = sites.get(t, 0) + 1
    return sites


def _assigned_only_in(s: ir.Stmt, sites: dict[str, int]) -> set[str]:
    """The names that only statements inside `s` assign."""
    inner = _assignment_sites([s])
    return {n for n, k in inner.items() if sites.get(n) == k}


def _define_on_all_paths(body: list[ir.Stmt], names: set[str], sites: dict[str, int]) -> None:
    """Bind each of `names` that only one branch of an `if` assigns to None in the other
    branch, in place, so that `ad.zeros_like(name)` can run on every path (it gives None
    where the name has no value, a zero that no later statement reads)."""
    for s in ir.walk_stmts(body):
        if not isinstance(s, ir.If):
            continue
        then_sites, else_sites = _assignment_sites(s.body), _assignment_sites(s.orelse)
        for n in sorted(names):
            a, b = then_sites.get(n, 0), else_sites.get(n, 0)
            if a + b != sites.get(n) or (a and b):
                continue
            missing = s.orelse if a else s.body
            missing.append(ir.Assign((n,), ir.Const(None), s.origin))


# derivative-code helpers that take any value (a tuple, None, a tape), not only arrays
_ANY_VALUE_HELPERS = (ad.zeros_like, ad.ones_like, ad.grad_seed, ad.add, ad.container_like,
                      ad.push, ad.tape_items, ad.size,
                      # helpers over objects, dicts and sequences (their operands and
                      # cotangents are containers: they add with ad.add, never `+`)
                      ad.attr_tangent, ad.attr_add, ad.object_tangent, ad.object_items_bar,
                      ad.dict_part, ad.dict_part_bar, ad.sorted_like, ad.unsorted,
                      core_helpers.make_namedtuple, core_helpers.make_object,
                      core_helpers.merge_dicts, core_helpers.zip_spread, ad.unzip_spread,
                      sorted, pytree.tree_flatten,
                      pytree.tree_unflatten, vm.unstack_examples, vm.tree_rows,
                      # batched code's helpers over containers or arrays alike
                      vm.getitem, vm.take_example, vm.convert, vm.select_tree)


def _array_operands(fn: ir.Function) -> set[str]:
    """Names used as operands of array operations, never bound to a tuple display and never
    unpacked: their cotangents add with `+`. A name that one path binds to a tuple, that is
    unpacked (`a, b = v`, whose v also feeds `ad.index_add` in derivative code), or that only
    a helper taking any value reads (`ad.zeros_like(pair)` in forward-mode code) adds with
    ad.add, since `+` would concatenate two tuples."""
    out, tuples = set(), set()
    for s in ir.walk_stmts(fn.body):
        if not isinstance(s, ir.Assign):
            continue
        if isinstance(s.expr, (ir.Tuple, ir.List)):
            tuples |= set(s.targets)
        if isinstance(s.expr, ir.Var) and len(s.targets) > 1:
            tuples.add(s.expr.name)  # `a, b = v`: v is unpacked, a container (or an array)
        if isinstance(s.expr, ir.Call) and isinstance(s.expr.fn, ir.Ref):
            value = s.expr.fn.value
            if (rules_for(value) is not None and value not in STRUCTURAL_OPS
                    and not any(value is h for h in _ANY_VALUE_HELPERS)):
                out |= {a.name for a in s.expr.args if isinstance(a, ir.Var)}
    return out - tuples


def _op_call(e: ir.Expr) -> bool:
    """A call of an operation with derivative rules (its results are never a list)."""
    return (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref)
            and rules_for(e.fn.value) is not None)
