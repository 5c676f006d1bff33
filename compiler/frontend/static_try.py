"""`try` / `except` / `else` / `finally`, decided when the source is read.

JAX runs a `try` while it traces: what can raise there is Python working on values known at
trace time (a config dict's missing key, an import, a shape check on static numbers), never
an array's contents. redraft reads the function instead of tracing it, so it decides the
`try` when it lowers the function: it runs the try body's statements one by one on the values
known then (constants, globals, closure cells, imports, parameters the function is
specialised on, locals bound once to such values), finds which handler (if any) catches, and
replaces the `try` by the statements that ran:

    try:                               a = CFG["a"]         (ran)
        a = CFG["a"]        ==>        b = 0.1              (the KeyError handler)
        b = CFG["b"]                   done = True          (finally)
    except KeyError:
        b = 0.1
    finally:
        done = True

The chosen statements are then lowered as any others, so every transform sees plain code. A
body that reads a value computed when the function runs (an argument's array) cannot be
decided now and is refused, naming the value and saying what to write instead.
"""
from __future__ import annotations

import ast
import contextlib
import io

import gast


class NotKnownYet(BaseException):
    """A name the try body reads has no value until the function runs (a BaseException so
    that no handler of the user's catches it while the body is tried)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class StaticNames:
    """The mapping the try body runs in: its own assignments, then what `resolve(name)`
    gives (raising NotKnownYet for values known only when the function runs, KeyError for
    names that are not defined)."""

    def __init__(self, resolve):
        self.resolve = resolve
        self.values: dict = {}

    def __getitem__(self, name):
        if name in self.values:
            return self.values[name]
        return self.resolve(name)

    def __setitem__(self, name, value):
        self.values[name] = value

    def __delitem__(self, name):
        del self.values[name]

    def __contains__(self, name):
        try:
            self[name]
        except KeyError:
            return False
        return True


class Undecidable(Exception):
    """The try cannot be decided when the source is read; `reason` says why."""


def namespace(node, names: StaticNames, globals_: dict) -> dict:
    """One dict for running `node`: the module's globals, then every name it reads as
    `names` gives it (one dict, so that comprehensions and lambdas in it see them too)."""
    from redraft.compiler.frontend.local_functions import read_names
    space = dict(globals_)
    bound = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}  # comprehension targets too
    for name in sorted(read_names(node)):
        try:
            space[name] = names[name]
        except KeyError:
            pass  # a builtin, or a name nothing defines: Python says which when it runs
        except NotKnownYet:
            if name not in bound:
                raise
    return space


def run_statement(stmt, names: StaticNames, filename: str, globals_: dict):
    """Run one gast statement in `names`; a `return` evaluates its value."""
    if isinstance(stmt, gast.Return):
        if stmt.value is not None:
            evaluate(stmt.value, names, filename, globals_)
        return
    tree = ast.Module(body=[gast.gast_to_ast(stmt)], type_ignores=[])
    try:
        code = compile(ast.fix_missing_locations(tree), filename, "exec")
    except SyntaxError as e:  # `continue` or `break` on their own
        raise Undecidable(f"its statement `{type(stmt).__name__}` runs only inside the "
                          f"function ({e.msg})") from None
    space = namespace(stmt, names, globals_)
    before = dict(space)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, space)  # noqa: S102 - the user's own statement, on known values
    finally:
        for name, value in space.items():  # what it bound, also before raising
            if name != "__builtins__" and (name not in before or before[name] is not value):
                names[name] = value


def evaluate(expr, names: StaticNames, filename: str, globals_: dict):
    """The value of a gast expression in `names`."""
    tree = ast.Expression(body=gast.gast_to_ast(expr))
    code = compile(ast.fix_missing_locations(tree), filename, "eval")
    with contextlib.redirect_stdout(io.StringIO()):
        return eval(code, namespace(expr, names, globals_))  # noqa: S307


def handler_matches(handler, exc, names: StaticNames, filename: str, globals_: dict) -> bool:
    if handler.type is None:
        return isinstance(exc, Exception)
    kinds = evaluate(handler.type, names, filename, globals_)
    return isinstance(exc, kinds)


def decide(node, resolve, filename: str, globals_: dict):
    """(statements that ran, caught handler or None, exception or None) of the gast Try
    `node`. Raises Undecidable (with NotKnownYet's name) where the body needs values that
    exist only when the function runs, or where it raised inside a compound statement (what
    that statement had done before raising cannot be kept)."""
    names = StaticNames(resolve)
    for k, stmt in enumerate(node.body):
        try:
            run_statement(stmt, names, filename, globals_)
        except NotKnownYet as e:
            raise Undecidable(f"its body reads `{e.name}`, whose value exists only when the "
                              "function runs") from None
        except Exception as exc:  # noqa: BLE001 - the user's exception, caught as Python would
            if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr,
                                     gast.Assert, gast.Raise, gast.Import, gast.ImportFrom,
                                     gast.Return)):
                raise Undecidable(f"its `{type(stmt).__name__}` statement raised {exc!r} "
                                  "part of the way through") from None
            for handler in node.handlers:
                try:
                    caught = handler_matches(handler, exc, names, filename, globals_)
                except NotKnownYet as e:
                    raise Undecidable(f"its handler reads `{e.name}`") from None
                if caught:
                    return node.body[:k], handler, exc
            return node.body[:k], None, exc
    return list(node.body), None, None


class RunTimeTry:
    """A `try` whose body reads values of the function's own (a static argument, a dict
    argument's keys, an object's attributes): decided each time the function runs (under
    jit, when it is staged), by running the body's statements on those values (a body's
    array operations run then too, as JAX's tracing runs them; their results are not kept).
    Called through helpers.decide_try, which gives (statements that ran, index of the
    handler that caught or -1 for none, -2 for an exception no handler catches, the
    exception)."""

    def __init__(self, node, names: tuple, resolve, origin: tuple, globals_: dict):
        self.node = node
        self.names = names
        self.resolve = resolve
        self.filename, self.line = origin
        self.globals = globals_

    def __call__(self, *values) -> tuple:
        given = dict(zip(self.names, values))

        def resolve(name):
            if name in given:
                return given[name]
            return self.resolve(name)

        try:
            ran, handler, exc = decide(self.node, resolve, self.filename, self.globals)
        except Undecidable as e:
            raise Undecidable(f"{self.filename}:{self.line}: this `try` cannot be decided: "
                              f"{e}") from None
        if exc is None:
            return len(ran), -1, None
        index = self.node.handlers.index(handler) if handler is not None else -2
        return len(ran), index, exc

    def __repr__(self) -> str:
        return f"<try at line {self.line}>"
