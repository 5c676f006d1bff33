"""jacfwd and jacrev as Core functions (so that hessian = jacfwd(jacrev(f)) is a transform
of a transform): a loop over basis vectors calling the function's jvp or backward pass.

    def f_jacrev(x):                          def f_jacfwd(x):
        out = f(x)                                out = f(x)
        rows = []                                 cols = []
        for i in range(ad.size(out)):             for i in range(ad.size(x)):
            e = ad.basis(out, i)                      e = ad.basis(x, i)
            row = f_bwd(x, e)                         pair = f_jvp(x, e)
            rows = append(rows, row)                  cols = append(cols, pair[1])
        return ad.stack_jacobian(rows, ...)       return ad.stack_jacobian(cols, ...)
"""
from __future__ import annotations

import operator

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.transforms import callees
from redraft.compiler.transforms.common import helper

RANGE = ir.Ref(range, "range")
APPEND = ir.Ref(core_helpers.append, "append")
GETITEM = ir.Ref(operator.getitem, "[]")


def jacobian_function(fn, core: ir.Function, argnum: int, forward: bool) -> ir.Function:
    """Core computing d f(params)/d params[argnum], shaped out.shape + x.shape."""
    params = core.params
    x = ir.Var(params[argnum])
    args = tuple(ir.Var(p) for p in params)
    mask = tuple(i == argnum for i in range(len(params)))
    origin = (core.filename, core.firstline)
    taken = set(params)

    def nm(base: str) -> str:
        while base in taken:
            base += "_"
        taken.add(base)
        return base

    out_, n_, idx_, pieces_, e_, i_, pair_, piece_, jac_ = (
        nm(b) for b in ("out", "n", "indices", "pieces", "e", "i", "pair", "piece", "jac"))
    f_ref = ir.Ref(fn, f"{core.name}")
    body: list[ir.Stmt] = [ir.Assign((out_,), ir.Call(f_ref, args), origin)]
    basis_of = x if forward else ir.Var(out_)
    body.append(ir.Assign((n_,), ir.Call(helper("size"), (basis_of,)), origin))
    body.append(ir.Assign((idx_,), ir.Call(RANGE, (ir.Var(n_),)), origin))
    body.append(ir.Assign((pieces_,), ir.List(()), origin))
    loop: list[ir.Stmt] = [ir.Assign((e_,), ir.Call(helper("basis"), (basis_of, ir.Var(i_))),
                                     origin)]
    if forward:
        callee = callees.jvp_of(fn, mask)
        ref = ir.Ref(callee, f"{core.name}_jvp")
        loop.append(ir.Assign((pair_,), ir.Call(ref, args + (ir.Var(e_),)), origin))
        loop.append(ir.Assign((piece_,), ir.Call(GETITEM, (ir.Var(pair_), ir.Const(1))),
                              origin))
    else:
        callee = callees.vjp_of(fn, mask, "bwd", single=True)
        ref = ir.Ref(callee, f"{core.name}_bwd")
        loop.append(ir.Assign((piece_,), ir.Call(ref, args + (ir.Var(e_),)), origin))
    loop.append(ir.Assign((pieces_,), ir.Call(APPEND, (ir.Var(pieces_), ir.Var(piece_))),
                          origin))
    body.append(ir.For(i_, ir.Var(idx_), loop, origin))
    body.append(ir.Assign((jac_,), ir.Call(helper("stack_jacobian"), (
        ir.Var(pieces_), ir.Var(out_), x, ir.Const(not forward))), origin))
    body.append(ir.Return(ir.Var(jac_), origin))
    kind = "jacfwd" if forward else "jacrev"
    return ir.Function(f"{core.name}_{kind}", params, body, core.defaults, core.filename,
                       core.firstline, None, {"transform": kind})
