"""Functions specialised for one call, so that reading a call reads a plain function.

A call whose shape the callee gathers (*args, **kwargs, keyword-only parameters) becomes a
call of `fn` specialised on that shape (Shaped); a call passing function values (a loss to a
training step, a method's self) becomes a call of `fn` specialised on them (Bound), whose
Core calls those functions directly. Both read `fn`'s source again through the frontend's
lowering, which compiler/frontend/normalize.py installs here at import (it calls this
module, so this module does not import it).
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

from redraft.compiler.core import ir
from redraft.compiler.frontend.ssa import to_ssa
from redraft.compiler.frontend.static_calls import fold_constructors
from redraft.compiler.tracing.readable import is_traced
from redraft.compiler.tracing.specialise import (install_frontend, specialise_traced_call,
                                                 traced_for)
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state, identity

_LOWERING: list[Callable] = []  # normalize.lower_function


def install_lowering(lower_function: Callable) -> None:
    """The frontend's `lower_function(fn, shape=None, known=None) -> Core`, installed by
    compiler/frontend/normalize.py when it is imported."""
    _LOWERING[:] = [lower_function]


def _lower(fn, *args, **kwargs) -> ir.Function:
    return _LOWERING[0](fn, *args, **kwargs)

# ---- functions specialised on the shape of a call (*args, **kwargs, keyword-only) ---------------

class Shaped:
    """`fn`, whose signature gathers arguments, specialised on one call shape: it takes
    every argument by position (compiler/frontend/call_shape.py gives the order), and its
    Core is the desugared source of `fn`, so every transform reads it as any function."""

    def __init__(self, fn, shape):
        import inspect
        from redraft.compiler.frontend.call_shape import flat_names
        self.fn = fn
        self.shape = shape
        self.__name__ = getattr(fn, "__name__", "f")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
             for n in flat_names(fn, shape)])
        self._core = None

    def __call__(self, *flat):
        from redraft.compiler.frontend.call_shape import unflatten
        args, kwargs = unflatten(self.fn, self.shape, flat)
        return self.fn(*args, **kwargs)

    def __redraft_transformable__(self):
        if self._core is None:
            self._core = fold_static_calls(to_ssa(_lower(self.fn, self.shape),
                                                  coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} for {self.shape}>"




def shaped(fn, shape) -> Shaped:
    """The one specialisation of `fn` on call shape `shape` (cached, so that transforms of
    it are cached too)."""
    return TRANSFORM_CACHE.get(fn, ("shaped", code_state(fn), shape), lambda: Shaped(fn, shape))




def specialise_call(fn, args: tuple, kwargs: dict, static=()) -> tuple[object, tuple,
                                                                       tuple] | None:
    """(callable taking positional arguments only, those arguments) for `fn(*args,
    **kwargs)` when the code that runs gathers arguments (*args, **kwargs, keyword-only
    parameters), directly or under transforms (grad(f), jit(f), vmap(f) re-made around
    f's specialisation), with where each argument came from (call_shape.bind_with_kinds);
    None when it does not, and ordinary binding applies."""
    from redraft.compiler.frontend import call_shape
    inner = getattr(fn, "__redraft_inner__", None)
    if inner is not None and hasattr(fn, "__redraft_rewrap__"):
        found = specialise_call(inner, args, kwargs, set(static) | set(
            getattr(fn, "static", None) or ()))
        if found is None:
            return None
        target, flat, kinds = found
        made = TRANSFORM_CACHE.get(fn, ("rewrapped", identity(target), tuple(kinds)),
                                   lambda: fn.__redraft_rewrap__(target, tuple(kinds)))
        return made, flat, kinds
    if is_traced(fn) and not call_shape.gathers(fn):  # traced per argument structure
        return specialise_traced_call(fn, args, kwargs, static)
    if not call_shape.specialises(fn) or hasattr(fn, "__redraft_transformable__"):
        return None  # (a function whose Core redraft made takes its arguments as they are)
    if rules_for_op(fn) or sampler_batched_by_its_rule(fn):
        return None  # an operation the transforms call as it is (a random sampler)
    shape, flat, kinds = call_shape.bind_with_kinds(fn, list(args), dict(kwargs),
                                                   lambda name, value: value)
    shape = call_shape.with_structure(fn, shape, flat)
    return shaped(fn, shape), tuple(flat), tuple(kinds)


def rules_for_op(fn) -> bool:
    from redraft.compiler.primitives.registry import rules_for
    return rules_for(fn) is not None


def sampler_batched_by_its_rule(fn) -> bool:
    """A random sampler (redraft.random) that vmap batches by a rule of its own: called as
    it is (`vmap(random.categorical)(keys, logits)`), never read from its source, which
    records the sampler (and has no derivative to read anyway)."""
    from redraft.compiler.transforms.batch.batching import batch_entry
    if not (getattr(fn, "__module__", "") or "").startswith("redraft.random"):
        return False
    entry = batch_entry(fn)
    return entry is not None and entry.kind != "source"


def needs_specialising(fn) -> bool:
    """Whether specialise_call can apply to `fn` (it or what it transforms gathers)."""
    from redraft.compiler.frontend.call_shape import specialises
    while hasattr(fn, "__redraft_rewrap__"):
        fn = getattr(fn, "__redraft_inner__", None)
    return (fn is not None and (specialises(fn) or is_traced(fn))
            and not hasattr(fn, "__redraft_transformable__"))


# ---- functions specialised on Python values (function arguments, a method's self) ---------------

def is_function_value(value) -> bool:
    """Whether `value` is a function value that specialisation holds by identity: a plain
    function, lambda, partial, bound method, builtin, transformed or jitted function, or
    custom_jvp/custom_vjp object (an array, a container or a class is not)."""
    import functools
    import types
    from redraft.compiler.frontend.local_functions import Closure, LocalFunction
    from redraft.compiler.transforms.calls.custom import is_custom
    if isinstance(value, type):
        return False
    return (isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                               types.MethodType, functools.partial, LocalFunction, Closure))
            or is_custom(value) or hasattr(value, "__redraft_transformable__"))


@dataclass(frozen=True, eq=False)
class ClosureCode:
    """What a parameter is known to hold: a closure of the lifted local function `function`
    with `count` captured values, which the call passes as extra arguments (so that the
    callee calls `function` directly, and transforms follow the captured values)."""
    function: object
    count: int


def captured_param(param: str, k: int) -> str:
    """The parameter that carries captured value k of the closure passed as `param`."""
    return f"{param}_captured_{k}"


class Bound:
    """`fn` specialised on the values of some of its parameters (a function argument, the
    static arguments of a jitted function, a bound method's self): its Core reads those
    parameters as constants, so a call through a function argument is a call of that
    function, transformed as any other. With `drop`, the known parameters leave the
    signature (a bound method is called without self); otherwise callers still pass them."""

    def __init__(self, fn, known: tuple[tuple[int, object], ...], drop: bool = False):
        import inspect
        self.fn = fn
        self.known = known
        self.drop = drop
        self.__name__ = getattr(fn, "__name__", "f")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        self._captured = tuple(captured_param(names[i], k) for i, v in known
                               if isinstance(v, ClosureCode) for k in range(v.count))
        if drop:
            positions = {i for i, _ in known}
            sig = sig.replace(parameters=[p for i, p in enumerate(sig.parameters.values())
                                          if i not in positions])
        if self._captured:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            sig = sig.replace(parameters=list(sig.parameters.values()) + [
                inspect.Parameter(name, kind, default=None) for name in self._captured])
        self.__signature__ = sig
        self._core = None

    def __call__(self, *args, **kwargs):
        if self._captured:  # a closure's values come last: make the closure again
            args = self._closures_again(args)
        if self.drop:
            full = list(args)
            for i, v in sorted(self.known):
                full.insert(i, v)
            return self.fn(*full, **kwargs)
        return self.fn(*args, **kwargs)

    def _closures_again(self, args: tuple) -> tuple:
        """The arguments `fn` takes: each closure parameter (passed as a placeholder) given
        its Closure, made of the captured values that follow the other arguments."""
        from redraft.compiler.frontend.local_functions import closure
        values = list(args[len(args) - len(self._captured):])
        out = list(args[:len(args) - len(self._captured)])
        for i, v in sorted(self.known, key=lambda kv: kv[0]):
            if isinstance(v, ClosureCode):
                out[i] = closure(v.function, *values[:v.count])
                values = values[v.count:]
        return tuple(out)

    def __redraft_transformable__(self):
        if self._core is None:
            import inspect
            from redraft.compiler.frontend.local_functions import LocalFunction
            names = list(inspect.signature(self.fn).parameters)
            known = {}
            for i, v in self.known:
                if isinstance(v, ClosureCode):
                    v = LocalFunction(names[i], v.function, tuple(
                        captured_param(names[i], k) for k in range(v.count)),
                        _own_parameters(v))
                known[names[i]] = v
            if isinstance(self.fn, Shaped):  # the specialisation of a gathering signature
                core = _lower(self.fn.fn, self.fn.shape, known=known)
            else:
                core = _lower(self.fn, known=known)
            if self._captured:
                core = ir.Function(core.name, core.params + self._captured, core.body,
                                   core.defaults + (None,) * len(self._captured),
                                   core.filename, core.firstline, core.doc, core.meta)
            if self.drop:
                core = ir.Function(core.name, tuple(p for p in core.params if p not in known),
                                   core.body, core.defaults, core.filename, core.firstline,
                                   core.doc, core.meta)
            self._core = fold_static_calls(to_ssa(core, coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} specialised on {dict(self.known)!r}>"




def _own_parameters(code: ClosureCode) -> tuple[str, ...]:
    """A lifted local function's own parameters (its Core's, less the captured values that
    follow them) when none has a default; () (unknown: positional calls only) otherwise."""
    core = getattr(code.function, "core", None)
    if core is None or core.defaults:
        return ()
    return tuple(core.params[:len(core.params) - code.count])


def bound(fn, known: tuple[tuple[int, object], ...], drop: bool = False) -> Bound:
    """The one Bound of `fn` on these values (by identity, cached: transforms of it are
    cached too; the entry keeps the values alive while their ids are in its key)."""
    values = tuple((i, ("closure", identity(v.function), v.count)
                    if isinstance(v, ClosureCode) else identity(v)) for i, v in known)
    return TRANSFORM_CACHE.get(fn, ("bound", code_state(fn), values, drop),
                               lambda: Bound(fn, known, drop))


def _source_function(fn) -> bool:
    """Whether transforms read `fn`'s own source (a plain Python function of the user's)."""
    import types
    from redraft.compiler.transforms.calls.custom import is_custom
    from redraft.compiler.primitives.registry import rules_for
    return (isinstance(fn, types.FunctionType) and not is_custom(fn)
            and rules_for(fn) is None and not hasattr(fn, "__redraft_transformable__")
            and not (getattr(fn, "__module__", "") or "").startswith("redraft"))


def _library_source_function(fn) -> bool:
    """A function of redraft's numpy/scipy/nn libraries or of its pytree utilities that
    transforms read by its source (no rule of its own) and that takes a function (nanmax's
    helper, given jnp.max; tree_map): it is specialised on the function as a user's would
    be."""
    import types
    from redraft.compiler.primitives.registry import rules_for
    module = getattr(fn, "__module__", "") or ""
    return (isinstance(fn, types.FunctionType) and rules_for(fn) is None
            and module.startswith(("redraft.numpy", "redraft.scipy", "redraft.nn",
                                   "redraft.runtime.pytree", "redraft.lax.solves",
                                   "redraft.lax.scatter_updates")))


def _read_by_source(fn) -> bool:
    """A function whose Core is its source's (a user's or a library one), or its
    specialisation on a call shape (Shaped): one that Bound can specialise further."""
    if isinstance(fn, Shaped):
        return _read_by_source(fn.fn)
    return _source_function(fn) or _library_source_function(fn)


def specialise_on_values(fn, args: tuple):
    """`fn` for a call with positional `args`: Bound on its function-valued arguments (and
    a jitted function's static ones) when there are any, else `fn` itself."""
    statics: tuple = ()
    target = fn
    static = getattr(fn, "static", None)
    if type(fn).__name__ == "Jitted" and static and _source_function(fn.fun):
        target = fn.fun
        statics = tuple((i, args[i]) for i in sorted(static) if i < len(args))
    if not _source_function(target):
        return fn
    if is_traced(target):  # traced for the structure of its arguments
        made = traced_for(target, args, {i for i, _ in statics})
        if not statics:
            return made
        kinds = ("position",) * len(args)
        return TRANSFORM_CACHE.get(fn, ("rewrapped", identity(made), kinds),
                                   lambda: fn.__redraft_rewrap__(made, kinds))
    known = dict(statics)
    for i, a in enumerate(args):
        if i not in known and is_function_value(a):
            known[i] = a
        elif i not in known and _callable_object(a):
            known[i] = called_as(type(a))
    if not known:
        return fn
    return bound(target, tuple(sorted(known.items(), key=lambda kv: kv[0])))


class CalledAs:
    """A parameter's known class, whose `__call__` a call through the parameter calls (a
    model object registered as a pytree: its fields stay values, its method is known)."""

    def __init__(self, cls: type):
        self.cls = cls

    def __repr__(self) -> str:
        return f"<an instance of {self.cls.__qualname__}>"


_CALLED_AS: dict[type, CalledAs] = {}


def called_as(cls: type) -> CalledAs:
    hit = _CALLED_AS.get(cls)
    if hit is None:
        hit = _CALLED_AS[cls] = CalledAs(cls)
    return hit


def _callable_object(value) -> bool:
    """An instance of a user's class whose Python `__call__` redraft can read."""
    import types
    call = getattr(type(value), "__call__", None)
    library = ((getattr(type(value), "__module__", "") or "").startswith("redraft")
               and not getattr(type(value), "__redraft_source_call__", False))
    return not isinstance(value, type) and isinstance(call, types.FunctionType) and not library


def specialise_deep(fn, args: tuple):
    """specialise_on_values through transform wrappers: grad(f) called with a function
    value (or a model object) is grad(f specialised), re-made around it and cached; a
    vmap of a dict argument knows its keys (Vmapped.__redraft_for_arguments__)."""
    for_arguments = getattr(fn, "__redraft_for_arguments__", None)
    if for_arguments is not None:
        made = for_arguments(args)
        if made is not fn:
            return specialise_deep(made, args)
    inner = getattr(fn, "__redraft_inner__", None)
    if getattr(fn, "static", None) or inner is None or not hasattr(fn, "__redraft_rewrap__"):
        return specialise_on_values(fn, args)
    target = specialise_deep(inner, args)
    if target is inner:
        return fn
    kinds = ("position",) * len(args)
    return TRANSFORM_CACHE.get(fn, ("rewrapped", identity(target), kinds),
                               lambda: fn.__redraft_rewrap__(target, kinds))




def bound_custom_vjp(fn, known: tuple[tuple[int, object], ...]):
    """A custom_vjp function specialised on function-valued arguments (a fixed-point
    solver's map): its function, fwd and bwd rules each Bound on them (bwd receives the
    nondiff arguments first), so every transform of the rules calls the known function."""
    values = tuple((i, identity(v)) for i, v in known)
    return TRANSFORM_CACHE.get(fn, ("bound custom_vjp", values),
                               lambda: _bind_custom_vjp(fn, known))


def _bind_custom_vjp(fn, known: tuple[tuple[int, object], ...]):
    from redraft.compiler.transforms.calls.custom import custom_vjp
    rules = (fn.fun, fn.fwd, fn.bwd) + ((fn.jvp_rule,) if fn.jvp_rule is not None else ())
    if fn.fwd is None or fn.bwd is None or not all(_read_by_source(f) for f in rules):
        return fn
    n = len(inspect_params(fn.fun))
    nondiff = sorted(i % n for i in fn.nondiff_argnums)
    made = custom_vjp(bound(fn.fun, known), nondiff_argnums=fn.nondiff_argnums)
    bwd_known = tuple((nondiff.index(i), v) for i, v in known if i in nondiff)
    made.defvjp(bound(fn.fwd, known), bound(fn.bwd, bwd_known) if bwd_known else fn.bwd)
    if fn.jvp_rule is not None:  # a forward rule too (lax.custom_root's): it takes them alike
        made.jvp_rule = bound(fn.jvp_rule, bwd_known) if bwd_known else fn.jvp_rule
    return made


def inspect_params(fn) -> tuple[str, ...]:
    import inspect
    return tuple(inspect.signature(fn).parameters)


# ---- calls of known functions with function arguments ----------------------------------------

def fold_static_calls(fn: ir.Function) -> ir.Function:
    """`fn` with calls of constructed function values resolved
    (compiler/frontend/static_calls.py), and calls that pass a known function to a user's
    function made calls of that function specialised on it (bind_function_arguments)."""
    return bind_function_arguments(fold_constructors(fn))


def bind_function_arguments(fn: ir.Function) -> ir.Function:
    """`apply_fn(jnp.tanh, x)` -> `apply_fn_bound(jnp.tanh, x)`: a call of a user's function
    with function values among its arguments calls that function specialised on them
    (Bound), whose Core calls them directly, so every transform follows."""
    from redraft.compiler.transforms.calls.custom import custom_vjp
    closures = _closures_made(fn.body)

    def fix(e):
        if not (isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and e.star_args is None
                and (_read_by_source(e.fn.value) or isinstance(e.fn.value, custom_vjp))):
            return e
        known = tuple((i, a.value) for i, a in enumerate(e.args) if isinstance(a, ir.Ref)
                      and is_function_value(a.value))
        if isinstance(e.fn.value, custom_vjp):
            if not known:
                return e
            target = bound_custom_vjp(e.fn.value, known)
        else:
            known += _function_keywords(e.fn.value, e)
            e = _keywords_placed(e, closures)
            passed, extra = _closure_arguments(e.fn.value, e, closures, {i for i, _ in known})
            known += passed
            if not known:
                return e
            target = bound(e.fn.value, tuple(sorted(known, key=lambda kv: kv[0])))
            # the callee reads a closure through its captured values, passed after the
            # others: the closure itself is not needed (nor differentiated) at the call
            held = {i for i, _ in passed}
            args = tuple(ir.Const(None) if i in held else a for i, a in enumerate(e.args))
            if extra:  # the captured values follow every parameter: the defaults come first
                args += _defaults_after(e.fn.value, len(args))
            return ir.Call(_bound_ref(target, e.fn), args + extra, e.kwargs, e.star_args)
        return ir.Call(_bound_ref(target, e.fn), e.args, e.kwargs, e.star_args)

    changed = [False]

    def fix_counted(e):
        out = fix(e)
        changed[0] |= out is not e
        return out

    body = [_map_calls(s, fix_counted) for s in fn.body]
    if not changed[0]:
        return fn
    body = _without_unread_closures(body, closures)
    return ir.Function(fn.name, fn.params, body, fn.defaults, fn.filename, fn.firstline,
                       fn.doc, fn.meta)


def _bound_ref(target, ref: ir.Ref) -> ir.Ref:
    """The reference to `target`, the specialisation of `ref`'s function: a dotted path
    (`lax.custom_root`) would name the module's own function in generated code, so it is
    spelled as one name (`lax_custom_root`) bound to the specialisation."""
    if "." in ref.path:
        return ir.Ref(target, ref.path.replace(".", "_"))
    return ir.Ref(target, ref.path, ref.root)


def _without_unread_closures(body: list, closures: dict) -> list:
    """`body` less the closure values no statement reads any more (every call that took
    one now takes its captured values): left in, forward mode would differentiate making
    a closure of differentiated values, which it cannot."""
    read = ir.block_reads(body)
    unread = {name for name in closures if name not in read}
    if not unread:
        return body
    return [s for s in body if not (isinstance(s, ir.Assign) and len(s.targets) == 1
                                    and s.targets[0] in unread)]


def _closures_made(body: list) -> dict[str, tuple[object, tuple]]:
    """Locals bound once to a closure value, `t = closure(f_lifted, W, b)` (a local function
    that captures values, passed as an argument): name -> (lifted function, captured atoms)."""
    from redraft.compiler.frontend.local_functions import closure
    made: dict[str, tuple[object, tuple]] = {}
    for s in ir.walk_stmts(body):
        if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.expr, ir.Call)
                and isinstance(s.expr.fn, ir.Ref) and s.expr.fn.value is closure
                and isinstance(s.expr.args[0], ir.Ref)):
            made[s.targets[0]] = (s.expr.args[0].value, tuple(s.expr.args[1:]))
    return made


def _closure_arguments(fn, call: ir.Call, closures: dict, taken: set[int]):
    """For each closure a call passes to `fn` (which takes every argument positionally, of
    positional-or-keyword parameters): (index, ClosureCode) to specialise `fn` on, and the
    captured values, which the call passes after the others."""
    import inspect
    if not closures or call.kwargs:
        return (), ()
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return (), ()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if (len(call.args) > len(params) or any(p.kind not in positional for p in params)
            or any(p.default is p.empty for p in params[len(call.args):])):
        return (), ()
    known, extra = [], ()
    for i, a in enumerate(call.args):
        made = closures.get(a.name) if isinstance(a, ir.Var) else None
        if made is None or i in taken:
            continue
        function, captured = made
        known.append((i, ClosureCode(function, len(captured))))
        extra += captured
    return tuple(known), tuple(extra)


def _keywords_placed(call: ir.Call, closures: dict) -> ir.Call:
    """`call` with its keywords put in their parameters' places when it passes a closure
    (so that the closure specialises the callee as a positional one would); else as it is."""
    from redraft.compiler.transforms.common import TransformError, positional_args
    if not call.kwargs or not any(isinstance(a, ir.Var) and a.name in closures
                                  for a in call.args):
        return call
    try:
        args = positional_args(call, None)
    except TransformError:
        return call
    return ir.Call(call.fn, args, (), call.star_args)


def _defaults_after(fn, n: int) -> tuple[ir.Atom, ...]:
    """The default values of `fn`'s parameters after its first `n`, as atoms."""
    import inspect
    from redraft.compiler.transforms.common import default_atom
    params = list(inspect.signature(fn).parameters.values())[n:]
    return tuple(default_atom(p.name, p.default) for p in params)


def _function_keywords(fn, call: ir.Call) -> tuple[tuple[int, object], ...]:
    """The function values a call gives `fn`'s parameters by keyword, or by leaving them to
    a function-valued default (`def layer(x, activation=jnp.tanh)`), by parameter index."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    given = dict(call.kwargs)
    known = []
    for i, p in enumerate(params):
        if p.kind not in named or i < len(call.args):
            continue
        if p.name in given:
            value = given[p.name]
            if isinstance(value, ir.Ref) and is_function_value(value.value):
                known.append((i, value.value))
        elif p.default is not inspect.Parameter.empty and is_function_value(p.default):
            known.append((i, p.default))
    return tuple(known)


def _map_calls(s: ir.Stmt, fix) -> ir.Stmt:
    """`s` with fix applied to the expression of every assignment and expression statement."""
    if isinstance(s, ir.Assign):
        return ir.Assign(s.targets, fix(s.expr), s.origin)
    if isinstance(s, ir.ExprStmt):
        return ir.ExprStmt(fix(s.expr), s.origin)
    return ir.with_blocks(s, lambda b: [_map_calls(x, fix) for x in b])


install_frontend(fold_static_calls, is_function_value)  # traced functions are read with them
