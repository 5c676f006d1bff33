"""Desugar `break`, `continue` and `return` inside loops into flags, before lowering.

    for x in xs:                      broke_1 = False
        A                             for x in xs:
        if c:                             if not broke_1:
            break            ==>              A
        B                                     if c:
                                                  broke_1 = True
                                              if not broke_1:
                                                  B

A `while` loop also tests the flag (`while not broke_1 and cond:`), so it stops; a `for`
loop runs its remaining iterations as no-ops. `continue` sets a flag that is reset at the
top of every iteration. `return v` inside a loop stores v, sets a `returned` flag and
breaks out of every enclosing loop; after the outermost one, `if returned: return v`, which
the early-return desugaring of normalize.py then handles like any other.
"""
from __future__ import annotations

import itertools

import gast

_counter = itertools.count(1)


def _name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _assign(id_: str, value) -> gast.Assign:
    return gast.Assign(targets=[_name(id_, store=True)], value=value, type_comment=None)


def _const(v) -> gast.Constant:
    return gast.Constant(value=v, kind=None)


def _not(id_: str) -> gast.UnaryOp:
    return gast.UnaryOp(op=gast.Not(), operand=_name(id_))


def _contains(node, kinds, stop_at_loops: bool) -> bool:
    """Whether `node`'s statements contain `kinds`, not looking into nested functions (and,
    with stop_at_loops, not into nested loops)."""
    todo = list(gast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, (gast.FunctionDef, gast.Lambda)):
            continue
        if stop_at_loops and isinstance(n, (gast.For, gast.While)):
            continue
        todo.extend(gast.iter_child_nodes(n))
    return False


def has_jumps(fn_node) -> bool:
    """Whether the function needs this rewrite at all."""
    for loop in (n for n in gast.walk(fn_node) if isinstance(n, (gast.For, gast.While))):
        if _contains(loop, (gast.Break, gast.Continue, gast.Return), stop_at_loops=False):
            return True
    return False


class _Flags:
    """The flag names of one loop (and the function's return flag)."""

    def __init__(self, ret: "_Return"):
        k = next(_counter)
        self.broke = f"broke_{k}"
        self.skip = f"skip_{k}"
        self.ret = ret


class _Return:
    def __init__(self):
        k = next(_counter)
        self.flag = f"returned_{k}"
        self.value = f"return_value_{k}"
        self.used = False


def desugar(fn_node) -> None:
    """Rewrite `fn_node` (a gast FunctionDef) in place."""
    ret = _Return()
    fn_node.body = _block(fn_node.body, None, ret, top=True)
    if ret.used:
        fn_node.body[:0] = [_assign(ret.flag, _const(False)), _assign(ret.value, _const(None))]


def _block(body: list, flags: _Flags | None, ret: _Return, top: bool = False) -> list:
    """Rewrite a statement list; inside a loop, guard what follows a possible jump."""
    out: list = []
    for k, stmt in enumerate(body):
        stmt = _stmt(stmt, flags, ret)
        out.extend(stmt)
        rest = body[k + 1:]
        if not rest:
            break
        if flags is not None and _jumps(stmt):
            guard = gast.If(test=_guard(flags), body=_block(rest, flags, ret), orelse=[])
            out.append(guard)
            return out
        if top and ret.used and any(_loop_returns(s) for s in stmt):
            out.append(gast.If(test=_name(ret.flag),
                               body=[gast.Return(value=_name(ret.value))],
                               orelse=_block(rest, flags, ret, top=True)))
            return out
    if top and ret.used and out and any(_loop_returns(s) for s in out[-1:]):
        out.append(gast.If(test=_name(ret.flag), body=[gast.Return(value=_name(ret.value))],
                           orelse=[]))
    return out


def _guard(flags: _Flags):
    return gast.BoolOp(op=gast.And(), values=[_not(flags.broke), _not(flags.skip)])


def _jumps(stmts: list) -> bool:
    """Whether these (rewritten) statements may have set a break/continue flag."""
    return any(getattr(s, "_redraft_jumps", False) for s in stmts)


def _loop_returns(stmt) -> bool:
    return getattr(stmt, "_redraft_returns", False)


def _mark(node, jumps: bool = False, returns: bool = False):
    if jumps:
        node._redraft_jumps = True
    if returns:
        node._redraft_returns = True
    return node


def _stmt(stmt, flags: _Flags | None, ret: _Return) -> list:
    if isinstance(stmt, gast.Break) and flags is not None:
        return [_mark(_assign(flags.broke, _const(True)), jumps=True)]
    if isinstance(stmt, gast.Continue) and flags is not None:
        return [_mark(_assign(flags.skip, _const(True)), jumps=True)]
    if isinstance(stmt, gast.Return) and flags is not None:
        ret.used = True
        value = stmt.value if stmt.value is not None else _const(None)
        return [_assign(ret.value, value), _assign(ret.flag, _const(True)),
                _mark(_assign(flags.broke, _const(True)), jumps=True, returns=True)]
    if isinstance(stmt, gast.If):
        stmt.body = _block(stmt.body, flags, ret)
        stmt.orelse = _block(stmt.orelse, flags, ret)
        jumps = flags is not None and (_jumps(stmt.body) or _jumps(stmt.orelse))
        returns = any(_loop_returns(s) for s in stmt.body + stmt.orelse)
        return [_mark(stmt, jumps=jumps, returns=returns)]
    if isinstance(stmt, gast.Try):  # its blocks as an if's (normalize.py decides the try)
        blocks = [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]
        new = [_block(b, flags, ret) for b in blocks]
        stmt.body, stmt.orelse, stmt.finalbody = new[:3]
        for handler, body in zip(stmt.handlers, new[3:]):
            handler.body = body
        jumps = flags is not None and any(_jumps(b) for b in new)
        returns = any(_loop_returns(s) for b in new for s in b)
        return [_mark(stmt, jumps=jumps, returns=returns)]
    if isinstance(stmt, (gast.For, gast.While)):
        return _loop(stmt, flags, ret)
    return [stmt]


def _loop(loop, outer: _Flags | None, ret: _Return) -> list:
    if not _contains(loop, (gast.Break, gast.Continue, gast.Return), stop_at_loops=False):
        return [loop]
    flags = _Flags(ret)
    has_return = _contains(loop, (gast.Return,), stop_at_loops=False)
    body = [_assign(flags.skip, _const(False))] + _block(loop.body, flags, ret)
    loop.body = [gast.If(test=_not(flags.broke), body=body, orelse=[])]
    if isinstance(loop, gast.While):
        loop.test = gast.BoolOp(op=gast.And(), values=[_not(flags.broke), loop.test])
    returns = has_return
    out = [_assign(flags.broke, _const(False)), _mark(loop, returns=returns)]
    if loop.orelse:  # for/while ... else: the else block runs where no break ended the loop
        orelse = _block(loop.orelse, outer, ret)
        out.append(_mark(gast.If(test=_not(flags.broke), body=orelse, orelse=[]),
                         jumps=outer is not None and _jumps(orelse)))
        loop.orelse = []
    if returns and outer is not None:  # a return leaves the enclosing loops too
        out.append(_mark(gast.If(test=_name(ret.flag),
                                 body=[_assign(outer.broke, _const(True))], orelse=[]),
                         jumps=True, returns=True))
    return out
