"""Rename Core so each name is assigned once, except explicit loop-carried and merged names.

Expects: lowered Core (compiler/frontend/normalize.py). Guarantees: in straight-line code a
name is never reassigned (a reassignment of `x` becomes `x_1`), so reverse mode may read any
forward value by its name; a branch that changes `x` ends by copying into one merged name;
a loop that changes `x` starts from a copy of `x` into a fresh loop-carried name, which only
the loop writes (its body ends by writing the new value back into it), so the loop's state
is exactly its carried names and the value `x` had before the loop outlives the loop.
Only names live after a branch are merged, and only names live at a loop's head are carried
(core/liveness.py): a dead one would be a value nothing reads that transforms must still
give one type on every path.
"""
from __future__ import annotations

from redraft.compiler.core import ir
from redraft.compiler.core.liveness import Liveness, liveness
from redraft.compiler.core.names import Names


class Renamer:
    def __init__(self, params: tuple[str, ...], coalesce: bool = True,
                 live: Liveness | None = None):
        self.names = Names(params)
        self.live = live or Liveness()  # of the Core being renamed (its user's names)
        self.coalesce = coalesce
        # version -> the `if`s (and their branch) on which it is not assigned: Python lets a
        # name be set on one path only, as long as only that path reads it
        self.one_path: dict[str, list[tuple[ir.If, str]]] = {}
        self.maybe_unbound: set[str] = set()  # versions a loop that ran no iteration left unset
        self.loop_depth = 0  # how many loops enclose the statement being renamed
        # placeholders `v = None` for the function's start (see define_on_every_path)
        self.prelude: list[ir.Stmt] = []

    def fresh(self, base: str) -> str:
        return self.names.local(base)

    # ---- reads ------------------------------------------------------------------------------
    @staticmethod
    def atom(a, env: dict):
        if isinstance(a, ir.Var):
            return ir.Var(env.get(a.name, a.name))
        return a

    def expr(self, e: ir.Expr, env: dict) -> ir.Expr:
        return ir.map_expr(e, lambda a: self.atom(a, env))

    # ---- statements ---------------------------------------------------------------------------
    def block(self, body: list[ir.Stmt], env: dict) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            out.extend(self.stmt(s, env))
        return out

    def stmt(self, s: ir.Stmt, env: dict) -> list[ir.Stmt]:
        if isinstance(s, ir.Assign):
            value = self.expr(s.expr, env)
            targets = []
            for t in s.targets:
                new = self.fresh(t)
                env[t] = new
                targets.append(new)
            return [ir.Assign(tuple(targets), value, s.origin)]
        if isinstance(s, ir.ExprStmt):
            return [ir.ExprStmt(self.expr(s.expr, env), s.origin)]
        if isinstance(s, ir.Return):
            return [ir.Return(self.atom(s.value, env), s.origin)]
        if isinstance(s, ir.If):
            return [self.if_(s, env)]
        if isinstance(s, ir.For):
            return self.for_(s, env)
        if isinstance(s, ir.While):
            return self.while_(s, env)
        raise TypeError(f"not a Core statement: {s!r}")

    def if_(self, s: ir.If, env: dict) -> ir.If:
        cond = self.atom(s.cond, env)
        then_env, else_env = dict(env), dict(env)
        body = self.block(s.body, then_env)
        orelse = self.block(s.orelse, else_env)
        one_path = []
        live = self.live.live_after(s)
        for name in sorted(set(then_env) | set(else_env)):
            a, b = then_env.get(name), else_env.get(name)
            if a == b:
                env[name] = a
            elif live is not None and name not in live:
                env.pop(name, None)  # nothing reads it before writing it again
            elif a is None or b is None:
                env[name] = a or b  # defined on one path only, as Python allows
                one_path.append((a or b, "orelse" if a else "body"))
            else:
                merged = self.fresh(name)
                self.define_on_every_path(a)
                self.define_on_every_path(b)
                body.append(ir.Assign((merged,), ir.Var(a), s.origin))
                orelse.append(ir.Assign((merged,), ir.Var(b), s.origin))
                env[name] = merged
        merged_names = set(env.values())
        out = ir.If(cond, _coalesce_carried(body, merged_names),
                    _coalesce_carried(orelse, merged_names), s.origin)
        for version, missing in one_path:
            self.one_path.setdefault(version, []).append((out, missing, self.loop_depth))
        return out

    def define_on_every_path(self, version: str) -> None:
        """A merge is about to copy `version`: where an `if` left it unassigned, it gets
        None, so the copy never reads an unbound name (the user's code reads the merged
        name only where it assigned it; staging and vmap treat None as a placeholder).
        Inside a loop the None goes before everything instead: on the path that does not
        assign it, `version` keeps what an earlier iteration gave it, as in Python."""
        for stmt, branch, depth in self.one_path.pop(version, []):
            placeholder = ir.Assign((version,), ir.Const(None), stmt.origin)
            if depth == 0:
                getattr(stmt, branch).append(placeholder)
            elif not any(version in p.targets for p in self.prelude):
                self.prelude.append(placeholder)

    def define_before_loops(self, version: str, origin) -> None:
        """`version = None` at the function's start, for a version that a loop nested in
        another loop binds: a read of it after the inner loop looks to the outer loop like a
        read of its previous iteration's value (the inner loop may run no iteration), so
        the outer loop carries it and it must hold a value, a placeholder, on entry."""
        if not any(version in p.targets for p in self.prelude):
            self.prelude.append(ir.Assign((version,), ir.Const(None), origin))

    def loop(self, loop: ir.For | ir.While, blocks: list[list[ir.Stmt]], env: dict, origin,
             bound: str | None = None, cond: ir.Atom | None = None):
        """Rename a loop's blocks (cond block first for while). Returns (the copies into
        fresh carried names to put before the loop, blocks, renamed cond, env after, the
        name of the loop variable as each iteration starts: the body may rebind it)."""
        written = set().union(*(ir.block_writes(b) for b in blocks))
        head = self.live.live_at_head(loop)
        carried = {n for n in written if n in env and (head is None or n in head)}
        copies = self.entry_copies(carried, env, origin)
        inner = dict(env)
        if bound is not None:
            inner[bound] = self.fresh(bound)
        target = inner.get(bound) if bound is not None else None
        self.loop_depth += 1
        out = [self.block(blocks[0], inner)]
        if cond is not None:
            cond = self.atom(cond, inner)
        out += [self.block(b, inner) for b in blocks[1:]]
        self.loop_depth -= 1
        for name in sorted(carried):
            if inner[name] != env[name]:
                out[-1].append(ir.Assign((env[name],), ir.Var(inner[name]), origin))
        after = {n: v for n, v in env.items() if n not in written or n in carried}
        live_after = self.live.live_after(loop)
        for name in written - carried:
            if name in inner:  # else dead where the body ends
                after[name] = inner[name]
                self.maybe_unbound.add(inner[name])  # after a loop that ran no iteration
                if self.loop_depth and (live_after is None or name in live_after):
                    self.define_before_loops(inner[name], origin)
        if bound is not None:
            after[bound] = inner[bound]
        if self.coalesce:
            out[-1] = _coalesce_carried(out[-1], {env[n] for n in carried})
        return copies, out, cond, after, target

    def entry_copies(self, carried: set[str], env: dict, origin) -> list[ir.Stmt]:
        """`x_1 = x` for each carried `x`, with `env` moved to the fresh version: the loop
        writes only names of its own, so no value made before it is overwritten. A name an
        `if` set on one path gets None on the other first; one a loop may have left unset
        keeps its version (copying it could raise)."""
        copies: list[ir.Stmt] = []
        for name in sorted(carried):
            if env[name] in self.maybe_unbound:
                continue
            self.define_on_every_path(env[name])
            version = self.fresh(name)
            copies.append(ir.Assign((version,), ir.Var(env[name]), origin))
            env[name] = version
        return copies

    def for_(self, s: ir.For, env: dict) -> list[ir.Stmt]:
        iterable = self.atom(s.iter, env)
        entry, (body,), _, after, target = self.loop(s, [s.body], env, s.origin,
                                                          bound=s.target)
        env.clear()
        env.update(after)
        return entry + [ir.For(target, iterable, body, s.origin)]

    def while_(self, s: ir.While, env: dict) -> list[ir.Stmt]:
        entry, (cond_body, body), cond, after, _ = self.loop(s, [s.cond_body, s.body],
                                                             env, s.origin, cond=s.cond)
        env.clear()
        env.update(after)
        return entry + [ir.While(cond_body, cond, body, s.origin)]


def _coalesce_carried(block: list[ir.Stmt], carried: set[str]) -> list[ir.Stmt]:
    """`x_1 = f(x); ...; x = x_1` becomes `x = f(x); ...` when nothing after the definition
    reads the old `x` (the common `x = x - 0.1 * x` loop stays as the user wrote it)."""
    block = list(block)
    i = len(block) - 1
    while i >= 0:
        copy = block[i]
        if not (isinstance(copy, ir.Assign) and len(copy.targets) == 1
                and copy.targets[0] in carried and isinstance(copy.expr, ir.Var)):
            break
        carried_name, version = copy.targets[0], copy.expr.name
        # a version read after the block (another merged name) keeps its own definition
        j = _top_level_def(block[:i], version) if version not in carried else None
        # the version must keep its one definition: a nested loop that updates it in place
        # (`x_1 = x_1 + 1`) would otherwise write the old name and lose its updates
        if j is not None and not any(carried_name in ir.stmt_reads(s) or
                                     carried_name in ir.stmt_writes(s) or
                                     version in ir.stmt_writes(s) for s in block[j + 1:i]):
            block[j] = _retarget(block[j], version, carried_name)
            block[j + 1:i] = [_rename(s, version, carried_name) for s in block[j + 1:i]]
            del block[i]
        i -= 1
    return block


def _rename(s: ir.Stmt, old: str, new: str) -> ir.Stmt:
    """`s` with `old` renamed `new` where it reads and where it writes it (a loop nested in
    `s` may carry `old`, writing it back at the end of its body)."""
    def atom(a):
        return ir.Var(new) if isinstance(a, ir.Var) and a.name == old else a
    return ir.map_stmt(s, atom, lambda n: new if n == old else n)


def _top_level_def(block: list[ir.Stmt], name: str) -> int | None:
    for j, s in enumerate(block):
        if isinstance(s, ir.Assign) and name in s.targets:
            return j
    return None


def _retarget(s: ir.Assign, old: str, new: str) -> ir.Assign:
    return ir.Assign(tuple(new if t == old else t for t in s.targets), s.expr, s.origin)


def to_ssa(fn: ir.Function, coalesce: bool = True) -> ir.Function:
    """`fn` renamed as the module docstring says. With coalesce=False a loop body ends in
    explicit copies `x = x_1` into its carried names (what reverse mode needs, since the
    body's recomputation must not overwrite the carried values it reads)."""
    r = Renamer(fn.params, coalesce, liveness(fn.body))
    env = {p: p for p in fn.params}
    body = r.block(fn.body, env)
    body = _drop_dead_copies(r.prelude + body)
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _drop_dead_copies(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """`body` without the copies (`k_2 = k_1`, placeholders `a = None`) into names nothing
    reads: merging a loop variable that no one reads after its loop would make a reverse
    pass read a version only the loop defines."""
    live: set[str] = set()
    copies: list[ir.Assign] = []
    for s in ir.walk_stmts(body):
        if _is_copy(s):
            copies.append(s)
        else:
            live |= ir.stmt_reads(s) if not ir.child_blocks(s) else _own_reads(s)
    changed = True
    while changed:  # a copy into a live name makes its source live
        changed = False
        for c in copies:
            if c.targets[0] in live and isinstance(c.expr, ir.Var) and c.expr.name not in live:
                live.add(c.expr.name)
                changed = True
    dead = {c.targets[0] for c in copies} - live
    return _without(body, dead) if dead else body


def _own_reads(s: ir.Stmt) -> set[str]:
    """What a compound statement itself reads (its condition or iterable)."""
    if isinstance(s, (ir.If, ir.While)):
        return ir.expr_reads(s.cond)
    if isinstance(s, ir.For):
        return ir.expr_reads(s.iter)
    return set()


def _is_copy(s: ir.Stmt) -> bool:
    return (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Var)
            or isinstance(s, ir.Assign) and len(s.targets) == 1
            and isinstance(s.expr, ir.Const) and s.expr.value is None)


def _without(body: list[ir.Stmt], dead: set[str]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if _is_copy(s) and s.targets[0] in dead:
            continue
        if isinstance(s, ir.If):
            s = ir.If(s.cond, _without(s.body, dead), _without(s.orelse, dead), s.origin)
        elif isinstance(s, ir.For):
            s = ir.For(s.target, s.iter, _without(s.body, dead), s.origin)
        elif isinstance(s, ir.While):
            s = ir.While(_without(s.cond_body, dead), s.cond, _without(s.body, dead), s.origin)
        out.append(s)
    return out
