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
from redraft.compiler.frontend.local_functions import Closure, LocalFunction, closure
from redraft.compiler.primitives.registry import defnondiff, defrefuse
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, identity
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.common import GETITEM as _GETITEM
from redraft.compiler.transforms.common import TransformError
from redraft.compiler.transforms.runtime import ad
from redraft.runtime.array import Array


# ---- the code the transforms write ----------------------------------------------------------

def operands(call: ir.Call, origin) -> tuple[ir.Atom, ...]:
    """What the transform of a call through a function value `f(a, b, *xs, k=c)` or a
    method `o.m(a, b, *xs, k=c)` takes: the value called (f, or o), the positional
    arguments, the keyword arguments' values (in the order of `keywords(call)`), then the
    spread sequence, whole (its length is read when the code runs)."""
    head = call.fn.obj if isinstance(call.fn, ir.Attr) else call.fn
    spread = () if call.star_args is None else (call.star_args,)
    return (head,) + call.args + tuple(a for _, a in call.kwargs) + spread


def keywords(call: ir.Call) -> tuple[str, ...]:
    """The names of a call's keyword arguments, in the order `operands` passes them."""
    return tuple(k for k, _ in call.kwargs)


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
    named = (("keywords", ir.Const(keywords(call))),) if call.kwargs else ()
    if call.star_args is not None:
        named += (("spread", call.star_args),)
    return ir.Call(ir.Ref(_REQUESTS[name], f"value_calls.{name}", sys.modules[__name__]), args,
                   named)


def _type_atom(t) -> ir.Atom:
    """A batch type as an atom: a bool literal, or `vm.Tree()` and the like."""
    from redraft.compiler.transforms.runtime import vm
    return ir.Const(t) if isinstance(t, bool) else ir.Ref(t, repr(t), vm)


# ---- what that code calls when it runs ------------------------------------------------------

class _Shape(tuple):
    """How a call through a value passes its arguments: (positional count, keyword names,
    length of the spread sequence or None), from the operand count and the request."""

    def __new__(cls, count: int, keywords: tuple[str, ...], spread):
        n_spread = None if spread is None else len(spread)
        nargs = count - 1 - len(keywords) - (spread is not None)
        return super().__new__(cls, (nargs, tuple(keywords), n_spread))


def jvp_of(fn, mask: tuple[bool, ...], keywords: tuple[str, ...] = (), spread=None):
    """The forward mode of `fn`'s called form: (fn, *args, *keyword values, spread
    sequence, *tangents of the entries `mask` flags, fn's first) -> (result, its
    tangent)."""
    return callees.jvp_of(called_form(fn, *_Shape(len(mask), keywords, spread)), tuple(mask))


def bwd_of(fn, mask: tuple[bool, ...], keywords: tuple[str, ...] = (), spread=None):
    """The reverse mode of `fn`'s called form: (fn, *args, *keyword values, spread
    sequence, result's cotangent) -> the cotangents of the entries `mask` flags (fn's
    first), always as a tuple."""
    return callees.vjp_of(called_form(fn, *_Shape(len(mask), keywords, spread)), tuple(mask),
                          "bwd", single=False)


def method_jvp_of(obj, name: str, mask: tuple[bool, ...], keywords: tuple[str, ...] = (),
                  spread=None):
    """The forward mode of `obj.name(...)` as a function of (obj, *args): as `jvp_of`."""
    shape = _Shape(len(mask), keywords, spread)
    if _builtin_method(obj, name) and _container_method(obj, name) is None:
        return _no_derivative_jvp(name, shape)
    return callees.jvp_of(method_form(obj, name, *shape), tuple(mask))


def method_bwd_of(obj, name: str, mask: tuple[bool, ...], keywords: tuple[str, ...] = (),
                  spread=None):
    """The reverse mode of `obj.name(...)` as a function of (obj, *args): as `bwd_of`."""
    shape = _Shape(len(mask), keywords, spread)
    if _builtin_method(obj, name) and _container_method(obj, name) is None:
        return _no_derivative_bwd(name, mask)
    return callees.vjp_of(method_form(obj, name, *shape), tuple(mask), "bwd", single=False)


def method_form(obj, name: str, nargs: int, keywords: tuple[str, ...] = (),
                n_spread: int | None = None):
    """A function `F` with `F(obj, *args) == obj.name(*args)`: the method as its class
    defines it (obj is its self), or, for a callable that obj holds in an attribute (a
    model's layer), `def F(obj, *args): f = obj.name; return f(*args)`, whose call through
    `f` is a call through a function value again. With `keywords`, `F(obj, *args,
    *values)` passes the last values by those names; with `n_spread`, its last parameter is
    a sequence of that length spread after the positional arguments."""
    plain = not keywords and n_spread is None
    if isinstance(obj, Array):
        found = _array_method(name)
        return found if plain else _forwarding(found, nargs, keywords, n_spread, True)
    container = _container_method(obj, name)
    if container is not None and plain:
        return container
    found = inspect.getattr_static(type(obj), name, None)
    if isinstance(found, types.FunctionType) and name not in getattr(obj, "__dict__", {}):
        return found if plain else _forwarding(found, nargs, keywords, n_spread, True)
    return _ATTRIBUTE_CALLS.setdefault((name, nargs, keywords, n_spread), CoreFunction(
        _attribute_core(name, nargs, keywords, n_spread)))


def _array_method(name: str):
    """`x.name(...)` of an array (one the frontend did not already read as a jnp call):
    redraft.numpy's function of that name, which takes the array first."""
    import redraft.numpy as jnp
    found = getattr(jnp, name, None)
    if found is None:
        raise TransformError(f"the array method .{name}() cannot be differentiated: "
                             f"redraft.numpy has no function {name}")
    return found


_ATTRIBUTE_CALLS: dict[tuple[str, int, tuple], CoreFunction] = {}


def _attribute_core(name: str, nargs: int, keywords: tuple[str, ...] = (),
                    n_spread: int | None = None) -> ir.Function:
    """`def call_name(obj, a0, ..., an, k0, ..., spread): f = obj.name; out = f(a0, ..., an,
    spread[0], ..., key0=k0, ...); return out`."""
    params = ("obj",) + _parameters(nargs, keywords, n_spread)
    body: list[ir.Stmt] = [ir.Assign(("f",), ir.Attr(ir.Var("obj"), name))]
    args, kwargs = _given(params[1:], nargs, keywords, n_spread, body)
    body += [ir.Assign(("out",), ir.Call(ir.Var("f"), args, kwargs)),
             ir.Return(ir.Var("out"))]
    return ir.Function(f"call_{name}", params, body, (), "<redraft call of a method>", 1)


def _parameters(nargs: int, keywords: tuple[str, ...], n_spread: int | None
                ) -> tuple[str, ...]:
    """The parameters of a made function for `nargs` positional arguments, `keywords` and
    a spread sequence (its last parameter) where `n_spread` is not None."""
    return (tuple(f"a{k}" for k in range(nargs)) + tuple(f"kw_{k}" for k in keywords)
            + (("spread",) if n_spread is not None else ()))


def _given(params: tuple[str, ...], nargs: int, keywords: tuple[str, ...],
           n_spread: int | None, body: list) -> tuple[tuple, tuple]:
    """The (positional, keyword) atoms a made function passes on: its own parameters, the
    spread sequence's items read into names by statements appended to `body`."""
    given = tuple(ir.Var(p) for p in params)
    spread: tuple = ()
    if n_spread is not None:
        for k in range(n_spread):
            body.append(ir.Assign((f"s{k}",), ir.Call(_GETITEM, (ir.Var("spread"),
                                                                   ir.Const(k)))))
        spread = tuple(ir.Var(f"s{k}") for k in range(n_spread))
    return given[:nargs] + spread, tuple(zip(keywords, given[nargs:nargs + len(keywords)]))


def _forwarding(fn, nargs: int, keywords: tuple[str, ...], n_spread: int | None,
                self_first: bool):
    """`def F(function, a0, ..., an, k0, ..., spread): out = fn(function?, a0, ..., *spread,
    key0=k0, ...)`: a function of positional parameters only (as every transformed
    function takes them) that calls `fn` with keywords and a spread sequence of a known
    length; `self_first`: the value called is fn's first argument (a method's self), else
    only the way in (fn is that value's own function)."""
    key = ("forwarding", identity(fn), nargs, keywords, n_spread, self_first)
    return TRANSFORM_CACHE.get(fn, key, lambda: CoreFunction(
        _forwarding_core(fn, nargs, keywords, n_spread, self_first)))


def _forwarding_core(fn, nargs: int, keywords: tuple[str, ...], n_spread: int | None,
                     self_first: bool) -> ir.Function:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    path = name if name.isidentifier() else "function_value"
    params = ("function",) + _parameters(nargs, keywords, n_spread)
    body: list[ir.Stmt] = []
    args, kwargs = _given(params[1:], nargs, keywords, n_spread, body)
    head = (ir.Var("function"),) if self_first else ()
    body += [ir.Assign(("out",), _known_call(fn, path, head + args, kwargs)),
             ir.Return(ir.Var("out"))]
    return ir.Function(f"call_{path}", params, body, (), "<redraft call of a function value>",
                       1)


def _known_call(fn, path: str, args: tuple, kwargs: tuple) -> ir.Call:
    """The Core call of the Python callable `fn` with these atoms, keywords bound as the
    frontend binds them in a call written in the source: a local function's captured
    values after its own parameters, a function with keyword-only parameters (or *args,
    **kwargs) called as its specialisation on the call's shape."""
    from redraft.compiler.frontend import call_shape, specialise
    from redraft.compiler.frontend.local_functions import bind_arguments
    if isinstance(fn, LocalFunction) and not fn.captured:
        return ir.Call(ir.Ref(fn.function, path), bind_arguments(fn, args, kwargs))
    if isinstance(fn, Closure):
        values = tuple(ir.Ref(v, f"captured_{k}") for k, v in enumerate(fn.captured))
        if not kwargs:
            return ir.Call(ir.Ref(fn.function, path), args + values)
        names = _core_parameters(fn.function)
        names = names[len(names) - len(values):] if values else ()
        return ir.Call(ir.Ref(fn.function, path), args, kwargs + tuple(zip(names, values)))
    if call_shape.gathers(fn) and not (getattr(fn, "__module__", "") or "").startswith(
            "redraft."):
        shape, flat = call_shape.bind(fn, list(args), dict(kwargs),
                                      lambda name, value: ir.Const(value))
        return ir.Call(ir.Ref(specialise.shaped(fn, shape), path), tuple(flat))
    return ir.Call(ir.Ref(fn, path), args, kwargs)


def _core_parameters(fn) -> tuple[str, ...]:
    core = getattr(fn, "core", None)
    return tuple(core.params) if core is not None else ()


def dict_get(d, key, default=None):
    """`d.get(key, default)` in Python the transforms read: the item is differentiated."""
    if key in d:
        return d[key]
    return default


def dict_copy(d):
    """`d.copy()`: a new dict of the same items, each differentiated."""
    return {k: d[k] for k in d}


def dict_items(d):
    """`d.items()` as a list of pairs, the values differentiated."""
    return [(k, d[k]) for k in d]


def dict_values(d):
    """`d.values()` as a list, each value differentiated."""
    return [d[k] for k in d]


def dict_keys(d):
    """`d.keys()` as a list (names: nothing to differentiate)."""
    return [k for k in d]


def sequence_copy(items):
    """`xs.copy()` of a list: a new list of the same items, each differentiated."""
    return [v for v in items]


_CONTAINER_METHODS = {
    (dict, "get"): dict_get, (dict, "copy"): dict_copy, (dict, "items"): dict_items,
    (dict, "values"): dict_values, (dict, "keys"): dict_keys, (list, "copy"): sequence_copy,
}
# methods of containers whose results are counts, positions or truth values: no derivative
_COUNTING_METHODS = frozenset({"index", "count", "__len__", "__contains__", "isdisjoint",
                               "issubset", "issuperset"})


def _container_method(obj, name: str):
    """The function a container's method runs, where it passes values on (`d.get`,
    `d.copy()`, `d.items()`), as Python the transforms read."""
    for (kind, method), fn in _CONTAINER_METHODS.items():
        if isinstance(obj, kind) and name == method:
            return fn
    return None


def _builtin_method(obj, name: str) -> bool:
    """A method of a Python container or string (`d.get`, `s.format`): plain Python that
    carries no derivative, as in JAX, where it sees no tracer. A container's method that
    may pass its arrays on, with no rule here, is refused rather than read as constant."""
    found = isinstance(getattr(obj, name, None), types.BuiltinMethodType) and not isinstance(
        obj, types.ModuleType)
    if (found and isinstance(obj, (dict, list, tuple, set)) and name not in _COUNTING_METHODS
            and _container_method(obj, name) is None and _holds_arrays(obj)):
        raise TransformError(f"the {type(obj).__name__} method .{name}() passes values on "
                             "that transforms cannot follow yet; build the container anew "
                             "instead (a comprehension, {**d, key: value})")
    return found


def _holds_arrays(obj) -> bool:
    from redraft.runtime.pytree import tree_leaves
    return any(isinstance(leaf, (Array, float)) for leaf in tree_leaves(obj))


def _no_derivative_jvp(name: str, shape: tuple):
    nargs, keywords, n_spread = shape

    def jvp(obj, *rest):
        named = dict(zip(keywords, rest[nargs:nargs + len(keywords)]))
        spread = rest[nargs + len(keywords)] if n_spread is not None else ()
        out = getattr(obj, name)(*rest[:nargs], *spread, **named)
        return out, ad.zeros_like(out)
    return jvp


def _no_derivative_bwd(name: str, mask: tuple[bool, ...]):
    def bwd(obj, *rest):
        operands = (obj,) + rest[:len(mask) - 1]
        return tuple(ad.zeros_like(v) for v, m in zip(operands, mask) if m)
    return bwd


def batched_of(fn, *types, keywords: tuple[str, ...] = (), spread=None) -> CoreFunction:
    """`fn`'s called form batched for operands of batch `types` (fn's first; the keyword
    values and the spread sequence last): (fn, *args, axis size) -> its result with every
    leaf batched (vmap types the call as a Tree)."""
    return _every_leaf_batched(called_form(fn, *_Shape(len(types), keywords, spread)),
                               tuple(types))


def method_batched_of(obj, name: str, *types, keywords: tuple[str, ...] = (),
                      spread=None) -> CoreFunction:
    """`obj.name(...)` batched as a function of (obj, *args): as `batched_of`."""
    return _every_leaf_batched(method_form(obj, name, *_Shape(len(types), keywords, spread)),
                               tuple(types))


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
        if not bt.is_batched(t):  # U, or a container type with no batched leaf (`[]`)
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


def called_form(fn, nargs: int, keywords: tuple[str, ...] = (), n_spread: int | None = None):
    """A function `F` with `F(fn, *args) == fn(*args)` for `nargs` arguments, that the
    transforms can read: the `__call__` of fn's class, or a wrapper calling fn. With
    `keywords`, `F(fn, *args, *values)` passes the last values by those names; with
    `n_spread`, its last parameter is a sequence of that length spread after the args."""
    plain = not keywords and n_spread is None
    method = python_call_method(fn)
    if method is not None:
        return method if plain else _forwarding(method, nargs, keywords, n_spread, True)
    if not plain:
        return _forwarding(fn, nargs, keywords, n_spread, False)
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


defrefuse(closure, "a local function used as a value (returned, kept in a list or dict, or "
          "passed to a function that is not a transform, such as tree_map or a helper of "
          "yours) is differentiated in its arguments, not in the values it captures, and one "
          "of those is differentiated here (JAX would differentiate it; redraft does not yet): "
          "pass that value to the function as an argument instead")
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
