"""Calls through function values: `y = f(x)` where `f` is known only when the code runs (a
layer taken from a list of layers, a callable model object passed in, a function in a dict).

A transform cannot read such a callee when it transforms the caller, so the code it writes
asks for the callee's transform when it runs: `f_jvp = value_calls.jvp_of(f, mask)`, then
`y, y_dot = f_jvp(f, x, f_dot, x_dot)`. Every transformed callee takes the function value
itself first (its "called form"): for an object whose class defines `__call__` in Python,
that method, the object being its self (so the object's arrays are differentiated as any
argument's); for a function, a wrapper that calls it and ignores its first argument. What
`jvp_of` and `bwd_of` return is a transformed function with a Core, cached as any callee's,
so the call through it is staged by jit and can be transformed again (grad of grad).
"""
from __future__ import annotations

import inspect
import sys
import types

from redraft.compiler.core import ir
from redraft.compiler.core.core_function import CoreFunction
from redraft.compiler.frontend.local_functions import Closure, LocalFunction
from redraft.compiler.primitives.registry import defnondiff
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, identity
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.common import TransformError, where
from redraft.compiler.transforms.runtime import ad
from redraft.runtime.array import Array


# ---- the code the transforms write ----------------------------------------------------------

def operands(call: ir.Call, origin) -> tuple[ir.Atom, ...]:
    """What the transform of a call through a function value `f(a, b)` or a method
    `o.m(a, b)` takes: the value called (f, or o), then the arguments."""
    if call.kwargs or call.star_args is not None:
        raise TransformError(f"{where(origin)}a call through the function value "
                             f"`{callee_name(call)}` with keyword or * arguments cannot "
                             "be differentiated yet; pass its arguments by position")
    head = call.fn.obj if isinstance(call.fn, ir.Attr) else call.fn
    return (head,) + call.args


def callee_name(call: ir.Call) -> str:
    return call.fn.name


def transform_request(call: ir.Call, kind: str, spec: tuple) -> ir.Call:
    """`value_calls.jvp_of(f, mask)` (kind "jvp"; "bwd": bwd_of) for a call through `f`,
    `value_calls.method_jvp_of(o, "m", mask)` for a method call `o.m(...)`; kind
    "batched": `value_calls.batched_of(f, *types)`, the operands' batch types spelled as
    generated code spells them (`vm.Tree()`). Made when the code runs."""
    if kind == "batched":
        tail = tuple(_type_atom(t) for t in spec)
    else:
        tail = (ir.Const(spec),)
    if isinstance(call.fn, ir.Attr):
        name = f"method_{kind}_of"
        args = (call.fn.obj, ir.Const(call.fn.name)) + tail
    else:
        name = f"{kind}_of"
        args = (call.fn,) + tail
    return ir.Call(ir.Ref(_REQUESTS[name], f"value_calls.{name}", sys.modules[__name__]), args)


def _type_atom(t) -> ir.Atom:
    """A batch type as an atom: a bool literal, or `vm.Tree()` and the like."""
    from redraft.compiler.transforms.runtime import vm
    return ir.Const(t) if isinstance(t, bool) else ir.Ref(t, repr(t), vm)


# ---- what that code calls when it runs ------------------------------------------------------

def jvp_of(fn, mask: tuple[bool, ...]):
    """The forward mode of `fn`'s called form: (fn, *args, *tangents of the entries `mask`
    flags, fn's first) -> (result, its tangent)."""
    return callees.jvp_of(called_form(fn, len(mask) - 1), tuple(mask))


def bwd_of(fn, mask: tuple[bool, ...]):
    """The reverse mode of `fn`'s called form: (fn, *args, result's cotangent) -> the
    cotangents of the entries `mask` flags (fn's first), always as a tuple."""
    return callees.vjp_of(called_form(fn, len(mask) - 1), tuple(mask), "bwd", single=False)


def method_jvp_of(obj, name: str, mask: tuple[bool, ...]):
    """The forward mode of `obj.name(...)` as a function of (obj, *args): as `jvp_of`."""
    if _builtin_method(obj, name) and _container_method(obj, name) is None:
        return _no_derivative_jvp(name, mask)
    return callees.jvp_of(method_form(obj, name, len(mask) - 1), tuple(mask))


def method_bwd_of(obj, name: str, mask: tuple[bool, ...]):
    """The reverse mode of `obj.name(...)` as a function of (obj, *args): as `bwd_of`."""
    if _builtin_method(obj, name) and _container_method(obj, name) is None:
        return _no_derivative_bwd(name, mask)
    return callees.vjp_of(method_form(obj, name, len(mask) - 1), tuple(mask), "bwd",
                          single=False)


def method_form(obj, name: str, nargs: int):
    """A function `F` with `F(obj, *args) == obj.name(*args)`: the method as its class
    defines it (obj is its self), or, for a callable that obj holds in an attribute (a
    model's layer), `def F(obj, *args): f = obj.name; return f(*args)`, whose call through
    `f` is a call through a function value again."""
    if isinstance(obj, Array):
        return _array_method(name)
    container = _container_method(obj, name)
    if container is not None:
        return container
    found = inspect.getattr_static(type(obj), name, None)
    if isinstance(found, types.FunctionType) and name not in getattr(obj, "__dict__", {}):
        return found
    return _ATTRIBUTE_CALLS.setdefault((name, nargs), CoreFunction(_attribute_core(name,
                                                                                  nargs)))


def _array_method(name: str):
    """`x.name(...)` of an array (one the frontend did not already read as a jnp call):
    redraft.numpy's function of that name, which takes the array first."""
    import redraft.numpy as jnp
    found = getattr(jnp, name, None)
    if found is None:
        raise TransformError(f"the array method .{name}() cannot be differentiated: "
                             f"redraft.numpy has no function {name}")
    return found


_ATTRIBUTE_CALLS: dict[tuple[str, int], CoreFunction] = {}


def _attribute_core(name: str, nargs: int) -> ir.Function:
    """`def call_name(obj, a0, ..., an): f = obj.name; out = f(a0, ..., an); return out`."""
    params = ("obj",) + tuple(f"a{k}" for k in range(nargs))
    body = [ir.Assign(("f",), ir.Attr(ir.Var("obj"), name)),
            ir.Assign(("out",), ir.Call(ir.Var("f"), tuple(ir.Var(p) for p in params[1:]))),
            ir.Return(ir.Var("out"))]
    return ir.Function(f"call_{name}", params, body, (), "<redraft call of a method>", 1)


def dict_get(d, key, default=None):
    """`d.get(key, default)` in Python the transforms read: the item is differentiated."""
    if key in d:
        return d[key]
    return default


def _container_method(obj, name: str):
    """The function a container's method runs, where it passes values on (`d.get`)."""
    return dict_get if isinstance(obj, dict) and name == "get" else None


def _builtin_method(obj, name: str) -> bool:
    """A method of a Python container or string (`d.get`, `s.format`): plain Python that
    carries no derivative, as in JAX, where it sees no tracer."""
    return isinstance(getattr(obj, name, None), types.BuiltinMethodType) and not isinstance(
        obj, types.ModuleType)


def _no_derivative_jvp(name: str, mask: tuple[bool, ...]):
    def jvp(obj, *rest):
        out = getattr(obj, name)(*rest[:len(mask) - 1])
        return out, ad.zeros_like(out)
    return jvp


def _no_derivative_bwd(name: str, mask: tuple[bool, ...]):
    def bwd(obj, *rest):
        operands = (obj,) + rest[:len(mask) - 1]
        return tuple(ad.zeros_like(v) for v, m in zip(operands, mask) if m)
    return bwd


def batched_of(fn, *types) -> CoreFunction:
    """`fn`'s called form batched for operands of batch `types` (fn's first): (fn, *args,
    axis size) -> its result with every leaf batched (vmap types the call as a Tree)."""
    return _every_leaf_batched(called_form(fn, len(types) - 1), tuple(types))


def method_batched_of(obj, name: str, *types) -> CoreFunction:
    """`obj.name(...)` batched as a function of (obj, *args): as `batched_of`."""
    return _every_leaf_batched(method_form(obj, name, len(types) - 1), tuple(types))


def _every_leaf_batched(form, types: tuple) -> CoreFunction:
    return TRANSFORM_CACHE.get(form, ("every leaf batched", types),
                               lambda: CoreFunction(_every_leaf_batched_core(form, types)))


def _every_leaf_batched_core(form, types: tuple) -> ir.Function:
    """`def f(a0, ..., an, axis_size): out = form_batched(a0, ..., an, axis_size); return
    out` with each leaf of `out` that comes back unbatched broadcast to axis_size (by its
    batch type, known now): a function with a Core, which jit stages and the transforms
    transform again."""
    from redraft.compiler.transforms.batch.infer import batch_core_of, callee_result_type
    from redraft.compiler.transforms.common import GETITEM
    from redraft.compiler.transforms.runtime import vm
    defaults = _defaults_after(form, len(types))  # parameters the call leaves to them
    all_types = types + (bt.U,) * len(defaults)
    batched = callees.vmap_of(form, all_types)
    result = callee_result_type(form, batch_core_of(form), all_types)
    params = tuple(f"a{k}" for k in range(len(types))) + ("axis_size",)
    args = tuple(ir.Var(p) for p in params[:-1]) + tuple(ir.Const(d) for d in defaults)
    body: list[ir.Stmt] = [ir.Assign(("out",), ir.Call(ir.Ref(batched, "batched"), args + (
        ir.Var("axis_size"),)))]
    broadcast = ir.Ref(vm.broadcast, "vm.broadcast", vm)
    count = iter(range(1 << 30))

    def leaves_batched(value: ir.Atom, t) -> ir.Atom:
        if bt.is_batched(t) and not isinstance(t, bt.Tuple):
            return value  # batched, or a tree whose every leaf is
        if t is bt.U:
            name = f"t{next(count)}"
            body.append(ir.Assign((name,), ir.Call(broadcast, (value, ir.Var("axis_size")))))
            return ir.Var(name)
        if isinstance(t, bt.Tuple):
            items = []
            for i, item_t in enumerate(t.items):
                name = f"t{next(count)}"
                body.append(ir.Assign((name,), ir.Call(GETITEM, (value, ir.Const(i)))))
                items.append(leaves_batched(ir.Var(name), item_t))
            name = f"t{next(count)}"
            body.append(ir.Assign((name,), ir.Tuple(tuple(items))))
            return ir.Var(name)
        raise TransformError(f"vmap: a call through a function value returning "
                             f"{bt.describe(t)} cannot be batched yet")
    body.append(ir.Return(leaves_batched(ir.Var("out"), result)))
    return ir.Function(f"{getattr(form, '__name__', 'call')}_batched", params, body, (),
                       "<redraft batched call of a function value>", 1)


def _defaults_after(form, given: int) -> tuple:
    """The default values of `form`'s positional parameters after the first `given`."""
    try:
        params = list(inspect.signature(form).parameters.values())
    except (TypeError, ValueError):
        return ()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = positional[given:]
    if any(p.default is inspect.Parameter.empty for p in rest):
        raise TransformError(f"vmap: a call of {getattr(form, '__name__', form)} gives "
                             f"{given} arguments and leaves a parameter without a default")
    return tuple(p.default for p in rest)


def called_form(fn, nargs: int):
    """A function `F` with `F(fn, *args) == fn(*args)` for `nargs` arguments, that the
    transforms can read: the `__call__` of fn's class, or a wrapper calling fn."""
    method = python_call_method(fn)
    if method is not None:
        return method
    return TRANSFORM_CACHE.get(fn, ("called form", identity(fn), nargs),
                               lambda: CoreFunction(_wrapper_core(fn, nargs)))


def python_call_method(fn) -> types.FunctionType | None:
    """`type(fn).__call__` where calling `fn` runs that Python method with fn as self (a
    model object); None for a function, a bound method, a partial or an operation."""
    from redraft.compiler.frontend.specialise import is_function_value
    if is_function_value(fn):
        return None
    method = getattr(type(fn), "__call__", None)
    return method if isinstance(method, types.FunctionType) else None


def _wrapper_core(fn, nargs: int) -> ir.Function:
    """`def called(function, a0, ..., an): out = fn(a0, ..., an); return out`. A local
    function of the user's (lifted: compiler/frontend/local_functions.py) is called as its
    lifted function, a closure's captured values passed after the arguments (as constants:
    what it captured is not differentiated through this call)."""
    captured: tuple = ()
    if isinstance(fn, LocalFunction) and not fn.captured:
        fn = fn.function
    elif isinstance(fn, Closure):
        fn, captured = fn.function, fn.captured
    name = getattr(fn, "__name__", None) or type(fn).__name__
    path = name if name.isidentifier() else "function_value"
    params = ("function",) + tuple(f"a{k}" for k in range(nargs))
    extra = tuple(ir.Ref(v, f"captured_{k}") for k, v in enumerate(captured))
    call = ir.Call(ir.Ref(fn, path), tuple(ir.Var(p) for p in params[1:]) + extra)
    body = [ir.Assign(("out",), call), ir.Return(ir.Var("out"))]
    return ir.Function(f"call_{path}", params, body, (), "<redraft call of a function value>",
                       1)


defnondiff(jvp_of, "it makes a transformed function, a Python value with no derivative")
defnondiff(bwd_of, "it makes a transformed function, a Python value with no derivative")
defnondiff(method_jvp_of, "it makes a transformed function, a Python value with no derivative")
defnondiff(batched_of, "it makes a transformed function, a Python value with no derivative")
defnondiff(method_batched_of, "it makes a transformed function, a Python value with no "
           "derivative")
defnondiff(method_bwd_of, "it makes a transformed function, a Python value with no derivative")

# what transform_request's code calls, by name
_REQUESTS = {"jvp_of": jvp_of, "bwd_of": bwd_of, "method_jvp_of": method_jvp_of,
             "method_bwd_of": method_bwd_of, "batched_of": batched_of,
             "method_batched_of": method_batched_of}
