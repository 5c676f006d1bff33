"""The last step of every transform: generated Core made to read like a careful person's code.

A transform writes what its rules give, statement by statement; some of it is never read
(the tangent of a condition, a mask whose sum nobody asks for, a loop copy in a replayed
branch), its temporaries are numbered in the order the transform asked for them, and
inlined rules pass their defaults and flags by position (`ad.unsum(g, x, None, False)`).
`tidy` removes the dead statements, folds single-use copies, drops arguments equal to their
defaults, passes the flags that remain by keyword, renumbers the temporaries `t1, t2, ...`
in reading order and closes the gaps DCE leaves in families like `zero, zero_1`. The result
is the same computation, still Core a later transform can take.
"""
from __future__ import annotations

import inspect
import operator
import re

from redraft.compiler.core import ir
from redraft.compiler.transforms.runtime import lad

_TEMP = re.compile(r"^t(\d+)(_.*)?$")
_VERSION = re.compile(r"^(.+?)(?:_(\d+))?$")


def tidy(fn: ir.Function) -> ir.Function:
    """`fn` without dead statements, with keyword flags and temporaries numbered in order."""
    body = fold_literal_arithmetic(fn.body, set(fn.params))
    body = remove_dead_code(body)
    body = coalesce_copies(body, set(fn.params))
    body = _parameter_aliases(body, set(fn.params))
    body = _flags_in_block(body)
    out = ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                      fn.doc, fn.meta)
    out = renumber_temporaries(out)
    for _ in range(4):  # `saved_4_1` becomes `saved_4`, a member of the `saved` family
        compact = compact_versions(out)
        if compact is out:
            break
        out = compact
    return out


# ---- literal arithmetic ------------------------------------------------------------------------

_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.neg)
# tests of literals: a library function's `if b is None:` for the default b it was given
_TESTS = (operator.is_, operator.is_not, operator.not_, operator.eq, operator.ne)
_LITERAL_TYPES = (int, float, bool, type(None))
_UNKNOWN = object()


def fold_literal_arithmetic(body: list[ir.Stmt], params: set[str]) -> list[ir.Stmt]:
    """`t3 = 2 - 1` (a rule's `y - 1` for a literal y) is the number 1, read where t3 is
    read, and then `t4 = t1 ** 1` is the copy `t4 = t1`: the derivative of x ** 2 reads
    `2 * x`. Only names assigned once are folded, so loops and branches keep their meaning;
    the definitions left unread go with the dead code."""
    writes: dict[str, int] = {}
    for s in ir.walk_stmts(body):
        for n in ir.stmt_writes(s):
            writes[n] = writes.get(n, 0) + 1
    numbers: dict[str, object] = {}
    while True:
        found = {s.targets[0]: value for s in ir.walk_stmts(body)
                 if isinstance(s, ir.Assign) and len(s.targets) == 1
                 and writes.get(s.targets[0]) == 1 and s.targets[0] not in params
                 and s.targets[0] not in numbers
                 and (value := _literal_value(s.expr, numbers)) is not _UNKNOWN}
        if not found:
            break
        numbers.update(found)
    if not numbers:
        return body

    def atom(a):
        return ir.Const(numbers[a.name]) if isinstance(a, ir.Var) and a.name in numbers else a
    made: set[str] = set()
    body = _powers_of_one(_known_branches([ir.map_stmt(s, atom) for s in body]), made)
    copies = {s.targets[0]: s.expr for s in ir.walk_stmts(body)
              if isinstance(s, ir.Assign) and s.targets[0] in made and len(s.targets) == 1
              and s.targets[0] not in params and writes.get(s.targets[0]) == 1
              and writes.get(s.expr.name, 0) <= 1}
    if not copies:
        return body
    return [ir.map_stmt(s, lambda a: copies.get(a.name, a) if isinstance(a, ir.Var) else a)
            for s in body]


def _literal_value(e: ir.Expr, numbers: dict):
    """The int or float `e` computes when it is arithmetic on literals (or names already
    found to hold one), or the bool of a test on literals (`None is None`), else
    _UNKNOWN."""
    value = _passed_refusal(e)  # `lad.refuse_if(False, what, 1)` is 1
    if value is not None:
        return value.value if isinstance(value, ir.Const) and type(value.value) in (
            int, float) else _UNKNOWN
    if not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and not e.kwargs
            and e.star_args is None and (e.fn.value in _ARITHMETIC or e.fn.value in _TESTS)):
        return _UNKNOWN
    test = e.fn.value in _TESTS
    args = []
    for a in e.args:
        value = numbers.get(a.name, _UNKNOWN) if isinstance(a, ir.Var) else (
            a.value if isinstance(a, ir.Const) else _UNKNOWN)
        if type(value) not in (_LITERAL_TYPES if test else (int, float)):
            return _UNKNOWN
        args.append(value)
    try:
        out = e.fn.value(*args)
    except (ArithmeticError, ValueError, TypeError):
        return _UNKNOWN
    return out if type(out) in ((bool,) if test else (int, float)) else _UNKNOWN


def _passed_refusal(e: ir.Expr) -> ir.Atom | None:
    """The value of a rule's check `lad.refuse_if(False, what, value)` whose condition is
    the literal False (it only hands its value back); None for any other expression."""
    if not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and e.fn.value is lad.refuse_if
            and e.star_args is None):
        return None
    bound = dict(zip(("condition", "what", "value"), e.args)) | dict(e.kwargs)
    if bound.get("condition") != ir.Const(False):
        return None
    return bound.get("value")


def _known_branches(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """`if True: A else: B` as A, nested blocks included (the test folded to a literal)."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.If) and isinstance(s.cond, ir.Const) and type(s.cond.value) in (
                bool, int):
            out.extend(_known_branches(s.body if s.cond.value else s.orelse))
        else:
            out.append(ir.with_blocks(s, _known_branches))
    return out


def _powers_of_one(body: list[ir.Stmt], made: set[str]) -> list[ir.Stmt]:
    """`t = x ** 1` as the copy `t = x`, nested blocks included; the copies' names go in
    `made` (their readers may read x itself)."""
    out = []
    for s in body:
        if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref) and s.expr.fn.value is operator.pow
                and len(s.expr.args) == 2 and isinstance(s.expr.args[0], ir.Var)
                and s.expr.args[1] == ir.Const(1) and type(s.expr.args[1].value) is int
                and not s.expr.kwargs):
            made.add(s.targets[0])
            out.append(ir.Assign(s.targets, s.expr.args[0], s.origin))
        else:
            out.append(ir.with_blocks(s, lambda b: _powers_of_one(b, made)))
    return out


# ---- dead code ---------------------------------------------------------------------------------

def remove_dead_code(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """`body` without the assignments whose values nothing reads (repeated until none is
    left, since removing one can leave the statements it read dead in turn).

    A name goes only with all its assignments: where one of them is live, the dead ones
    stay. A later transform puts this code in SSA form, which joins a name's definitions
    without knowing that two `if`s test the same condition; a dead definition before a
    loop can be what it joins on the path that never reads the name."""
    while True:
        kept: set[int] = set()  # dead assignments kept for their names: what they read lives
        while True:
            live = _Liveness(kept)
            live.block(body, set())
            more = _sharing_a_live_name(body, live.dead)
            if more <= kept:
                break
            kept |= more
        if not live.dead:
            return body
        body = _without(body, live.dead)


def _sharing_a_live_name(body: list[ir.Stmt], dead: set[int]) -> set[int]:
    """The dead assignments one of whose targets some live assignment (or loop) writes."""
    written: set[str] = set()
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign) and id(s) not in dead:
            written |= set(s.targets)
        elif isinstance(s, ir.For):
            written.add(s.target)
    return {id(s) for s in ir.walk_stmts(body) if id(s) in dead and set(s.targets) & written}


class _Liveness:
    """Backward liveness over Core; loops iterate to a fixed point. `dead` collects the
    ids of assignments none of whose targets is live after them."""

    def __init__(self, kept: set[int] = frozenset()):
        self.dead: set[int] = set()
        self.kept = kept  # assignments to treat as live whatever reads them

    def block(self, body: list[ir.Stmt], live: set[str]) -> set[str]:
        for s in reversed(body):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: ir.Stmt, live: set[str]) -> set[str]:
        if isinstance(s, ir.Assign):
            if _removable(s) and id(s) not in self.kept and not set(s.targets) & live:
                self.dead.add(id(s))
                return live
            self.dead.discard(id(s))
            return (live - set(s.targets)) | ir.expr_reads(s.expr)
        if isinstance(s, ir.ExprStmt):
            return live | ir.expr_reads(s.expr)
        if isinstance(s, ir.Return):
            return ir.expr_reads(s.value)
        if isinstance(s, ir.If):
            return (self.block(s.body, live) | self.block(s.orelse, live)
                    | ir.expr_reads(s.cond))
        if isinstance(s, ir.For):
            head = set(live)
            while True:
                new = live | (self.block(s.body, head) - {s.target})
                if new == head:
                    return head | ir.expr_reads(s.iter)
                head = new
        if isinstance(s, ir.While):
            head = set(live)
            while True:
                after_cond = live | ir.expr_reads(s.cond) | self.block(s.body, head)
                new = self.block(s.cond_body, after_cond) | head
                if new == head:
                    return head
                head = new
        raise TypeError(f"not a Core statement: {s!r}")


def _removable(s: ir.Assign) -> bool:
    """Whether dropping `s` (when its targets are dead) changes nothing: every Core
    expression is pure except the calls that exist only to check (and raise)."""
    from redraft.compiler.transforms.runtime.vm import shapes as vm_shapes
    e = s.expr
    if _passed_refusal(e) is not None:
        return True  # a check whose condition is the literal False never raises
    return not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and any(
        e.fn.value is check for check in (lad.refuse_if, vm_shapes.axis_size)))


def _without(body: list[ir.Stmt], dead: set[int]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if id(s) in dead:
            continue
        s = ir.with_blocks(s, lambda b: _without(b, dead))
        if not (isinstance(s, ir.If) and not s.body and not s.orelse):
            out.append(s)
    return out


# ---- copies ----------------------------------------------------------------------------------

def coalesce_copies(body: list[ir.Stmt], params: set[str]) -> list[ir.Stmt]:
    """`t8 = f(a); x_bar = t8` is `x_bar = f(a)` where nothing else reads or writes t8.
    Loop bodies keep their copies: a reverse pass reads a loop's carried names from the
    copies that end its body (vjp.py), and so does the next transform of this output."""
    reads: dict[str, int] = {}
    writes: dict[str, int] = {}
    for s in ir.walk_stmts(body):
        for n in _own_reads(s):
            reads[n] = reads.get(n, 0) + 1
        for n in (s.targets if isinstance(s, ir.Assign) else
                  (s.target,) if isinstance(s, ir.For) else ()):
            writes[n] = writes.get(n, 0) + 1

    def single_use(name: str) -> bool:
        return name not in params and reads.get(name) == 1 and writes.get(name) == 1

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            prev = out[-1] if out else None
            if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Var)
                    and isinstance(prev, ir.Assign) and prev.targets == (s.expr.name,)
                    and single_use(s.expr.name)
                    and s.targets[0] not in ir.expr_reads(prev.expr)):
                out[-1] = ir.Assign(s.targets, prev.expr, prev.origin)
                continue
            out.append(s if isinstance(s, (ir.For, ir.While)) else ir.with_blocks(s, block))
        return out

    return block(body)


def _parameter_aliases(body: list[ir.Stmt], params: set[str]) -> list[ir.Stmt]:
    """`out_bar_1 = out_bar` at the top of a function, with neither name assigned anywhere
    else, is `out_bar` under one name: the copy goes and its readers read the parameter."""
    writes: dict[str, int] = {}
    for s in ir.walk_stmts(body):
        for n in (s.targets if isinstance(s, ir.Assign) else
                  (s.target,) if isinstance(s, ir.For) else ()):
            writes[n] = writes.get(n, 0) + 1
    aliases = {s.targets[0]: s.expr for s in body
               if isinstance(s, ir.Assign) and len(s.targets) == 1
               and isinstance(s.expr, ir.Var) and s.expr.name in params
               and s.targets[0] not in params and writes[s.targets[0]] == 1
               and s.expr.name not in writes}
    if not aliases:
        return body

    def atom(a):
        return aliases.get(a.name, a) if isinstance(a, ir.Var) else a

    kept = [s for s in body if not (isinstance(s, ir.Assign) and len(s.targets) == 1
                                    and s.targets[0] in aliases)]
    return [ir.map_stmt(s, atom) for s in kept]


def _own_reads(s: ir.Stmt) -> set[str]:
    """The names `s` itself reads (not the statements nested in it)."""
    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        return ir.expr_reads(s.expr)
    if isinstance(s, ir.Return):
        return ir.expr_reads(s.value)
    if isinstance(s, ir.If):
        return ir.expr_reads(s.cond)
    if isinstance(s, ir.For):
        return ir.expr_reads(s.iter)
    if isinstance(s, ir.While):
        return ir.expr_reads(s.cond)
    return set()


# ---- arguments -----------------------------------------------------------------------------

def _flags_in_block(body: list[ir.Stmt]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.expr, ir.Call):
            call = keyword_flags(s.expr)
            s = ir.Assign(s.targets, call, s.origin) if isinstance(s, ir.Assign) else \
                ir.ExprStmt(call, s.origin)
        out.append(ir.with_blocks(s, _flags_in_block))
    return out


def keyword_flags(call: ir.Call) -> ir.Call:
    """`call` without the trailing arguments equal to their parameters' defaults, and with
    a bool literal passed by position (and every positional argument after it) passed by
    keyword: `ad.unsum(g, x, None, False)` is `ad.unsum(g, x)`, `vm.dot(a, b, False,
    True)` is `vm.dot(a, b, a_batched=False, b_batched=True)`."""
    params = _parameters(call.fn)
    if params is None or call.star_args is not None or len(call.args) > len(params):
        return call
    args = list(call.args)
    while args and _is_default(args[-1], params[len(args) - 1]):
        args.pop()
    kwargs = [(k, v) for k, v in call.kwargs if not (
        k in _by_name(params) and _is_default(v, _by_name(params)[k]))]
    flag = next((i for i, a in enumerate(args) if _is_bool(a)), None)
    if flag is not None and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[flag:]):
        kwargs = [(p.name, a) for p, a in zip(params[flag:], args[flag:])] + kwargs
        args = args[:flag]
    if len(args) == len(call.args) and len(kwargs) == len(call.kwargs):
        return call
    return ir.Call(call.fn, tuple(args), tuple(kwargs), call.star_args)


def _parameters(fn: ir.Expr) -> list[inspect.Parameter] | None:
    """The named parameters of the Python function a call's Ref names, or None where they
    are not known exactly (builtins, *args wrappers, objects with a __call__)."""
    if not isinstance(fn, ir.Ref) or not inspect.isfunction(fn.value):
        return None
    if not _binds_by_name(fn.value):
        return None
    try:
        sig = inspect.signature(fn.value, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return params


def _binds_by_name(fn) -> bool:
    """Whether every later transform of a call to `fn` binds its arguments by name: the
    public functions (users call them with keywords), and helpers with no batching rule of
    their own (vmap transforms their source). An internal helper's own batching rule may
    read its arguments by position."""
    from redraft.compiler.transforms.batch.batching import batch_entry
    module = getattr(fn, "__module__", "") or ""
    if module.startswith(("redraft.numpy", "redraft.lax")):
        return True
    entry = batch_entry(fn)
    return entry is None or entry.kind == "source"


def _by_name(params: list[inspect.Parameter]) -> dict[str, inspect.Parameter]:
    return {p.name: p for p in params}


def _is_default(a: ir.Atom, p: inspect.Parameter) -> bool:
    if not isinstance(a, ir.Const) or p.default is inspect.Parameter.empty:
        return False
    if p.kind is p.POSITIONAL_ONLY:
        return False
    d = p.default
    if a.value is None or d is None:
        return a.value is d
    return type(a.value) is type(d) and isinstance(d, (bool, int, float, str)) and a.value == d


def _is_bool(a: ir.Atom) -> bool:
    return isinstance(a, ir.Const) and isinstance(a.value, bool)


# ---- names -------------------------------------------------------------------------------------

def renumber_temporaries(fn: ir.Function) -> ir.Function:
    """`fn` with its temporaries `t7`, `t7_bar`, `t7_dot` numbered 1, 2, ... in the order the
    function first mentions them (a bijection on numbers, so no name can clash); a function
    with a parameter named like a temporary is left as it is."""
    if any(_TEMP.match(p) for p in fn.params) or any(_TEMP.match(g) for g in _globals(fn)):
        return fn
    order: dict[str, int] = {}
    for name in _mentions(fn.body):
        m = _TEMP.match(name)
        if m and m.group(1) not in order:
            order[m.group(1)] = len(order) + 1
    if all(str(new) == old for old, new in order.items()):
        return fn

    def rename(name: str) -> str:
        m = _TEMP.match(name)
        return f"t{order[m.group(1)]}{m.group(2) or ''}" if m else name

    def atom(a):
        return ir.Var(rename(a.name)) if isinstance(a, ir.Var) else a

    body = [ir.map_stmt(s, atom, rename) for s in fn.body]
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _mentions(body: list[ir.Stmt]):
    """Every name the statements write or read, in program order."""
    for s in body:
        if isinstance(s, ir.Assign):
            yield from sorted(ir.expr_reads(s.expr))
            yield from s.targets
        elif isinstance(s, (ir.ExprStmt, ir.Return)):
            yield from sorted(ir.stmt_reads(s))
        elif isinstance(s, ir.If):
            yield from ir.expr_reads(s.cond)
            yield from _mentions(s.body)
            yield from _mentions(s.orelse)
        elif isinstance(s, ir.For):
            yield from ir.expr_reads(s.iter)
            yield s.target
            yield from _mentions(s.body)
        elif isinstance(s, ir.While):
            yield from _mentions(s.cond_body)
            yield from ir.expr_reads(s.cond)
            yield from _mentions(s.body)


def compact_versions(fn: ir.Function) -> ir.Function:
    """`fn` with each family of names `v, v_1, v_2, ...` that has gaps (`zero_1, zero_3`,
    a lone `out_1`) renumbered `v, v_1, ...` in the order the function first mentions them.
    A family is left as it is where a parameter belongs to it, where another name starts
    with `v_` (`v_1_bar` names its member), or where a new name would hide a global."""
    names = list(dict.fromkeys(_mentions(fn.body)))
    everything = set(names) | set(fn.params)
    families: dict[str, list[str]] = {}
    for n in names:
        families.setdefault(_VERSION.match(n).group(1), []).append(n)
    taken = _globals(fn) | {fn.name}
    prefixed = _prefixed_by(everything, families)
    mapping: dict[str, str] = {}
    for base, members in families.items():
        slots = [base] + [f"{base}_{k}" for k in range(1, len(members))]
        if members == slots or set(members) & set(fn.params) or set(slots) & taken:
            continue
        if any(s in everything and s not in members for s in slots):
            continue  # `skip_4` is the slot of family `skip_4` and a member of `skip`
        if not prefixed.get(base, set()) <= set(members):
            continue  # another name starts with `base_`
        mapping.update({m: s for m, s in zip(members, slots) if m != s})
    if not mapping:
        return fn

    def atom(a):
        return ir.Var(mapping.get(a.name, a.name)) if isinstance(a, ir.Var) else a

    body = [ir.map_stmt(s, atom, lambda n: mapping.get(n, n)) for s in fn.body]
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _prefixed_by(names: set[str], bases) -> dict[str, set[str]]:
    """{base: the names that start with `base_`}, for the bases given: each name is cut at
    its underscores (a name has a few), rather than each base tried on every name."""
    bases = set(bases)
    out: dict[str, set[str]] = {}
    for n in names:
        for i, c in enumerate(n):
            if c == "_" and n[:i] in bases:
                out.setdefault(n[:i], set()).add(n)
    return out


def _globals(fn: ir.Function) -> set[str]:
    """The names the generated module binds for the Refs `fn` calls (a local must not hide
    them)."""
    out: set[str] = set()
    for s in ir.walk_stmts(fn.body):
        for a in _stmt_atoms(s):
            if isinstance(a, ir.Ref):
                binding = a.root_binding()
                if binding is not None:
                    out.add(binding[0])
    return out


def _stmt_atoms(s: ir.Stmt) -> list:
    """The atoms of `s` itself (not of its nested blocks) that ir.map_stmt hands its `atom`
    function, found without building the copy map_stmt makes."""
    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        return _expr_atoms(s.expr)
    if isinstance(s, ir.Return):
        return [s.value]
    if isinstance(s, (ir.If, ir.While)):
        return [s.cond]
    if isinstance(s, ir.For):
        return [s.iter]
    return []


def _expr_atoms(e: ir.Expr) -> list:
    if isinstance(e, ir.Call):
        out = _expr_atoms(e.fn) + list(e.args) + [v for _, v in e.kwargs]
        if e.star_args is not None:
            out.append(e.star_args)
        return out
    if isinstance(e, (ir.Tuple, ir.List)):
        return list(e.items)
    if isinstance(e, ir.Attr):
        return [e.obj]
    return [e]
