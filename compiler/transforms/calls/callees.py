"""Transformed versions of called functions, made on first call and cached.

Generated code calls `g_jvp(...)` or `g_bwd(...)` for the user's other functions; each is a
proxy that transforms `g` the first time it runs (so a function may call itself), then
behaves as the loaded, generated function.
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.core.core_function import CoreFunction
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state, identity

class Transformed:
    """A lazily transformed function: `make()` builds and loads it on first use."""

    def __init__(self, key: tuple, make: Callable[[], Callable], name: str):
        self.key = key
        self.make = make
        self.__name__ = name
        self._fn: Callable | None = None

    @property
    def fn(self) -> Callable:
        if self._fn is None:
            self._fn = self.make()
        return self._fn

    def __call__(self, *args):
        return self.fn(*args)

    @property
    def __redraft_core__(self):
        return self.fn.__redraft_core__

    def __repr__(self) -> str:
        return f"<redraft transformed {self.__name__}>"


def _cached(kind: str, fn, mask: tuple, extra: tuple, make: Callable[[], Callable]):
    """The one Transformed of `fn` for this kind, mask and extra (the transform cache keeps
    it as long as `fn`, and reads `fn` again when its code or closure contents change)."""
    name = f"{getattr(fn, '__name__', 'f')}_{kind}"
    key = (kind, code_state(fn), mask, extra)
    return TRANSFORM_CACHE.get(fn, key, lambda: Transformed(key, make, name))


def jvp_of(fn, mask: tuple[bool, ...]) -> Transformed:
    """`fn`'s forward-mode derivative in the arguments flagged by `mask`."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_vjp):
        from redraft.compiler.transforms.common import TransformError
        raise TransformError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp "
                             f"function ({fn.__name__}); give it a custom_jvp rule instead")

    def make():
        from redraft.compiler.core.loader import load
        from redraft.compiler.transforms.calls.callable_core import core_of
        from redraft.compiler.transforms.ad.jvp import jvp_function
        if isinstance(fn, custom.custom_jvp):
            core = custom.custom_jvp_core(fn, mask)
            return load(core, header=_header(core, "custom forward rule (jvp)"))
        core = core_of(fn)
        return load(jvp_function(core, mask), header=_header(core, "forward mode (jvp)"))
    return _cached("jvp", fn, mask, (), make)


def vjp_of(fn, mask: tuple[bool, ...], mode: str, has_aux: bool = False,
           single: bool | None = None) -> Transformed:
    """`fn`'s reverse-mode derivative: mode 'vjp' (params, out_bar) -> (out, bars),
    'bwd' (params, out_bar) -> bars, 'grad' (params) -> bars of a scalar output."""
    def make():
        from redraft.compiler.core.loader import load
        from redraft.compiler.transforms.calls.callable_core import core_of
        from redraft.compiler.transforms.ad.vjp import vjp_function
        if mode == "bwd" and not has_aux and _is_custom(fn):
            core = _custom_bwd(fn, mask, single if single is not None else sum(mask) == 1)
            return load(core, header=_header(core, "custom reverse rule"))
        core = core_of(fn)
        return load(vjp_function(core, mask, mode, has_aux, single=single),
                    header=_header(core, f"reverse mode ({mode})"))
    return _cached(mode, fn, mask, (has_aux, single), make)


def vmap_of(fn, in_types: tuple) -> Transformed:
    """`fn` batched for arguments of batch types `in_types` (compiler/transforms/batch/vmap.py);
    it takes one more argument, the number of examples."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_jvp):
        return _batched_custom_jvp(fn, tuple(in_types))
    if isinstance(fn, custom.custom_vjp):  # batched as its function; its rule is not
        fn = fn.fun

    def make():
        from redraft.compiler.core.loader import load
        from redraft.compiler.transforms.batch.vmap import NeedsExampleLoop, vmap_function
        from redraft.compiler.transforms.batch.vmap_calls import (batch_core_of,
                                                                  example_loop_function)
        core = batch_core_of(fn)
        try:
            batched = vmap_function(core, in_types)
        except NeedsExampleLoop:
            batched = example_loop_function(fn, core, in_types)
        return load(batched, header=_header(core, "batched (vmap)"))
    return _cached("batched", fn, tuple(in_types), (), make)


def _batched_custom_jvp(fn, in_types: tuple):
    """vmap of a custom_jvp function: again a custom_jvp, whose function is the batched
    function and whose rule is the batched rule, so jvp(vmap(f)) uses the user's rule."""
    from redraft.compiler.transforms.calls import custom
    def build() -> Transformed:
        batched = custom.custom_jvp(vmap_of(fn.fun, in_types).fn)
        if fn.jvp_rule is not None:
            rule = vmap_of(fn.jvp_rule, (("T", in_types), ("T", in_types)))
            batched.jvp_rule = CoreFunction(custom.batched_rule_core(fn, rule, len(in_types)))
        return Transformed(("batched custom_jvp", in_types), lambda: batched,
                           f"{fn.__name__}_batched")
    return TRANSFORM_CACHE.get(fn, ("batched custom_jvp", in_types), build)


def _header(core, what: str) -> str:
    return (f"Generated by redraft: {what} of {core.name}, from {core.filename}:"
            f"{core.firstline}.\nEdit the original function, not this file.")


def _is_custom(fn) -> bool:
    from redraft.compiler.transforms.calls import custom
    return custom.is_custom(fn)


def _custom_bwd(fn, mask: tuple[bool, ...], single: bool):
    """The backward Core of a custom_vjp (its rules) or custom_jvp (its rule, transposed)."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_vjp):
        return custom.custom_vjp_bwd_core(fn, mask, single)
    tangent_map = CoreFunction(custom.custom_jvp_tangent_map(fn))
    linear_mask = tuple(False for _ in mask) + tuple(mask)
    transpose = vjp_of(tangent_map, linear_mask, "bwd", single=single)
    return custom.custom_jvp_bwd_core(fn, mask, transpose)


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
            from redraft.compiler.frontend.normalize import lower_function
            from redraft.compiler.frontend.ssa import to_ssa
            from redraft.compiler.transforms.calls.static_calls import fold_static_calls
            self._core = fold_static_calls(to_ssa(lower_function(self.fn, self.shape),
                                                  coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} for {self.shape}>"




def shaped(fn, shape) -> Shaped:
    """The one specialisation of `fn` on call shape `shape` (cached, so that transforms of
    it are cached too)."""
    return TRANSFORM_CACHE.get(fn, ("shaped", code_state(fn), shape), lambda: Shaped(fn, shape))




def specialise_call(fn, args: tuple, kwargs: dict) -> tuple[object, tuple, tuple] | None:
    """(callable taking positional arguments only, those arguments) for `fn(*args,
    **kwargs)` when the code that runs gathers arguments (*args, **kwargs, keyword-only
    parameters), directly or under transforms (grad(f), jit(f), vmap(f) re-made around
    f's specialisation), with where each argument came from (call_shape.bind_with_kinds);
    None when it does not, and ordinary binding applies."""
    from redraft.compiler.frontend import call_shape
    inner = getattr(fn, "__redraft_inner__", None)
    if inner is not None and hasattr(fn, "__redraft_rewrap__"):
        found = specialise_call(inner, args, kwargs)
        if found is None:
            return None
        target, flat, kinds = found
        made = TRANSFORM_CACHE.get(fn, ("rewrapped", identity(target), tuple(kinds)),
                                   lambda: fn.__redraft_rewrap__(target, tuple(kinds)))
        return made, flat, kinds
    if not call_shape.specialises(fn) or hasattr(fn, "__redraft_transformable__"):
        return None  # (a function whose Core redraft made takes its arguments as they are)
    shape, flat, kinds = call_shape.bind_with_kinds(fn, list(args), dict(kwargs),
                                                   lambda name, value: value)
    shape = call_shape.with_structure(fn, shape, flat)
    return shaped(fn, shape), tuple(flat), tuple(kinds)


def needs_specialising(fn) -> bool:
    """Whether specialise_call can apply to `fn` (it or what it transforms gathers)."""
    from redraft.compiler.frontend.call_shape import specialises
    while hasattr(fn, "__redraft_rewrap__"):
        fn = getattr(fn, "__redraft_inner__", None)
    return (fn is not None and specialises(fn)
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
            or is_custom(value) or hasattr(value, "__redraft_transformable__")
            or hasattr(value, "__redraft_core__"))


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
        if drop:
            positions = {i for i, _ in known}
            sig = sig.replace(parameters=[p for i, p in enumerate(sig.parameters.values())
                                          if i not in positions])
        self.__signature__ = sig
        self._core = None

    def __call__(self, *args, **kwargs):
        if self.drop:
            full = list(args)
            for i, v in sorted(self.known):
                full.insert(i, v)
            return self.fn(*full, **kwargs)
        return self.fn(*args, **kwargs)

    def __redraft_transformable__(self):
        if self._core is None:
            import inspect
            from redraft.compiler.core import ir
            from redraft.compiler.frontend.normalize import lower_function
            from redraft.compiler.frontend.ssa import to_ssa
            from redraft.compiler.transforms.calls.static_calls import fold_static_calls
            names = list(inspect.signature(self.fn).parameters)
            known = {names[i]: v for i, v in self.known if i < len(names)}
            core = lower_function(self.fn, known=known)
            if self.drop:
                core = ir.Function(core.name, tuple(p for p in core.params if p not in known),
                                   core.body, core.defaults, core.filename, core.firstline,
                                   core.doc, core.meta)
            self._core = fold_static_calls(to_ssa(core, coalesce=False))
        return self._core

    def __repr__(self) -> str:
        return f"<redraft {self.__name__} specialised on {dict(self.known)!r}>"




def bound(fn, known: tuple[tuple[int, object], ...], drop: bool = False) -> Bound:
    """The one Bound of `fn` on these values (by identity, cached: transforms of it are
    cached too; the entry keeps the values alive while their ids are in its key)."""
    values = tuple((i, identity(v)) for i, v in known)
    return TRANSFORM_CACHE.get(fn, ("bound", code_state(fn), values, drop),
                               lambda: Bound(fn, known, drop))


def _source_function(fn) -> bool:
    """Whether transforms read `fn`'s own source (a plain Python function of the user's)."""
    import types
    from redraft.compiler.transforms.calls.custom import is_custom
    from redraft.compiler.transforms.ad.registry import rules_for
    return (isinstance(fn, types.FunctionType) and not is_custom(fn)
            and rules_for(fn) is None and not hasattr(fn, "__redraft_transformable__")
            and not hasattr(fn, "__redraft_core__")
            and not (getattr(fn, "__module__", "") or "").startswith("redraft"))


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
    return (not isinstance(value, type) and isinstance(call, types.FunctionType)
            and not (getattr(type(value), "__module__", "") or "").startswith("redraft"))


def specialise_deep(fn, args: tuple):
    """specialise_on_values through transform wrappers: grad(f) called with a function
    value (or a model object) is grad(f specialised), re-made around it and cached."""
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
    if fn.fwd is None or fn.bwd is None or not all(
            _source_function(f) for f in (fn.fun, fn.fwd, fn.bwd)):
        return fn
    n = len(inspect_params(fn.fun))
    nondiff = sorted(i % n for i in fn.nondiff_argnums)
    made = custom_vjp(bound(fn.fun, known), nondiff_argnums=fn.nondiff_argnums)
    bwd_known = tuple((nondiff.index(i), v) for i, v in known if i in nondiff)
    made.defvjp(bound(fn.fwd, known), bound(fn.bwd, bwd_known) if bwd_known else fn.bwd)
    return made


def inspect_params(fn) -> tuple[str, ...]:
    import inspect
    return tuple(inspect.signature(fn).parameters)
