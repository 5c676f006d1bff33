"""Batching rules of the transform API called inside a batched function: `jvp(f, (x,), (t,))`
becomes a call of f's forward-mode function, which is then batched like any function (so
jacfwd can be written as vmap of jvp).

The public API (redraft.transforms) sits above these rules, so redraft/vmap.py hands its
functions in at import (`register`) instead of this module importing them."""
from redraft.compiler.core import ir
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees, value_calls
from redraft.compiler.transforms.batch.infer import NeedsExampleLoop
from redraft.compiler.transforms.common import where
from redraft.compiler.transforms.batch.rules.common import getitem_ref
from redraft.compiler.transforms.batch.rules.common import same_type_of
from redraft.compiler.transforms.batch.batching import NotStatic, defbatch, defnotbatchable


def _items(b, name: str) -> list:
    t = b.type(name)
    a = b.arg(name)
    if not isinstance(t, bt.Tuple):
        b.fail(f"`jvp` needs `{name}` as a tuple written in the call, such as (x,)")
    return [b.emit(ir.Call(getitem_ref(), (a, ir.Const(i))), typ=it)
            for i, it in enumerate(t.items)]


def _jvp(b):
    from redraft.compiler.transforms.batch.vmap_calls import batch_call
    try:
        fun = b.static("fun")
        has_aux = b.static("has_aux", False)
    except NotStatic:
        b.fail("`jvp` of a function known only at run time cannot be batched")
    if has_aux:
        b.fail("`jvp(..., has_aux=True)` inside vmap is not supported yet")
    primals, tangents = _items(b, "primals"), _items(b, "tangents")
    if len(primals) != len(tangents):
        b.fail(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    callee = callees.jvp_of(fun, tuple(True for _ in primals))
    name = getattr(fun, "__name__", "f").replace("<", "").replace(">", "") or "f"
    call = ir.Call(ir.Ref(callee, f"{name}_jvp"), tuple(primals + tangents))
    return batch_call(b.ctx, call, b.origin, b.out)


def register(transforms) -> None:
    """Entries for the functions of the public transform API (`transforms` is the module
    redraft.transforms): jvp inside vmap, vjp refused, stop_gradient keeps its type."""
    defbatch(transforms.jvp, _jvp)
    defnotbatchable(transforms.vjp, "it returns a function value; batch jacrev, grad or a "
                                    "function that calls vjp_fun instead")
    defbatch(transforms.stop_gradient, same_type_of("x"))


def _per_example_function(b):
    """`value_calls.jvp_of(f, mask)` with `f` batched (a model per example): one
    transformed function per example, which the caller runs as a loop over the examples."""
    raise NeedsExampleLoop(f"{where(b.origin)}vmap: a function value that differs per "
                           "example runs once per example")


for _op in (value_calls.jvp_of, value_calls.bwd_of, value_calls.method_jvp_of,
            value_calls.method_bwd_of, value_calls.batched_of, value_calls.method_batched_of):
    defbatch(_op, _per_example_function)
