"""The transforms users call: grad, value_and_grad, jvp, vjp, linearize, jacfwd, jacrev,
jacobian, hessian, stop_gradient, custom_jvp, custom_vjp, and emit (the generated source).

Each transform reads the function's source, rewrites it into derivative source (Core, in
compiler/transforms) and runs that. The result is again a function redraft can read, so
transforms compose in any order and depth: grad(grad(f)), jacfwd(jacrev(f)), grad(jit(f)).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from redraft.compiler.core import ir
from redraft.compiler.core.loader import load
from redraft.compiler.staging.interpreter import StagingError
from redraft.jit import fast_key
from redraft.compiler.frontend import specialise
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.ad import rules  # noqa: F401 (importing registers every rule)
from redraft.compiler.transforms.ad import jvp as _jvp, vjp as _vjp  # noqa: F401 (callees' slots)
from redraft.compiler.transforms.calls.callable_core import core_of
from redraft.compiler.transforms.calls.custom import custom_jvp, custom_vjp  # noqa: F401
from redraft.compiler.transforms.ad.jacobian import jacobian_function
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.errors import prefix_user_origin
from redraft.runtime.pytree import tree_flatten, tree_map


# ---- arguments ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _signature(fun: Callable) -> tuple[inspect.Signature | None, int]:
    """(signature, number of positional parameters) of `fun`, computed once."""
    import types
    # a plain function's own signature (a functools.wraps wrapper is what runs); a
    # transform's wrapper takes the arguments of the function it transforms
    own = isinstance(fun, types.FunctionType) and not (
        hasattr(fun, "__redraft_inner__") or hasattr(fun, "__redraft_transformable__"))
    try:
        sig = inspect.signature(fun, follow_wrapped=not own)
    except (TypeError, ValueError):
        return None, -1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sig, sum(p.kind in kinds for p in sig.parameters.values())


def _positional(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """`args` and `kwargs` as one positional tuple in `fun`'s parameter order, defaults
    filled in (generated functions take every argument positionally)."""
    sig, n_positional = _signature(fun)
    if sig is None or (not kwargs and len(args) == n_positional):
        return args
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _leaf_to_array(v):
    if isinstance(v, (Array, bool, int, float, complex)) or v is None:
        return as_array(v) if isinstance(v, (int, float, complex)) and not isinstance(
            v, bool) else v
    if isinstance(v, (np.ndarray, np.generic)):
        return as_array(v)
    return v


def _as_arrays(tree):
    if type(tree) is tuple and all(type(v) is Array for v in tree):
        return tree  # the common case: arrays already
    return tree_map(_leaf_to_array, tree)


def _argnums_tuple(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _mask(n_args: int, argnums: Sequence[int]) -> tuple[bool, ...]:
    for a in argnums:
        if not -n_args <= a < n_args:
            raise ValueError(f"argnums {a} is out of range for a function of {n_args} "
                             "positional arguments")
    chosen = {a % n_args for a in argnums}
    return tuple(i in chosen for i in range(n_args))


def _check_inexact(args: tuple, argnums: Sequence[int], allow_int: bool, name: str) -> None:
    _mask(len(args), argnums)  # argnums out of range: say so, rather than an IndexError
    if allow_int:
        return
    for i in argnums:
        arg = args[i]
        leaves = (arg,) if type(arg) is Array else tree_flatten(arg)[0]
        for leaf in leaves:
            dtype = np.asarray(leaf).dtype
            if dtype.kind not in "fc":
                raise TypeError(
                    f"{name} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                    "Boolean- or integer-valued inputs, use vjp or set allow_int to True.")


def _run(fn: Callable, args: tuple):
    """Call generated code; an error inside it is annotated with the user's own line."""
    try:
        return fn(*args)
    except Exception as e:
        prefix_user_origin(e)
        raise


def _n_params(fun) -> int:
    return len(core_of(fun).params)


def _transformable(wrapper: Callable, core: Callable[[], Any]) -> Callable:
    """Mark `wrapper` so that further transforms read `core()` instead of its source."""
    wrapper.__redraft_transformable__ = core
    return wrapper


def _rewrappable(wrapper: Callable, fun: Callable, remake: Callable[[Callable], Callable]):
    """Mark `wrapper` (a transform of `fun`) as re-made by `remake(g)` around g, the
    specialisation of `fun` on a call's shape when fun takes *args, **kwargs or
    keyword-only parameters (compiler/transforms/calls/callees.py, specialise_call)."""
    wrapper.__redraft_inner__ = fun
    wrapper.__redraft_rewrap__ = lambda target, kinds: remake(target)
    return wrapper


def _specialised(wrapper: Callable, args: tuple, kwargs: dict):
    """(the wrapper re-made for this call's shape, flat arguments), or None."""
    found = specialise.specialise_call(wrapper, args, kwargs)
    return None if found is None else found[:2]


# ---- reverse mode --------------------------------------------------------------------------------

def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The gradient of scalar-valued `fun` with respect to argument(s) `argnums`."""
    nums = _argnums_tuple(argnums)
    single = isinstance(argnums, int)

    made: dict[int, Callable] = {}
    transformed: dict[int, callees.Transformed] = {}

    def transform(n_args: int) -> callees.Transformed:
        if n_args not in transformed:
            transformed[n_args] = callees.vjp_of(fun, _mask(n_args, nums), "grad", has_aux,
                                                 single)
        return transformed[n_args]

    def callee(n_args: int):
        if n_args not in made:
            made[n_args] = transform(n_args).fn
        return made[n_args]

    @functools.wraps(fun)
    def grad_fn(*args, **kwargs):
        key = fast_key(args) if compiled and not kwargs else None
        if key is not None and key in checked:  # argument types already checked
            return _weak_like_primals(compiled[0](*args), args, nums, single, has_aux)
        found = _specialised(grad_fn, args, kwargs)
        if found is not None:
            return found[0](*found[1])
        args = _positional(fun, args, kwargs)
        target = specialise.specialise_on_values(fun, args)
        if target is not fun:  # function-valued (or jit-static) arguments: held by identity
            return grad(target, argnums, has_aux, holomorphic, allow_int)(*args)
        args = _as_arrays(args)
        _check_inexact(args, nums, allow_int, "grad")
        if compiled:
            try:
                result = compiled[0](*args)
            except StagingError:  # e.g. a while loop whose tape grows: run it eagerly
                compiled.clear()
            else:
                if key is not None:
                    checked.add(key)
                return _weak_like_primals(result, args, nums, single, has_aux)
        return _weak_like_primals(_run(callee(len(args)), args), args, nums, single, has_aux)

    checked: set[tuple] = set()  # fast keys (redraft/jit.py) of calls that passed the checks

    _rewrappable(grad_fn, fun, lambda g: grad(g, argnums, has_aux, holomorphic, allow_int))
    _transformable(grad_fn, lambda: transform(_n_params(fun)).__redraft_transformable__())
    compiled = _compiled_if_jitted(fun, grad_fn)
    return grad_fn


def _weak_like_primals(result, args: tuple, nums: tuple, single: bool, has_aux: bool):
    """The gradient with respect to a weakly typed argument (a Python scalar) weakly typed
    too, as JAX's (a cotangent has its primal's type): grad(f)(2.0) prints weak_type=True
    and then promotes as 2.0 would."""
    if not any(n < len(args) and _weak_scalar(args[n]) for n in nums):
        return result
    bars, aux = result if has_aux else (result, None)
    marked = [_weak_bar(bar, args[n]) if n < len(args) else bar
              for bar, n in zip((bars,) if single else bars, nums)]
    bars = marked[0] if single else type(bars)(marked)
    return (bars, aux) if has_aux else bars


def _weak_scalar(arg) -> bool:
    if isinstance(arg, Array):
        return arg.weak_type and arg.ndim == 0
    return isinstance(arg, (int, float)) and not isinstance(arg, bool)


def _weak_bar(bar, arg):
    if not _weak_scalar(arg) or not isinstance(bar, Array) or bar.weak_type or bar.ndim:
        return bar
    from redraft.numpy.promotion import convert
    return convert(bar, bar.dtype, True)


def _compiled_if_jitted(fun: Callable, transformed: Callable) -> list[Callable]:
    """[jit(transformed)] when `fun` is jitted, so grad(jit(f)) runs compiled as in JAX (and
    grad(jit(grad(jit(grad(f))))) costs one compiled call, not an eager walk); else []. The
    caller empties the list when the transformed function cannot be staged."""
    from redraft.jit import Jitted, jit
    if type(fun) is Jitted and not fun.static:
        return [jit(transformed)]
    return []


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """(fun(*args), grad(fun)(*args)) in one pass."""
    nums = _argnums_tuple(argnums)
    single = isinstance(argnums, int)

    @functools.wraps(fun)
    def value_and_grad_fn(*args, **kwargs):
        found = _specialised(value_and_grad_fn, args, kwargs)
        if found is not None:
            return found[0](*found[1])
        args = _positional(fun, args, kwargs)
        target = specialise.specialise_on_values(fun, args)
        if target is not fun:
            return value_and_grad(target, argnums, has_aux, holomorphic, allow_int)(*args)
        args = _as_arrays(args)
        _check_inexact(args, nums, allow_int, "value_and_grad")
        mask = _mask(len(args), nums)
        result = _run(callees.vjp_of(fun, mask, "value_and_grad", has_aux), args)
        bars = result[-1]
        bars = bars[0] if single else bars
        bars = _weak_like_primals(bars, args, nums, single, False)
        if has_aux:
            return (result[0], result[1]), bars
        return result[0], bars

    _transformable(value_and_grad_fn, lambda: _value_and_grad_core(fun, nums, has_aux, single))
    return _rewrappable(value_and_grad_fn, fun, lambda g: value_and_grad(
        g, argnums, has_aux, holomorphic, allow_int))


def _value_and_grad_core(fun: Callable, nums: tuple, has_aux: bool, single: bool):
    """Core of value_and_grad(fun), so that it runs inside jit and other transforms:

        def f_value_and_grad(w, x):
            results = f_vjp(w, x, 1.0)       # (value, [aux,] bars), seeded with 1
            ...
            return (value, bars[0])          # ((value, aux), ...) with has_aux
    """
    from redraft.compiler.core import ir
    from redraft.compiler.transforms.common import GETITEM
    core = core_of(fun)
    mask = _mask(len(core.params), nums)
    f_vjp = callees.vjp_of(fun, mask, "vjp", has_aux)
    params = core.params
    body: list = []

    def let(name: str, expr) -> ir.Var:
        body.append(ir.Assign((name,), expr, (core.filename, core.firstline)))
        return ir.Var(name)

    results = let("results", ir.Call(ir.Ref(f_vjp, f"{core.name}_vjp"),
                                     tuple(ir.Var(p) for p in params) + (ir.Const(1.0),)))
    value = let("value", ir.Call(GETITEM, (results, ir.Const(0))))
    bars = let("bars", ir.Call(GETITEM, (results, ir.Const(-1))))
    if single:
        bars = let("bar", ir.Call(GETITEM, (bars, ir.Const(0))))
    if has_aux:
        aux = let("aux", ir.Call(GETITEM, (results, ir.Const(1))))
        value = let("value_aux", ir.Tuple((value, aux)))
    out = let("out", ir.Tuple((value, bars)))
    body.append(ir.Return(out, (core.filename, core.firstline)))
    return ir.Function(f"{core.name}_value_and_grad", params, body, core.defaults,
                       core.filename, core.firstline)


def fun_primal(fun: Callable) -> Callable:
    return getattr(fun, "__redraft_primal__", fun)


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """(fun(*primals), vjp_fun) where vjp_fun(ct) gives the cotangent of each primal."""
    found = _specialised(fun, tuple(primals), {})
    if found is not None:
        return vjp(found[0], *found[1], has_aux=has_aux)
    target = specialise.specialise_on_values(fun, tuple(primals))
    if target is not fun:
        return vjp(target, *primals, has_aux=has_aux)
    args = _as_arrays(tuple(primals))
    mask = tuple(True for _ in args)
    f_vjp = callees.vjp_of(fun, mask, "vjp", has_aux)
    out = _run(fun_primal(fun), args)
    value = out[0] if has_aux else out

    def vjp_fun(ct):
        ct = _as_arrays(ct)
        _check_cotangent(value, ct)
        result = _run(f_vjp, args + (ct,))
        return tuple(result[-1])

    # transformable again (vmap(vjp_fun), grad through it, jit(vjp_fun)): Core with the
    # primals as constants, calling the reverse-mode function
    _transformable(vjp_fun, lambda: _closed_over_primals(
        fun, f_vjp, args, ("ct",), -1, "vjp_fun"))
    return (value, vjp_fun, out[1]) if has_aux else (value, vjp_fun)


def _closed_over_primals(fun: Callable, made: Callable, primals: tuple, params: tuple,
                         index: int, suffix: str):
    """Core of a function that linear maps return (vjp_fun, linearize's f_jvp):

        def f_vjp_fun(ct):
            results = f_vjp(primal_0, ..., ct)     # the primals are constants
            out = results[-1]                      # the item `index` of what it returns
            return out
    """
    from redraft.compiler.core import ir
    from redraft.compiler.transforms.common import GETITEM
    core = core_of(fun)
    origin = (core.filename, core.firstline)
    consts = tuple(ir.Ref(p, f"primal_{i}") for i, p in enumerate(primals))
    call = ir.Call(ir.Ref(made, f"{core.name}_{suffix}_made"),
                   consts + tuple(ir.Var(p) for p in params))
    body = [ir.Assign(("results",), call, origin)]
    body.append(ir.Assign(("out",), ir.Call(GETITEM, (ir.Var("results"), ir.Const(index))),
                          origin))
    body.append(ir.Return(ir.Var("out"), origin))
    return ir.Function(f"{core.name}_{suffix}", params, body, (), core.filename,
                       core.firstline)


def _check_cotangent(value, ct) -> None:
    v_leaves, v_def = tree_flatten(value)
    c_leaves, c_def = tree_flatten(ct)
    if v_def != c_def:
        raise TypeError(f"the cotangent's structure {c_def} differs from the output's {v_def}")
    for v, c in zip(v_leaves, c_leaves):
        if np.shape(v) != np.shape(c):
            raise ValueError(f"the cotangent's shape {np.shape(c)} differs from the output's "
                             f"{np.shape(v)}")
        v_dtype, c_dtype = np.result_type(v), np.result_type(c)
        weak = getattr(c, "_weak", False)  # a Python scalar takes the output's type
        if v_dtype.kind in "fc" and c_dtype != v_dtype and not weak:
            raise ValueError(f"the cotangent's dtype {c_dtype} is not the output's tangent "
                             f"dtype {v_dtype} (vjp pullbacks take a cotangent of the "
                             f"output's dtype, as JAX's do: cast it with .astype)")


# ---- forward mode -------------------------------------------------------------------------------

def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples (or lists) of arguments")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    found = _specialised(fun, tuple(primals), {})
    if found is not None:
        fun = found[0]
    fun = specialise.specialise_on_values(fun, tuple(primals))
    args, dots = _as_arrays(tuple(primals)), _as_arrays(tuple(tangents))
    for p, t in zip(tree_flatten(args)[0], tree_flatten(dots)[0]):
        if np.shape(p) != np.shape(t):
            raise ValueError(f"primal and tangent arguments to jvp must have equal shapes, "
                             f"got {np.shape(p)} and {np.shape(t)}")
    f_jvp = callees.jvp_of(fun, tuple(True for _ in args))
    out, out_dot = _run(f_jvp, args + dots)
    if has_aux:
        return out[0], out_dot[0], out[1]
    return out, out_dot


def linearize(fun: Callable, *primals):
    """(fun(*primals), f_jvp) with f_jvp(*tangents) the jvp at primals."""
    args = _as_arrays(primals)
    out = _run(fun_primal(fun), args)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents)[1]

    names = tuple(f"t{i}" for i in range(len(primals)))
    f_jvp.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    made = callees.jvp_of(specialise.specialise_on_values(fun, args),
                          tuple(True for _ in args))
    _transformable(f_jvp, lambda: _closed_over_primals(
        fun, made, args, names, 1, "linearized"))
    return out, f_jvp


# ---- Jacobians -----------------------------------------------------------------------------------

def _built_jacobian(fun: Callable, argnum: int, forward: bool) -> Callable:
    """The loaded Core function computing one Jacobian of `fun` (cached)."""
    def build() -> Callable:
        core = core_of(fun)
        return load(jacobian_function(fun, core, argnum % len(core.params), forward),
                    header=f"Generated by redraft: {'jacfwd' if forward else 'jacrev'} "
                           f"of {core.name}.")
    key = ("jacobian", code_state(fun), argnum, forward)
    return TRANSFORM_CACHE.get(fun, key, build)


def _jacobian(fun: Callable, argnums, forward: bool) -> Callable:
    nums = _argnums_tuple(argnums)

    def built(argnum: int):
        return _built_jacobian(fun, argnum, forward)

    @functools.wraps(fun)
    def jac_fn(*args, **kwargs):
        found = _specialised(jac_fn, args, kwargs)
        if found is not None:
            return found[0](*found[1])
        args = _positional(fun, args, kwargs)
        target = specialise.specialise_on_values(fun, args)
        if target is not fun:
            return _jacobian(target, argnums, forward)(*args)
        args = _as_arrays(args)
        _check_inexact(args, nums, False, "jacfwd" if forward else "jacrev")
        out = tuple(_run(built(a), args) for a in nums)
        return out[0] if isinstance(argnums, int) else out

    if isinstance(argnums, int):
        _transformable(jac_fn, lambda: built(argnums).__redraft_transformable__())
    else:
        _transformable(jac_fn, lambda: _jacobians_core([built(a) for a in nums]))
    return _rewrappable(jac_fn, fun, lambda g: _jacobian(g, argnums, forward))


def _jacobians_core(builts: list[Callable]) -> ir.Function:
    """Core returning the tuple of the Jacobians `builts` compute (one per argnum), so that
    a transform of jacfwd/jacrev with several argnums (hessian's) reads Core."""
    first = builts[0].__redraft_transformable__()
    params = first.params
    taken = set(params)

    def fresh(base: str) -> str:
        name = base
        while name in taken:
            name += "_"
        taken.add(name)
        return name
    body: list = []
    outs = []
    for k, b in enumerate(builts):
        name = fresh(f"jacobian_{k}")
        core = b.__redraft_transformable__()
        call = ir.Call(ir.Ref(b, core.name), tuple(ir.Var(p) for p in params))
        body.append(ir.Assign((name,), call))
        outs.append(ir.Var(name))
    together = fresh("jacobians")
    body.append(ir.Assign((together,), ir.Tuple(tuple(outs))))
    body.append(ir.Return(ir.Var(together)))
    return ir.Function(f"{first.name}_all", params, body, first.defaults, first.filename,
                       first.firstline)


def _with_aux(fun: Callable, argnums, forward: bool) -> Callable:
    """The Jacobian of a `fun` that returns (output, aux): the Jacobian of its output,
    paired with the aux it returns (has_aux), as JAX gives it."""
    def output(*args, **kwargs):
        return fun(*args, **kwargs)[0]
    output.__name__ = output.__qualname__ = f"{getattr(fun, '__name__', 'fun')}_output"
    jac = _jacobian(output, argnums, forward)

    @functools.wraps(fun)
    def jac_and_aux(*args, **kwargs):
        return jac(*args, **kwargs), fun(*args, **kwargs)[1]
    return jac_and_aux


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of `fun` by forward mode: its jvp, vmapped over the input's standard
    basis (blocks weakly typed like the output's leaves, as JAX's)."""
    if has_aux:
        return _with_aux(fun, argnums, forward=True)
    return _jacobian(fun, argnums, forward=True)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of `fun` by reverse mode: its backward pass, vmapped over the output's
    standard basis (blocks weakly typed like the input's leaves, as JAX's)."""
    if has_aux:
        return _with_aux(fun, argnums, forward=False)
    return _jacobian(fun, argnums, forward=False)


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """jacfwd(jacrev(fun)): forward over reverse."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


# ---- no derivative / user rules -----------------------------------------------------------------

def stop_gradient(x):
    """`x`, through which no derivative flows."""
    return tree_map(lambda v: v, x)


def emit(fun: Callable, mode: str = "grad", argnums: int | Sequence[int] = 0,
         in_axes=0, out_axes=0) -> str:
    """The source redraft generates for `fun`: mode 'core', 'grad', 'vjp', 'jvp',
    'jacfwd', 'jacrev' or 'vmap' (with in_axes/out_axes)."""
    from redraft.compiler.core.loader import source_of
    if mode == "vmap":
        from redraft.vmap import emit_vmap
        return emit_vmap(fun, in_axes, out_axes)
    core = core_of(fun)
    nums = _argnums_tuple(argnums)
    mask = _mask(len(core.params), nums)
    if mode == "core":
        from redraft.compiler.core.core_function import carried_core
        from redraft.compiler.frontend.normalize import lower_function
        from redraft.compiler.frontend.ssa import to_ssa
        target = carried_core(fun) or to_ssa(lower_function(fun))
        return source_of(target)[0]
    if mode in ("grad", "vjp"):
        made = callees.vjp_of(fun, mask, mode, False, isinstance(argnums, int)).fn
    elif mode == "jvp":
        made = callees.jvp_of(fun, mask).fn
    elif mode in ("jacfwd", "jacrev"):
        made = _built_jacobian(fun, nums[0], mode == "jacfwd")
    else:
        raise ValueError(f"unknown mode {mode!r}: use core, grad, vjp, jvp, jacfwd or jacrev")
    return made.__redraft_source__


def _register_stop_gradient() -> None:
    from redraft.compiler.primitives.registry import defnondiff
    defnondiff(stop_gradient, "stop_gradient blocks derivatives by definition")


_register_stop_gradient()
