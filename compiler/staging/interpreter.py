"""Staging: run Core with staged arguments, recording the array work as SSA IR.

Python-level values (ints, tuples, static arguments, shapes) are computed now, so shape
arithmetic folds; library functions (redraft.numpy) run as they are and their primitives
are recorded by the builder; the user's own functions are interpreted as Core, so an `if`
or `while` on a value only known at run time becomes a real IR branch or loop, and a
`for` loop over a range stays a loop (compile time does not grow with the trip count), also
where it appends to a list or an AD tape once an iteration (stacks.py: a scan and its gradient).
"""
from __future__ import annotations

import operator
import types
from typing import Any

import numpy as np

from redraft.compiler.core import ir
from redraft.compiler.core.abstract import ShapedArray
from redraft.compiler.ir.build import Builder, aval_of
from redraft.compiler.ir.ssa import Block, for_p, print_p, while_p, cond_p
from redraft.compiler.staging import stacks, values
from redraft.compiler.tracing.readable import is_traced
from redraft.compiler.transforms.calls.callees import Transformed
from redraft.runtime.array import Array
from redraft.runtime.pytree import tree_flatten, tree_unflatten
from redraft.runtime.errors import ConcretizationTypeError, RedraftError

MAX_DEPTH = 60


class StagingError(RedraftError, TypeError):
    """A function cannot be staged; the message names the user's file and line first."""


class Interpreter:
    """Evaluates Core statements; array values may be staged (values only known later)."""

    def __init__(self, builder: Builder):
        self.builder = builder
        self.depth = 0
        # per function being interpreted: what runs after the current statement, as
        # (block, index of the next statement) and the loops around it (see live_after)
        self.frames: list[list] = [[]]
        self.loop_reads: dict[int, set[str]] = {}
        self.known = stacks.Known()  # lists and tapes made from stacked rows by loops
        self.marked = 0  # loop bodies being staged with stack markers (stacks.py)
        self.staged_loops = 0  # for loops being staged, which may fall back to unrolling

    # ---- functions ------------------------------------------------------------------------
    def call_function(self, core: ir.Function, args: list) -> Any:
        if len(args) > len(core.params):
            raise StagingError(f"{core.name} takes {len(core.params)} arguments, "
                               f"got {len(args)}")
        env: dict[str, Any] = dict(zip(core.params, args))
        missing = core.params[len(args):]
        defaults = dict(zip(core.params[len(core.params) - len(core.defaults):],
                            core.defaults))
        for p in missing:
            if p not in defaults:
                raise StagingError(f"{core.name} is missing argument {p!r}")
            env[p] = defaults[p]
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise StagingError(f"{core.filename}:{core.firstline}: recursion deeper than "
                               f"{MAX_DEPTH} while compiling {core.name}: recursion must end "
                               "on values known when compiling (not on run-time values)")
        self.frames.append([])
        try:
            return self.block(core.body, env)
        finally:
            self.frames.pop()
            self.depth -= 1

    def block(self, body: list[ir.Stmt], env: dict) -> Any:
        result = None
        frame = self.frames[-1]
        for i, s in enumerate(body):
            self.builder.origin = s.origin
            frame.append((body, i + 1))
            try:
                result = self.stmt(s, env)
            except stacks.MarkerMisuse:
                raise  # the loop that placed the marker handles it
            except values.Unstageable as e:
                if getattr(e, "unroll", False) or (getattr(e, "structural", False)
                                                   and self.staged_loops):
                    raise  # the loop being staged runs unrolled instead (where the `if`'s
                    # condition is its counter, as `if i >= 3: break`, it is known then)
                raise _at(s, StagingError(str(e))) from None
            except (TypeError, ValueError, IndexError, NameError, KeyError) as e:
                located = _at(s, e)
                if located is e:
                    raise  # located further in: its own cause and traceback stay
                raise located from e
            finally:
                frame.pop()
        return result

    def live_after(self) -> set[str]:
        """The names the current function may still read after the statement being
        interpreted: later statements of each enclosing block, and what each enclosing
        loop's next iteration reads before writing it (and a while loop's condition, read
        after the block that computes it)."""
        live: set[str] = set()
        for body, start in self.frames[-1]:
            if isinstance(body, ir.While) and isinstance(body.cond, ir.Var):
                live.add(body.cond.name)
            if isinstance(body, (ir.For, ir.While)):
                live |= self.next_iteration_reads(body)
            else:
                live |= ir.block_reads(body[start:])
        return live

    def next_iteration_reads(self, loop: ir.For | ir.While) -> set[str]:
        """What an iteration of `loop` may read before writing it (carried from the last)."""
        key = id(loop)
        if key not in self.loop_reads:
            if isinstance(loop, ir.For):
                reads = ir.upward_exposed(loop.body, {loop.target})
            else:
                reads = ir.upward_exposed(loop.cond_body + loop.body)
            self.loop_reads[key] = reads
        return self.loop_reads[key]

    def in_loop(self, loop: ir.For | ir.While, run, env: dict) -> None:
        """`run(loop, env)` with `loop` among the statements live_after looks through."""
        frame = self.frames[-1]
        frame.append((loop, 0))
        try:
            run(loop, env)
        finally:
            frame.pop()

    def stmt(self, s: ir.Stmt, env: dict) -> Any:
        if isinstance(s, ir.Assign):
            self.assign(s.targets, self.expr(s.expr, env), env)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.expr, env)
        elif isinstance(s, ir.Return):
            return self.atom(s.value, env)
        elif isinstance(s, ir.If):
            self.if_(s, env)
        elif isinstance(s, ir.For):
            self.in_loop(s, self.for_, env)
        elif isinstance(s, ir.While):
            self.in_loop(s, self.while_, env)
        return None

    @staticmethod
    def assign(targets: tuple[str, ...], value, env: dict) -> None:
        if len(targets) == 1:
            env[targets[0]] = value
            return
        items = list(value)
        if len(items) != len(targets):
            raise ValueError(f"cannot unpack {len(items)} values into {len(targets)} names")
        env.update(zip(targets, items))

    # ---- expressions -----------------------------------------------------------------------
    def atom(self, a, env: dict):
        if isinstance(a, ir.Var):
            try:
                return env[a.name]
            except KeyError:
                raise NameError(f"name {a.name!r} is not defined here (assigned on only one "
                                "path of a branch or loop?)") from None
        if isinstance(a, ir.Const):
            return a.value
        if isinstance(a, ir.Ref):
            return a.value
        raise TypeError(f"not an atom: {a!r}")

    def expr(self, e: ir.Expr, env: dict):
        if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
            return self.atom(e, env)
        if isinstance(e, ir.Tuple):
            return tuple(self.atom(a, env) for a in e.items)
        if isinstance(e, ir.List):
            return [self.atom(a, env) for a in e.items]
        if isinstance(e, ir.Attr):
            return getattr(self.atom(e.obj, env), e.name)
        if isinstance(e, ir.Call):
            return self.call(e, env)
        raise TypeError(f"not a Core expression: {e!r}")

    def call(self, c: ir.Call, env: dict):
        fn = self.expr(c.fn, env) if isinstance(c.fn, ir.Attr) else self.atom(c.fn, env)
        args = [self.atom(a, env) for a in c.args]
        if c.star_args is not None:
            args += list(self.atom(c.star_args, env))
        kwargs = {k: self.atom(v, env) for k, v in c.kwargs}
        if self.marked or any(fn is r for r in stacks.ROUTED):  # fn may be unhashable
            routed = stacks.route(self.known, fn, args, kwargs)
            if routed is not NotImplemented:
                return routed
        if fn is range and not kwargs and any(values.is_staged(a) for a in args):
            return values.StagedRange(*args)
        if fn is print:
            return self.stage_print(args, kwargs)
        text = _text_needed_now(fn, args)
        if text is not None:
            # `params[f"layer_{i}"]`, `name.startswith(f"layer{i}/")` with i a staged loop's
            # counter: the text is needed now, so the loop runs unrolled (as JAX's tracing
            # runs every Python loop)
            e = values.Unstageable(f"the key {text.template!r} is formatted from a "
                                   "run-time value")
            e.unroll = True
            raise e
        if fn is operator.not_ and values.is_staged(args[0]):  # `not x` on a run-time value
            import redraft.numpy as jnp
            return jnp.logical_not(values.predicate(args[0]))
        if isinstance(fn, types.BuiltinMethodType) and fn.__name__ == "format" and isinstance(
                fn.__self__, str) and any(values.is_staged(a) for a in args + list(
                kwargs.values())):
            return values.StagedString(fn.__self__, args, kwargs)
        if not kwargs and (hasattr(fn, "__redraft_rewrap__") or is_traced(fn)):
            from redraft.compiler.frontend.specialise import specialise_deep
            fn = specialise_deep(fn, tuple(args))  # grad(f)(model, x); f traced for args
        elif isinstance(fn, Transformed):  # a callee's transform: traced for args
            fn = fn.for_arguments(tuple(args))
        core = values.core_to_interpret(fn)
        if core is not None and not kwargs:
            return self.call_function(core, args)
        return fn(*args, **kwargs)

    # ---- print -----------------------------------------------------------------------------
    def stage_print(self, args: list, kwargs: dict) -> None:
        """print(...) in compiled code prints when the code runs, with the run's values."""
        sep = kwargs.get("sep", " ")
        end = kwargs.get("end", "\n")
        pieces, operands = [], []
        for a in args:
            if isinstance(a, values.StagedString):
                template, ops = a.template_and_operands()
                pieces.append(template)
                operands += ops
            elif isinstance(a, Array):
                pieces.append("{}")
                operands.append(a)
            else:
                pieces.append(str(a).replace("{", "{{").replace("}", "}}"))
        template = sep.join(pieces) + end
        ins = [self.builder.atom(o) for o in operands]
        self.builder.emit(print_p, ins, [], {"template": template}, [])

    # ---- branches ----------------------------------------------------------------------------
    def if_(self, s: ir.If, env: dict) -> None:
        cond = self.atom(s.cond, env)
        if not values.is_staged(cond):
            self.block(s.body if values.truth(cond) else s.orelse, env)
            return
        pred = values.predicate(cond)
        names = sorted(ir.stmt_writes(s))
        then_env, else_env = dict(env), dict(env)
        then_block = self.region(s.body, then_env)
        else_block = self.region(s.orelse, else_env)
        # a name set on one path only gets a placeholder on the other (generated code
        # reads it under the same condition; user code reading it would be a NameError);
        # a name nothing reads after the branch is not merged (each path may give it
        # another shape: a temporary of the branch)
        live = self.live_after()
        outs = [n for n in names if (n in then_env or n in else_env) and n in live]
        for n in outs:
            then_env.setdefault(n, None)
            else_env.setdefault(n, None)
        merges = values.merge_outputs(outs, then_env, else_env)
        chosen = [(m, i) for m in merges for i in m.chosen()]
        avals = [values.join_avals(m.name, m.then_leaves[i], m.else_leaves[i])
                 for m, i in chosen]
        self.finish_region(then_block, [m.then_leaves[i] for m, i in chosen], avals)
        self.finish_region(else_block, [m.else_leaves[i] for m, i in chosen], avals)
        results = iter(self.builder.emit(cond_p, [self.builder.atom(pred)], avals, {},
                                         [then_block, else_block]))
        env.update((m.name, m.rebuild(results)) for m in merges)

    def region(self, body: list[ir.Stmt], env: dict, params: list | None = None) -> Block:
        """Interpret `body` into a new block (with `params` bound in env by the caller)."""
        block = self.builder.open_block(Block(params or [], [], []))
        try:
            self.block(body, env)
        finally:
            self.builder.close_block()
        return block

    def finish_region(self, block: Block, results: list, avals: list[ShapedArray]) -> None:
        """Convert a region's results to the joined types, then make them its results."""
        self.builder.open_block(block)
        try:
            block.results = [self.builder.atom(values.coerce(v, a))
                             for v, a in zip(results, avals)]
        finally:
            self.builder.close_block()

    # ---- loops ---------------------------------------------------------------------------------
    def for_(self, s: ir.For, env: dict) -> None:
        iterable = self.atom(s.iter, env)
        if isinstance(iterable, values.StagedRange):
            self.range_while(s, env, iterable)
            return
        if isinstance(iterable, Array) and iterable.ndim > 0:
            iterable = values.RowsOf(iterable)
        rows = self.known.rows_of(iterable) if type(iterable) is list else None
        if rows is not None and self.worth_staging(s, env, rows):
            try:
                self.staged_for(s, env, rows)
                return
            except values.Unstageable:
                pass  # run it now over the list's items
        elif isinstance(iterable, (range, values.RowsOf)) and self.worth_staging(s, env,
                                                                                  iterable):
            try:
                self.staged_for(s, env, iterable)
                return
            except values.Unstageable:
                pass  # fall back to running the loop now, unrolling it into the IR
        for item in (iterable.rows() if isinstance(iterable, values.RowsOf) else iterable):
            env[s.target] = item
            self.block(s.body, env)

    def range_while(self, s: ir.For, env: dict, bounds: values.StagedRange) -> None:
        """`for i in range(start, stop)` with a bound known only at run time: a while loop
        carrying its counter (named so no Core name can clash) while it is short of stop."""
        import redraft.numpy as jnp
        counter = f"{s.target}.counter"
        env[counter] = jnp.asarray(bounds.start, jnp.int32)
        carried = sorted((ir.block_writes(s.body) - {s.target}) | {counter})
        below = bounds.step > 0

        def cond_fn(loop_env: dict):
            k = loop_env[counter]
            return k < bounds.stop if below else k > bounds.stop

        def body(loop_env: dict, _index) -> None:
            loop_env[s.target] = loop_env[counter]
            self.block(s.body, loop_env)
            loop_env[counter] = loop_env[counter] + bounds.step

        try:
            after = self.staged_loop(while_p, carried, env, body, None, cond_fn)
        except values.Unstageable as e:
            raise StagingError(f"a for loop over a range with a run-time bound must carry "
                               f"arrays of fixed shapes: {e}") from None
        env.update(after)
        env[s.target] = env.pop(counter) - bounds.step

    def worth_staging(self, s: ir.For, env: dict, iterable) -> bool:
        """A loop stays a loop when it carries arrays through more than one iteration."""
        if len(iterable) < 2:
            return False
        carried = [n for n in ir.block_writes(s.body) if n in env]
        return any(isinstance(leaf, Array) for n in carried  # a scan's (h, c) carry too
                   for leaf in tree_flatten(env[n])[0])

    def staged_for(self, s: ir.For, env: dict, iterable) -> None:
        self.staged_loops += 1
        try:
            self.staged_for_loop(s, env, iterable)
        finally:
            self.staged_loops -= 1

    def staged_for_loop(self, s: ir.For, env: dict, iterable) -> None:
        carried = sorted(ir.block_writes(s.body) - {s.target})
        n_steps = len(iterable)
        if isinstance(iterable, range):
            start, step = iterable.start, iterable.step
        else:
            start, step = 0, 1

        def body(loop_env: dict, index: Array) -> None:
            if isinstance(iterable, values.RowsOf):
                loop_env[s.target] = iterable.array[index]
            elif isinstance(iterable, stacks.Rows):
                loop_env[s.target] = iterable.row(index)
            else:
                loop_env[s.target] = index * step + start if (step, start) != (1, 0) else index
            self.block(s.body, loop_env)

        env.update(self.staged_loop(for_p, carried, env, body, n_steps))
        if isinstance(iterable, range) and n_steps:
            env[s.target] = iterable[-1]

    def while_(self, s: ir.While, env: dict) -> None:
        """Run the loop now while its condition is known; from the first iteration whose
        condition is only known at run time on, stage the rest as an IR while loop."""
        while True:
            probe = dict(env)
            self.block(s.cond_body, probe)
            cond = self.atom(s.cond, probe)
            if values.is_staged(cond):
                break
            env.update(probe)
            if not values.truth(cond):
                return
            self.block(s.body, env)
        carried = sorted(ir.block_writes(s.body) | ir.block_writes(s.cond_body))

        def cond_fn(loop_env: dict):
            self.block(s.cond_body, loop_env)
            return values.predicate(self.atom(s.cond, loop_env))

        recompute = bool(ir.block_writes(s.cond_body) & ir.block_reads(s.body))

        def body(loop_env: dict, _index) -> None:
            if recompute:  # the body reads what the condition computed (a batched mask)
                self.block(s.cond_body, loop_env)
            self.block(s.body, loop_env)

        try:
            env.update(self.staged_loop(while_p, carried, env, body, None, cond_fn))
        except values.Unstageable as e:
            raise StagingError(f"a while loop on a run-time condition must carry arrays of "
                               f"fixed shapes: {e}") from None

    def staged_loop(self, prim, written: list[str], env: dict, body, n_steps,
                    cond_fn=None) -> dict:
        """Stage a `for` (n_steps) or `while` (cond_fn) loop carrying the names of `written`
        that hold a value before it (arrays, numbers, or pytrees of them, flattened to
        leaves); types are widened until the body gives back what it was given (a
        fixpoint). A name the loop gives its first value (or replaces a None placeholder
        of) is carried too where a later iteration or the code after the loop reads it.
        A list or tape the for loop appends to once an iteration, or a stacked list it
        drops items from the end of, is carried as arrays (stacks.py).
        Returns {name: value after the loop}."""
        loop_stacks = self.loop_stacks(written, env, body, n_steps) if prim is for_p else None
        if loop_stacks:
            env = dict(env)
            env.update(loop_stacks.initial())
        carried = [n for n in written if env.get(n) is not None]
        late = [n for n in written if env.get(n) is None]
        if late:
            live = self.live_after()
            env = dict(env)
            for name, first in self.first_values([n for n in late if n in live], env,
                                                 carried, prim, body, cond_fn,
                                                 loop_stacks).items():
                carried.append(name)
                env[name] = first
        layout = [_carry_layout(n, env[n]) for n in carried]
        inits = [leaf for _, _, leaves in layout for leaf in leaves]
        avals = [aval_of(v) for v in inits]
        for _ in range(4):
            regions, outs, _ = self.loop_regions(prim, layout, env, avals, body, cond_fn,
                                                 loop_stacks)
            joined = [values.join_avals(n, ShapedArray(a.shape, a.dtype, a.weak_type), o)
                      for n, a, o in zip(_leaf_names(layout), avals, outs)]
            if joined == avals:
                break
            avals = joined
        else:
            raise values.Unstageable("the loop's carried types do not settle")
        self.finish_region(regions[-1], outs, avals)
        ins = [self.builder.atom(values.coerce(v, a)) for v, a in zip(inits, avals)]
        if prim is for_p:
            from redraft.compiler.ir.ssa import literal
            ins = [literal(0, np.int32), literal(n_steps, np.int32)] + ins
        results = self.builder.emit(prim, ins, avals, {}, regions)
        after = dict(zip(carried, _rebuild(layout, results)))
        if loop_stacks:
            after.update(loop_stacks.after(self.known, after))
        return after

    def loop_stacks(self, written: list[str], env: dict, body,
                    n_steps: int) -> stacks.LoopStacks | None:
        """Which of the names a for loop writes it grows or shrinks as a stack (stacks.py),
        learnt by staging its body once with markers in their place; a marker the body uses
        otherwise is dropped and the body staged again without it."""
        markers = stacks.probe(self.known, written, env)
        while markers:
            probe = dict(env)
            probe.update(markers)
            carried = [n for n in written if probe.get(n) is not None and n not in markers]
            try:
                layout = [_carry_layout(n, probe[n]) for n in carried]
                avals = [aval_of(v) for _, _, leaves in layout for v in leaves]
                self.marked += 1
                try:
                    _, _, after = self.loop_regions(for_p, layout, probe, avals, body, None)
                finally:
                    self.marked -= 1
            except Exception:  # noqa: BLE001 - any failure: without the markers that failed
                failed = [n for n, m in markers.items() if m.failed]
                if not failed:
                    return None
                markers = {n: m for n, m in markers.items() if n not in failed}
                continue
            return stacks.learn(markers, after, n_steps, env)
        return None

    def first_values(self, names: list[str], env: dict, carried: list[str], prim, body,
                     cond_fn, loop_stacks=None) -> dict:
        """For each of `names` (no value before the loop, a value after its body): a
        value of the body's type to enter the loop with, zeros (no path reads it before
        the body assigns it: Python would raise). Learnt by staging the body once."""
        if not names:
            return {}
        layout = [_carry_layout(n, env[n]) for n in carried]
        avals = [aval_of(v) for _, _, leaves in layout for v in leaves]
        probe = dict(env)
        for name in names:  # a merge the body makes may copy it before assigning it
            probe.setdefault(name, None)
        _, _, after = self.loop_regions(prim, layout, probe, avals, body, cond_fn,
                                        loop_stacks)
        first = {}
        for name in names:
            if after.get(name) is None:
                continue
            leaves, treedef = tree_flatten(after[name])
            try:
                zeros = [values.coerce(None, aval_of(values.to_array(v, name)))
                         for v in leaves]
            except values.Unstageable:
                continue  # not arrays or numbers: it stays unset after the loop
            first[name] = tree_unflatten(treedef, zeros)
        return first

    def loop_regions(self, prim, layout, env, avals, body, cond_fn, loop_stacks=None):
        regions = []
        if prim is while_p:
            cond_env = dict(env)
            block = self.builder.open_block()
            try:
                params = [self.builder.new_param(a) for a in avals]
                cond_env.update(zip([n for n, _, _ in layout], _rebuild(layout, params)))
                pred = cond_fn(cond_env)
                block.results = [self.builder.atom(pred)]
            finally:
                self.builder.close_block()
            regions.append(block)
        loop_env = dict(env)
        block = self.builder.open_block()
        try:
            index = self.builder.new_param(ShapedArray((), np.dtype(np.int32))) if (
                prim is for_p) else None
            params = [self.builder.new_param(a) for a in avals]
            loop_env.update(zip([n for n, _, _ in layout], _rebuild(layout, params)))
            if loop_stacks:
                loop_stacks.enter(loop_env)
                self.marked += 1
            try:
                body(loop_env, index)
                if loop_stacks:
                    loop_stacks.leave(loop_env, index)
            except (ConcretizationTypeError, values.Unstageable) as e:
                raise values.Unstageable(str(e)) from None
            finally:
                if loop_stacks:
                    self.marked -= 1
            outs = []
            for name, treedef, _ in layout:
                leaves, out_def = tree_flatten(loop_env[name])
                if out_def != treedef:
                    raise values.Unstageable(f"`{values.user_name(name)}` changes structure "
                                             f"in the loop ({treedef} to {out_def})")
                outs += [values.to_array(v, name) for v in leaves]
        finally:
            self.builder.close_block()
        regions.append(block)
        return regions, outs, loop_env


def _carry_layout(name: str, value) -> tuple[str, object, list]:
    """(name, tree structure, leaves as Arrays) of a loop-carried value."""
    leaves, treedef = tree_flatten(value)
    return name, treedef, [values.to_array(v, name) for v in leaves]


def _leaf_names(layout) -> list[str]:
    return [name for name, _, leaves in layout for _ in leaves]


def _rebuild(layout, flat: list) -> list:
    """Each carried name's value, rebuilt from the flat list of its leaves."""
    out, k = [], 0
    for _, treedef, leaves in layout:
        out.append(tree_unflatten(treedef, flat[k:k + len(leaves)]))
        k += len(leaves)
    return out


def _at(s: ir.Stmt, e: Exception) -> Exception:
    """`e`, its message prefixed by the user's file and line (innermost line wins)."""
    if s.origin is None or getattr(e, "_redraft_located", False) or (
            isinstance(e, StagingError) and str(e).startswith(s.origin[0])):
        return e
    text = f"{s.origin[0]}:{s.origin[1]}: {e}"
    try:
        out = type(e)(text)
    except Exception:  # noqa: BLE001 - exception types with other constructors
        return e
    out._redraft_located = True
    return out


def _text_needed_now(fn, args: list):
    """The StagedString among `args` that `fn` must read as text now (a dict key, a string
    method's argument, a comparison or `in`), else None; print formats it when it runs."""
    from redraft.compiler.frontend import methods
    staged = next((a for a in args if isinstance(a, values.StagedString)), None)
    if staged is None:
        return None
    if fn in (operator.getitem, operator.eq, operator.ne, methods.contains,
              methods.not_contains):
        return staged
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(owner, (str, dict)) and \
            fn.__name__ != "format":
        return staged
    return None

