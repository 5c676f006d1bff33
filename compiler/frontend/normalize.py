"""Lower a parsed Python function into Core (compiler/core/ir.py).

What this pass does: every expression is split into one operation per assignment (A-normal
form) with generated temporaries `t1, t2, ...`; names that are not locals are resolved now
to the objects they denote (globals, closure cells, builtins, module attributes); operators
become calls to the `operator` module spelled as operators; `x.sum()`-style array methods
become `jnp.sum(x)`; `x.at[i].set(v)`, `and`/`or`, `a if c else b`, chained comparisons,
comprehensions, `+=` and early returns are desugared; local defs and lambdas are lifted
(local_functions.py). What it refuses names the user's file and line (item assignment on
arrays, assigning a global, a nonlocal assigned in a local function used as a value).
"""
from __future__ import annotations

import builtins
import functools
import inspect
import operator
import types
from dataclasses import dataclass
from typing import Callable

import gast

from redraft.compiler.core import helpers, ir
from redraft.compiler.core.core_function import CoreFunction
from redraft.compiler.core.names import Names
from redraft.compiler.frontend import (call_shape, control_flow, jumps, local_functions,
                                       match_statements, methods, specialise, static_calls)
from redraft.compiler.frontend.source import (OPAQUE_LIBRARIES, ParsedFunction,
                                              SourceUnavailableError, parse_function)
from redraft.compiler.frontend.ssa import to_ssa
from redraft.runtime.errors import RedraftError


class UnsupportedSyntaxError(RedraftError, SyntaxError):
    """A construct Core cannot express; the message names the user's file and line."""


class BadCallError(UnsupportedSyntaxError, TypeError):
    """A call in the source whose arguments do not fit the callee's parameters: Python's
    TypeError for it, with the user's file and line first."""


BINOPS = {gast.Add: (operator.add, "+"), gast.Sub: (operator.sub, "-"),
          gast.Mult: (operator.mul, "*"), gast.Div: (operator.truediv, "/"),
          gast.FloorDiv: (operator.floordiv, "//"), gast.Mod: (operator.mod, "%"),
          gast.Pow: (operator.pow, "**"), gast.MatMult: (operator.matmul, "@"),
          gast.BitAnd: (operator.and_, "&"), gast.BitOr: (operator.or_, "|"),
          gast.BitXor: (operator.xor, "^"), gast.LShift: (operator.lshift, "<<"),
          gast.RShift: (operator.rshift, ">>")}
CMPOPS = {gast.Lt: (operator.lt, "<"), gast.LtE: (operator.le, "<="),
          gast.Gt: (operator.gt, ">"), gast.GtE: (operator.ge, ">="),
          gast.Eq: (operator.eq, "=="), gast.NotEq: (operator.ne, "!="),
          gast.Is: (operator.is_, "is"), gast.IsNot: (operator.is_not, "is not"),
          gast.In: (methods.contains, "in"), gast.NotIn: (methods.not_contains, "not in")}
UNARYOPS = {gast.USub: (operator.neg, "unary neg"), gast.UAdd: (operator.pos, "unary pos"),
            gast.Invert: (operator.invert, "unary invert"),
            gast.Not: (operator.not_, "unary not")}
GETITEM = ir.Ref(operator.getitem, "[]")
# list and dict methods that change their receiver in place
MUTATING_METHODS = ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                    "update", "setdefault", "popitem")


class Environment:
    """Resolves free names of a function: closure cells, then globals, then builtins."""

    def __init__(self, fn):
        self.globals = fn.__globals__
        cells = fn.__closure__ or ()
        self.closure = {name: cell for name, cell in zip(fn.__code__.co_freevars, cells)}

    def lookup(self, name: str):
        if name in self.closure:
            try:
                return True, self.closure[name].cell_contents
            except ValueError:
                return False, None  # an empty cell: defined later (recursion)
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def lower_function(fn, shape: call_shape.CallShape | None = None,
                   known: dict | None = None) -> ir.Function:
    """Core for the Python function `fn` (its source is read and parsed with gast); a
    signature with *args, **kwargs or keyword-only parameters is specialised on `shape`
    (compiler/frontend/call_shape.py; by default, a call with named arguments only).
    `known` maps parameters to the Python values they are specialised on (a function
    argument, a bound method's self): the body reads them as it reads globals."""
    try:
        parsed = parse_function(fn)
    except SourceUnavailableError as e:
        if not isinstance(fn, types.FunctionType):
            raise
        from redraft.compiler.tracing.trace import trace_function
        return trace_function(fn, e)  # no source: run it on tracers (compiler/tracing/)
    from redraft.compiler.tracing.trace import log_path
    log_path(fn, "source")
    lowering = Lowering(fn, parsed, shape)
    fixed = {k: v for k, v in (known or {}).items()
             if k in lowering.params and k not in _assigned_names(parsed.node)}
    called_as = specialise.CalledAs
    lowering.known = {k: v for k, v in fixed.items() if not isinstance(v, called_as)}
    lowering.called_types = {k: v.cls for k, v in fixed.items() if isinstance(v, called_as)}
    return lowering.run()


class Lowering:
    """One function's lowering: holds the temporaries counter and the local names."""

    def __init__(self, fn, parsed: ParsedFunction, shape: call_shape.CallShape | None = None):
        self.fn = fn
        self.parsed = parsed
        self.env = Environment(fn)
        self.counter = 0
        node = parsed.node
        self.params = tuple(a.id for a in list(getattr(node.args, "posonlyargs", []))
                            + list(node.args.args))
        assigned = _assigned_names(node)
        self.locals = set(self.params) | assigned
        self.line = node.lineno
        self.local_functions: dict[str, local_functions.LocalFunction] = {}
        self.name_override: str | None = None
        self.imported: dict[str, object] = {}
        self.prologue: list[ir.Stmt] = []
        self.known_tuples: dict[str, tuple[ir.Atom, ...]] = {}  # *args, never reassigned
        self.known_dicts: dict[str, dict[str, ir.Atom]] = {}    # **kwargs, likewise
        self.gathered: tuple[str, ...] = ()  # parameters a call shape added
        self.known: dict[str, object] = {}  # parameters specialised on a value
        self.store_counts: dict[str, int] | None = None  # see stores_of
        self.called_types: dict[str, type] = {}  # parameters whose class's __call__ is known
        self.partials: dict[str, PartialCall] = {}  # p = partial(f, ...), never reassigned
        self.kwonly_defaults: dict[str, ir.Atom] | None = None  # see gathered_params
        self.captured_names: frozenset[str] = frozenset()  # a local function's (see lift)
        self.threads: list[str] = []  # enclosing names it assigns (ThreadingLocal)
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            self.gathered_params(node, shape or call_shape.CallShape(), assigned)
        if shape is not None and shape.spread:
            self.spread_params(node, shape.spread, assigned)

    def spread_params(self, node, spread: tuple, assigned: set[str]) -> None:
        """Parameters the body spreads, read item by item in the prologue: `f(*params)`
        becomes `f(params_0, params_1)` for the length the call gives params."""
        origin = self.origin(node)
        for name, structure in spread:
            if name in assigned or name not in self.params:
                continue
            keys = range(structure) if isinstance(structure, int) else structure
            items = {}
            for key in keys:
                item = self.fresh_local(f"{name}_{key}" if str(key).isidentifier()
                                        or isinstance(key, int) else f"{name}_item")
                self.prologue.append(ir.Assign((item,), ir.Call(
                    GETITEM, (ir.Var(name), ir.Const(key))), origin))
                items[key] = ir.Var(item)
            if isinstance(structure, int):
                self.known_tuples[name] = tuple(items.values())
            else:
                self.known_dicts[name] = items

    def gathered_params(self, node, shape: call_shape.CallShape, assigned: set[str]) -> None:
        """Parameters and prologue for *args, keyword-only parameters and **kwargs, as
        compiler/frontend/call_shape.py lays them out for `shape`."""
        from redraft.compiler.core import helpers
        args = node.args
        origin = self.origin(node)
        kwonly = [a.id for a in args.kwonlyargs]
        self.locals |= set(kwonly) | {a.id for a in (args.vararg, args.kwarg) if a is not None}
        if shape.n_extra and args.vararg is None:
            self.fail(node, f"{self.function_name()}() takes no *args")
        extra: list[str] = []
        if args.vararg is not None:
            name = args.vararg.id
            extra = [self.fresh_local(f"{name}_{i}") for i in range(shape.n_extra)]
            items = tuple(ir.Var(n) for n in extra)
            self.prologue.append(ir.Assign((name,), ir.Tuple(items), origin))
            if name not in assigned:
                self.known_tuples[name] = items
        if self.kwonly_defaults is None:  # the user's function: the values Python made
            self.kwonly_defaults = {k: _ref_or_const(v, f"{k}_default") for k, v in (
                getattr(self.fn, "__kwdefaults__", None) or {}).items()}
        for k in kwonly:
            if k not in shape.kwonly:
                if k not in self.kwonly_defaults:
                    self.fail(node, f"{self.function_name()}() missing keyword-only argument "
                                    f"{k!r}")
                self.prologue.append(ir.Assign((k,), self.kwonly_defaults[k], origin))
        gathered: list[str] = []
        if args.kwarg is not None:
            name = args.kwarg.id
            gathered = [self.fresh_local(f"{name}_{k}") for k in shape.extra_kw]
            keys = self.emit(self.prologue, node, ir.Tuple(tuple(ir.Const(k)
                                                                 for k in shape.extra_kw)))
            values = self.emit(self.prologue, node, ir.Tuple(tuple(ir.Var(n)
                                                                   for n in gathered)))
            self.prologue.append(ir.Assign((name,), ir.Call(
                ir.Ref(helpers.make_dict, "dict_of"), (keys, values)), origin))
            if name not in assigned:
                self.known_dicts[name] = {k: ir.Var(n) for k, n in zip(shape.extra_kw,
                                                                       gathered)}
        elif shape.extra_kw:
            self.fail(node, f"{self.function_name()}() takes no **kwargs")
        self.gathered = tuple(extra) + shape.kwonly + tuple(gathered)
        self.params = self.params + self.gathered

    @classmethod
    def nested(cls, parent: "Lowering", node, name: str, own: tuple[str, ...],
               captured: tuple[str, ...], shape: call_shape.CallShape | None = None,
               kwonly_defaults: dict | None = None, threads: tuple[str, ...] = ()):
        """The lowering of a function defined inside `parent` (see local_functions.py):
        its parameters are `own`, then those a call `shape` lays out for *args, keyword-only
        parameters and **kwargs (their defaults the atoms `kwonly_defaults`), then the
        `captured` values. It returns the new values of `threads` (captured names it
        declares nonlocal and assigns) with its result (local_functions.ThreadingLocal)."""
        self = cls.__new__(cls)
        self.fn = parent.fn
        self.parsed = ParsedFunction(node, parent.parsed.filename, parent.parsed.line_offset)
        self.env = parent.env
        self.counter = 0
        self.params = own
        body = node.body if isinstance(node.body, list) else [node.body]
        assigned = local_functions.assigned_names(body)
        self.locals = set(own) | set(captured) | assigned
        self.line = node.lineno
        self.local_functions = dict(parent.local_functions)
        self.name_override = name
        self.imported = dict(parent.imported)
        self.prologue = []
        self.known_tuples, self.known_dicts = {}, {}
        self.gathered = ()
        self.known = {k: v for k, v in parent.known.items() if k not in self.locals}
        self.called_types = {}
        self.partials = {k: v for k, v in parent.partials.items() if k not in self.locals}
        self.store_counts = None
        self.kwonly_defaults = dict(kwonly_defaults or {})
        self.captured_names = frozenset(captured)
        self.threads = list(threads)
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            self.gathered_params(node, shape or call_shape.CallShape(), assigned)
            gathering = {a.id for a in [node.args.vararg, node.args.kwarg] if a is not None}
            gathering |= {a.id for a in node.args.kwonlyargs}
            self.known = {k: v for k, v in self.known.items() if k not in gathering}
            self.partials = {k: v for k, v in self.partials.items() if k not in gathering}
        self.params = self.params + tuple(captured)
        return self

    def snapshot(self) -> "Lowering":
        """A copy of this lowering's view of names now, for a local function lowered later
        (local_functions.GatheringLocal) to read them as at its definition."""
        copy = Lowering.__new__(Lowering)
        copy.__dict__.update(self.__dict__)
        copy.local_functions = dict(self.local_functions)
        copy.imported, copy.known = dict(self.imported), dict(self.known)
        copy.partials = dict(self.partials)
        return copy

    def function_name(self) -> str:
        """The name of the function being lowered, as its user wrote it."""
        return self.name_override or self.fn.__name__

    def fresh_local(self, base: str) -> str:
        """A new local name starting with `base` (for values the frontend introduces)."""
        return Names(self.locals).local(base)

    # ---- helpers --------------------------------------------------------------------------
    def origin(self, node) -> ir.Origin:
        line = getattr(node, "lineno", None) or self.line
        return (self.parsed.filename, line + self.parsed.line_offset)

    def fail(self, node, message: str, kind: type = UnsupportedSyntaxError):
        file, line = self.origin(node)
        err = kind(f"{file}:{line}: {message}")
        err.filename, err.lineno = file, line
        raise err

    def fresh(self) -> str:
        """The next temporary `t7` (numbered from 1 in each function, skipping locals)."""
        names = Names(frozenset(self.locals), temps_from=self.counter)  # temps are not locals
        name = names.temp()
        self.counter = names.last_temp
        return name

    def emit(self, out: list, node, expr: ir.Expr, target: str | None = None) -> ir.Var:
        if isinstance(expr, ir.Ref) and isinstance(expr.value, PartialCall):
            expr = expr.value.as_call()  # the partial object, where it is used as a value
        if isinstance(expr, ir.Ref) and isinstance(expr.value, KnownTuple):
            expr = ir.Tuple(tuple(self.function_value(a, node, out)
                                  for a in expr.value.items))
        if isinstance(expr, ir.Ref) and isinstance(expr.value, local_functions.ThreadingLocal):
            self.refuse_escape(node, expr.value)
        name = target or self.fresh()
        out.append(ir.Assign((name,), expr, self.origin(node)))
        return ir.Var(name)

    def refuse_escape(self, node, local) -> None:
        """A local function assigning names of the function enclosing it, used as a value:
        the new values would be lost (local_functions.ThreadingLocal)."""
        self.fail(node, escape_message(local.name, local.threads))

    # ---- function --------------------------------------------------------------------------
    def run(self) -> ir.Function:
        node = self.parsed.node
        if isinstance(node, gast.FunctionDef) and match_statements.has_match(node):
            match_statements.desugar(node, self.fail)
            self.locals |= _assigned_names(node)
        if isinstance(node, gast.FunctionDef) and jumps.has_jumps(node):
            jumps.desugar(node)
            self.locals |= _assigned_names(node)
        out: list[ir.Stmt] = list(self.prologue)
        if isinstance(node, gast.Lambda):
            result = self.expr(node.body, out)
            out.append(ir.Return(self.with_threads(result, out, node), self.origin(node)))
        else:
            body = [s for s in node.body if not _is_docstring(s)]
            self.block_with_return(body, out)
        if self.name_override is not None:
            defaults = ()  # a local function's, evaluated where it is defined (lift)
        elif getattr(self.fn, "__defaults__", None) is not None:
            defaults = tuple(self.fn.__defaults__)  # the values Python computed for them
        else:
            defaults = tuple(self.default_value(d) for d in node.args.defaults)
        if self.params[-len(self.gathered):] == self.gathered and self.gathered:
            defaults = ()  # a specialisation is called with every argument (call_shape.py)
        name = self.name_override or (self.fn.__name__ if self.fn.__name__ != "<lambda>"
                                      else "lambda_")
        return ir.Function(name, self.params, out, defaults, *self.origin(node),
                           doc=None, meta={"source_fn": self.fn})

    def default_value(self, node):
        if isinstance(node, gast.Constant):
            return node.value
        ok, value = self.const_eval(node)
        if not ok:
            self.fail(node, "default values must be constants")
        return value

    def const_eval(self, node):
        scratch: list = []
        atom = self.expr(node, scratch)
        if not scratch and isinstance(atom, ir.Const):
            return True, atom.value
        if not scratch and isinstance(atom, ir.Ref):
            return True, atom.value
        return False, None

    # ---- statements -------------------------------------------------------------------------
    def block_with_return(self, body: list, out: list) -> None:
        """Lower `body`, whose control must end in a return; early returns are desugared by
        moving the statements after an `if` into the branches that do not return."""
        result = next(n for n in ("out", "result", "out_", "result_") if n not in self.locals)
        self.locals.add(result)
        start = len(out)
        if not self.returns_into(body, out, result):  # a path ends without `return`: None
            out.insert(start, ir.Assign((result,), ir.Const(None), self.origin(
                self.parsed.node)))
        where = body[-1] if body else self.parsed.node
        out.append(ir.Return(self.with_threads(ir.Var(result), out, where), self.origin(where)))

    def with_threads(self, result: ir.Atom, out: list, node) -> ir.Atom:
        """What the function returns: `result`, or for a local function that assigns names
        of the function enclosing it, (result, their new values) (ThreadingLocal)."""
        if not self.threads:
            return result
        return self.emit(out, node, ir.Tuple((result,) + tuple(ir.Var(n)
                                                             for n in self.threads)))

    def returns_into(self, body: list, out: list, result: str) -> bool:
        """Lower `body`, writing any return value into `result`; True if it always returns."""
        for i, stmt in enumerate(body):
            if isinstance(stmt, gast.Return):
                value = stmt.value if stmt.value is not None else gast.Constant(None, None)
                local = self.capturing_local(value)
                if isinstance(local, local_functions.ThreadingLocal):
                    self.refuse_escape(value, local)
                if local is not None:  # `return apply`: a Closure of what apply captures
                    self.emit(out, value, local_functions.value_call(local), result)
                elif self.known_closures(value) is not None:  # `return layers`
                    self.emit(out, value, self.known_functions_value(
                        self.known_closures(value), value, out), result)
                else:
                    self.expr(value, out, target=result)
                return True
            if isinstance(stmt, gast.If) and _contains_return(stmt):
                rest = body[i + 1:]
                cond = self.expr(stmt.test, out)
                then_out, else_out = [], []
                then_returns = self.returns_into(list(stmt.body) + ([] if _always_returns(
                    stmt.body) else rest), then_out, result)
                else_returns = self.returns_into(list(stmt.orelse) + ([] if _always_returns(
                    stmt.orelse) else rest), else_out, result)
                out.append(ir.If(cond, then_out, else_out, self.origin(stmt)))
                return then_returns and else_returns
            if isinstance(stmt, gast.Try):   # decided now: the statements it runs, then the rest
                return self.returns_into(self.try_statements(stmt) + body[i + 1:], out, result)
            if isinstance(stmt, gast.With):   # a transparent context: its body, then the rest
                self.check_transparent_with(stmt)
                return self.returns_into(list(stmt.body) + body[i + 1:], out, result)
            if isinstance(stmt, (gast.For, gast.While)) and _contains_return(stmt):
                self.fail(stmt, "`return` inside a loop is not supported yet; assign the "
                                "result and return after the loop")
            self.stmt(stmt, out)
        return False

    def stmt(self, node, out: list) -> None:
        kind = type(node).__name__
        handler = getattr(self, f"stmt_{kind}", None)
        if handler is None:
            self.fail(node, f"`{kind}` statements are not supported in transformed functions")
        handler(node, out)

    def stmt_Assign(self, node, out):
        if (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(node.value, gast.Lambda)):
            name = node.targets[0].id  # `f = lambda x: ...` is a local def
            self.local_functions[name] = lift(self, node.value, name, out)
            return
        if self.known_function_sequence(node, out):
            return
        if len(node.targets) != 1:
            value = self.expr(node.value, out)
            for t in node.targets:
                self.assign_to(t, value, out, node)
            return
        target = node.targets[0]
        if self.parallel_assign(target, node.value, out, node):
            return
        mutated = self._mutated_local(node.value)
        if mutated is not None and node.value.func.attr == "pop" and not node.value.keywords:
            # `v = ys.pop(i)`: v is the item, and ys the list without it (`d.pop(k, default)`:
            # the item or the default, and d without k)
            call = node.value
            index = call.args[0] if call.args else gast.Constant(-1, None)
            if len(call.args) == 2 and self.pops_a_key(call):
                key, default = call.args
                d = call.func.value
                get = gast.IfExp(test=gast.Compare(left=key, ops=[gast.In()], comparators=[
                    gast.Call(func=gast.Attribute(value=d, attr="keys", ctx=gast.Load()),
                              args=[], keywords=[])]),
                                 body=gast.Subscript(value=d, slice=key, ctx=gast.Load()),
                                 orelse=default)
                item = self.expr(gast.fix_missing_locations(gast.copy_location(get, node)), out)
            else:
                item = self.emit(out, node, ir.Call(GETITEM, (self.name(call.func.value,
                                                                         node),
                                                               self.expr(index, out))))
            self._rebind_mutation(gast.Expr(node.value), mutated, out)
            self.assign_to(target, item, out, node)
            return
        if mutated is not None and node.value.func.attr == "setdefault":
            # `v = d.setdefault(k, x)`: d gets k if it lacked it, and v is d[k] after
            self._rebind_mutation(gast.Expr(node.value), mutated, out)
            item = self.emit(out, node, ir.Call(GETITEM, (
                self.name(node.value.func.value, node), self.expr(node.value.args[0], out))))
            self.assign_to(target, item, out, node)
            return
        if mutated is not None:
            self.fail(node, f"`{mutated}.{node.value.func.attr}(...)` changes `{mutated}` in "
                            "place and its value is used: transformed functions do not allow "
                            "that; build a new value instead")
        if isinstance(target, gast.Name) and self.fixed_dict_keys(target) is not None:
            self.assign_keyword_dict(target.id, node.value, out, node)
            return
        if isinstance(target, gast.Name):
            value = self.expr_no_assign(node.value, out)
            if isinstance(value, ir.Ref) and isinstance(value.value,
                                                        local_functions.LocalFunction):
                self.local_functions[target.id] = value.value  # `f = jit(g)`, g local
                return
            if (isinstance(value, ir.Ref) and isinstance(value.value, PartialCall)
                    and self.assigned_once(target.id)):
                self.partials[target.id] = value.value  # `p = partial(f, W)`
                return
            self.emit(out, node.value, value, target.id)
        else:
            self.assign_to(target, self.expr(node.value, out), out, node)

    def stmt_Global(self, node, out):
        """`global N` only to read N (declared because other code assigns it) says nothing
        here: N is read as any global. Assigning it would be a side effect, refused."""
        assigned = _assigned_names(self.parsed.node) if isinstance(
            self.parsed.node, gast.FunctionDef) else set()
        written = [n for n in node.names if n in assigned]
        if isinstance(node, gast.Nonlocal):
            written = [n for n in written if n not in self.threads]
        if written:
            kind = "global" if isinstance(node, gast.Global) else "nonlocal"
            self.fail(node, f"assigning the {kind} {written[0]!r} inside a transformed "
                            "function is a side effect redraft cannot stage; return the new "
                            "value and assign it outside")

    stmt_Nonlocal = stmt_Global

    def stmt_AnnAssign(self, node, out):
        if node.value is not None:
            self.assign_to(node.target, self.expr(node.value, out), out, node)

    def assign_to(self, target, value: ir.Atom, out: list, node) -> None:
        if (isinstance(value, ir.Ref) and isinstance(value.value, KnownTuple)
                and isinstance(target, (gast.Tuple, gast.List))
                and len(target.elts) == len(value.value.items)):
            for t, item in zip(target.elts, value.value.items):  # `y, vjp_fun = vjp(f, x)`
                if (isinstance(t, gast.Name) and isinstance(item, ir.Ref)
                        and isinstance(item.value, PartialCall) and self.assigned_once(t.id)):
                    self.partials[t.id] = item.value
                else:
                    self.assign_to(t, self.function_value(item, node, out), out, node)
            return
        if isinstance(value, ir.Ref) and isinstance(value.value, (PartialCall, KnownTuple)):
            value = self.function_value(value, node, out)
        if isinstance(target, gast.Name):
            out.append(ir.Assign((target.id,), value, self.origin(node)))
        elif isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 1 and not \
                isinstance(target.elts[0], gast.Starred):
            # `(x,) = v`: one target name would read as `x = v`, so take the item
            item = self.emit(out, node, ir.Call(GETITEM, (value, ir.Const(0))))
            self.assign_to(target.elts[0], item, out, node)
        elif isinstance(target, (gast.Tuple, gast.List)) and any(
                isinstance(e, gast.Starred) for e in target.elts):
            self.assign_starred(target, value, out, node)
        elif isinstance(target, (gast.Tuple, gast.List)):
            names = []
            nested = []
            for elt in target.elts:
                if isinstance(elt, gast.Name):
                    names.append(elt.id)
                else:
                    tmp = self.fresh()
                    names.append(tmp)
                    nested.append((elt, tmp))
            out.append(ir.Assign(tuple(names), value, self.origin(node)))
            for elt, tmp in nested:
                self.assign_to(elt, ir.Var(tmp), out, node)
        elif isinstance(target, gast.Subscript) and self.built_container(target.value):
            self.set_item(target, value, out, node)
        elif isinstance(target, gast.Subscript):
            self.fail(node, "item assignment `x[i] = v` is not allowed: arrays are immutable."
                            " Use `x = x.at[i].set(v)`")
        else:
            self.fail(node, f"cannot assign to {type(target).__name__.lower()} in a "
                            "transformed function")

    def assign_starred(self, target, value: ir.Atom, out: list, node) -> None:
        """`first, *rest, last = v`: each plain target takes its item (v[0], v[-1]) and the
        starred one the list of those between (list(v[1:-1])), as Python unpacks."""
        starred = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if len(starred) > 1:
            self.fail(node, "multiple starred expressions in assignment")
        k, n = starred[0], len(target.elts)
        after = n - k - 1
        for j, elt in enumerate(target.elts):
            if j == k:
                between = ir.Const(slice(k, -after if after else None))
                part = self.emit(out, node, ir.Call(GETITEM, (value, between)))
                items = self.emit(out, node, ir.Call(ir.Ref(list, "list"), (part,)))
                self.assign_to(elt.value, items, out, node)
            else:
                index = ir.Const(j if j < k else j - n)
                item = self.emit(out, node, ir.Call(GETITEM, (value, index)))
                self.assign_to(elt, item, out, node)

    def parallel_assign(self, target, value, out: list, node) -> bool:
        """`(x,), (t,) = primals, tangents`: a tuple display assigned to a tuple target of
        the same length, item by item (no tuple is built and taken apart, so what each
        target reads stays separate for the transforms' activity). A value the targets
        rebind is copied first: `a, b = b, a` swaps."""
        def plain(n):
            return isinstance(n, (gast.Tuple, gast.List)) and not any(
                isinstance(e, gast.Starred) for e in n.elts)
        if not (plain(target) and plain(value) and len(target.elts) == len(value.elts)):
            return False
        atoms = [self.expr(e, out) for e in value.elts]
        rebound = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        atoms = [self.emit(out, node, a) if isinstance(a, ir.Var) and a.name in rebound else a
                 for a in atoms]
        for t, a in zip(target.elts, atoms):
            self.assign_to(t, a, out, node)
        return True

    def built_container(self, node) -> bool:
        """Whether `node` names a local the function binds itself (not a parameter it never
        rebinds, whose caller would see the change): item assignment on it (`shape[ax] = n`)
        rebinds the name to an updated copy; on an array, set_item raises JAX's error."""
        if not (isinstance(node, gast.Name) and node.id in self.locals):
            return False
        root = self.parsed.node
        arguments = getattr(root, "args", None)
        params = set()
        if arguments is not None:
            every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [
                a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            params = {a.id for a in every}
        if node.id not in params:
            return True
        body = root.body if isinstance(root.body, list) else [root.body]
        return any(isinstance(n, gast.Assign) and any(
            isinstance(t, gast.Name) and t.id == node.id for t in n.targets)
            for stmt in body for n in gast.walk(stmt))

    def set_item(self, target, value: ir.Atom, out: list, node) -> None:
        """`d[k] = v` on a container the function built: d = set_item(d, k, v)."""
        from redraft.compiler.core import helpers
        base = self.name(target.value, node)
        index = self.index(target.slice, out)
        self.emit(out, node, ir.Call(ir.Ref(helpers.set_item, "set_item"),
                                     (base, index, value)), target.value.id)

    def stmt_AugAssign(self, node, out):
        if isinstance(node.target, gast.Subscript) and self.built_container(node.target.value):
            fn, sym = BINOPS[type(node.op)]  # d[k] += v: d = set_item(d, k, d[k] + v)
            current = self.expr(node.target, out)
            right = self.expr(node.value, out)
            updated = self.emit(out, node, ir.Call(ir.Ref(fn, sym), (current, right)))
            self.set_item(node.target, updated, out, node)
            return
        if not isinstance(node.target, gast.Name):
            self.fail(node, "augmented assignment to items or attributes is not allowed: "
                            "arrays are immutable; use x = x.at[i].add(v)")
        fn, sym = BINOPS[type(node.op)]
        left = self.name(node.target, node)
        right = self.expr(node.value, out)
        if isinstance(node.op, gast.BitOr) and (self.shows_dict(node.target)
                                                or self.shows_dict(node.value)):
            from redraft.compiler.core import helpers
            fn, sym = helpers.merge_dicts, "merge_dicts"  # d |= {...}: the union, rebound
        self.emit(out, node, ir.Call(ir.Ref(fn, sym), (left, right)), node.target.id)

    def stmt_Expr(self, node, out):
        if isinstance(node.value, gast.Constant):
            return  # a bare string or constant: no effect
        mutated = self._mutated_local(node.value)
        if mutated is not None:
            self._rebind_mutation(node, mutated, out)
            return
        atom_or_call = self.expr_no_assign(node.value, out)
        if isinstance(atom_or_call, (ir.Var, ir.Const)):
            return  # (a call whose result is already assigned: a ThreadingLocal's)
        out.append(ir.ExprStmt(atom_or_call, self.origin(node)))

    def _mutated_local(self, call) -> str | None:
        """The local name that `call` mutates in place (`ys.append(y)`), else None."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and isinstance(call.func.value, gast.Name)
                and call.func.value.id in self.locals):
            return None
        return call.func.value.id if call.func.attr in MUTATING_METHODS else None

    def _rebind_mutation(self, node, name: str, out: list) -> None:
        """`ys.append(y)` becomes `ys = append(ys, y)`: Core never mutates a value, so the
        transforms see the new list as what the statement makes. Likewise `extend`,
        `insert`, `reverse`, `clear` and `pop()` (as a statement) rebind the name to the list
        they leave; other in-place methods would hide their data flow: refuse them."""
        from redraft.compiler.core import helpers
        call = node.value
        method, args = call.func.attr, call.args
        ys = self.name(call.func.value, node)
        if method in ("update", "setdefault") or (method == "pop" and self.pops_a_key(call)):
            self.emit(out, node, self.dict_method(node, call, ys, out), name)
            return
        if call.keywords or any(isinstance(a, gast.Starred) for a in args):
            self.fail(node, f"`{name}.{method}(...)`: pass its arguments by position")

        def concat(left, right):
            return self.emit(out, node, ir.Call(ir.Ref(helpers.concat, "concat"),
                                                (left, right)))

        def part(start, stop, step=None):
            return self.emit(out, node, ir.Call(GETITEM, (ys, ir.Const(slice(start, stop,
                                                                                  step)))))

        if method == "append" and len(args) == 1:
            new = ir.Call(ir.Ref(helpers.append, "append"), (ys, self.item_value(args[0], out)))
        elif method == "extend" and len(args) == 1:
            more = self.emit(out, node, ir.Call(ir.Ref(list, "list"),
                                                (self.expr(args[0], out),)))
            new = ir.Call(ir.Ref(helpers.concat, "concat"), (ys, more))
        elif method == "insert" and len(args) == 2 and self._static_int(args[0]) is not None:
            at = self._static_int(args[0])
            item = self.emit(out, node, ir.List((self.expr(args[1], out),)))
            head = part(None, at) if at else self.emit(out, node, ir.List(()))
            new = ir.Call(ir.Ref(helpers.concat, "concat"), (concat(head, item), part(at, None)))
        elif method == "reverse" and not args:
            new = ir.Call(GETITEM, (ys, ir.Const(slice(None, None, -1))))
        elif method == "clear" and not args:
            new = ir.List(())
        elif method == "pop" and len(args) <= 1 and (
                not args or self._static_int(args[0]) is not None):
            at = self._static_int(args[0]) if args else -1
            if at == -1:
                new = ir.Call(GETITEM, (ys, ir.Const(slice(None, -1))))
            else:
                new = ir.Call(ir.Ref(helpers.concat, "concat"), (part(None, at),
                                                                part(at + 1, None)))
        else:
            self.fail(node, f"`{name}.{method}(...)` changes `{name}` in place, which "
                            "transformed functions do not allow; build a new value instead "
                            f"(`{name} = {name} + [...]`)")
        self.emit(out, node, new, name)

    def pops_a_key(self, call) -> bool:
        """Whether `d.pop(k)` takes a dict's key: the source shows `d` a dict, or `k` is a
        string."""
        key = call.args[0] if call.args else None
        return self.shows_dict(call.func.value) or (
            isinstance(key, gast.Constant) and isinstance(key.value, str))

    def dict_method(self, node, call, d: ir.Atom, out: list) -> ir.Expr:
        """The dict that `d.update(...)`, `d.setdefault(k, v)` or `d.pop(k)` leave in `d`, as
        a new dict (Core never mutates): a union (merge_dicts, which the transforms follow
        item by item), or `d` without `k`. `d.pop(k)`'s value is read before (stmt_Assign)."""
        from redraft.compiler.core import helpers
        method, args = call.func.attr, call.args
        name = call.func.value.id
        if any(isinstance(a, gast.Starred) for a in args) or (
                method != "update" and call.keywords):
            self.fail(node, f"`{name}.{method}(...)`: pass its arguments by position")
        merge = ir.Ref(helpers.merge_dicts, "merge_dicts")

        def dict_of(keys: tuple, values: tuple) -> ir.Atom:
            key_atoms = self.emit(out, node, ir.Tuple(keys))
            return self.emit(out, node, ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (
                key_atoms, self.emit(out, node, ir.Tuple(values)))))

        if method == "update" and len(args) <= 1:
            new: ir.Atom = d
            if args:
                new = self.emit(out, node, ir.Call(merge, (new, self.expr(args[0], out))))
            if call.keywords:
                more = dict_of(tuple(ir.Const(k.arg) for k in call.keywords),
                               tuple(self.expr(k.value, out) for k in call.keywords))
                new = self.emit(out, node, ir.Call(merge, (new, more)))
            return new
        if method == "setdefault" and len(args) in (1, 2):
            value = self.expr(args[1], out) if len(args) == 2 else ir.Const(None)
            fresh = dict_of((self.expr(args[0], out),), (value,))
            return ir.Call(merge, (d, self.emit(out, node, ir.Call(merge, (fresh, d)))))
        if method == "pop" and len(args) in (1, 2):
            return self.without_key(node, d, self.expr(args[0], out), out)
        counts = "at most one argument" if method == "update" else "one or two arguments"
        self.fail(node, f"`{name}.{method}(...)` takes {counts} here")

    def without_key(self, node, d: ir.Atom, key: ir.Atom, out: list) -> ir.Expr:
        """`{k: d[k] for k in d if k != key}`: the dict `d.pop(key)` or `del d[key]` leave,
        lowered as the comprehension it is (the transforms follow each item)."""
        names = {}
        for role, atom in (("popped_from", d), ("popped_key", key)):
            names[role] = self.fresh_local(role)
            self.locals.add(names[role])
            self.emit(out, node, atom, names[role])
        item = self.fresh_local("key")
        self.locals.add(item)
        text = (f"{{{item}: {names['popped_from']}[{item}] for {item} in "
                f"{names['popped_from']}.keys() if {item} != {names['popped_key']}}}")
        comp = gast.parse(text).body[0].value
        for n in gast.walk(comp):
            if hasattr(n, "lineno"):
                gast.copy_location(n, node)
        return self.expr_no_assign(comp, out)

    def stmt_Delete(self, node, out):
        """`del d[k]` / `del ys[i]` on a container the function built rebinds it to the
        container without that item (as `d.pop(k)` does); `del name` is a no-op here (Core
        names are never read after it, or Python itself would raise)."""
        for target in node.targets:
            if isinstance(target, gast.Name):
                continue
            if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                    and self.built_container(target.value)):
                self.fail(node, "`del` of an item works on a dict or list the function built; "
                                "arrays are immutable (use `jnp.delete`)")
            name = target.value.id
            if isinstance(target.slice, gast.Slice):
                self.delete_slice(node, target, out)
                continue
            call = gast.Call(func=gast.Attribute(value=target.value, attr="pop", ctx=gast.Load()),
                             args=[target.slice], keywords=[])
            gast.copy_location(call, node)
            self._rebind_mutation(gast.copy_location(gast.Expr(value=call), node), name, out)

    def delete_slice(self, node, target, out: list) -> None:
        """`del ys[a:b]`: ys rebound to `ys[:a] + ys[b:]` (concat, followed item by item)."""
        from redraft.compiler.core import helpers
        lo, hi = target.slice.lower, target.slice.upper
        if target.slice.step is not None:
            self.fail(node, "`del ys[a:b:step]` is not supported; build the list you keep "
                            "(`ys = ys[::2]`)")

        def part(lower, upper) -> ir.Atom:
            return self.expr(gast.copy_location(gast.Subscript(
                value=target.value, slice=gast.Slice(lower=lower, upper=upper, step=None),
                ctx=gast.Load()), node), out)

        head = part(None, lo) if lo is not None else self.emit(out, node, ir.List(()))
        tail = part(hi, None) if hi is not None else self.emit(out, node, ir.List(()))
        self.emit(out, node, ir.Call(ir.Ref(helpers.concat, "concat"), (head, tail)),
                  target.value.id)

    @staticmethod
    def _static_int(node) -> int | None:
        """The value of an int literal (`3`, `-1`), else None."""
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            inner = Lowering._static_int(node.operand)
            return -inner if inner is not None else None
        return None

    def stmt_Try(self, node, out):
        for s in self.try_statements(node):
            self.stmt(s, out)

    def try_statements(self, node) -> list:
        """The statements a `try` runs, decided now (compiler/frontend/static_try.py): the
        body up to what raised, then the handler that caught it (its `as e` bound to the
        exception) or the `else` block, then `finally`; an exception no handler catches is
        raised again after `finally`."""
        from redraft.compiler.frontend import static_try
        if not node.handlers:  # try/finally: nothing is caught, so the blocks run in order
            return list(node.body) + list(node.orelse) + list(node.finalbody)
        try:
            ran, handler, exc = static_try.decide(node, self.static_value, self.origin(node)[0],
                                                  self.env.globals)
        except static_try.Undecidable as e:
            run_time = self.run_time_try(node)
            if run_time is not None:
                return run_time
            self.fail(node, f"this `try` cannot be decided: {e}. redraft decides a `try` when "
                            "it reads the function (JAX, when it traces), so its body may "
                            "read only values known then: constants, globals, imports, static "
                            "arguments and locals bound once to those. Move the code that "
                            "reads run-time values out of the `try` (a shape check can be "
                            "`if x.shape[0] != n:` or `assert`, which work on run-time shapes)")
        chosen = list(ran)
        if handler is not None:
            if handler.name is not None:
                held = self.fresh_local("caught")
                self.imported[held] = exc
                chosen.append(jumps._assign(handler.name.id, jumps._name(held)))
            chosen += list(handler.body)
        elif exc is None:
            chosen += list(node.orelse)
        chosen += list(node.finalbody)
        if exc is not None and handler is None:
            held = self.fresh_local("uncaught")
            self.imported[held] = exc
            chosen.append(gast.Raise(exc=jumps._name(held), cause=None))
        for s in chosen:
            if getattr(s, "lineno", None) is None:
                gast.copy_location(s, node)
        return chosen

    def run_time_try(self, node) -> list | None:
        """A `try` whose body reads the function's own values (a static argument, a dict's
        keys, an object's attributes), decided when the function runs by
        helpers.decide_try (static_try.RunTimeTry): the statements it returns guard each
        body statement, handler and `else` by what ran. None where the body reads no such
        value (another reason made it undecidable)."""
        from redraft.compiler.core import helpers
        from redraft.compiler.frontend import static_try
        read = set()
        for part in list(node.body) + [h.type for h in node.handlers if h.type is not None]:
            read |= local_functions.read_names(part)
        inside: dict[str, int] = {}
        for part in node.body:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                    inside[n.id] = inside.get(n.id, 0) + 1
        passed = []
        for name in sorted(read):
            bound_before = name in self.params or self.stores_of(name) > inside.get(name, 0)
            if name not in self.locals or not bound_before:
                continue
            try:
                self.static_value(name)
            except static_try.NotKnownYet:
                passed.append(name)
            except KeyError:
                pass
        if not passed:
            return None
        decider = static_try.RunTimeTry(node, tuple(passed), self.static_value,
                                        self.origin(node), self.env.globals)
        names = {role: self.fresh_local(role) for role in
                 ("try_decider", "decide_try", "try_path", "ran", "caught", "raised")}
        self.locals |= {names[r] for r in ("try_path", "ran", "caught", "raised")}
        self.imported[names["try_decider"]] = decider
        self.imported[names["decide_try"]] = helpers.decide_try
        load, store = jumps._name, (lambda n: jumps._name(n, store=True))

        def compare(name: str, op, value: int):
            return gast.Compare(left=load(name), ops=[op], comparators=[jumps._const(value)])

        out = [jumps._assign(names["try_path"], gast.Call(
            func=load(names["decide_try"]), args=[load(names["try_decider"])]
            + [load(n) for n in passed], keywords=[]))]
        for k, role in enumerate(("ran", "caught", "raised")):
            out.append(gast.Assign(targets=[store(names[role])], value=gast.Subscript(
                value=load(names["try_path"]), slice=jumps._const(k), ctx=gast.Load()),
                type_comment=None))
        for i, stmt in enumerate(node.body):
            out.append(gast.If(test=compare(names["ran"], gast.Gt(), i), body=[stmt], orelse=[]))
        for j, handler in enumerate(node.handlers):
            bind = [jumps._assign(handler.name.id, load(names["raised"]))] if handler.name else []
            out.append(gast.If(test=compare(names["caught"], gast.Eq(), j),
                               body=bind + list(handler.body), orelse=[]))
        if node.orelse:
            out.append(gast.If(test=compare(names["caught"], gast.Eq(), -1),
                               body=list(node.orelse), orelse=[]))
        out += list(node.finalbody)
        out.append(gast.If(test=compare(names["caught"], gast.Eq(), -2),
                           body=[gast.Raise(exc=load(names["raised"]), cause=None)], orelse=[]))
        for s in out:
            for n in gast.walk(s):
                if "lineno" in getattr(n, "_attributes", ()) and getattr(n, "lineno", None) is None:
                    gast.copy_location(n, node)
        return out

    def static_value(self, name: str):
        """The value `name` has when the source is read (static_try.StaticNames' resolver):
        an import, a parameter the function is specialised on, a local bound once to a value
        known now, or a global, closure cell or builtin. Raises NotKnownYet for values that
        exist only when the function runs, KeyError for undefined names."""
        from redraft.compiler.frontend import static_try
        if name in self.imported:
            return self.imported[name]
        if name in self.known:
            return self.known[name]
        if name in self.locals:
            value_node = self.single_binding(name)
            resolving = getattr(self, "_resolving", set())
            if value_node is None or name in resolving or name in self.params:
                raise static_try.NotKnownYet(name)
            self._resolving = resolving | {name}
            try:
                return static_try.evaluate(value_node, static_try.StaticNames(
                    self.static_value), self.origin(value_node)[0], self.env.globals)
            except static_try.NotKnownYet:
                raise static_try.NotKnownYet(name) from None
            finally:
                self._resolving = resolving
        found, value = self.env.lookup(name)
        if not found:
            raise KeyError(name)
        return value

    def single_binding(self, name: str):
        """The value expression of `name = <expr>`, the function's only assignment of the
        local `name` (none in place either), else None."""
        if self.stores_of(name) != 1:
            return None
        for n in gast.walk(self.parsed.node):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                    n.targets[0], gast.Name) and n.targets[0].id == name:
                changed = any(isinstance(c, gast.Call) and isinstance(c.func, gast.Attribute)
                              and isinstance(c.func.value, gast.Name)
                              and c.func.value.id == name and c.func.attr in MUTATING_METHODS
                              for c in gast.walk(self.parsed.node))
                return None if changed else n.value
        return None

    def stmt_With(self, node, out):
        self.check_transparent_with(node)
        for s in node.body:
            self.stmt(s, out)

    def check_transparent_with(self, node) -> None:
        """Accept `with cm(...):` only for context managers that change no value
        (compiler/frontend/transparent_contexts.py); their arguments are not evaluated."""
        from redraft.compiler.frontend.transparent_contexts import is_transparent
        for item in node.items:
            ok, fn = (self.const_eval(item.context_expr.func)
                      if isinstance(item.context_expr, gast.Call) else (False, None))
            if not ok or not is_transparent(fn) or item.optional_vars is not None:
                self.fail(node, "`With` statements are not supported in transformed "
                                "functions, except redraft.named_scope, "
                                "default_matmul_precision and ensure_compile_time_eval "
                                "(which change no value)")

    def stmt_If(self, node, out):
        cond = self.expr(node.test, out)
        body, orelse = [], []
        for s in node.body:
            self.stmt(s, body)
        for s in node.orelse:
            self.stmt(s, orelse)
        out.append(ir.If(cond, body, orelse, self.origin(node)))

    def else_after(self, loop, out, lower) -> bool:
        """A loop's `else` block runs after the loop (jumps.py left no break in it, only a
        flag): `lower` the loop without it, then the block. False when it has none."""
        if not loop.orelse:
            return False
        orelse, loop.orelse = loop.orelse, []
        lower(loop, out)
        loop.orelse = orelse
        self.block(orelse, out)
        return True

    def stmt_For(self, node, out):
        if self.else_after(node, out, self.stmt_For):
            return
        if self.unrolled_over_functions(node.iter, node.target, node, out,
                                        lambda copy: self.block(node.body, copy)):
            return
        if self.unrolled_over_keys(node, out):
            return
        target, iterable, body = self.loop_header(node.iter, node.target, node, out)
        for s in node.body:
            self.stmt(s, body)
        out.append(ir.For(target, iterable, body, self.origin(node)))

    def loop_header(self, iter_node, target_node, node, out) -> tuple[str, ir.Atom, list]:
        """(loop variable, iterable, first statements of the body) of `for target in iter`.
        A loop over `enumerate(...)` or `zip(...)` becomes a loop over indices whose body
        starts by reading each wrapped sequence at the index."""
        body: list = []
        if self.builtin_iterator(iter_node) is None:
            iterable = self.expr(iter_node, out)
            if isinstance(target_node, gast.Name):
                return target_node.id, iterable, body
            target = self.fresh()
            self.assign_to(target_node, ir.Var(target), body, node)
            return target, iterable, body
        length, element = self.sequence(iter_node, out)
        indices = self.emit(out, node, ir.Call(ir.Ref(range, "range"), (length,)))
        k = self.fresh()
        self.bind_element(target_node, element(body, ir.Var(k)), body, node)
        return k, indices, body

    def block(self, body: list, out: list) -> None:
        for s in body:
            self.stmt(s, out)

    def unrolled_over_functions(self, iter_node, target, node, out,
                                emit_body: Callable[[list], None]) -> bool:
        """`for apply, p in zip(applies, params)` (a loop or a comprehension's generator)
        where `applies` is a tuple or list of functions known when the source is read (a
        closure cell, a global, a known argument or local): the loop is unrolled, each copy
        of the body (`emit_body(out)`) reading its function as a constant, so the calls
        through it are calls of known functions. False (nothing emitted) when the loop is
        not of that form."""
        kind = self.builtin_iterator(iter_node)
        args = [iter_node] if kind is None else list(
            iter_node.args[:1] if kind == "enumerate" else iter_node.args)
        consts = [self.constant_functions(a) for a in args]
        if all(c is None for c in consts):
            return False
        start = 0
        if kind == "enumerate" and (len(iter_node.args) > 1 or iter_node.keywords):
            start_node = iter_node.args[1] if len(iter_node.args) > 1 else (
                iter_node.keywords[0].value)
            if not (isinstance(start_node, gast.Constant) and isinstance(start_node.value, int)):
                return False
            start = start_node.value
        if kind is not None:
            width = 2 if kind == "enumerate" else len(args)
            if not (isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == width):
                return False
            names = target.elts[1:] if kind == "enumerate" else target.elts
            if kind == "enumerate" and not isinstance(target.elts[0], gast.Name):
                return False
        else:
            names = [target]
        if any(c is not None and not isinstance(t, gast.Name) for c, t in zip(consts, names)):
            return False
        n = min(len(c) for c in consts if c is not None)
        atoms = [None if c is not None else self.expr(a, out) for a, c in zip(args, consts)]
        saved = dict(self.known)
        for k in range(n):
            if kind == "enumerate":
                self.known[target.elts[0].id] = k + start
            for t, c, atom in zip(names, consts, atoms):
                if c is not None:
                    self.known[t.id] = c[k]
                else:
                    if isinstance(t, gast.Name):
                        self.known.pop(t.id, None)  # a run-time item shadows a known name
                    item = self.emit(out, node, ir.Call(GETITEM, (atom, ir.Const(k))))
                    self.assign_to(t, item, out, node)
            emit_body(out)
        self.known = saved
        return True

    def known_function_sequence(self, node, out) -> bool:
        """`fs = [jnp.sin, lambda t: 2 * t]`, fs assigned nowhere else: a sequence of
        function values known when the source is read, as a global one would be, so that
        `for f in fs:` unrolls into calls of known functions (transforms see through them).
        False (nothing emitted) when the assignment is not of that form."""
        target, value = node.targets[0], node.value
        if (len(node.targets) == 1 and isinstance(target, gast.Name)
                and self.stores_of(target.id) == 1):
            value = self.unrolled_lambdas(value) or value
        if not (len(node.targets) == 1 and isinstance(target, gast.Name)
                and isinstance(value, (gast.List, gast.Tuple, gast.Dict)) and (
                    value.values if isinstance(value, gast.Dict) else value.elts)
                and self.stores_of(target.id) == 1):
            return False
        keys = None
        elts = value.values if isinstance(value, gast.Dict) else value.elts
        if isinstance(value, gast.Dict):  # {"relu": jax.nn.relu, "scale": lambda t: t * w}
            if not all(isinstance(k, gast.Constant) and isinstance(k.value, str)
                       for k in value.keys):
                return False
            keys = [k.value for k in value.keys]
        if not all(isinstance(e, (gast.Lambda, gast.Name, gast.Attribute)) or self.is_partial(e)
                   for e in elts):
            return False
        scratch: list = []
        try:
            atoms = [self.expr(e, scratch) for e in elts]
        except UnsupportedSyntaxError:
            return False
        if not all(isinstance(a, ir.Ref) and (callable(a.value) or self.fixed_partial(a.value))
                   for a in atoms):
            return False
        out.extend(scratch)  # the lambdas' default values, evaluated here
        items = [a.value for a in atoms]
        if keys is not None:
            self.known[target.id] = dict(zip(keys, items))
        else:
            self.known[target.id] = items if isinstance(value, gast.List) else tuple(items)
        return True

    def is_partial(self, node) -> bool:
        """Whether `node` calls functools.partial."""
        if not isinstance(node, gast.Call):
            return False
        ref = self.known_ref(node.func)
        return ref is not None and ref.value is functools.partial

    def fixed_partial(self, value) -> bool:
        """A partial whose bound arguments keep their values wherever it is called: constants,
        temporaries and locals assigned once (a partial binds values when it is made)."""
        if not isinstance(value, PartialCall):
            return False
        atoms = [value.fn] + list(value.args) + [a for _, a in value.kwargs]
        return all(not isinstance(a, ir.Var) or a.name not in self.locals
                   or self.stores_of(a.name) == (0 if a.name in self.params else 1)
                   for a in atoms)

    def unrolled_lambdas(self, node):
        """`[lambda t, k=k: ... for k in range(3)]`, over values known when the source is
        read, its lambdas reading `k` only through defaults: the list display of the
        lambdas it makes (each default bound to its value), else None."""
        from redraft.compiler.frontend import static_try
        if not (isinstance(node, gast.ListComp) and isinstance(node.elt, gast.Lambda)
                and len(node.generators) == 1 and not node.generators[0].ifs
                and isinstance(node.generators[0].target, gast.Name)):
            return None
        gen = node.generators[0]
        own = {a.id for a in node.elt.args.args + node.elt.args.posonlyargs}
        if gen.target.id in local_functions.read_names(node.elt.body) - own:
            return None  # late binding: every lambda would read the last value
        try:
            values = static_try.evaluate(gen.iter, static_try.StaticNames(self.static_value),
                                         self.origin(node)[0], self.env.globals)
        except (static_try.NotKnownYet, Exception):  # noqa: BLE001 - not known now
            return None
        if not isinstance(values, (range, tuple, list)) or not 0 < len(values) <= 64 or not all(
                isinstance(v, (int, float, str, bool)) for v in values):
            return None
        lambdas = []
        for v in values:
            made = gast.Lambda(args=node.elt.args, body=node.elt.body)
            made.args = gast.arguments(
                args=node.elt.args.args, posonlyargs=node.elt.args.posonlyargs,
                vararg=node.elt.args.vararg, kwonlyargs=node.elt.args.kwonlyargs,
                kw_defaults=node.elt.args.kw_defaults, kwarg=node.elt.args.kwarg,
                defaults=[gast.Constant(value=v, kind=None) if isinstance(d, gast.Name)
                          and d.id == gen.target.id else d for d in node.elt.args.defaults])
            lambdas.append(gast.copy_location(made, node.elt))
        return gast.copy_location(gast.List(elts=lambdas, ctx=gast.Load()), node)

    def stores_of(self, name: str) -> int:
        """How many times the function being lowered assigns `name`."""
        if self.store_counts is None:
            self.store_counts = {}
            for n in gast.walk(self.parsed.node):
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                    self.store_counts[n.id] = self.store_counts.get(n.id, 0) + 1
        return self.store_counts.get(name, 0)

    def known_ref(self, node) -> ir.Ref | None:
        """The Ref `node` reads when it is a name or attribute whose value is known when the
        source is read (a global, a closure cell, a known parameter), else None."""
        if not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        if isinstance(node, gast.Name) and node.id in self.locals and node.id not in self.known:
            return None
        scratch: list = []
        try:
            atom = self.expr(node, scratch)
        except UnsupportedSyntaxError:
            return None
        return atom if not scratch and isinstance(atom, ir.Ref) else None

    def constant_functions(self, node) -> tuple | list | None:
        """The value of `node` when it is known when the source is read (known_ref) and
        holds a tuple or list of function values, else None."""
        ref = self.known_ref(node)
        value = ref.value if ref is not None else None
        if not (isinstance(value, (tuple, list)) and value):
            return None
        return value if any(specialise.is_function_value(v) or isinstance(v, PartialCall)
                            for v in value) else None

    def unrolled_over_keys(self, node, out) -> bool:
        """`for name in ["scale", "sin"]: y = acts[name](y)` with `acts` a dict of function
        values known when the source is read, or a loop over constants whose body has a
        `try` reading the loop variable: the loop unrolled, `name` a constant in each copy,
        so each call is of a known function and each try is decided when the source is
        read. False (nothing emitted) otherwise."""
        if not (isinstance(node.iter, (gast.List, gast.Tuple)) and 0 < len(node.iter.elts) <= 64
                and isinstance(node.target, gast.Name) and all(
                    isinstance(e, gast.Constant) and isinstance(e.value, (str, int))
                    for e in node.iter.elts)):
            return False
        name = node.target.id
        indexes_known = any(
            isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name)
            and n.slice.id == name and isinstance(n.value, gast.Name)
            and isinstance(self.known.get(n.value.id), dict) and any(
                specialise.is_function_value(v) or isinstance(v, PartialCall)
                for v in self.known[n.value.id].values())
            for stmt in node.body for n in gast.walk(stmt))
        decides_try = any(isinstance(n, gast.Try) and name in set().union(
            *(local_functions.read_names(b) for b in n.body))
            for stmt in node.body for n in gast.walk(stmt))
        if not (indexes_known or decides_try) or self.stores_of(name) != 1:
            return False
        saved = dict(self.known)
        for e in node.iter.elts:
            self.known[name] = e.value
            self.block(node.body, out)
        self.known = saved
        return True

    def builtin_iterator(self, node) -> str | None:
        """'enumerate' or 'zip' if `node` calls that builtin (as a loop reads it by index)."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            return None
        name = node.func.id
        if name not in ("enumerate", "zip") or name in self.locals:
            return None
        found, value = self.env.lookup(name)
        if not found or value is not getattr(builtins, name):
            return None
        if any(isinstance(a, gast.Starred) for a in node.args) or not node.args:
            return None
        if name == "zip" and node.keywords:
            return None
        if name == "enumerate" and (len(node.args) + len(node.keywords) > 2 or any(
                k.arg != "start" for k in node.keywords)):
            return None
        return name

    def sequence(self, node, out):
        """(length atom, element maker) of an iterable read by index: element(body, k)
        emits the reads of item k into `body` and returns an atom, or a list of them for the
        tuples enumerate and zip yield."""
        kind = self.builtin_iterator(node)
        if kind is None:  # (a dict is read by position as its keys are: helpers.iterated)
            visited = ir.Call(ir.Ref(helpers.iterated, "iterated"), (self.expr(node, out),))
            if isinstance(node, gast.Name):
                seq = ir.Var(self.fresh_local(f"{node.id}_seq"))
                self.locals.add(seq.name)
                self.emit(out, node, visited, seq.name)
            else:
                seq = self.emit(out, node, visited)
            length = self.emit(out, node, ir.Call(ir.Ref(len, "len"), (seq,)))
            return length, lambda body, k: self.emit(body, node, ir.Call(GETITEM, (seq, k)))
        parts = [self.sequence(a, out) for a in node.args[:1 if kind == "enumerate" else None]]
        lengths = tuple(p[0] for p in parts)
        length = lengths[0] if len(lengths) == 1 else self.emit(
            out, node, ir.Call(ir.Ref(min, "min"), lengths))
        if kind == "zip":
            return length, lambda body, k: [make(body, k) for _, make in parts]
        start_node = node.args[1] if len(node.args) > 1 else (
            node.keywords[0].value if node.keywords else None)
        start = self.expr(start_node, out) if start_node is not None else None

        def element(body, k):
            index = k if start is None else self.emit(body, node, ir.Call(
                ir.Ref(operator.add, "+"), (k, start)))
            return [index, parts[0][1](body, k)]
        return length, element

    def bind_element(self, target_node, element, body: list, node) -> None:
        """Assign an element made by `sequence` to a loop target, pairing tuple targets with
        the parts of a tuple element directly."""
        if isinstance(element, list):
            if isinstance(target_node, (gast.Tuple, gast.List)) and len(
                    target_node.elts) == len(element) and not any(
                    isinstance(e, gast.Starred) for e in target_node.elts):
                for t, e in zip(target_node.elts, element):
                    self.bind_element(t, e, body, node)
                return
            element = self.emit(body, node, ir.Tuple(tuple(
                self.tuple_of(e, body, node) for e in element)))
        made = [s for s in body if isinstance(s, ir.Assign) and isinstance(element, ir.Var)
                and s.targets == (element.name,)]
        if isinstance(target_node, gast.Name) and made and not any(
                element.name in ir.stmt_reads(s) for s in body):
            made[0].targets = (target_node.id,)  # `x = xs[k]` rather than `t7 = xs[k]; x = t7`
            return
        self.assign_to(target_node, element, body, node)

    def tuple_of(self, element, body: list, node) -> ir.Atom:
        if not isinstance(element, list):
            return element
        return self.emit(body, node, ir.Tuple(tuple(self.tuple_of(e, body, node)
                                                    for e in element)))

    def stmt_While(self, node, out):
        if self.else_after(node, out, self.stmt_While):
            return
        cond_body: list = []
        cond = self.expr(node.test, cond_body)
        body: list = []
        for s in node.body:
            self.stmt(s, body)
        out.append(ir.While(cond_body, cond, body, self.origin(node)))

    def stmt_Pass(self, node, out):
        return

    def stmt_Import(self, node, out):
        """`import a.b as c` inside the function: resolved now, like a global."""
        import importlib
        for alias in node.names:
            module = importlib.import_module(alias.name)
            if alias.asname:
                self.imported[alias.asname] = module
            else:
                self.imported[alias.name.split(".")[0]] = importlib.import_module(
                    alias.name.split(".")[0])

    def stmt_ImportFrom(self, node, out):
        """`from a import b` inside the function: resolved now, like a global."""
        import importlib
        if node.level:
            self.fail(node, "relative imports are not supported inside transformed functions")
        module = importlib.import_module(node.module)
        for alias in node.names:
            try:
                value = getattr(module, alias.name)
            except AttributeError:
                value = importlib.import_module(f"{node.module}.{alias.name}")
            self.imported[alias.asname or alias.name] = value

    def stmt_Assert(self, node, out):
        from redraft.compiler.core import helpers
        cond = self.expr(node.test, out)
        msg = self.expr(node.msg, out) if node.msg is not None else ir.Const("")
        out.append(ir.ExprStmt(ir.Call(ir.Ref(helpers.check, "check"), (cond, msg)),
                               self.origin(node)))

    def stmt_Raise(self, node, out):
        from redraft.compiler.core import helpers
        exc = self.expr(node.exc, out) if node.exc is not None else ir.Const(None)
        out.append(ir.ExprStmt(ir.Call(ir.Ref(helpers.raise_, "raise_"), (exc,)),
                               self.origin(node)))

    def stmt_Break(self, node, out):
        self.fail(node, "`break` is not supported yet: use a while loop with a flag")

    def stmt_Continue(self, node, out):
        self.fail(node, "`continue` is not supported yet: use an if around the rest")

    def stmt_FunctionDef(self, node, out):
        """A local function is lifted to Core; `@d def g` is then `g = d(g)`, decorators
        applied innermost first, as Python does (`@jax.checkpoint`, `@partial(vmap, ...)`)."""
        decorators = node.decorator_list
        self.local_functions[node.name] = lift(self, node, node.name, out)
        value = gast.Name(id=node.name, ctx=gast.Load(), annotation=None, type_comment=None)
        for decorator in reversed(decorators):
            value = gast.Call(func=decorator, args=[value], keywords=[])
        if decorators:
            target = gast.Name(id=node.name, ctx=gast.Store(), annotation=None,
                               type_comment=None)
            assign = gast.Assign(targets=[target], value=value, type_comment=None)
            self.stmt_Assign(gast.fix_missing_locations(gast.copy_location(assign, node)), out)

    # ---- expressions --------------------------------------------------------------------------
    def expr(self, node, out: list, target: str | None = None) -> ir.Atom:
        """Lower expression `node`; its value ends in an atom (or in `target` if given)."""
        value = self.expr_no_assign(node, out)
        if isinstance(value, (ir.Var, ir.Const)) and target is None:
            return value
        if isinstance(value, ir.Ref) and target is None:
            return value
        return self.emit(out, node, value, target)

    def expr_no_assign(self, node, out: list) -> ir.Expr:
        kind = type(node).__name__
        handler = getattr(self, f"expr_{kind}", None)
        if handler is None:
            self.fail(node, f"`{kind}` expressions are not supported in transformed functions")
        return handler(node, out)

    def name(self, node, where) -> ir.Atom:
        if node.id in self.imported:
            return _ref_or_const(self.imported[node.id], node.id)
        if node.id in self.local_functions:
            local = self.local_functions[node.id]
            return ir.Ref(local, node.id)
        if node.id in self.known:
            return _known_ref(self.known[node.id], node.id)
        if node.id in self.partials:
            return ir.Ref(self.partials[node.id], node.id)
        if node.id in self.locals:
            return ir.Var(node.id)
        found, value = self.env.lookup(node.id)
        if not found:
            if node.id == self.fn.__name__:
                return ir.Ref(self.fn, node.id)
            self.fail(where, f"name {node.id!r} is not defined")
        if isinstance(value, (int, float, bool, complex, str, type(None))):
            return ir.Const(value)
        return ir.Ref(value, node.id)

    def expr_Name(self, node, out):
        return self.name(node, node)

    def capturing_local(self, node) -> local_functions.LocalFunction | None:
        """The local function `node` names, where it captures values or has defaults (its
        value must carry them: a Closure), else None."""
        if isinstance(node, gast.Name) and node.id in self.local_functions and not (
                node.id in self.imported):
            local = self.local_functions[node.id]
            if local.captured or local.defaults:
                return local
        return None

    def known_closures(self, node):
        """The known sequence (or dict) of functions `node` names, where one of them
        captures values or has defaults, else None."""
        if isinstance(node, gast.Name) and node.id in self.known and node.id not in (
                self.imported) and node.id not in self.local_functions:
            value = self.known[node.id]
            return value if _holds_closures(value) else None
        return None

    def known_functions_value(self, items, node, out) -> ir.Expr:
        """A known sequence (or dict) of functions used as a value (`fs[i]`, i known only
        when it runs): rebuilt here, each local function that captures values made a
        Closure of them (function_value), so that calling an item passes what it captured."""
        from redraft.compiler.core import helpers

        def value(f) -> ir.Atom:
            return self.function_value(ir.Ref(f, getattr(f, "name", "f")), node, out)
        if isinstance(items, dict):
            keys = self.emit(out, node, ir.Tuple(tuple(ir.Const(k) for k in items)))
            values = self.emit(out, node, ir.Tuple(tuple(value(f) for f in items.values())))
            return ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (keys, values))
        display = ir.List if isinstance(items, list) else ir.Tuple
        return display(tuple(value(f) for f in items))

    def expr_NamedExpr(self, node, out):
        """`(m := f(x))`: assign m, and the expression's value is m's."""
        value = self.expr(node.value, out)
        self.assign_to(node.target, value, out, node)
        return self.name(node.target, node)

    def expr_Constant(self, node, out):
        return ir.Const(node.value)

    def expr_BinOp(self, node, out):
        fn, sym = BINOPS[type(node.op)]
        left, right = self.expr(node.left, out), self.expr(node.right, out)
        if isinstance(node.op, gast.Add) and (self.shows_sequence(node.left)
                                              or self.shows_sequence(node.right)):
            from redraft.compiler.core import helpers
            return ir.Call(ir.Ref(helpers.concat, "concat"), (left, right))
        if isinstance(node.op, gast.BitOr) and (self.shows_dict(node.left)
                                                or self.shows_dict(node.right)):
            from redraft.compiler.core import helpers
            return ir.Call(ir.Ref(helpers.merge_dicts, "merge_dicts"), (left, right))
        return ir.Call(ir.Ref(fn, sym), (left, right))

    def shows_dict(self, node, seen: frozenset = frozenset()) -> bool:
        """Whether the source shows `node` is a dict: a display, a comprehension, dict(...),
        a union of them, or a local the function only binds to such values. `a | b` of dicts
        is their union (merge_dicts, which the transforms follow item by item), not `|`."""
        if isinstance(node, (gast.Dict, gast.DictComp)):
            return True
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.BitOr):
            return self.shows_dict(node.left, seen) or self.shows_dict(node.right, seen)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "dict" and node.func.id not in self.locals:
            return True
        if not (isinstance(node, gast.Name) and node.id in self.locals) or node.id in seen:
            return False
        values = [n.value for n in gast.walk(self.parsed.node)
                  if isinstance(n, gast.Assign) and any(
                      isinstance(t, gast.Name) and t.id == node.id for t in n.targets)]
        return bool(values) and all(self.shows_dict(v, seen | {node.id}) for v in values)

    def shows_sequence(self, node, seen: frozenset = frozenset()) -> bool:
        """Whether the source shows `node` is a list or tuple: a display, a comprehension,
        a slice of one, a sum of them, list(...)/tuple(...), or a local the function only
        binds to such values (`pieces = [x]` ... `pieces + [y]`)."""
        if isinstance(node, (gast.List, gast.Tuple, gast.ListComp)):
            return True
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
            return self.shows_sequence(node.value, seen)
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
            return (self.shows_sequence(node.left, seen)
                    or self.shows_sequence(node.right, seen))
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in ("list", "tuple") and node.func.id not in self.locals:
            return True
        if not (isinstance(node, gast.Name) and node.id in self.locals) or node.id in seen:
            return False
        root = self.parsed.node
        body = root.body if isinstance(root.body, list) else [root.body]
        values = [n.value for stmt in body for n in gast.walk(stmt)
                  if isinstance(n, gast.Assign) and any(
                      isinstance(t, gast.Name) and t.id == node.id for t in n.targets)]
        inner = seen | {node.id}
        return bool(values) and all(
            isinstance(v, (gast.List, gast.Tuple, gast.ListComp)) or (
                isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add)
                and (self.shows_sequence(v.left, inner) or self.shows_sequence(v.right, inner)))
            for v in values)

    def expr_UnaryOp(self, node, out):
        fn, sym = UNARYOPS[type(node.op)]
        operand = self.expr(node.operand, out)
        if isinstance(operand, ir.Const) and sym == "unary neg" and isinstance(
                operand.value, (int, float, complex)):
            return ir.Const(-operand.value)
        return ir.Call(ir.Ref(fn, sym), (operand,))

    def expr_Compare(self, node, out):
        left = self.expr(node.left, out)
        if len(node.ops) == 1:
            fn, sym = CMPOPS[type(node.ops[0])]
            return ir.Call(ir.Ref(fn, sym), (left, self.expr(node.comparators[0], out)))
        # a < b < c: evaluate pairwise, short-circuit through `and`
        result = self.fresh()
        self.locals.add(result)
        self._chain(node, left, list(zip(node.ops, node.comparators)), out, result)
        return ir.Var(result)

    def _chain(self, node, left, rest, out, result):
        op, comp = rest[0]
        fn, sym = CMPOPS[type(op)]
        right = self.expr(comp, out)
        self.emit(out, node, ir.Call(ir.Ref(fn, sym), (left, right)), result)
        if len(rest) > 1:
            then: list = []
            self._chain(node, right, rest[1:], then, result)
            out.append(ir.If(ir.Var(result), then, [], self.origin(node)))

    def expr_BoolOp(self, node, out):
        """`a and b`: b is evaluated only if a is truthy (Python's short circuit kept)."""
        result = self.fresh()
        self.locals.add(result)
        self._boolop(node, list(node.values), out, result, isinstance(node.op, gast.And))
        return ir.Var(result)

    def _boolop(self, node, values, out, result, is_and):
        self.expr(values[0], out, target=result)
        if len(values) == 1:
            return
        rest: list = []
        self._boolop(node, values[1:], rest, result, is_and)
        if is_and:
            out.append(ir.If(ir.Var(result), rest, [], self.origin(node)))
        else:
            out.append(ir.If(ir.Var(result), [], rest, self.origin(node)))

    def expr_IfExp(self, node, out):
        result = self.fresh()
        self.locals.add(result)
        cond = self.expr(node.test, out)
        then, orelse = [], []
        self.expr(node.body, then, target=result)
        self.expr(node.orelse, orelse, target=result)
        out.append(ir.If(cond, then, orelse, self.origin(node)))
        return ir.Var(result)

    def expr_Tuple(self, node, out):
        if any(isinstance(e, gast.Starred) for e in node.elts):
            return self.display_with_spreads(node, out, ir.Tuple, tuple)
        return ir.Tuple(tuple(self.item_value(e, out) for e in node.elts))

    def expr_List(self, node, out):
        if any(isinstance(e, gast.Starred) for e in node.elts):
            return self.display_with_spreads(node, out, ir.List, list)
        return ir.List(tuple(self.item_value(e, out) for e in node.elts))

    def item_value(self, node, out) -> ir.Atom:
        """An item stored in a container (a display, `ys.append(f)`, `d[k] = f`): a local
        function that captures values or has defaults, or a partial, made a value there
        (function_value), so that calling it from the container passes what it captured."""
        return self.function_value(self.expr(node, out), node, out)

    def display_with_spreads(self, node, out, display, kind) -> ir.Atom:
        """`(a, *rest, b)`: the runs of plain items as displays, each spread sequence made a
        tuple (or list), joined left to right with concat (a sequence operation the
        transforms follow item by item)."""
        from redraft.compiler.core import helpers
        pieces: list[ir.Atom] = []
        run: list[ir.Atom] = []
        for e in node.elts:
            if not isinstance(e, gast.Starred):
                run.append(self.item_value(e, out))
                continue
            if run:
                pieces.append(self.emit(out, node, display(tuple(run))))
                run = []
            spread = self.expr(e.value, out)
            pieces.append(self.emit(out, node, ir.Call(ir.Ref(kind, kind.__name__), (spread,))))
        if run:
            pieces.append(self.emit(out, node, display(tuple(run))))
        joined = pieces[0]
        for piece in pieces[1:]:
            joined = self.emit(out, node, ir.Call(ir.Ref(helpers.concat, "concat"),
                                                  (joined, piece)))
        return joined

    def expr_Dict(self, node, out):
        """`{k: v, ...}`; with spreads, `{**d, k: v, **e}` is the merge of its displays and
        spread dicts, left to right (later keys win, as in Python)."""
        from redraft.compiler.core import helpers
        pieces: list[ir.Atom] = []
        run: list = []

        def display() -> ir.Atom:
            keys = tuple(self.expr(k, out) for k, _ in run)
            values = tuple(self.item_value(v, out) for _, v in run)
            k_atom = self.emit(out, node, ir.Tuple(keys))
            v_atom = self.emit(out, node, ir.Tuple(values))
            return ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (k_atom, v_atom))

        for k, v in zip(node.keys, node.values):
            if k is not None:
                run.append((k, v))
                continue
            if run:
                pieces.append(self.emit(out, node, display()))
                run = []
            pieces.append(self.expr(v, out))
        if not pieces:
            return display()
        if run:
            pieces.append(self.emit(out, node, display()))
        joined = pieces[0]  # `{**d}` alone is d: Core never mutates a dict in place
        for piece in pieces[1:]:
            joined = self.emit(out, node, ir.Call(ir.Ref(helpers.merge_dicts, "merge_dicts"),
                                                  (joined, piece)))
        return joined

    def expr_Attribute(self, node, out):
        base = self.expr(node.value, out)
        if isinstance(base, ir.Ref):
            try:
                value = getattr(base.value, node.attr)
            except AttributeError:
                self.fail(node, f"{base.path} has no attribute {node.attr!r}")
            if isinstance(value, (int, float, bool, complex, str, type(None))):
                return ir.Const(value)
            root = base.root if base.root is not None else base.value
            return ir.Ref(value, f"{base.path}.{node.attr}", root)
        return methods.lower_attribute(base, node.attr)

    def expr_Subscript(self, node, out):
        base = self.expr(node.value, out)
        index = self.index(node.slice, out)
        if (isinstance(base, ir.Ref) and isinstance(base.value, KnownTuple)
                and isinstance(index, ir.Const) and isinstance(index.value, int)):
            return base.value.items[index.value]
        if (isinstance(base, ir.Ref) and isinstance(index, ir.Const)
                and isinstance(base.value, (list, tuple, dict))):
            item = _known_item(base.value, index.value)
            if item is not None:  # `activations[2]`: a function chosen when read
                return ir.Ref(item, f"{base.path.replace('.', '_')}_{_key_name(index.value)}")
        if isinstance(base, ir.Ref) and _holds_closures(base.value):  # `layers[i]`, i a value
            base = self.emit(out, node, self.known_functions_value(base.value, node, out))
        return ir.Call(GETITEM, (base, index))

    def index(self, node, out) -> ir.Atom:
        """An index: a constant (ints, slices, None, ...) when static, else an atom."""
        if isinstance(node, gast.Tuple):
            items = [self.index_item(e, out) for e in node.elts]
            if all(isinstance(i, ir.Const) for i in items):
                return ir.Const(tuple(i.value for i in items))
            return self.emit(out, node, ir.Tuple(tuple(items)))
        return self.index_item(node, out)

    def index_item(self, node, out) -> ir.Atom:
        if isinstance(node, gast.Slice):
            parts = [self.expr(p, out) if p is not None else ir.Const(None)
                     for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, ir.Const) for p in parts):
                return ir.Const(slice(*(p.value for p in parts)))
            return self.emit(out, node, ir.Call(ir.Ref(slice, "slice"), tuple(parts)))
        if isinstance(node, gast.Constant) and node.value is Ellipsis:
            return ir.Const(Ellipsis)
        return self.expr(node, out)

    def expr_Call(self, node, out):
        lowered = self.control_flow(node, out)
        if lowered is not None:
            return lowered
        iteration = self.iteration_builtin(node)
        if iteration is not None:
            return self.expr_no_assign(iteration, out)
        if self.calls_reversed(node):  # what it visits, backwards (a sequence, not an iterator)
            visited = self.emit(out, node, ir.Call(ir.Ref(helpers.iterated, "iterated"),
                                                   (self.expr(node.args[0], out),)))
            return ir.Call(GETITEM, (visited, ir.Const(slice(None, None, -1))))
        mutated = self._mutated_local(node)
        if mutated is not None and node.func.attr in ("pop", "setdefault"):
            # `f(ys.pop())`: the item, read into a local as `v = ys.pop()` reads it (ys is
            # rebound to what it leaves), never a list changed in place under a transform
            item = self.fresh_local("popped")
            self.locals.add(item)
            self.stmt_Assign(gast.copy_location(gast.Assign(
                targets=[gast.Name(id=item, ctx=gast.Store(), annotation=None,
                                   type_comment=None)], value=node, type_comment=None), node),
                out)
            return ir.Var(item)
        inlined = self.inline_transform(node, out)
        if inlined is not None:
            return inlined
        at_update = methods.match_at_update(node)
        if at_update is not None:
            base_node, idx_node, mode, value_node = at_update
            base = self.expr(base_node, out)
            idx = self.index(idx_node, out)
            value = None if value_node is None else self.expr(value_node, out)
            return methods.at_update_call(base, idx, mode, value,
                                          self.call_keywords(node, out))
        args, star = self.call_args(node, out)
        kwargs = self.call_keywords(node, out)
        if isinstance(node.func, gast.Attribute):
            receiver = self.expr(node.func.value, out)
            if not isinstance(receiver, ir.Ref):
                if node.func.attr in methods.VARARG_SHAPE_METHODS and len(args) > 1 and not all(
                        isinstance(a, ir.Const) for a in args):
                    args = [self.emit(out, node, ir.Tuple(tuple(args)))]
                return methods.lower_method_call(receiver, node.func.attr, tuple(args),
                                                 tuple(kwargs), star)
            fn = self.expr_Attribute(node.func, out)
        else:
            fn = self.expr(node.func, out)
        return self.call_value(node, fn, args, kwargs, star, out)

    def calls_reversed(self, node) -> bool:
        """Whether `node` is the builtin `reversed(xs)` with one positional argument."""
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], gast.Starred):
            return False
        fn = self.known_ref(node.func)
        return fn is not None and fn.value is reversed

    def iteration_builtin(self, node):
        """`map(f, xs, ...)`, `filter(f, xs)`, `itertools.chain(a, b, ...)` and
        `itertools.chain.from_iterable(xss)` as the list comprehensions they stand for (gast,
        lowered as any other), so that the transforms follow each item; else None."""
        import itertools
        if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
            return None
        fn = self.known_ref(node.func)
        fn = fn.value if fn is not None else None
        args = list(node.args)

        def name(base, store=False):
            n = self.fresh_local(base)
            self.locals.add(n)
            return gast.Name(id=n, ctx=gast.Store() if store else gast.Load(),
                             annotation=None, type_comment=None)

        def gen(target, iterable, ifs=()):
            return gast.comprehension(target=target, iter=iterable, ifs=list(ifs), is_async=0)

        if fn is map and len(args) >= 2:
            items = [name("item") for _ in args[1:]]
            if len(items) == 1:
                target, iterable = gast.Name(id=items[0].id, ctx=gast.Store(), annotation=None,
                                             type_comment=None), args[1]
            else:
                target = gast.Tuple(elts=[gast.Name(id=i.id, ctx=gast.Store(), annotation=None,
                                                    type_comment=None) for i in items],
                                    ctx=gast.Store())
                iterable = gast.Call(func=gast.Name(id="zip", ctx=gast.Load(), annotation=None,
                                                    type_comment=None),
                                     args=args[1:], keywords=[])
            made = gast.ListComp(elt=gast.Call(func=args[0], args=items, keywords=[]),
                                 generators=[gen(target, iterable)])
        elif fn is filter and len(args) == 2:
            item = name("item")
            store = gast.Name(id=item.id, ctx=gast.Store(), annotation=None, type_comment=None)
            test = item if (isinstance(args[0], gast.Constant) and args[0].value is None) \
                else gast.Call(func=args[0], args=[item], keywords=[])
            made = gast.ListComp(elt=item, generators=[gen(store, args[1], [test])])
        elif fn is itertools.chain or fn == itertools.chain.from_iterable:
            group, item = name("group"), name("item")
            groups = gast.Tuple(elts=args, ctx=gast.Load()) if fn is itertools.chain else (
                args[0] if len(args) == 1 else None)
            if groups is None:
                return None
            made = gast.ListComp(elt=item, generators=[
                gen(gast.Name(id=group.id, ctx=gast.Store(), annotation=None,
                              type_comment=None), groups),
                gen(gast.Name(id=item.id, ctx=gast.Store(), annotation=None,
                              type_comment=None), group)])
        else:
            return None
        for n in gast.walk(made):
            if getattr(n, "lineno", None) is None and "lineno" in getattr(n, "_attributes", ()):
                gast.copy_location(n, node)
        return made

    def call_value(self, node, fn: ir.Atom, args: list, kwargs: list, star, out) -> ir.Expr:
        """The call of function atom `fn` (a known function, a partial, a local function,
        an object with `__call__`, or a value known when the code runs) with these atoms."""
        if isinstance(fn, ir.Const):
            self.fail(node, f"{fn.value!r} is not callable")
        if isinstance(fn, ir.Ref) and isinstance(fn.value, PartialCall) and star is None:
            held = fn.value  # a call of partial(f, a)(b) is the call f(a, b)
            fn, args = held.fn, list(held.args) + list(args)
            kwargs = list(held.kwargs) + [kv for kv in kwargs
                                          if kv[0] not in dict(held.kwargs)]
            if isinstance(fn, ir.Var) and fn.name not in self.called_types:
                return ir.Call(fn, tuple(args), tuple(kwargs))
        if isinstance(fn, ir.Var) and fn.name in self.called_types:
            cls = self.called_types[fn.name]  # `model(x)`: the class's __call__, self = model
            fn, args = ir.Ref(cls.__call__, f"{cls.__name__}_call"), [fn] + list(args)
        if (isinstance(fn, ir.Ref) and fn.value is zip and star is not None and not args
                and not kwargs):  # `zip(*pairs)`: a transpose the transforms follow
            return ir.Call(ir.Ref(helpers.zip_spread, "zip_spread"), (star,))
        if isinstance(fn, ir.Ref) and star is None and helpers.is_namedtuple_class(fn.value):
            return self.namedtuple_call(node, fn, args, kwargs, out)
        if isinstance(fn, ir.Ref) and star is None and helpers.is_pytree_class(fn.value):
            items = self.emit(out, node, ir.Tuple(tuple(
                self.function_value(a, node, out) for a in list(args) + [a for _, a in kwargs])))
            names = ir.Const(tuple(k for k, _ in kwargs))
            return ir.Call(ir.Ref(helpers.make_object, "make_object"), (fn, items, names))
        if isinstance(fn, ir.Ref) and _callable_object(fn.value):
            # `net(params, x)` with net an object of the user's class: its __call__, bound
            fn = ir.Ref(fn.value.__call__, f"{fn.path}.__call__", fn.root)
        chained = self.einsum_chain(node, fn, args, kwargs, star, out)
        if chained is not None:
            return chained
        if isinstance(fn, ir.Ref) and fn.value is functools.partial and star is None and args:
            return ir.Ref(PartialCall(args[0], tuple(args[1:]), tuple(kwargs)), "partial")
        closed = self.transform_of_closure(node, fn, args, kwargs, star)
        if closed is not None:
            return closed
        if isinstance(fn, ir.Ref) and isinstance(fn.value, local_functions.LocalFunction):
            local = fn.value
            if star is not None and isinstance(local, local_functions.GatheringLocal):
                self.fail(node, f"{local.name}(*...) spreads a value whose length is not known "
                                f"when the source is read, and {local.name} has *args, "
                                "**kwargs or keyword-only parameters: pass its arguments "
                                "one by one")
            needed = len(local.params) - len(args) - len(kwargs)
            if star is not None and local.params and not local.defaults and needed >= 0:
                # `f(a, *xs)` of a local function of known arity: its items one by one
                args = list(args) + [self.emit(out, node, ir.Call(GETITEM, (star, ir.Const(k))))
                                     for k in range(needed)]
                star = None
            if star is not None:  # bound when it runs: a call through the function's value
                value = (local_functions.closure_call(local) if local.captured
                         else ir.Ref(local.function, local.name))
                return ir.Call(self.emit(out, node, value), tuple(args), tuple(kwargs), star)
            if isinstance(local, local_functions.ThreadingLocal):
                return self.threading_call(node, local, args, kwargs, star, out)
            try:
                if isinstance(local, local_functions.GatheringLocal):
                    function, atoms = local.bind(tuple(args), tuple(kwargs))
                    return ir.Call(ir.Ref(function, local.name), atoms)
                atoms = local_functions.call_atoms(local, tuple(args), tuple(kwargs))
            except TypeError as e:
                self.fail(node, str(e), BadCallError)
            return ir.Call(ir.Ref(local.function, local.name), atoms)
        if isinstance(fn, ir.Ref) and star is None and _user_function_that_gathers(
                fn.value, [k for k, _ in kwargs], len(args)):
            args = [self.function_value(a, node, out) for a in args]
            kwargs = [(k, self.function_value(a, node, out)) for k, a in kwargs]
            return self.shaped_call(node, fn, args, kwargs)
        args = [self.function_value(a, node, out) for a in args]
        kwargs = [(k, self.function_value(a, node, out)) for k, a in kwargs]
        return ir.Call(fn, tuple(args), tuple(kwargs), star)

    def threading_call(self, node, local, args: list, kwargs: list, star, out) -> ir.Var:
        """`add(v)` of a local function assigning names of this one: `t, total = add(v,
        total)`. Where a name it assigns is one this (local) function captured, this one
        assigns it too, and returns it to its own caller in turn."""
        if star is not None:
            self.fail(node, f"{local.name}(*...) spreads a value whose length is not known "
                            f"when the source is read, and {local.name} assigns "
                            f"{', '.join(local.threads)} of the function enclosing it: pass "
                            "its arguments one by one")
        try:
            atoms = local_functions.call_atoms(local, tuple(args), tuple(kwargs))
        except TypeError as e:
            self.fail(node, str(e), BadCallError)
        for name in local.threads:
            if name in self.captured_names and name not in self.threads:
                self.threads.append(name)
        result = self.fresh()
        out.append(ir.Assign((result,) + local.threads, ir.Call(
            ir.Ref(local.threading_function, local.name), atoms), self.origin(node)))
        return ir.Var(result)

    def assigned_once(self, name: str) -> bool:
        node = self.parsed.node
        body = node.body if isinstance(node.body, list) else [node.body]
        count = sum(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
                    for stmt in body for n in gast.walk(stmt))
        return count == 1

    def function_value(self, a: ir.Atom, node, out) -> ir.Atom:
        """Argument `a`, a local function that captures values made a value (a Closure
        of its captured values) for the callee; any other atom as it is."""
        if isinstance(a, ir.Ref) and isinstance(a.value, (PartialCall, KnownTuple)):
            return self.emit(out, node, a)
        if isinstance(a, ir.Ref) and isinstance(a.value, local_functions.ThreadingLocal):
            self.refuse_escape(node, a.value)
        if (isinstance(a, ir.Ref) and isinstance(a.value, local_functions.LocalFunction)
                and (a.value.captured or a.value.defaults)):
            return self.emit(out, node, local_functions.value_call(a.value))
        if isinstance(a, ir.Ref) and _holds_closures(a.value):  # `helper(layers)`
            return self.emit(out, node, self.known_functions_value(a.value, node, out))
        return a

    def inline_transform(self, node, out) -> ir.Expr | None:
        """`jvp(f, (x,), (v,))` and `vjp(f, x)` on a known function f (module level, or a
        local function with its captured values held constant), read as calls of f's
        derivative: the first is `f_jvp(x, v)` -> (out, out_dot); the second is
        (f(x), partial(f_bwd, x)), whose vjp_fun call is `f_bwd(x, ct)`. So transforms of
        the enclosing function see derivative code, never redraft's own Python."""
        from redraft.compiler.transforms.calls import callees
        if node.keywords or any(isinstance(a, gast.Starred) for a in node.args) or not (
                isinstance(node.func, (gast.Name, gast.Attribute)) and len(node.args) >= 2):
            return None
        scratch: list = []
        try:
            fn = self.expr(node.func, scratch)
        except UnsupportedSyntaxError:
            return None
        kind = static_calls.INLINE_TRANSFORMS.get(fn.value) if (
            isinstance(fn, ir.Ref) and not scratch) else None
        if kind is None:
            return None
        if kind == "jvp" and not (len(node.args) == 3 and all(
                isinstance(a, (gast.Tuple, gast.List)) and not any(
                    isinstance(e, gast.Starred) for e in a.elts) for a in node.args[1:])
                and len(node.args[1].elts) == len(node.args[2].elts)):
            return None
        f = self.constructed_now(node.args[0], out)
        if not isinstance(f, ir.Ref) or isinstance(f.value, (PartialCall, KnownTuple)):
            return None
        target, extra = f.value, ()
        if isinstance(target, local_functions.ThreadingLocal):
            self.refuse_escape(node, target)
        if isinstance(target, local_functions.LocalFunction):
            target, extra = target.function, tuple(ir.Var(n) for n in target.captured)
        elif not specialise.is_function_value(target) or specialise.needs_specialising(target):
            return None  # (*args, **kwargs: specialised on the call's shape when it runs)
        if kind == "jvp":
            primals = tuple(self.expr(e, out) for e in node.args[1].elts)
            tangents = tuple(self.expr(e, out) for e in node.args[2].elts)
            mask = (True,) * len(primals) + (False,) * len(extra)
            made = callees.jvp_of(target, mask)
            return ir.Call(ir.Ref(made, f"{f.path.replace('.', '_')}_jvp"),
                           primals + extra + tangents)
        primals = tuple(self.expr(a, out) for a in node.args[1:])
        value = self.emit(out, node, ir.Call(ir.Ref(target, f.path), primals + extra))
        mask = (True,) * len(primals) + (False,) * len(extra)
        bwd = callees.vjp_of(target, mask, "bwd", single=False)
        vjp_fun = PartialCall(ir.Ref(bwd, f"{f.path.replace('.', '_')}_bwd"), primals + extra,
                              ())
        return ir.Ref(KnownTuple((value, ir.Ref(vjp_fun, "vjp_fun"))), "vjp_pair")

    def einsum_chain(self, node, fn, args, kwargs, star, out) -> ir.Atom | None:
        """jnp.einsum of three or more operands, with subscripts read here, as a chain of
        two-operand einsums (redraft.numpy.einsum.pairwise), whose rules the transforms
        have; None where the call is not of that form."""
        import redraft.numpy as jnp
        from redraft.numpy.einsum import pairwise
        if not (isinstance(fn, ir.Ref) and fn.value is jnp.einsum and star is None
                and len(args) > 3 and isinstance(args[0], ir.Const)
                and isinstance(args[0].value, str)):
            return None
        chain = pairwise(args[0].value, len(args) - 1)
        if chain is None:
            return None
        acc = args[1]
        for subscripts, k in chain:
            acc = self.emit(out, node, ir.Call(fn, (ir.Const(subscripts), acc, args[k + 1]),
                                               tuple(kwargs)))
        return acc

    def constructed_now(self, node, out) -> ir.Atom:
        """Expression `node` lowered; where it calls transforms (grad, vmap, jit...) of a
        known function with constant arguments, the function they make, made now
        (static_calls), so that `jvp(jit(grad(f)), (x,), (v,))` reads as the derivative of
        a known function, not of a function value (which vmap cannot batch)."""
        made = self.made_now(node)
        return made if made is not None else self.expr(node, out)

    def made_now(self, node) -> ir.Ref | None:
        """The function a call of a static constructor on constants makes, or None."""
        if not isinstance(node, gast.Call) or any(isinstance(a, gast.Starred)
                                                  for a in node.args) or any(
                k.arg is None for k in node.keywords):
            return None
        fn = self.known_ref(node.func)
        if fn is None or fn.value not in static_calls.STATIC_CONSTRUCTORS:
            return None
        try:
            args = [self.static_argument(a) for a in node.args]
            kwargs = {k.arg: self.static_argument(k.value) for k in node.keywords}
        except KeyError:  # a value known only when the code runs, or a capturing closure
            return None
        made = fn.value(*args, **kwargs)
        return ir.Ref(made, f"{fn.path.replace('.', '_')}_made")

    def static_argument(self, node):
        """The value of a constructor's argument known when the source is read (KeyError
        where it is not)."""
        made = self.made_now(node)
        if made is not None:
            return made.value
        if _is_literal(node):
            return gast.literal_eval(node)
        scratch: list = []
        atom = self.expr(node, scratch)
        if scratch or not isinstance(atom, (ir.Ref, ir.Const)):
            raise KeyError(node)
        return static_calls.constant_value(atom)

    def transform_of_closure(self, node, fn, args, kwargs, star) -> ir.Ref | None:
        """`vmap(g, ...)`, `grad(g, ...)`, `jit(g)` ... of a local function `g` that captures
        locals, with constant other arguments: made now (static_calls.construct_closure) as
        a local function capturing the same values, so that calling it passes them."""
        if (isinstance(fn, ir.Ref) and fn.value in static_calls.STATIC_CONSTRUCTORS and args
                and isinstance(args[0], ir.Ref)
                and isinstance(args[0].value, local_functions.ThreadingLocal)):
            self.refuse_escape(node, args[0].value)
        if not (isinstance(fn, ir.Ref) and fn.value in static_calls.STATIC_CONSTRUCTORS
                and star is None and args and isinstance(args[0], ir.Ref)
                and isinstance(args[0].value, local_functions.LocalFunction)
                and args[0].value.captured):
            return None
        nodes = list(node.args[1:]) + [k.value for k in node.keywords]
        rest = list(args[1:]) + [a for _, a in kwargs]
        if len(nodes) != len(rest):
            return None
        values = []
        for a, n in zip(rest, nodes):
            if isinstance(a, ir.Const) or (isinstance(a, ir.Ref) and not isinstance(
                    a.value, local_functions.LocalFunction)):
                values.append(a.value)
            elif _is_literal(n):  # argnums=(0, 1): a tuple of constants, emitted as a Var
                values.append(gast.literal_eval(n))
            else:
                return None
        positional = len(args) - 1
        local = static_calls.construct_closure(
            fn.value, args[0].value, tuple(values[:positional]),
            {k: v for (k, _), v in zip(kwargs, values[positional:])})
        name = self.fresh_local(local.name)
        self.local_functions[name] = local
        return ir.Ref(local, name)

    def call_args(self, node, out) -> tuple[list[ir.Atom], ir.Atom | None]:
        """(positional atoms, spread atom or None) of a call. `f(*xs)` spreads the atoms of
        a tuple known here (a literal, or the function's own *args); any other spread
        becomes one tuple, built at run time, that the call spreads."""
        pieces: list = []  # lists of atoms, or atoms of sequences spread at run time
        for a in node.args:
            if not isinstance(a, gast.Starred):
                if pieces and isinstance(pieces[-1], list):
                    pieces[-1].append(self.expr(a, out))
                else:
                    pieces.append([self.expr(a, out)])
                continue
            items = self.known_items(a.value, out)
            if items is None:
                pieces.append(self.expr(a.value, out))
            elif pieces and isinstance(pieces[-1], list):
                pieces[-1].extend(items)
            else:
                pieces.append(list(items))
        if all(isinstance(p, list) for p in pieces):
            return [a for p in pieces for a in p], None
        if len(pieces) <= 2 and not isinstance(pieces[-1], list) and all(
                isinstance(p, list) for p in pieces[:-1]):
            return (pieces[0] if len(pieces) == 2 else []), pieces[-1]
        whole = None
        for p in pieces:
            part = self.emit(out, node, ir.Tuple(tuple(p)) if isinstance(p, list) else
                             ir.Call(ir.Ref(tuple, "tuple"), (p,)))
            whole = part if whole is None else self.emit(
                out, node, ir.Call(ir.Ref(operator.add, "+"), (whole, part)))
        return [], whole

    def known_items(self, node, out) -> tuple[ir.Atom, ...] | None:
        """The atoms of a sequence whose length is known when the source is read."""
        if isinstance(node, gast.Name) and node.id in self.known_tuples:
            return self.known_tuples[node.id]
        if isinstance(node, (gast.Tuple, gast.List)) and not any(
                isinstance(e, gast.Starred) for e in node.elts):
            return tuple(self.expr(e, out) for e in node.elts)
        return None

    def assign_keyword_dict(self, name: str, display, out: list, node) -> None:
        """`kw = {"activation": relu}`, never changed: the dict is built as usual, and its
        items are remembered (each value in a local of its own) so that `f(**kw)` passes
        them by name, as visible to the transforms as keywords written out."""
        from redraft.compiler.core import helpers
        items = {}
        for key, v in zip(display.keys, display.values):
            atom = self.expr(v, out)
            items[key.value] = self.emit(out, node, atom) if isinstance(atom, ir.Var) else atom
        keys = tuple(ir.Const(k) for k in items)
        self.emit(out, node, ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (
            self.emit(out, node, ir.Tuple(keys)),
            self.emit(out, node, ir.Tuple(tuple(items.values()))))), name)
        self.known_dicts[name] = items

    def fixed_dict_keys(self, node) -> list[str] | None:
        """The keys of a local the function binds once, to a dict display with string keys,
        and never changes in place (`kw = {"axis": 0}; f(x, **kw)`), else None."""
        if not (isinstance(node, gast.Name) and node.id in self.locals):
            return None
        root = self.parsed.node
        body = root.body if isinstance(root.body, list) else [root.body]
        bindings, changed = [], False
        for n in (n for stmt in body for n in gast.walk(stmt)):
            if isinstance(n, gast.Name) and n.id == node.id and isinstance(
                    n.ctx, (gast.Store, gast.Del)):
                bindings.append(n)
            elif isinstance(n, gast.Assign) and any(
                    isinstance(t, gast.Name) and t.id == node.id for t in n.targets):
                bindings.append(n.value)
            elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                    n.value, gast.Name) and n.value.id == node.id and not isinstance(
                    n.ctx, gast.Load):
                changed = True
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(
                    n.func.value, gast.Name) and n.func.value.id == node.id and \
                    n.func.attr in MUTATING_METHODS:
                changed = True
        displays = [b for b in bindings if isinstance(b, gast.Dict)]
        # one Assign gives two entries: the target Name and the value display
        if changed or len(displays) != 1 or len(bindings) != 2:
            return None
        keys = displays[0].keys
        if not all(isinstance(key, gast.Constant) and isinstance(key.value, str)
                   for key in keys):
            return None
        return [key.value for key in keys]

    def constant_dict(self, node) -> dict | None:
        """The value of `node` when it is known when the source is read (known_ref) and
        holds a dict with string keys, else None."""
        ref = self.known_ref(node)
        value = ref.value if ref is not None else None
        if not isinstance(value, dict):
            return None
        return value if all(isinstance(k, str) for k in value) else None

    def call_keywords(self, node, out) -> list[tuple[str, ir.Atom]]:
        """A call's keyword atoms; `**d` spreads a dict whose keys are known here (a
        literal with string keys, the function's own **kwargs, or a dict constant)."""
        kwargs: list[tuple[str, ir.Atom]] = []
        for k in node.keywords:
            if k.arg is not None:
                kwargs.append((k.arg, self.expr(k.value, out)))
            elif isinstance(k.value, gast.Name) and k.value.id in self.known_dicts:
                kwargs.extend(self.known_dicts[k.value.id].items())
            elif isinstance(k.value, gast.Dict) and all(
                    isinstance(key, gast.Constant) and isinstance(key.value, str)
                    for key in k.value.keys):
                kwargs.extend((key.value, self.expr(v, out))
                              for key, v in zip(k.value.keys, k.value.values))
            elif (known := self.constant_dict(k.value)) is not None:
                kwargs.extend((key, _ref_or_const(v, f"{_key_name(key)}_value"))
                              for key, v in known.items())
            else:
                self.fail(node, "`**` spreading in a call needs a dict whose keys are known "
                                "when the function is read (a literal, or the function's own "
                                "**kwargs); pass the keywords by name")
        names = [k for k, _ in kwargs]
        repeated = sorted({k for k in names if names.count(k) > 1})
        if repeated:
            self.fail(node, f"keyword argument {repeated[0]!r} is given more than once")
        return kwargs

    def namedtuple_call(self, node, cls: ir.Ref, args: list, kwargs: list, out) -> ir.Call:
        """`State(h, c=c)` of a NamedTuple class: its fields in order (keywords placed,
        the rest their defaults) as one tuple, made into the class by a helper whose rules
        pass each field's derivative to its item."""
        fields = cls.value._fields
        defaults = getattr(cls.value, "_field_defaults", {})
        if len(args) > len(fields):
            self.fail(node, f"{cls.path} takes {len(fields)} fields, got {len(args)}")
        slots = dict(zip(fields, args))
        for key, atom in kwargs:
            if key not in fields or key in slots:
                self.fail(node, f"{cls.path}() got an unexpected or repeated field {key!r}")
            slots[key] = atom
        for name in fields:
            if name not in slots:
                if name not in defaults:
                    self.fail(node, f"{cls.path}() is missing its field {name!r}")
                slots[name] = _ref_or_const(defaults[name], f"{name}_default")
        items = self.emit(out, node, ir.Tuple(tuple(self.function_value(slots[n], node, out)
                                                    for n in fields)))
        return ir.Call(ir.Ref(helpers.make_namedtuple, "make_namedtuple"), (cls, items))

    def shaped_call(self, node, fn: ir.Ref, args: list, kwargs: list) -> ir.Call:
        """A call of a function with *args, **kwargs or keyword-only parameters: a call of
        its specialisation on this call's shape, every argument positional."""

        def default(name, value):
            return _ref_or_const(value, f"{name}_default")

        try:
            shape, flat = call_shape.bind(fn.value, list(args), dict(kwargs), default)
        except TypeError as e:
            self.fail(node, str(e), BadCallError)
        target = specialise.shaped(fn.value, shape)
        return ir.Call(ir.Ref(target, fn.path.split(".")[-1]), tuple(flat))

    def control_flow(self, node, out):
        """lax.fori_loop / while_loop / cond / switch / scan / map, lowered to Core."""
        func = node.func
        if not isinstance(func, (gast.Name, gast.Attribute)):
            return None
        scratch: list = []
        try:
            fn = self.expr(func, scratch)
        except UnsupportedSyntaxError:
            return None
        if scratch or not isinstance(fn, ir.Ref):
            return None
        lowering = control_flow.lowering_for(fn.value)
        return lowering(self, node, out) if lowering is not None else None

    def expr_JoinedStr(self, node, out):
        """f"a {x:.2f}" becomes "a {:.2f}".format(x)."""
        template, values = [], []
        for part in node.values:
            if isinstance(part, gast.Constant):
                template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            else:
                conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[part.conversion]
                spec = ""
                if part.format_spec is not None:
                    spec = ":" + "".join(str(v.value) for v in part.format_spec.values
                                         if isinstance(v, gast.Constant))
                template.append("{" + conv + spec + "}")
                values.append(self.expr(part.value, out))
        fmt = ir.Attr(ir.Const("".join(template)), "format")
        return ir.Call(fmt, tuple(values))

    def expr_ListComp(self, node, out):
        return self._comprehension(node, out, ir.Ref(list, "list"))

    def expr_GeneratorExp(self, node, out):
        return self._comprehension(node, out, ir.Ref(tuple, "tuple"))

    def _comprehension(self, node, out, finish: ir.Ref):
        acc = self.fresh()
        self.locals.add(acc)
        out.append(ir.Assign((acc,), ir.List(()), self.origin(node)))
        self._comp_level(node, list(node.generators), out, acc)
        if finish.value is list:
            return ir.Var(acc)
        return ir.Call(finish, (ir.Var(acc),))

    def expr_DictComp(self, node, out):
        """`{k: v for ...}`: the keys and values gathered as two lists in one loop, then
        made a dict (as a dict display is)."""
        from redraft.compiler.core import helpers
        keys, values = self.fresh(), self.fresh()
        self.locals |= {keys, values}
        for acc in (keys, values):
            out.append(ir.Assign((acc,), ir.List(()), self.origin(node)))
        self._comp_level(node, list(node.generators), out, (keys, values))
        key_tuple = self.emit(out, node, ir.Call(ir.Ref(tuple, "tuple"), (ir.Var(keys),)))
        value_tuple = self.emit(out, node, ir.Call(ir.Ref(tuple, "tuple"), (ir.Var(values),)))
        return ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (key_tuple, value_tuple))

    def _comp_level(self, node, generators, out, acc):
        from redraft.compiler.core import helpers
        if not generators:
            pairs = zip(acc, (node.key, node.value)) if isinstance(acc, tuple) else [
                (acc, node.elt)]
            for name, element in pairs:
                item = self.function_value(self.expr(element, out), node, out)
                self.emit(out, node, ir.Call(ir.Ref(helpers.append, "append"),
                                             (ir.Var(name), item)), name)
            return
        gen = generators[0]

        def level(body: list) -> None:
            inner = body
            for cond in gen.ifs:
                test = self.expr(cond, inner)
                nested: list = []
                inner.append(ir.If(test, nested, [], self.origin(node)))
                inner = nested
            self._comp_level(node, generators[1:], inner, acc)

        if self.unrolled_over_functions(gen.iter, gen.target, node, out, level):
            return
        target, iterable, body = self.loop_header(gen.iter, gen.target, node, out)
        level(body)
        out.append(ir.For(target, iterable, body, self.origin(node)))

    def expr_Set(self, node, out):
        """`{a, b}`: a set made of a tuple (of strings or numbers known when it runs, for
        membership tests; sets of arrays are unhashable in JAX too)."""
        items = self.emit(out, node, ir.Tuple(tuple(self.expr(e, out) for e in node.elts)))
        return ir.Call(ir.Ref(set, "set"), (items,))

    def expr_Lambda(self, node, out):
        name = self.fresh_local("lambda_")
        local = lift(self, node, name, out)
        self.local_functions[name] = local
        return ir.Ref(local, name)

    def expr_Starred(self, node, out):
        self.fail(node, "starred expressions are only supported as call arguments")


def _callable_object(value) -> bool:
    """An instance of a user's class with a Python `__call__` (not a function, a class, a
    transformed or redraft object): calling it calls that method, whose source is read."""
    call = getattr(type(value), "__call__", None)
    module = getattr(type(value), "__module__", "") or ""
    # a library class may declare its __call__ plain array code, read as a user's
    # (redraft.scipy.interpolate.RegularGridInterpolator)
    library = module.startswith("redraft") and not getattr(type(value),
                                                           "__redraft_source_call__", False)
    return (isinstance(call, types.FunctionType) and not isinstance(value, type)
            and not library and not isinstance(value, functools.partial)
            and not hasattr(value, "__redraft_transformable__"))


def _user_function_that_gathers(value, keywords: list[str], n_args: int = 0) -> bool:
    """A function with *args, **kwargs or keyword-only parameters whose source transforms
    read: its calls are specialised on their shape, so no keyword argument is lost on the way
    to the transformed source. The user's functions always; one of redraft's numpy/scipy/nn
    library functions without rules of its own when the call names a parameter that only a
    keyword reaches (jnp.cumulative_sum(x, include_initial=True)), or that gets more
    positional arguments than it names (tree_map(f, a, b) gathers b in *rest)."""
    from redraft.compiler.primitives.registry import rules_for
    if not call_shape.gathers(value) or rules_for(value) is not None:
        return False
    module = getattr(value, "__module__", "") or ""
    if module.split(".")[0] in OPAQUE_LIBRARIES:
        return False  # called as it is: np.std(x) calls x.std(), never read as source
    if not module.startswith("redraft.") or module == "redraft.runtime.pytree":
        return True  # (tree_map: specialised on its shape, a closure it is given is bound)
    try:
        params = inspect.signature(value).parameters
    except (TypeError, ValueError):
        return False
    if not module.startswith(("redraft.numpy", "redraft.scipy", "redraft.nn")):
        return False
    named = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if n_args > len(named) and any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return True
    by_keyword_only = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
    return any(k not in params or params[k].kind in by_keyword_only for k in keywords)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and isinstance(
        stmt.value.value, str)


def _contains_return(node) -> bool:
    """Whether `node` returns from the function being lowered: a `return` of a function
    defined inside it (a def in a loop body) belongs to that function."""
    todo = list(gast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, gast.Return):
            return True
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(n))
    return False


def _always_returns(body: list) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, gast.Return):
        return True
    if isinstance(last, gast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _assigned_names(fn_node) -> set[str]:
    """Every name the function body assigns (its locals, in Python's scoping)."""
    body = fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]
    return local_functions.assigned_names(body)


def is_python_function(obj) -> bool:
    return isinstance(obj, types.FunctionType)


@dataclass(frozen=True, eq=False)
class PartialCall:
    """`functools.partial(fn, *args, **kwargs)` read in the source: calling it is the call
    of `fn` with these atoms first, so every transform sees that call; where it is used as
    a value, the partial object is made at run time."""
    fn: ir.Atom
    args: tuple
    kwargs: tuple

    def as_call(self) -> ir.Call:
        return ir.Call(ir.Ref(functools.partial, "functools.partial", functools),
                       (self.fn,) + self.args, self.kwargs)


@dataclass(frozen=True, eq=False)
class KnownTuple:
    """A tuple whose items are known atoms when the source is read (what vjp returns):
    indexing it with a constant, or unpacking it, reads the items themselves."""
    items: tuple


def _holds_closures(value) -> bool:
    """Whether a known sequence or dict holds a local function that captures values or has
    defaults (which its value must carry)."""
    items = value.values() if isinstance(value, dict) else value
    return isinstance(value, (list, tuple, dict)) and any(
        isinstance(f, local_functions.LocalFunction) and (f.captured or f.defaults)
        for f in items)


def _known_ref(value, name: str) -> ir.Atom:
    """The atom of a parameter specialised on `value`: a constant, a redraft.numpy function
    by the name the user would write (`jnp.tanh`), else `<name>_value`."""
    import redraft.numpy as jnp
    own = getattr(value, "__name__", None)
    if (isinstance(own, str) and own.isidentifier() and not own.startswith("_")
            and getattr(jnp, own, None) is value):
        return ir.Ref(value, f"jnp.{own}", jnp)
    return _ref_or_const(value, f"{name}_value")


def lift(parent: "Lowering", node, name: str, out: list) -> local_functions.LocalFunction:
    """Lower local function `node` (a gast FunctionDef or Lambda) found in `parent`; its
    default values are evaluated in `parent`, into `out`, where Python evaluates them. One
    with *args, **kwargs or keyword-only parameters is lowered per call shape, when a call
    needs it, as `parent` reads at the definition (local_functions.GatheringLocal)."""
    args = node.args
    own_params = [a.id for a in list(getattr(args, "posonlyargs", [])) + list(args.args)]
    gathering = [a.id for a in [args.vararg, args.kwarg] if a is not None]
    gathering += [a.id for a in args.kwonlyargs]
    body = node.body if isinstance(node.body, list) else [node.body]
    own_locals = set(own_params) | set(gathering) | local_functions.assigned_names(body)
    # `nonlocal total` and assigned: passed in as a captured value, and passed back
    threads = sorted(local_functions.declared_nonlocal(body) & own_locals & parent.locals)
    own_locals -= set(threads)
    reads = set().union(*(local_functions.read_names(s) for s in body))
    captured = sorted((reads & parent.locals) - own_locals - set(parent.local_functions)
                      - set(parent.known))
    for other in reads & set(parent.local_functions):  # a sibling's captures pass through
        captured = sorted(set(captured) | set(parent.local_functions[other].captured))
    for other in reads & set(parent.known):  # so do those of a closure passed to parent
        value = parent.known[other]
        if isinstance(value, local_functions.LocalFunction) and other not in own_locals:
            captured = sorted(set(captured) | set(value.captured))
    defaults = tuple(parent.expr(d, out) for d in args.defaults)
    if not gathering:
        lowering = Lowering.nested(parent, node, name, tuple(own_params), tuple(captured),
                                   threads=tuple(threads))
        core = specialise.fold_static_calls(to_ssa(lowering.run(), coalesce=False))
        if lowering.threads:
            file, line = parent.origin(node)
            return local_functions.ThreadingLocal(
                name, CoreFunction(core), tuple(captured), tuple(own_params), defaults,
                tuple(lowering.threads), lambda: UnsupportedSyntaxError(
                    f"{file}:{line}: " + escape_message(name, tuple(lowering.threads))))
        return local_functions.LocalFunction(name, CoreFunction(core), tuple(captured),
                                             tuple(own_params), defaults)
    if threads:
        parent.fail(node, f"{name} assigns the nonlocal {threads[0]!r} and has *args, "
                          "**kwargs or keyword-only parameters: redraft passes nonlocal "
                          "values back only from functions with plain parameters")
    kwonly_defaults = {a.id: parent.expr(d, out) for a, d in zip(args.kwonlyargs,
                                                                 args.kw_defaults)
                       if d is not None}
    at_definition = parent.snapshot()

    def lower_for(shape: call_shape.CallShape) -> CoreFunction:
        given = kwonly_defaults if shape.kwonly else {
            k: a for k, a in kwonly_defaults.items() if not isinstance(a, ir.Var)}
        missing = [a.id for a in args.kwonlyargs if a.id not in given
                   and a.id not in shape.kwonly]
        if missing:
            parent.fail(node, f"the local function {name} is used as a value, and its "
                              f"keyword-only parameter {missing[0]!r} has no constant "
                              "default: call it directly, or give it one")
        lowering = Lowering.nested(at_definition, node, name, tuple(own_params),
                                   tuple(captured), shape, given)
        core = lowering.run()
        if lowering.threads:
            parent.fail(node, f"{name} calls a function assigning the nonlocal "
                              f"{lowering.threads[0]!r} and has *args, **kwargs or "
                              "keyword-only parameters: redraft passes nonlocal values back "
                              "only from functions with plain parameters")
        return CoreFunction(specialise.fold_static_calls(to_ssa(core, coalesce=False)))

    binder = local_functions.signature_binder(
        name if name.isidentifier() else "function", args)
    return local_functions.GatheringLocal(name, tuple(captured), tuple(own_params), defaults,
                                          tuple(a.id for a in args.kwonlyargs),
                                          kwonly_defaults, binder, lower_for)


def escape_message(name: str, threads: tuple[str, ...]) -> str:
    """Why a local function assigning names of its enclosing function cannot be a value."""
    names = ", ".join(repr(n) for n in threads)
    return (f"the local function {name} assigns the nonlocal {names}; redraft passes the new "
            f"value back where {name} is called directly in the function that defines it, "
            "but here it is used as a value (returned, stored, or passed to another function, "
            "a transform or a lax loop), where the assignment would be lost: return the new "
            "value from it instead")


def _known_item(container, key):
    """container[key] when it is a function value (folded when the source is read), else
    None (data items stay run-time reads)."""
    try:
        item = container[key]
    except (KeyError, IndexError, TypeError):
        return None
    return item if specialise.is_function_value(item) else None


def _key_name(key) -> str:
    text = "".join(c if c.isalnum() else "_" for c in str(key))
    return text or "item"


def _ref_or_const(value, name: str) -> ir.Atom:
    if isinstance(value, (int, float, bool, complex, str, type(None))):
        return ir.Const(value)
    return ir.Ref(value, name)


specialise.install_lowering(lower_function)


def _is_literal(node) -> bool:
    """A constant, or a tuple or list of literals, written in the source."""
    if isinstance(node, gast.Constant):
        return True
    return isinstance(node, (gast.Tuple, gast.List)) and all(_is_literal(e) for e in node.elts)
