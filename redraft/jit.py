"""jit / compile: specialise a function on its arguments' types, compile it once, cache it.

The cache key is the abstract signature: the pytree structure of the arguments, the
(shape, dtype, weak_type) of each array leaf, and the values of static arguments. A new
key compiles again (REDRAFT_LOG_COMPILES=1 says what and why); a known key never does.
jit composes with every transform: grad(jit(f)) differentiates f's source and compiles the
derivative, since transforms read `__redraft_transformable__`.
"""
from __future__ import annotations

import functools
import inspect
import threading
import weakref

import numpy as np
from typing import Any, Callable, Sequence

from redraft.compiler import driver
from redraft.compiler.staging.values import register_transparent
from redraft.runtime.array import Array
from redraft.runtime import numeric_checks
from redraft.runtime.config import DEBUG_CHECKS, x64_enabled
from redraft.runtime.errors import prefix_user_origin
from redraft.runtime.pytree import tree_leaves
from redraft.runtime.staged import StagedBuf
from redraft import switches


class Jitted:
    """The callable `jit(fun)` returns."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = (), device=None):
        functools.update_wrapper(self, fun, updated=())  # never copy fun's __dict__ over ours
        if not hasattr(self, "__name__"):  # a functools.partial, a callable object
            self.__name__ = getattr(getattr(fun, "func", None), "__name__",
                                    type(fun).__name__)
        self.fun = fun
        self._sig = _signature(fun)
        names = list(self._sig.parameters) if self._sig else []
        static = {i if i >= 0 else len(names) + i for i in static_argnums}
        for n in static_argnames:
            if n not in names:
                raise ValueError(f"static_argnames {n!r} is not a parameter of "
                                 f"{getattr(fun, '__name__', fun)}")
            static.add(names.index(n))
        # jit(jnp.linalg.svd): a library function's flags and modes (full_matrices=True,
        # mode="reduced") are options, not data; JAX never traces a default either
        if self._sig is not None and (getattr(fun, "__module__", None) or "").startswith(
                "redraft."):
            static |= {i for i, p in enumerate(self._sig.parameters.values())
                       if isinstance(p.default, (bool, str))}
        self.static = frozenset(static)
        self._static_given = (tuple(static_argnums), tuple(static_argnames))
        from redraft.compiler.frontend.specialise import needs_specialising
        self._gathers = needs_specialising(fun)
        self._cache: dict[driver.Signature, driver.Compiled] = {}
        # calls whose arguments are all host Arrays, Python scalars or NumPy arrays, keyed
        # cheaply by (the x64 flag, fast_key): (compiled, dtype of each parameter, values of
        # the defaulted ones). The flag changes Python scalars' types and the code's defaults.
        self._fast: dict[tuple, tuple[driver.Compiled, tuple, tuple]] = {}
        # fast key -> (the specialised jitted function, the defaults it takes after args)
        self._specialised: dict[tuple, tuple[Callable, tuple]] = {}
        self._device_cache: dict[tuple, object] = {}  # (signature, GPU) -> DeviceCompiled
        self._compiling = threading.RLock()  # reentrant: compiling may call this function
        self._names = names
        self.device = device  # where every call runs (default: where its arguments are)
        _LIVE.add(self)

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        if self._sig is None or (not kwargs and len(args) == len(self._sig.parameters)):
            return args
        bound = self._sig.bind(*args, **kwargs)
        given = [list(self._sig.parameters).index(n) for n in bound.arguments]
        bound.apply_defaults()
        values = tuple(bound.arguments.values())
        # parameters the caller left out keep their Python defaults inside the function, as
        # JAX's jit never traces a default: jit(jnp.linalg.norm) keeps keepdims=False a flag,
        # and a user's `def sim(x, nsteps=30)` keeps `length=nsteps` a compile-time int
        return values[:max(given) + 1] if given else ()

    def __call__(self, *args, **kwargs):
        if switches.jit_disabled():  # inside `with redraft.disable_jit():` run op by op
            return self.fun(*args, **kwargs)
        key = None if kwargs or self.static or self.device else fast_key(args)
        if key is not None:
            entry = self._fast.get((x64_enabled(), key))
            if entry is not None:  # the hot path: no pytrees, no signature objects
                compiled, dtypes, defaults = entry
                out = compiled.call_buffers(_fast_buffers(args + defaults, dtypes))
                if DEBUG_CHECKS[0]:
                    self._check_outputs(out, args, kwargs)
                return out
        if self._gathers:  # *args, **kwargs, keyword-only, traced: compile per call shape
            if key is not None:
                known = self._specialised.get(key)
                if known is not None:  # the hot path of a function specialised per call
                    return known[0](*args, *known[1])
            from redraft.compiler.frontend.specialise import specialise_call
            found = specialise_call(self, args, kwargs)
            if found is not None:
                target, flat = found[0], found[1]
                if key is not None and all(a is b for a, b in zip(flat, args)):
                    # leaves alone fix the specialisation: later calls like this one skip
                    # the binding (the arguments, then the defaults it appended)
                    self._specialised[key] = (target, tuple(flat[len(args):]))
                return target(*flat)
        args = self._positional(args, kwargs)
        for i in self.static:
            if i < len(args):
                _check_hashable(args[i], f"static argument {i}")
        if _any_staged(args):  # jit inside a function being compiled: inline it
            return self._inline(args)
        sig, leaves = driver.signature_of(args, self.static)
        device = driver.placement(args, self.static, leaves, self._names, self.device)
        if device is not None:  # an argument lives on a GPU: compile and run there
            return self._call_on_device(sig, device, args, leaves)
        compiled = self._cache.get(sig)
        if compiled is None:
            compiled = self._compile(sig, args)
        if key is not None and len(compiled.ir.params) == len(args):
            defaults = args[len(key):]  # parameters the caller left to their defaults
            if fast_key(defaults) is not None:
                param_dtypes = tuple(p.aval.dtype for p in compiled.ir.params)
                self._fast[(x64_enabled(), key)] = (compiled, param_dtypes, defaults)
        try:
            out = compiled(leaves)
        except Exception as e:
            prefix_user_origin(e)
            raise
        if DEBUG_CHECKS[0]:
            self._check_outputs(out, args, {})
        return out

    def _check_outputs(self, out, args: tuple, kwargs: dict) -> None:
        """jax_debug_nans/infs: a NaN or an infinity in the outputs runs the function again
        op by op, whose checks name the operation that made it (as JAX's de-optimised
        rerun); if none does, the outputs themselves are the error."""
        kinds = [numeric_checks.bad_value(leaf._value()) for leaf in tree_leaves(out)
                 if isinstance(leaf, Array)]
        kind = next((k for k in kinds if k is not None), None)
        if kind is None:
            return
        previous = switches.set_jit_disabled(True)
        try:
            self.fun(*args, **kwargs)
        finally:
            switches.set_jit_disabled(previous)
        name = getattr(self.fun, "__name__", "function")
        raise FloatingPointError(f"invalid value ({kind}) encountered in the output of "
                                 f"jitted function {name}")

    def _compile(self, sig: driver.Signature, args: tuple) -> driver.Compiled:
        """Compile for `sig` once: threads calling at the same moment (pmap's devices, on
        their first call) wait for the one compiling rather than compile again."""
        with self._compiling:
            compiled = self._cache.get(sig)
            if compiled is not None:
                return compiled
            reason = "first call" if not self._cache else (
                f"new signature ({len(self._cache)} compiled before)")
            driver.log_compile(self.__name__, sig, reason)
            if switches.tracing_forbidden():
                raise RuntimeError(f"{self.__name__} would be compiled ({reason}) inside "
                                   "`with redraft.no_tracing():`")
            compiled = driver.compile_cached(self.fun, args, set(self.static))
            self._cache[sig] = compiled
            return compiled

    def _call_on_device(self, sig: driver.Signature, device, args: tuple, leaves: list):
        compiled = self._device_cache.get((sig, device))
        if compiled is None:
            with self._compiling:
                compiled = self._device_cache.get((sig, device))
                if compiled is None:
                    driver.log_compile(self.__name__, sig, f"first call on {device}")
                    compiled = driver.compile_for_device(self.fun, args, set(self.static),
                                                         device)
                    self._device_cache[(sig, device)] = compiled
        try:
            return compiled(leaves)
        except Exception as e:
            prefix_user_origin(e)
            raise

    def _inline(self, args: tuple):
        from redraft.compiler.staging.interpreter import Interpreter
        from redraft.compiler.transforms.calls.callable_core import core_of
        builder = next(leaf._buf.builder for leaf in tree_leaves(args)
                       if isinstance(leaf, Array) and type(leaf._buf) is StagedBuf)
        return Interpreter(builder).call_function(core_of(self.fun), list(args))

    def lower(self, *args, **kwargs) -> "Lowered":
        """The staged and optimised IR for these arguments (printable), not yet run."""
        args = self._positional(args, kwargs)
        sig, _ = driver.signature_of(args, self.static)
        compiled = self._cache.get(sig) or self._compile(sig, args)
        return Lowered(compiled, self, args)

    def __redraft_transformable__(self):
        from redraft.compiler.transforms.calls.callable_core import core_of
        return core_of(self.fun)

    @property
    def __redraft_inner__(self):
        return self.fun

    def __redraft_rewrap__(self, target: Callable, kinds: tuple) -> "Jitted":
        """This jit around `target`, fun specialised on a call's shape: static argument
        numbers keep their places, static names follow target's flat parameters."""
        nums, names = self._static_given
        flat = list(inspect.signature(target).parameters)
        return Jitted(target, nums, [n for n in names if n in flat])

    @property
    def __redraft_primal__(self):
        return self.fun

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    @property
    def cache_size(self) -> int:
        return len(self._cache) + len(self._device_cache)


register_transparent(Jitted, lambda jitted: jitted.fun)


class Lowered:
    """What `jit(f).lower(*args)` gives: the IR (`.as_text()`), and `.compile()` the
    function compiled for these arguments' shapes and dtypes."""

    def __init__(self, compiled: driver.Compiled, jitted: "Jitted", args: tuple):
        self.compiled = compiled
        self._jitted = jitted
        self._args = args

    def as_text(self) -> str:
        return str(self.compiled.ir)

    def compile(self) -> "CompiledCall":
        return CompiledCall(self.compiled, self._jitted, self._args)

    def __str__(self) -> str:
        return self.as_text()


class CompiledCall:
    """What `jit(f).lower(*args).compile()` gives: called with the non-static arguments
    (the static ones are the lowered call's), of the lowered shapes and dtypes; other
    arguments raise TypeError, as JAX's compiled functions do."""

    def __init__(self, compiled: driver.Compiled, jitted: "Jitted", args: tuple):
        self.compiled = compiled
        self._jitted = jitted
        self._static = {i: args[i] for i in jitted.static if i < len(args)}
        self._signature = driver.signature_of(args, jitted.static)[0]

    def as_text(self) -> str:
        return str(self.compiled.ir)

    def __call__(self, *args):
        full, given = [], iter(args)
        for i in range(len(args) + len(self._static)):
            full.append(self._static[i] if i in self._static else next(given, None))
        if driver.signature_of(tuple(full), self._jitted.static)[0] != self._signature:
            raise TypeError("the compiled function was lowered for other argument shapes or "
                            "dtypes: lower it again for these arguments")
        return self._jitted(*full)


_ndarray = np.ndarray


_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def fast_key(args: tuple) -> tuple | None:
    """A cheap key that fixes the compiled signature, when every argument is a host Array
    ((shape, dtype, weak)), a Python float, bool or int32-sized int (its type: every value
    of one has the same weak type) or a NumPy array ((ndarray, shape, dtype)); else None."""
    key = []
    for a in args:
        kind = type(a)
        if kind is Array:
            buf = a._buf
            if type(buf) is not _ndarray:
                return None
            key.append((buf.shape, buf.dtype, a._weak))
        elif kind is float or kind is bool:
            key.append(kind)
        elif kind is int:
            if not _INT32_MIN <= a <= _INT32_MAX:
                return None
            key.append(kind)
        elif kind is _ndarray:
            key.append((_ndarray, a.shape, a.dtype))
        else:
            return None
    return tuple(key)


def _fast_buffers(args: tuple, dtypes: tuple) -> list:
    """The host buffers of arguments that matched a fast key, as the slow path makes them
    (NumPy arrays converted to the compiled dtype, or passed through when they have it)."""
    return [a._buf if type(a) is Array else _asarray(a, dtype)
            for a, dtype in zip(args, dtypes)]


_asarray = np.asarray


def _signature(fun) -> inspect.Signature | None:
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    inner = fun
    while hasattr(inner, "__wrapped__") and not isinstance(inner, functools.partial):
        inner = inner.__wrapped__
    if isinstance(inner, functools.partial):  # what it leaves open (its Core's parameters)
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.kind in kinds])
    return sig


def _any_staged(args) -> bool:
    return any(isinstance(leaf, Array) and type(leaf._buf) is StagedBuf
               for leaf in tree_leaves(args))


def _check_hashable(value, what: str) -> None:
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"{what} must be hashable, got {type(value).__name__}: static "
                         "arguments are part of the compiled function's cache key") from None


_LIVE: weakref.WeakSet = weakref.WeakSet()  # every Jitted, for clear_compiled


def clear_compiled() -> None:
    """Forget every jitted function's compiled code (each compiles again on its next call)."""
    for jitted in list(_LIVE):
        jitted._cache.clear()
        jitted._fast.clear()
        jitted._device_cache.clear()


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), device=None, **options) -> Any:
    """Compile `fun` for the shapes and dtypes of its arguments (usable as @jit too). It runs
    where its array arguments live, or on `device` (arguments are copied there)."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, device=device, **options)
    own = getattr(fun, "__redraft_jit__", None)
    if own is not None and not static_argnums and not static_argnames and device is None:
        return own()  # e.g. jit(pmap(f)) is pmap(jit(f)): one compiled per-device body
    return Jitted(fun, static_argnums, static_argnames, device)


compile = jit  # noqa: A001 - the design card's name for it


def make_ir(fun: Callable, static_argnums: int | Sequence[int] = ()) -> Callable:
    """make_ir(f)(*args): the SSA IR a call of f with these arguments compiles to."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    def make(*args, **kwargs):
        target = fun.fun if isinstance(fun, Jitted) else fun
        sig = _signature(target)
        if sig is not None and kwargs:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        ir_fn, _ = driver.stage(target, args, set(static_argnums))
        from redraft.compiler.ir.passes import run_pipeline
        return run_pipeline(ir_fn)

    return make


make_jaxpr = make_ir
