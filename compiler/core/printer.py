"""Print Core as Python source, remembering which user line each printed line came from.

Operands are atoms, so no parentheses are ever needed. Calls whose Ref is spelled as an
operator (`+`, `-x`, `@`, `<`) print infix, exactly as the user wrote them. A tuple built
only to be returned prints as `return a, b`; the statements of a reverse pass are headed by
a comment naming the user's line they are the adjoint of.
"""
from __future__ import annotations

import linecache
import os

from redraft.compiler.core import ir

INDENT = "    "

BINARY_OPS = {"+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>",
              "<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in", "and", "or"}
UNARY_OPS = {"neg": "-", "pos": "+", "invert": "~", "not": "not "}


def atom(a: ir.Atom) -> str:
    if isinstance(a, ir.Var):
        return a.name
    if isinstance(a, ir.Const):
        return _const(a.value)
    if isinstance(a, ir.Ref):
        return a.path
    raise TypeError(f"not an atom: {a!r}")


def _const(value) -> str:
    if isinstance(value, float):
        text = repr(value)
        return text if text not in ("inf", "-inf", "nan") else f"float('{text}')"
    if isinstance(value, tuple):
        inner = ", ".join(_const(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def expr(e: ir.Expr) -> str:
    if isinstance(e, (ir.Var, ir.Const, ir.Ref)):
        return atom(e)
    if isinstance(e, ir.Tuple):
        inner = ", ".join(atom(a) for a in e.items)
        return f"({inner},)" if len(e.items) == 1 else f"({inner})"
    if isinstance(e, ir.List):
        return "[" + ", ".join(atom(a) for a in e.items) + "]"
    if isinstance(e, ir.Attr):
        return f"{atom(e.obj)}.{e.name}"
    if isinstance(e, ir.Call):
        return _call(e)
    raise TypeError(f"not a Core expression: {e!r}")


def _call(c: ir.Call) -> str:
    fn = c.fn
    if isinstance(fn, ir.Ref) and fn.path in BINARY_OPS and len(c.args) == 2 and not c.kwargs:
        return f"{atom(c.args[0])} {fn.path} {atom(c.args[1])}"
    if isinstance(fn, ir.Ref) and fn.path.startswith("unary ") and len(c.args) == 1:
        return f"{UNARY_OPS[fn.path[6:]]}{atom(c.args[0])}"
    if isinstance(fn, ir.Ref) and fn.path.startswith(".at."):
        head = f"{atom(c.args[0])}.at[{_index(c.args[1])}].{fn.path[4:]}"
        return head + f"({', '.join(atom(a) for a in c.args[2:])})"
    if isinstance(fn, ir.Ref) and fn.path.startswith("[]") and len(c.args) == 2:
        return f"{atom(c.args[0])}[{_index(c.args[1])}]"
    parts = [atom(a) for a in c.args]
    if c.star_args is not None:
        parts.append("*" + atom(c.star_args))
    parts += [f"{k}={atom(v)}" for k, v in c.kwargs]
    head = atom(fn) if isinstance(fn, (ir.Ref, ir.Var)) else expr(fn)
    return f"{head}({', '.join(parts)})"


def _index(a: ir.Atom) -> str:
    """Print an index atom; a constant tuple of slices prints as `i, 1:3`."""
    if isinstance(a, ir.Const) and isinstance(a.value, tuple):
        return ", ".join(_index_item(v) for v in a.value) or "()"
    if isinstance(a, ir.Const):
        return _index_item(a.value)
    return atom(a)


def _index_item(v) -> str:
    if isinstance(v, slice):
        parts = ["" if p is None else repr(p) for p in (v.start, v.stop, v.step)]
        text = f"{parts[0]}:{parts[1]}"
        return text + (f":{parts[2]}" if parts[2] else "")
    if v is Ellipsis:
        return "..."
    return repr(v)


class Printer:
    """Accumulates lines of source and the origin of each."""

    def __init__(self):
        self.lines: list[str] = []
        self.origins: list[ir.Origin | None] = []

    def emit(self, depth: int, text: str, origin: ir.Origin | None = None) -> None:
        self.lines.append(INDENT * depth + text)
        self.origins.append(origin)

    def block(self, body: list[ir.Stmt], depth: int) -> None:
        if not body:
            self.emit(depth, "pass")
        heading = None
        for k, s in enumerate(body):
            if isinstance(s.origin, ir.AdjointOrigin) and s.origin != heading:
                self.emit(depth, adjoint_comment(s.origin), s.origin)
            heading = s.origin if isinstance(s.origin, ir.AdjointOrigin) else None
            if _returned_tuple(s, body[k + 1:k + 2]):
                continue
            if isinstance(s, ir.Return) and k and _returned_tuple(body[k - 1], [s]):
                items = body[k - 1].expr.items
                text = ", ".join(atom(a) for a in items) + ("," if len(items) == 1 else "")
                self.emit(depth, f"return {text}", s.origin)
                continue
            self.stmt(s, depth)

    def stmt(self, s: ir.Stmt, depth: int) -> None:
        if isinstance(s, ir.Assign):
            targets = ", ".join(s.targets) if s.targets else "_"
            self.emit(depth, f"{targets} = {expr(s.expr)}", s.origin)
        elif isinstance(s, ir.ExprStmt):
            self.emit(depth, expr(s.expr), s.origin)
        elif isinstance(s, ir.Return):
            self.emit(depth, f"return {atom(s.value)}", s.origin)
        elif isinstance(s, ir.If):
            self.emit(depth, f"if {atom(s.cond)}:", s.origin)
            self.block(s.body, depth + 1)
            if s.orelse:
                self.emit(depth, "else:", s.origin)
                self.block(s.orelse, depth + 1)
        elif isinstance(s, ir.For):
            self.emit(depth, f"for {s.target} in {atom(s.iter)}:", s.origin)
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.While):
            self._while(s, depth)
        else:
            raise TypeError(f"not a Core statement: {s!r}")

    def _while(self, s: ir.While, depth: int) -> None:
        if not s.cond_body:
            self.emit(depth, f"while {atom(s.cond)}:", s.origin)
            self.block(s.body, depth + 1)
            return
        self.emit(depth, "while True:", s.origin)
        for c in s.cond_body:
            self.stmt(c, depth + 1)
        self.emit(depth + 1, f"if not {atom(s.cond)}:", s.origin)
        self.emit(depth + 2, "break", s.origin)
        for b in s.body:
            self.stmt(b, depth + 1)

    def function(self, fn: ir.Function, depth: int = 0) -> None:
        params = list(fn.params)
        if fn.defaults:
            n = len(fn.defaults)
            params[-n:] = [f"{p}={_const(d)}" for p, d in zip(params[-n:], fn.defaults)]
        self.emit(depth, f"def {fn.name}({', '.join(params)}):", (fn.filename, fn.firstline))
        if fn.doc:
            self.emit(depth + 1, '"""' + fn.doc + '"""', (fn.filename, fn.firstline))
        self.block(fn.body, depth + 1)


def _returned_tuple(s: ir.Stmt, following: list[ir.Stmt]) -> bool:
    """Whether `s` builds a tuple that the statement after it returns, and nothing else."""
    return (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Tuple)
            and bool(s.expr.items) and len(following) == 1
            and isinstance(following[0], ir.Return)
            and following[0].value == ir.Var(s.targets[0]))


def adjoint_comment(origin: ir.Origin) -> str:
    """`# grad of: y = jnp.exp(x)  (model.py:12)`: the user's line a reverse pass adjoins."""
    filename, line = origin
    text = linecache.getline(filename, line).strip()
    where = f"({os.path.basename(filename)}:{line})"
    return f"# grad of: {text}  {where}" if text else f"# grad of {where}"


def print_function(fn: ir.Function) -> tuple[str, list[ir.Origin | None]]:
    """(source text, origin of each line) of a Core function."""
    p = Printer()
    p.function(fn)
    return "\n".join(p.lines) + "\n", p.origins
