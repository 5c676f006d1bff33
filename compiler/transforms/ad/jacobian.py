"""jacfwd and jacrev as Core functions (so that hessian = jacfwd(jacrev(f)) is a transform
of a transform).

A Jacobian is one batched computation, as JAX's: vmap of the function's jvp over the
standard basis of the input space (jacfwd), or of its backward pass over the standard basis
of the output space (jacrev). The basis is batched as a pytree like the argument (one array
for an array), so one source serves every structure of argument and result:

    def f_jacfwd(x):
        basis = ad.standard_basis(x)                 # (n,) + x.shape: one tangent a row
        n = ad.size(x)
        pair = f_jvp_batched(x, basis, n)            # vmap of jvp(f) over the tangents only
        out = pair[0]
        columns = pair[1]
        jac = ad.jacobian_from_columns(columns, out, x)
        return jac

    def f_jacrev(x):
        out = f(x)
        basis = ad.standard_basis(out)               # one cotangent per output element
        n = ad.size(out)
        rows = f_bwd_batched(x, basis, n)            # vmap of f's backward pass
        jac = ad.jacobian_from_rows(rows, out, x)
        return jac

Where a batched result is partly unbatched (a tangent that does not depend on x), it is
broadcast to the n basis vectors (`vm.convert`) before it is read as columns or rows. Where
vmap refuses to batch the jvp or backward pass, the Jacobian is a loop over the basis
vectors, one jvp (backward pass) each, and its docstring says why:

    def f_jacfwd(x):
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


class _Derivative:
    """The jvp (jacfwd) or backward pass (jacrev) of f in one argument, batched over its
    last parameter (the tangent or cotangent) where vmap can batch it."""

    def __init__(self, fn, core: ir.Function, mask: tuple, forward: bool):
        self.forward = forward
        if forward:
            self.fn = callees.jvp_of(fn, mask)
            self.name = f"{core.name}_jvp"
        else:
            self.fn = callees.vjp_of(fn, mask, "bwd", single=True)
            self.name = f"{core.name}_bwd"
        # the basis: one array where the space is known to be one array's (jacrev of a
        # function returning one array), else a pytree of batched leaves
        basis = bt.B if not forward and _result_is_one_array(core, mask.index(True)) else bt.TREE
        self.types = tuple(bt.U for _ in core.params) + (basis,)

    def batched(self) -> tuple[callees.Transformed, bt.BType]:
        """(the batched function, its result's batch type); raises TransformError where
        vmap refuses, or would batch it by a loop over the examples (NeedsExampleLoop)."""
        from redraft.compiler.transforms.batch.infer import infer
        own = self.fn.__redraft_transformable__()  # its errors are the derivative's own
        try:
            result = infer(own, self.types).result
            made = callees.vmap_of(self.fn, self.types)
            made.__redraft_transformable__()
        except TransformError as refused:
            raise _Refused(str(refused)) from refused
        return made, result


def _result_is_one_array(core: ir.Function, argnum: int) -> bool:
    """Whether f's result is one array that depends on argument `argnum`: the batch type
    vmap infers for it, that argument a pytree of batched leaves, is B."""
    from redraft.compiler.transforms.batch.infer import result_type
    types = tuple(bt.TREE if i == argnum else bt.U for i in range(len(core.params)))
    try:
        return result_type(core, types) is bt.B
    except TransformError:
        return False


class _Refused(Exception):
    """vmap cannot batch the derivative: the Jacobian takes the loop."""


def jacobian_function(fn, core: ir.Function, argnum: int, forward: bool,
                      batched: bool = True) -> ir.Function:
    """Core computing d f(params)/d params[argnum], shaped out.shape + x.shape (for pytrees,
    a tree like out of trees like x). `batched=False` builds the loop over basis vectors
    (what vmap's refusal falls back to; tests compare the two)."""
    params = core.params
    x = ir.Var(params[argnum])
    args = tuple(ir.Var(p) for p in params)
    mask = tuple(i == argnum for i in range(len(params)))
    derivative = _Derivative(fn, core, mask, forward)
    b = _Builder(core)
    doc = None
    body: list[ir.Stmt] = []
    try:
        if not batched:
            raise _Refused("the loop was asked for")
        made, result = derivative.batched()
        _batched(fn, core, b, args, x, made, result, derivative, body)
    except _Refused as refused:
        doc = (f"A loop over the basis vectors, one {derivative.name} each: vmap of "
               f"{derivative.name} was refused:\n    {refused}\n    ")
        body = _looped(fn, core, b, args, x, derivative, forward)
    kind = "jacfwd" if forward else "jacrev"
    return tidy(ir.Function(f"{core.name}_{kind}", params, body, core.defaults,
                            core.filename, core.firstline, doc,
                            ir.FunctionMeta(transform=kind)))


def _batched(fn, core, b: _Builder, args, x, made, result: bt.BType, derivative: _Derivative,
             body: list) -> None:
    """One call of the jvp (or backward pass) batched over the standard basis."""
    ref = ir.Ref(made, f"{derivative.name}_batched")
    if derivative.forward:
        basis = b.assign(body, b.name("basis"), ir.Call(helper("standard_basis"), (x,)))
        n = b.assign(body, b.name("n"), ir.Call(helper("size"), (x,)))
        pair = b.assign(body, b.name("pair"), ir.Call(ref, args + (basis, n)))
        primal_t, columns_t = _pair_types(result)
        if bt.is_batched(primal_t):  # the primal batched too (as a loop over examples does)
            out = b.assign(body, b.name("out"), ir.Call(ir.Ref(fn, core.name), args))
        else:
            out = b.assign(body, b.name("out"), ir.Call(GETITEM, (pair, ir.Const(0))))
        columns = b.assign(body, b.name("columns"), ir.Call(GETITEM, (pair, ir.Const(1))))
        columns = _every_leaf_batched(b, body, columns, columns_t, n)
        jac = b.assign(body, b.name("jac"), ir.Call(helper("jacobian_from_columns"),
                                                     (columns, out, x)))
    else:
        out = b.assign(body, b.name("out"), ir.Call(ir.Ref(fn, core.name), args))
        basis = b.assign(body, b.name("basis"), ir.Call(helper("standard_basis"), (out,)))
        n = b.assign(body, b.name("n"), ir.Call(helper("size"), (out,)))
        rows = b.assign(body, b.name("rows"), ir.Call(ref, args + (basis, n)))
        rows = _every_leaf_batched(b, body, rows, result, n)
        jac = b.assign(body, b.name("jac"), ir.Call(helper("jacobian_from_rows"),
                                                     (rows, out, x)))
    body.append(ir.Return(jac, b.origin))


def _pair_types(t: bt.BType) -> tuple[bt.BType, bt.BType]:
    """The batch types of a batched jvp's (primal, tangent)."""
    if isinstance(t, bt.Tuple) and len(t.items) == 2:
        return t.items
    return (t, t) if bt.is_batched(t) else (bt.U, bt.U)


def _every_leaf_batched(b: _Builder, body: list, value: ir.Var, t: bt.BType,
                        n: ir.Var) -> ir.Var:
    """`value` with every leaf batched: a leaf that does not depend on the basis (a zero
    derivative) broadcast to the n basis vectors."""
    if t is bt.B or isinstance(t, bt.Tree) or (bt.batchify(t) == t and t is not bt.U):
        return value
    return b.assign(body, b.name(value.name), ir.Call(vm_ref("convert"), (
        value, ir.Const(t), ir.Const(bt.TREE), n)))


def _looped(fn, core, b: _Builder, args, x, derivative: _Derivative, forward: bool) -> list:
    """A loop over the basis vectors, one jvp (backward pass) each."""
    body: list[ir.Stmt] = []
    out = b.assign(body, b.name("out"), ir.Call(ir.Ref(fn, core.name), args))
    basis_of = x if forward else out
    n = b.assign(body, b.name("n"), ir.Call(helper("size"), (basis_of,)))
    indices = b.assign(body, b.name("indices"), ir.Call(RANGE, (n,)))
    pieces = b.assign(body, b.name("pieces"), ir.List(()))
    i, e, piece = b.name("i"), b.name("e"), b.name("piece")
    loop: list[ir.Stmt] = []
    b.assign(loop, e, ir.Call(helper("basis"), (basis_of, ir.Var(i))))
    ref = ir.Ref(derivative.fn, derivative.name)
    if forward:
        pair = b.assign(loop, b.name("pair"), ir.Call(ref, args + (ir.Var(e),)))
        b.assign(loop, piece, ir.Call(GETITEM, (pair, ir.Const(1))))
    else:
        b.assign(loop, piece, ir.Call(ref, args + (ir.Var(e),)))
    b.assign(loop, pieces.name, ir.Call(APPEND, (pieces, ir.Var(piece))))
    body.append(ir.For(i, indices, loop, b.origin))
    jac = b.assign(body, b.name("jac"), ir.Call(helper("stack_jacobian"), (
        pieces, out, x, ir.Const(not forward))))
    body.append(ir.Return(jac, b.origin))
    return body
