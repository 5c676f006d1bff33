"""jacfwd and jacrev as Core functions (so that hessian = jacfwd(jacrev(f)) is a transform
of a transform).

For an array argument and an array result the Jacobian is one batched computation: vmap of
the function's jvp over the basis of the input space (jacfwd), or of its backward pass over
the basis of the output space (jacrev). Pytrees take a loop over the basis vectors instead:

    def f_jacfwd(x):                                 # x one array
        out = f(x)
        basis = vm.basis_rows(x)                     # one tangent per input element
        n = ad.size(x)
        pair = f_jvp_batched(x, basis, n)            # vmap(jvp(f)) over the tangents
        cols = pair[1]
        jac = vm.columns_to_jacobian(cols, out, x)
        return jac

    def f_jacfwd(x):                                 # x a pytree (or not known)
        out = f(x)
        n = ad.size(x)
        indices = range(n)
        pieces = []
        for i in indices:
            e = ad.basis(x, i)
            pair = f_jvp(x, e)
            piece = pair[1]
            pieces = append(pieces, piece)
        jac = ad.stack_jacobian(pieces, out, x, rows_first=False)
        return jac

No source branches at run time on a value's type; each choice is made when the source is
built. Whether `out` is one array comes from the batch type vmap's analysis infers for f's
result (an array batched by x; a container, a pytree of unknown structure or a result that
does not depend on x take the loop alone). jacrev then is one backward pass `f_bwd` batched
over the basis of out's space (a pytree x takes its rows leaf by leaf). Whether x is one
array is not in f's Core: jacfwd called on arguments is built for the x it is given
(`x_is_array`): the batched jvp for an array, the loop for a pytree. Read with no argument
at hand (`redraft emit`, a transform of the jacfwd function itself) it is built for the most
general x, a pytree (one array is a pytree of one leaf): the loop, correct for both.
"""
from __future__ import annotations

import operator

from redraft.compiler.core import helpers as core_helpers
from redraft.compiler.core import ir
from redraft.compiler.core.names import Names
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.common import TransformError, helper
from redraft.compiler.transforms.tidy import tidy
from redraft.compiler.transforms.batch.vmap_refs import vm_ref

RANGE = ir.Ref(range, "range")
APPEND = ir.Ref(core_helpers.append, "append")
GETITEM = ir.Ref(operator.getitem, "[]")


class _Builder:
    """Fresh names (never a parameter's) and statements for one Jacobian function."""

    def __init__(self, core: ir.Function):
        self.names = Names(core.params)
        self.origin = (core.filename, core.firstline)

    def name(self, base: str) -> str:
        return self.names.local(base)

    def assign(self, out: list, target: str, expr: ir.Expr) -> ir.Var:
        out.append(ir.Assign((target,), expr, self.origin))
        return ir.Var(target)


def jacobian_function(fn, core: ir.Function, argnum: int, forward: bool,
                      x_is_array: bool | None = None) -> ir.Function:
    """Core computing d f(params)/d params[argnum], shaped out.shape + x.shape.

    `x_is_array` says whether that argument is one array (True) or a pytree (False), where
    the caller knows; None (not known) builds jacfwd for the most general x, a pytree."""
    params = core.params
    x = ir.Var(params[argnum])
    args = tuple(ir.Var(p) for p in params)
    mask = tuple(i == argnum for i in range(len(params)))
    b = _Builder(core)
    body: list[ir.Stmt] = []
    out = b.assign(body, b.name("out"), ir.Call(ir.Ref(fn, core.name), args))
    jac = b.name("jac")
    # a batched jvp needs x's basis as one array of rows: x known to be one array
    if not _result_is_one_array(core, argnum) or (forward and not x_is_array):
        body.extend(_looped(fn, core, b, args, x, out, mask, forward, jac))
    else:
        body.extend(_batched(fn, core, b, args, x, out, mask, forward, jac))
    body.append(ir.Return(ir.Var(jac), b.origin))
    kind = "jacfwd" if forward else "jacrev"
    return tidy(ir.Function(f"{core.name}_{kind}", params, body, core.defaults,
                            core.filename, core.firstline, None, ir.FunctionMeta(transform=kind)))


def _result_is_one_array(core: ir.Function, argnum: int) -> bool:
    """Whether f's result is one array that depends on argument `argnum`, whatever that
    argument's structure: the batch type vmap infers for the result with the argument a
    pytree of batched leaves is B (a container type, a pytree of unknown structure, or
    unbatched, say nothing of it being one array)."""
    from redraft.compiler.transforms.batch.infer import result_type
    types = tuple(bt.TREE if i == argnum else bt.U for i in range(len(core.params)))
    try:
        return result_type(core, types) is bt.B
    except TransformError:
        return False


def _batched(fn, core, b: _Builder, args, x, out, mask, forward: bool, jac: str) -> list:
    """One call of the jvp (or backward pass) batched over the basis vectors."""
    body: list[ir.Stmt] = []
    basis_of = x if forward else out
    basis = b.assign(body, b.name("basis"), ir.Call(vm_ref("basis_rows"), (basis_of,)))
    n = b.assign(body, b.name("n"), ir.Call(helper("size"), (basis_of,)))
    types = tuple(bt.U for _ in args) + (bt.B,)
    if forward:
        callee = callees.vmap_of(callees.jvp_of(fn, mask), types)
        pair = b.assign(body, b.name("pair"), ir.Call(
            ir.Ref(callee, f"{core.name}_jvp_batched"), args + (basis, n)))
        cols = b.assign(body, b.name("cols"), ir.Call(GETITEM, (pair, ir.Const(1))))
        b.assign(body, jac, ir.Call(vm_ref("columns_to_jacobian"), (cols, out, x)))
    else:
        callee = callees.vmap_of(callees.vjp_of(fn, mask, "bwd", single=True), types)
        rows = b.assign(body, b.name("rows"), ir.Call(
            ir.Ref(callee, f"{core.name}_bwd_batched"), args + (basis, n)))
        b.assign(body, jac, ir.Call(vm_ref("rows_to_jacobian"), (rows, out, x)))
    return body


def _looped(fn, core, b: _Builder, args, x, out, mask, forward: bool, jac: str) -> list:
    """A loop over the basis vectors (pytree arguments and results)."""
    body: list[ir.Stmt] = []
    basis_of = x if forward else out
    n = b.assign(body, b.name("n"), ir.Call(helper("size"), (basis_of,)))
    indices = b.assign(body, b.name("indices"), ir.Call(RANGE, (n,)))
    pieces = b.assign(body, b.name("pieces"), ir.List(()))
    i, e, piece = b.name("i"), b.name("e"), b.name("piece")
    loop: list[ir.Stmt] = []
    b.assign(loop, e, ir.Call(helper("basis"), (basis_of, ir.Var(i))))
    if forward:
        ref = ir.Ref(callees.jvp_of(fn, mask), f"{core.name}_jvp")
        pair = b.assign(loop, b.name("pair"), ir.Call(ref, args + (ir.Var(e),)))
        b.assign(loop, piece, ir.Call(GETITEM, (pair, ir.Const(1))))
    else:
        ref = ir.Ref(callees.vjp_of(fn, mask, "bwd", single=True), f"{core.name}_bwd")
        b.assign(loop, piece, ir.Call(ref, args + (ir.Var(e),)))
    b.assign(loop, pieces.name, ir.Call(APPEND, (pieces, ir.Var(piece))))
    body.append(ir.For(i, indices, loop, b.origin))
    b.assign(body, jac, ir.Call(helper("stack_jacobian"), (pieces, out, x,
                                                           ir.Const(not forward))))
    return body
