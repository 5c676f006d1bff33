"""lax's structured control flow, lowered to Core's own loops and branches.

`lax.fori_loop(lo, hi, body, x)` becomes `for i in range(lo, hi): x = body(i, x)`, and
likewise while_loop, cond, switch, scan and map. The transforms then treat them as any
Python loop or branch (derivatives, batching, compilation), with no rules of their own.
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Callable

import gast

from redraft.compiler.core import helpers
from redraft.compiler.core import ir
from redraft.compiler.primitives import control as lax_control
from redraft.compiler.transforms.cache import IdentityTable

CONTROL_MODULE = "redraft.compiler.primitives.control"
RANGE = ir.Ref(range, "range")
APPEND = ir.Ref(helpers.append, "append")
GETITEM = ir.Ref(operator.getitem, "[]")


CLOSURES_MODULE = "redraft.closures"


def lowering_for(value) -> Callable | None:
    """The lowering of a lax control-flow function (or of functools.reduce, or of
    closure_convert / packed_closure), if `value` is one."""
    if value is functools.reduce:
        return reduce
    module = getattr(value, "__module__", None)
    if module == CLOSURES_MODULE:
        return CLOSURE_LOWERINGS.get(getattr(value, "__name__", ""))
    if module != CONTROL_MODULE:
        return None
    return LOWERINGS.get(getattr(value, "__name__", ""))


def _helper(name: str) -> ir.Ref:
    return ir.Ref(getattr(helpers, name), name)


def call(lw, fn: ir.Atom, args: tuple, out: list, node, target: str | None = None) -> ir.Var:
    """Emit a call of function value `fn` as a call written in the source would be (a local
    function gets its captured values, a partial its held arguments, an object its
    `__call__`)."""
    expr = lw.call_value(node, fn, list(args), [], None, out)
    if isinstance(expr, ir.Var) and target is None:
        return expr
    return lw.emit(out, node, expr, target)


def _function_arg(lw, node, out) -> ir.Atom:
    from redraft.compiler.frontend.local_functions import ThreadingLocal
    atom = lw.expr(node, out)
    if isinstance(atom, ir.Const):
        lw.fail(node, f"{atom.value!r} is not a function")
    if isinstance(atom, ir.Ref) and isinstance(atom.value, ThreadingLocal):
        lw.refuse_escape(node, atom.value)  # JAX traces it once: the assignment would leak
    return atom


def _args(node, count: int, name: str, lw) -> list:
    """The call's argument nodes in the order of lax.<name>'s parameters. A keyword goes
    where its parameter stands, and a parameter left out before the last one given is its
    default; keyword-only options (`unroll`, `batch_size`) leave the result unchanged and
    are read by nothing here."""
    args = list(node.args)
    if node.keywords:
        args = _place_keywords(node, args, name, lw)
    if len(args) < count:
        lw.fail(node, f"lax.{name} takes at least {count} arguments, got {len(args)}")
    return args


def _place_keywords(node, args: list, name: str, lw) -> list:
    signature = inspect.signature(getattr(lax_control, name))
    positional = [p for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    slots = {p.name: k for k, p in enumerate(positional)}
    given: dict[int, object] = {}
    for kw in node.keywords:
        if kw.arg is None:
            lw.fail(node, f"lax.{name}: **kwargs in its call is not read in transformed code")
        param = signature.parameters.get(kw.arg)
        if param is not None and param.kind is param.KEYWORD_ONLY:
            continue
        if kw.arg not in slots:
            lw.fail(node, f"lax.{name}() got an unexpected keyword argument '{kw.arg}'")
        if slots[kw.arg] < len(args):
            lw.fail(node, f"lax.{name}() got multiple values for argument '{kw.arg}'")
        given[slots[kw.arg]] = kw.value
    for k in range(len(args), max(given, default=-1) + 1):
        if k in given:
            args.append(given[k])
        elif positional[k].default is inspect.Parameter.empty:
            lw.fail(node, f"lax.{name}() missing argument '{positional[k].name}'")
        else:
            default = gast.Constant(value=positional[k].default, kind=None)
            args.append(gast.copy_location(default, node))
    return args


def fori_loop(lw, node, out: list) -> ir.Atom:
    lo, hi, body, init = _args(node, 4, "fori_loop", lw)[:4]
    val = lw.fresh_local("val")
    lw.expr(init, out, target=val)
    bounds = lw.emit(out, node, ir.Call(RANGE, (lw.expr(lo, out), lw.expr(hi, out))))
    fn = _function_arg(lw, body, out)
    i = lw.fresh_local("i")
    loop: list[ir.Stmt] = []
    call(lw, fn, (ir.Var(i), ir.Var(val)), loop, node, target=val)
    out.append(ir.For(i, bounds, loop, lw.origin(node)))
    return ir.Var(val)


def reduce(lw, node, out: list) -> ir.Atom:
    """`functools.reduce(fn, items[, initial])` is the loop it stands for:
    `acc = initial; for item in items: acc = fn(acc, item)` (without `initial`, the first
    item starts and the rest are folded in)."""
    if node.keywords or not 2 <= len(node.args) <= 3:
        lw.fail(node, "functools.reduce(function, iterable[, initial]) takes 2 or 3 "
                      "positional arguments")
    fn = _function_arg(lw, node.args[0], out)
    items = lw.expr(node.args[1], out)
    acc = lw.fresh_local("acc")
    if len(node.args) == 3:
        lw.expr(node.args[2], out, target=acc)
    else:
        out.append(ir.Assign((acc,), ir.Call(GETITEM, (items, ir.Const(0))), lw.origin(node)))
        items = lw.emit(out, node, ir.Call(GETITEM, (items, ir.Const(slice(1, None)))))
    item = lw.fresh_local("item")
    body: list[ir.Stmt] = []
    call(lw, fn, (ir.Var(acc), ir.Var(item)), body, node, target=acc)
    out.append(ir.For(item, items, body, lw.origin(node)))
    return ir.Var(acc)


def while_loop(lw, node, out: list) -> ir.Atom:
    cond_fun, body_fun, init = _args(node, 3, "while_loop", lw)[:3]
    val = lw.fresh_local("val")
    lw.expr(init, out, target=val)
    cond_fn, body_fn = _function_arg(lw, cond_fun, out), _function_arg(lw, body_fun, out)
    cond_body: list[ir.Stmt] = []
    go = call(lw, cond_fn, (ir.Var(val),), cond_body, node)
    body: list[ir.Stmt] = []
    call(lw, body_fn, (ir.Var(val),), body, node, target=val)
    out.append(ir.While(cond_body, go, body, lw.origin(node)))
    return ir.Var(val)


def cond(lw, node, out: list) -> ir.Atom:
    args = _args(node, 3, "cond", lw)
    pred = lw.expr(args[0], out)
    true_fn, false_fn = _function_arg(lw, args[1], out), _function_arg(lw, args[2], out)
    operands = tuple(lw.expr(a, out) for a in args[3:])
    result = lw.fresh_local("branch_out")
    then, orelse = [], []
    call(lw, true_fn, operands, then, node, target=result)
    call(lw, false_fn, operands, orelse, node, target=result)
    out.append(ir.If(pred, then, orelse, lw.origin(node)))
    return ir.Var(result)


def switch(lw, node, out: list) -> ir.Atom:
    args = _args(node, 2, "switch", lw)
    index = lw.expr(args[0], out)
    branches = _branch_atoms(lw, args[1], out)
    operands = tuple(lw.expr(a, out) for a in args[2:])
    which = lw.emit(out, node, ir.Call(_helper("clamp_index"),
                                       (index, ir.Const(len(branches)))))
    result = lw.fresh_local("branch_out")
    out.extend(_switch_chain(lw, node, which, branches, operands, result, 0))
    return ir.Var(result)


def _branch_atoms(lw, node, out) -> list[ir.Atom]:
    if isinstance(node, (gast.List, gast.Tuple)):
        return [_function_arg(lw, e, out) for e in node.elts]
    atom = lw.expr(node, out)
    if isinstance(atom, ir.Ref) and isinstance(atom.value, (list, tuple)):
        return [ir.Ref(f, getattr(f, "__name__", f"{atom.path}[{k}]"))
                for k, f in enumerate(atom.value)]
    lw.fail(node, "lax.switch needs its branches as a list or tuple known when the function "
                  "is read (a literal, or a global)")


def _switch_chain(lw, node, which, branches, operands, result, k) -> list[ir.Stmt]:
    body: list[ir.Stmt] = []
    if k == len(branches) - 1:
        call(lw, branches[k], operands, body, node, target=result)
        return body
    test = lw.emit(body, node, ir.Call(ir.Ref(helpers.equals, "=="), (which, ir.Const(k))))
    then: list[ir.Stmt] = []
    call(lw, branches[k], operands, then, node, target=result)
    orelse = _switch_chain(lw, node, which, branches, operands, result, k + 1)
    body.append(ir.If(test, then, orelse, lw.origin(node)))
    return body


def scan(lw, node, out: list) -> ir.Atom:
    args = _args(node, 2, "scan", lw)
    fn = _function_arg(lw, args[0], out)
    carry = lw.fresh_local("carry")
    lw.expr(args[1], out, target=carry)
    xs = lw.expr(args[2], out) if len(args) > 2 else ir.Const(None)
    length = lw.expr(args[3], out) if len(args) > 3 else ir.Const(None)
    reverse = lw.expr(args[4], out) if len(args) > 4 else ir.Const(False)
    result = _scan_loop(lw, node, out, fn, xs, length, reverse, carry)
    return result


def _scan_loop(lw, node, out, fn, xs, length, reverse, carry: str | None) -> ir.Atom:
    n = lw.emit(out, node, ir.Call(_helper("scan_length"), (xs, length)))
    order = lw.emit(out, node, ir.Call(_helper("scan_indices"), (n, reverse)))
    ys = lw.fresh_local("ys")
    out.append(ir.Assign((ys,), ir.List(()), lw.origin(node)))
    i = lw.fresh_local("i")
    loop: list[ir.Stmt] = []
    x = lw.emit(loop, node, ir.Call(_helper("tree_index"), (xs, ir.Var(i))))
    if carry is None:
        y = call(lw, fn, (x,), loop, node)
    else:
        pair = call(lw, fn, (ir.Var(carry), x), loop, node)
        y_name = lw.fresh_local("y")
        loop.append(ir.Assign((carry, y_name), pair, lw.origin(node)))
        y = ir.Var(y_name)
    lw.emit(loop, node, ir.Call(APPEND, (ir.Var(ys), y)), ys)
    out.append(ir.For(i, order, loop, lw.origin(node)))
    stacked = lw.emit(out, node, ir.Call(_helper("tree_stack"), (ir.Var(ys), reverse)))
    if carry is None:
        return stacked
    return lw.emit(out, node, ir.Tuple((ir.Var(carry), stacked)))


def map_(lw, node, out: list) -> ir.Atom:
    args = _args(node, 2, "map", lw)
    fn = _function_arg(lw, args[0], out)
    xs = lw.expr(args[1], out)
    return _scan_loop(lw, node, out, fn, xs, ir.Const(None), ir.Const(False), None)


def closure_convert(lw, node, out: list) -> ir.Atom | None:
    """`closure_convert(f, *example_args)` of a local function: the lifted function (its
    captured values are its trailing parameters) and the list of those values. Any other
    function is left to the call of redraft.closures.closure_convert (None)."""
    local = _local_function(lw, node, "closure_convert", out)
    if local is None:
        return None
    consts = lw.emit(out, node, ir.List(tuple(ir.Var(n) for n in local.captured)))
    return lw.emit(out, node, ir.Tuple((ir.Ref(local.function, local.name), consts)))


def packed_closure(lw, node, out: list) -> ir.Atom | None:
    """`packed_closure(f)` of a local function capturing c0..cn: a function `packed(x, consts)`
    calling the lifted function as `lifted(x, consts[0], ..., consts[n])`, and the tuple of
    the captured values. Any other function is left to the call of
    redraft.closures.packed_closure (None)."""
    local = _local_function(lw, node, "packed_closure", out)
    if local is None:
        return None
    consts = lw.emit(out, node, ir.Tuple(tuple(ir.Var(n) for n in local.captured)))
    packed = packed_function(local.function, len(local.captured), local.name)
    return lw.emit(out, node, ir.Tuple((ir.Ref(packed, packed.__name__), consts)))


def _local_function(lw, node, name: str, out: list):
    """The local function a call's first argument names (its statements added to `out`),
    or None, adding nothing, when it is not one."""
    from redraft.compiler.frontend.local_functions import LocalFunction
    if not node.args or node.keywords:
        return None
    scratch: list = []
    fn = _function_arg(lw, node.args[0], scratch)
    if not (isinstance(fn, ir.Ref) and isinstance(fn.value, LocalFunction)):
        return None
    out.extend(scratch)
    return fn.value


_PACKED = IdentityTable()  # lifted function -> its packed CoreFunction


def packed_function(lifted, count: int, name: str):
    """The CoreFunction `packed(x, consts)` of a lifted function with `count` captured
    values, made once per lifted function (kept alive with it)."""
    from redraft.compiler.core.core_function import CoreFunction
    made = _PACKED.get(lifted)
    if made is not None:
        return made
    body: list[ir.Stmt] = []
    items = []
    for k in range(count):
        body.append(ir.Assign((f"c{k}",), ir.Call(GETITEM, (ir.Var("consts"), ir.Const(k)))))
        items.append(ir.Var(f"c{k}"))
    body.append(ir.Assign(("out",), ir.Call(ir.Ref(lifted, name), (ir.Var("x"),) + tuple(items))))
    body.append(ir.Return(ir.Var("out")))
    core = lifted.__redraft_transformable__()
    function = CoreFunction(ir.Function(f"{name}_packed", ("x", "consts"), body, (),
                                        core.filename, core.firstline))
    _PACKED[lifted] = function
    return function


def platform_dependent(lw, node, out: list) -> ir.Atom:
    """`lax.platform_dependent(*args, default=f, cpu=g, ...)`: a call of the branch for the
    platform redraft compiles for (lax_control.platform_branch), chosen when the source is
    read; the other branches are never read."""
    if any(isinstance(a, gast.Starred) for a in node.args) or any(
            kw.arg is None for kw in node.keywords):
        lw.fail(node, "lax.platform_dependent: *args and **kwargs in its call are not read "
                      "in transformed code; pass the arguments and branches one by one")
    branches = {kw.arg: kw.value for kw in node.keywords}
    default = branches.pop("default", None)
    try:
        chosen = lax_control.platform_branch(default, branches)
    except NotImplementedError as e:
        lw.fail(node, str(e))
    fn = _function_arg(lw, chosen, out)
    operands = tuple(lw.expr(a, out) for a in node.args)
    return call(lw, fn, operands, out, node)


LOWERINGS: dict[str, Callable] = {"fori_loop": fori_loop, "while_loop": while_loop,
                                  "cond": cond, "switch": switch, "scan": scan, "map": map_,
                                  "platform_dependent": platform_dependent}
CLOSURE_LOWERINGS: dict[str, Callable] = {"closure_convert": closure_convert,
                                          "packed_closure": packed_closure}
