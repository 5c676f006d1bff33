"""Core: the normalised Python subset every transform reads and writes.

Grammar (each Core statement prints as one or a few lines of plain Python):

    function  ::= def NAME(PARAM, ...): stmt* return atom
    stmt      ::= NAME, ... = expr                          one operation per assignment
               |  expr                                      a call kept for its effect (print)
               |  if atom: stmt* else: stmt*
               |  for NAME in atom: stmt*                   atom: range(...) or any iterable
               |  while True: stmt* if not atom: break stmt*   (While: cond block, then body)
               |  return atom
    expr      ::= atom | ref(atom, ..., KW=atom, ...) | (atom, ...) | [atom, ...]
    atom      ::= NAME | literal
    ref       ::= a resolved Python object (function, primitive, module attribute), printed
                  by the dotted name the user wrote (`jnp.exp`) or a generated alias

Invariants: operands of calls are atoms (A-normal form); control flow is structured (no
break/continue/early return; the frontend desugars them); arrays are never mutated; every
statement carries the user's (file, line) it came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union


# ---- atoms and expressions ------------------------------------------------------------------

@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    value: Any  # a Python literal: int, float, bool, complex, str, None, or a tuple of them


Atom = Union[Var, Const]


@dataclass(frozen=True, eq=False)
class Ref:
    """A resolved callable or object: `value` is the object, `path` how source spells it,
    `root` the object that the first name of a dotted path denotes (`jnp` in `jnp.exp`)."""
    value: Any
    path: str
    root: Any = None

    def root_binding(self) -> tuple[str, Any] | None:
        """(name, object) the generated module must bind for `path` to work."""
        head = self.path.split(".")[0]
        if not head.isidentifier():
            return None
        return head, (self.root if self.root is not None else self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, Ref) and other.value is self.value and other.path == self.path

    def __hash__(self) -> int:
        return hash((id(self.value), self.path))


@dataclass(frozen=True)
class Call:
    fn: Union[Ref, Var]
    args: tuple[Atom, ...] = ()
    kwargs: tuple[tuple[str, Atom], ...] = ()
    star_args: Atom | None = None  # f(*xs): a tuple/list atom spread into positional args


@dataclass(frozen=True)
class Tuple:
    items: tuple[Atom, ...]


@dataclass(frozen=True)
class List:
    items: tuple[Atom, ...]


@dataclass(frozen=True)
class Attr:
    """`obj.name` on a non-array value (a pytree node's field, a module constant)."""
    obj: Atom
    name: str


Expr = Union[Var, Const, Call, Tuple, List, Attr, Ref]


# ---- statements ----------------------------------------------------------------------------------

Origin = tuple[str, int]  # (user's file, line)


class AdjointOrigin(tuple):
    """The origin of a statement of a reverse pass: the user's (file, line) whose adjoint it
    computes. It equals the plain (file, line); the printer heads each run of statements
    with the same one by `# grad of: <the user's line>`."""

    def __new__(cls, origin: Origin) -> "AdjointOrigin":
        return super().__new__(cls, origin)


@dataclass
class Assign:
    targets: tuple[str, ...]  # one name, or several for tuple unpacking
    expr: Expr
    origin: Origin | None = None


@dataclass
class ExprStmt:
    expr: Expr
    origin: Origin | None = None


@dataclass
class If:
    cond: Atom
    body: list["Stmt"]
    orelse: list["Stmt"]
    origin: Origin | None = None


@dataclass
class For:
    target: str
    iter: Atom
    body: list["Stmt"]
    origin: Origin | None = None


@dataclass
class While:
    """while True: <cond_body>; if not <cond>: break; <body>"""
    cond_body: list["Stmt"]
    cond: Atom
    body: list["Stmt"]
    origin: Origin | None = None


@dataclass
class Return:
    value: Atom
    origin: Origin | None = None


Stmt = Union[Assign, ExprStmt, If, For, While, Return]


@dataclass(frozen=True)
class FunctionMeta:
    """Where a Core function came from: the user's function the frontend read, and the
    transform that made it (with vmap's batch types). Frozen: a copied Function shares it."""
    source_fn: Any = None
    transform: str | None = None  # "jvp", "vjp", "grad", "vmap", "jacfwd", "jacrev", ...
    in_types: tuple | None = None  # vmap: the parameters' batch types
    out_type: Any = None  # vmap: the result's batch type
    traced: str | None = None  # why the frontend traced it rather than reading its source


@dataclass
class Function:
    """A Core function: parameters, a body ending in one Return, and where it came from."""
    name: str
    params: tuple[str, ...]
    body: list[Stmt]
    defaults: tuple[Any, ...] = ()  # values of the last len(defaults) params
    filename: str = "<core>"
    firstline: int = 1
    doc: str | None = None
    meta: FunctionMeta = field(default_factory=FunctionMeta)

    def __post_init__(self):
        if isinstance(self.meta, dict):  # {"transform": "jvp"}: its fields by name
            self.meta = FunctionMeta(**self.meta)


# ---- walking ------------------------------------------------------------------------------

def walk_stmts(body: list[Stmt]):
    """Every statement in `body`, nested blocks included, in program order."""
    for stmt in body:
        yield stmt
        for block in child_blocks(stmt):
            yield from walk_stmts(block)


def child_blocks(stmt: Stmt) -> list[list[Stmt]]:
    if isinstance(stmt, If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, For):
        return [stmt.body]
    if isinstance(stmt, While):
        return [stmt.cond_body, stmt.body]
    return []


def expr_atoms(expr: Expr) -> list[Atom]:
    """The atoms an expression reads."""
    if isinstance(expr, (Var, Const)):
        return [expr]
    if isinstance(expr, Call):
        out = list(expr.args) + [a for _, a in expr.kwargs]
        if expr.star_args is not None:
            out.append(expr.star_args)
        if isinstance(expr.fn, Var):
            out.append(expr.fn)
        elif isinstance(expr.fn, Attr):  # `s.endswith(x)` reads s
            out.append(expr.fn.obj)
        return out
    if isinstance(expr, (Tuple, List)):
        return list(expr.items)
    if isinstance(expr, Attr):
        return [expr.obj]
    return []


def expr_reads(expr: Expr) -> set[str]:
    return {a.name for a in expr_atoms(expr) if isinstance(a, Var)}


def stmt_reads(stmt: Stmt) -> set[str]:
    """Names a statement reads (its own nested blocks included)."""
    if isinstance(stmt, (Assign, ExprStmt)):
        return expr_reads(stmt.expr)
    if isinstance(stmt, Return):
        return expr_reads(stmt.value)
    out: set[str] = set()
    if isinstance(stmt, If):
        out |= expr_reads(stmt.cond)
    if isinstance(stmt, For):
        out |= expr_reads(stmt.iter)
    if isinstance(stmt, While):
        out |= expr_reads(stmt.cond)
    for block in child_blocks(stmt):
        for s in block:
            out |= stmt_reads(s)
    return out


def stmt_writes(stmt: Stmt) -> set[str]:
    """Names a statement assigns (its own nested blocks included)."""
    if isinstance(stmt, Assign):
        return set(stmt.targets)
    out: set[str] = set()
    if isinstance(stmt, For):
        out.add(stmt.target)
    for block in child_blocks(stmt):
        for s in block:
            out |= stmt_writes(s)
    return out


def block_reads(body: list[Stmt]) -> set[str]:
    out: set[str] = set()
    for s in body:
        out |= stmt_reads(s)
    return out


def block_writes(body: list[Stmt]) -> set[str]:
    out: set[str] = set()
    for s in body:
        out |= stmt_writes(s)
    return out


def map_expr(e: Expr, atom) -> Expr:
    """`e` with every atom it holds (Var, Const, Ref; a call's function too) replaced by
    `atom(a)`; its structure is kept."""
    if isinstance(e, (Var, Const, Ref)):
        return atom(e)
    if isinstance(e, Call):
        fn = map_expr(e.fn, atom)
        return Call(fn, tuple(atom(a) for a in e.args),
                    tuple((k, atom(v)) for k, v in e.kwargs),
                    atom(e.star_args) if e.star_args is not None else None)
    if isinstance(e, Tuple):
        return Tuple(tuple(atom(a) for a in e.items))
    if isinstance(e, List):
        return List(tuple(atom(a) for a in e.items))
    if isinstance(e, Attr):
        return Attr(atom(e.obj), e.name)
    raise TypeError(f"not a Core expression: {e!r}")


def _same(n: str) -> str:
    return n


def map_stmt(s: Stmt, atom, name=_same) -> Stmt:
    """`s` with `atom` applied to every atom it reads and `name` to every name it writes,
    nested blocks included (the one walker the renaming passes share)."""
    ex = lambda e: map_expr(e, atom)  # noqa: E731
    block = lambda b: [map_stmt(x, atom, name) for x in b]  # noqa: E731
    if isinstance(s, Assign):
        return Assign(tuple(name(t) for t in s.targets), ex(s.expr), s.origin)
    if isinstance(s, ExprStmt):
        return ExprStmt(ex(s.expr), s.origin)
    if isinstance(s, Return):
        return Return(atom(s.value), s.origin)
    if isinstance(s, If):
        return If(atom(s.cond), block(s.body), block(s.orelse), s.origin)
    if isinstance(s, For):
        return For(name(s.target), atom(s.iter), block(s.body), s.origin)
    if isinstance(s, While):
        return While(block(s.cond_body), atom(s.cond), block(s.body), s.origin)
    raise TypeError(f"not a Core statement: {s!r}")


def with_blocks(s: Stmt, block) -> Stmt:
    """A new `s` with `block` applied to each of its nested blocks (a statement without
    blocks is returned as it is; `s` itself is never changed: transforms share statements)."""
    if isinstance(s, If):
        return If(s.cond, block(s.body), block(s.orelse), s.origin)
    if isinstance(s, For):
        return For(s.target, s.iter, block(s.body), s.origin)
    if isinstance(s, While):
        return While(block(s.cond_body), s.cond, block(s.body), s.origin)
    return s


def _renamer(mapping: dict[str, str]):
    return lambda a: Var(mapping[a.name]) if isinstance(a, Var) and a.name in mapping else a


def substitute_expr(e: Expr, mapping: dict[str, str]) -> Expr:
    """`e` with the names it reads renamed by `mapping`."""
    return map_expr(e, _renamer(mapping))


def substitute(s: Stmt, mapping: dict[str, str]) -> Stmt:
    """`s` with the names it reads (not writes) renamed by `mapping`, recursively."""
    return map_stmt(s, _renamer(mapping))


def upward_exposed(body: list[Stmt], defined: set[str] | None = None) -> set[str]:
    """Names `body` may read before writing them (in a loop body: the loop-carried reads).
    A name written in only one branch of an `if`, or inside a nested loop, counts as not
    yet written after it, except in a later `if` on the same, unchanged condition (at any
    depth): there the branch that wrote it is the branch that reads it (as in a reverse
    pass's replay of a forward iteration)."""
    exposed: set[str] = set()

    def visit(stmts: list[Stmt], known: set[str], facts: dict) -> tuple[set[str], dict]:
        # facts: condition -> (names each branch wrote, facts known inside each branch)
        known, facts = set(known), dict(facts)
        for s in stmts:
            if isinstance(s, (Assign, ExprStmt, Return)):
                exposed.update(stmt_reads(s) - known)
                if isinstance(s, Assign):
                    known |= set(s.targets)
            elif isinstance(s, If):
                exposed.update(expr_reads(s.cond) - known)
                then_wrote, else_wrote, then_facts, else_facts = facts.get(
                    _cond_key(s.cond), (set(), set(), {}, {}))
                then_known, then_facts = visit(s.body, known | then_wrote,
                                               {**facts, **then_facts})
                else_known, else_facts = visit(s.orelse, known | else_wrote,
                                               {**facts, **else_facts})
                known |= then_known & else_known
            elif isinstance(s, For):
                exposed.update(expr_reads(s.iter) - known)
                visit(s.body, known | {s.target}, facts)
            elif isinstance(s, While):
                inner, _ = visit(s.cond_body, known, facts)
                exposed.update(expr_reads(s.cond) - inner)
                visit(s.body, inner, facts)
            written = stmt_writes(s)
            for name in written:
                facts.pop(name, None)
            if isinstance(s, If) and _cond_key(s.cond) not in written | {None}:
                facts[_cond_key(s.cond)] = (then_known, else_known, then_facts, else_facts)
        return known, facts

    visit(body, set(defined or ()), {})
    return exposed


def _cond_key(cond: Atom) -> str | None:
    return cond.name if isinstance(cond, Var) else None


# ---- names bound to constants ------------------------------------------------------------

def constant_names(fn: Function) -> dict:
    """{name: value} for names assigned once, from a constant or a tuple of constants
    (normalize builds `x[i, 0]` and dict keys that way), so rules can read them."""
    counts: dict[str, int] = {}
    for s in walk_stmts(fn.body):
        for w in stmt_writes(s):
            counts[w] = counts.get(w, 0) + 1
    out: dict = {}
    for s in walk_stmts(fn.body):
        if not (isinstance(s, Assign) and len(s.targets) == 1
                and counts.get(s.targets[0]) == 1 and s.targets[0] not in fn.params):
            continue
        e = s.expr
        if isinstance(e, Const):
            out[s.targets[0]] = e.value
        elif isinstance(e, Tuple) and all(
                isinstance(a, Const) or (isinstance(a, Var) and a.name in out)
                for a in e.items):
            out[s.targets[0]] = tuple(a.value if isinstance(a, Const) else out[a.name]
                                      for a in e.items)
    return out
