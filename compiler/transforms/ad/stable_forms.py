"""Compositions whose chained derivative rules lose the derivative, fused before differentiating.

`log1p(exp(x))` at x = 100 in float32: exp overflows, log1p's rule gives 1/(1+inf) = 0 and
exp's rule 0 * inf = NaN, while the derivative, sigmoid(x), is 1. The table maps such an
(outer, inner) pair to one helper that computes the same value as written and carries a
stable rule (runtime/ad.py, rules/helpers.py). A pair is fused only where the inner result
feeds nothing else; both modes apply the table, so they agree.
"""
from __future__ import annotations

import redraft.numpy as jnp
from redraft.compiler.core import ir
from redraft.compiler.transforms.runtime import ad
from redraft.compiler.transforms.common import helper

# (outer op, inner op) -> fused op of the inner op's argument
STABLE_FORMS = {
    (jnp.log1p, jnp.exp): ad.log1p_exp,
}


def fuse_stable_forms(fn: ir.Function) -> ir.Function:
    """`fn` with each `t = inner(x); y = outer(t)` of the table, where nothing else reads
    `t`, rewritten to `y = fused(x)`."""
    reads: dict[str, int] = {}
    for s in ir.walk_stmts(fn.body):
        for name in _reads_here(s):
            reads[name] = reads.get(name, 0) + 1
    body = _block(fn.body, reads)
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _reads_here(s: ir.Stmt) -> list[str]:
    """Names `s` itself reads (not its nested blocks), once per occurrence."""
    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        atoms = ir.expr_atoms(s.expr)
    elif isinstance(s, ir.Return):
        atoms = [s.value]
    elif isinstance(s, ir.If):
        atoms = [s.cond]
    elif isinstance(s, ir.For):
        atoms = [s.iter]
    elif isinstance(s, ir.While):
        atoms = [s.cond]
    else:
        atoms = []
    return [a.name for a in atoms if isinstance(a, ir.Var)]


def _unary(s: ir.Stmt):
    """(op, argument) of `name = op(arg)`, else None."""
    if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
            and isinstance(s.expr.fn, ir.Ref) and len(s.expr.args) == 1
            and not s.expr.kwargs and s.expr.star_args is None):
        return s.expr.fn.value, s.expr.args[0]
    return None


def _block(body: list[ir.Stmt], reads: dict[str, int]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    defs: dict[str, int] = {}  # name -> index in `out` of the unary call defining it
    for s in body:
        if isinstance(s, ir.If):
            s = ir.If(s.cond, _block(s.body, reads), _block(s.orelse, reads), s.origin)
        elif isinstance(s, ir.For):
            s = ir.For(s.target, s.iter, _block(s.body, reads), s.origin)
        elif isinstance(s, ir.While):
            s = ir.While(_block(s.cond_body, reads), s.cond, _block(s.body, reads), s.origin)
        outer = _unary(s)
        if outer is not None and isinstance(outer[1], ir.Var) and outer[1].name in defs:
            inner_index = defs.pop(outer[1].name)
            inner_op, argument = _unary(out[inner_index])
            fused = STABLE_FORMS.get((outer[0], inner_op))
            if fused is not None and reads.get(outer[1].name) == 1:
                out[inner_index] = None
                s = ir.Assign(s.targets, ir.Call(helper(fused.__name__), (argument,)),
                              s.origin)
        written = ir.stmt_writes(s)
        for name in list(defs):  # a definition whose argument changed cannot be moved
            argument = _unary(out[defs[name]])[1]
            if name in written or (isinstance(argument, ir.Var) and argument.name in written):
                del defs[name]
        if _unary(s) is not None:
            defs[s.targets[0]] = len(out)
        out.append(s)
    return [s for s in out if s is not None]
