"""vmap: automatic vectorisation, by rewriting the function's source into batched source.

    batched = vmap(f, in_axes=(None, 0), out_axes=0)
    batched(mat, xs)            # f(mat, x) for every x in xs, as one batched computation

`in_axes` gives, per positional argument, the axis that is mapped (an int, negative too, or
None for an argument every example shares), or a tuple/list/dict of them matching a pytree
argument; keyword arguments are mapped along axis 0, as in JAX. `out_axes` places the batch
axis of each result. Inside f, `x.shape`, `len(x)` and `x.ndim` see one example.

The batched source (compiler/transforms/batch/vmap.py) keeps every batched value's batch axis at
position 0; arguments are moved there once on entry, results to `out_axes` on exit. The
result of vmap is again a function redraft can read, so vmap composes with grad, jit, jvp
and itself: `vmap(grad(loss), in_axes=(None, 0, 0))` gives per-example gradients.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from redraft.compiler.transforms.batch import rules as batch_rules  # noqa
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch import vmap_calls  # noqa: F401 (fills callees' slot)
from redraft.compiler.frontend import specialise
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.calls.callable_core import core_of
from redraft.compiler.transforms.batch.infer import batch_core_of
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, closure_state
from redraft.numpy.functional import install_vmap
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.pytree import tree_flatten, tree_unflatten


class Vmapped:
    """The function `vmap(fun, ...)` returns."""

    def __init__(self, fun: Callable, in_axes, out_axes, axis_size: int | None):
        # attribute names of their own: functools.update_wrapper copies this __dict__
        # into wrappers such as jit's, whose `fun` must stay this object
        self._vmap_fun = fun
        self._vmap_in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self._vmap_out_axes = out_axes
        self._vmap_axis_size = axis_size
        self._vmap_core = None
        self._vmap_params: tuple | None = None
        functools.update_wrapper(self, fun, updated=())

    # ---- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        from redraft.transforms import _run
        if specialise.needs_specialising(self._vmap_fun):  # *args, **kwargs, keyword-only
            found = specialise.specialise_call(self, args, kwargs)
            if found is not None:
                return found[0](*found[1])
        args, specs = self._bind(args, kwargs)
        prepared, types, n = prepare_arguments(args, specs, self._vmap_axis_size, self._names())
        callee, out_type = batched_callee(self._vmap_fun, self._core_fn, types)
        out = _run(callee, tuple(prepared) + (n,))
        return place_outputs(out, out_type, self._vmap_out_axes, n)

    def _core_fn(self):
        if self._vmap_core is None:
            self._vmap_core = _core_cached(self._vmap_fun)
        return self._vmap_core

    def _names(self) -> tuple:
        if self._vmap_params is None:
            self._vmap_params = self._core_fn().params
        return self._vmap_params

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, tuple]:
        """Positional arguments in parameter order and the in_axes spec of each (keywords
        are mapped along axis 0; parameters left out take their defaults, unmapped)."""
        specs = _positional_specs(self._vmap_in_axes, len(args))
        if not kwargs and len(args) == len(self._names()):
            return args, specs
        params = self._names()
        core = self._core_fn()
        if len(args) > len(params):
            raise TypeError(f"{core.name}() takes {len(params)} positional arguments but "
                            f"{len(args)} were given")
        values, axes = dict(zip(params, args)), dict(zip(params, specs))
        for k, v in kwargs.items():
            if k not in params:
                raise TypeError(f"{core.name}() got an unexpected keyword argument {k!r}")
            if k in values:
                raise TypeError(f"{core.name}() got multiple values for argument {k!r}")
            values[k], axes[k] = v, 0
        defaults = _defaults(self._vmap_fun, core)
        for p in params:
            if p not in values:
                if p not in defaults:
                    raise TypeError(f"{core.name}() missing required argument {p!r}")
                values[p], axes[p] = defaults[p], None
        return tuple(values[p] for p in params), tuple(axes[p] for p in params)

    # ---- composition ---------------------------------------------------------------------------
    @property
    def __redraft_inner__(self):
        return self._vmap_fun

    def __redraft_rewrap__(self, target: Callable, kinds: tuple) -> "Vmapped":
        """This vmap around `target`, the function specialised on a call's shape, whose
        parameters are flat (specialise.specialise_call): positional arguments keep their
        in_axes, keywords are mapped along axis 0 and defaults not at all, as in JAX."""
        n_positional = kinds.count("position")
        given = _positional_specs(self._vmap_in_axes, n_positional)
        axes, k = [], 0
        for kind in kinds:
            if kind == "position":
                axes.append(given[k])
                k += 1
            else:
                axes.append(0 if kind == "keyword" else None)
        return Vmapped(target, tuple(axes), self._vmap_out_axes, self._vmap_axis_size)

    def __redraft_for_arguments__(self, args: tuple) -> "Vmapped":
        """This vmap with an in_axes 0 of a dict argument spelled out key by key ({"a": 0,
        "b": 0}) for `args`, so that its batched source knows the dict's keys (iterating it
        reads them, unbatched), as a call with the dict itself does; itself where nothing
        changes (compiler/frontend/specialise.py, specialise_deep)."""
        from redraft.compiler.transforms.batch.vmap_wrapper import hashable_spec
        try:
            specs = _positional_specs(self._vmap_in_axes, len(args))
        except ValueError:
            return self
        spelled = tuple({k: 0 for k in a} if s == 0 and isinstance(s, int) and isinstance(
            a, dict) and a and all(isinstance(k, str) for k in a) else s
            for s, a in zip(specs, args))
        if spelled == specs:
            return self
        return TRANSFORM_CACHE.get(self, ("spelled out", hashable_spec(spelled)), lambda: Vmapped(
            self._vmap_fun, spelled, self._vmap_out_axes, self._vmap_axis_size))

    def __redraft_transformable__(self):
        """The Core of this vmapped function (arguments taken as arrays, or as tuples where
        in_axes is a tuple), so grad, jvp and vmap can transform it further."""
        from redraft.compiler.transforms.batch.vmap_wrapper import wrapper_of
        return wrapper_of(self._vmap_fun, self._core_fn(), self._vmap_in_axes, self._vmap_out_axes,
                          self._vmap_axis_size).__redraft_transformable__()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<vmap of {getattr(self._vmap_fun, '__name__', self._vmap_fun)!r}>"


def _core_cached(fun: Callable):
    """batch_core_of(fun), read once per function and closure state (a vmap made on every call
    reuses it; a closure whose cells now hold other values is read again)."""
    return TRANSFORM_CACHE.get(fun, ("core", closure_state(fun)), lambda: batch_core_of(fun))


_NAMED: dict[str, Callable] = {}


def install_named_vmap(named_vmap: Callable) -> None:
    """Called once by redraft.pmap: vmap with an axis_name runs each example as a participant
    of that axis's collectives (pmap sits above vmap, so it hands this down)."""
    _NAMED["vmap"] = named_vmap


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: str | None = None,
         axis_size: int | None = None, spmd_axis_name=None) -> Callable:
    """Vectorise `fun` over the axes `in_axes` of its arguments (see the module docstring)."""
    if not callable(fun):
        raise TypeError(f"vmap requires a callable argument, got {fun!r}")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or axis_size < 0):
        raise ValueError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")
    if axis_name is not None:  # collectives over the examples: redraft/pmap.py
        return _NAMED["vmap"](fun, axis_name, in_axes, out_axes)
    return Vmapped(fun, in_axes, out_axes, None if axis_size is None else int(axis_size))


def _check_axes_spec(spec, what: str) -> None:
    leaves, _ = tree_flatten(spec)
    for leaf in leaves:
        if leaf is not None and not isinstance(leaf, (int, np.integer)) or isinstance(
                leaf, bool):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {spec!r}.")


def _positional_specs(in_axes, n_args: int) -> tuple:
    if not isinstance(in_axes, tuple):
        return (in_axes,) * n_args
    if len(in_axes) != n_args:
        raise ValueError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got len(in_axes)="
            f"{len(in_axes)}, len(args)={n_args}")
    return in_axes


def _defaults(fun, core) -> dict:
    out = dict(zip(core.params[len(core.params) - len(core.defaults):], core.defaults))
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return out
    out.update({p.name: p.default for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty})
    return out


# ---- arguments in -------------------------------------------------------------------------------

def prepare_arguments(args: tuple, specs: tuple, axis_size, names: tuple):
    """(arguments with mapped axes moved to 0, their batch types, the axis size)."""
    found: list = []  # (leaf, axis, path) of every mapped leaf
    for value, spec, name in zip(args, specs, names):
        if spec is not None:
            _collect(value, spec, f"argument {name}", found)
    n = mapped_size(found, axis_size)
    types, moved = [], []
    for value, spec, name in zip(args, specs, names):
        v, t = _prepare(value, spec, n, f"argument {name}")
        moved.append(v)
        types.append(t)
    return moved, tuple(types), n


def _collect(value, spec, path: str, found: list) -> None:
    """Record (leaf, axis, path) for every leaf `spec` maps (spec a prefix of value)."""
    if spec is None:
        return
    if isinstance(spec, (int, np.integer)):
        if isinstance(value, Array):
            found.append((value, int(spec), path))
            return
        treedef = tree_flatten(value)[1]
        if treedef.kind is None:
            found.append((_as_mapped(value, path), int(spec), path))
            return
        for child, key in zip(_children_of(value), _child_paths(value, treedef)):
            _collect(child, spec, path + key, found)
        return
    children, specs, keys = _match_prefix(value, spec, path)
    for child, s, key in zip(children, specs, keys):
        _collect(child, s, path + key, found)


def _match_prefix(value, spec, path: str):
    """(children of value, their specs, their paths) for a container `spec`."""
    treedef = tree_flatten(value)[1]
    ok = (isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list))
          and len(spec) == len(value)) or (isinstance(spec, dict) and isinstance(value, dict)
                                            and set(spec) == set(value))
    if not ok:
        raise ValueError(f"vmap in_axes specification must be a tree prefix of the "
                         f"corresponding value, got specification {spec!r} for value tree "
                         f"{treedef} ({path}).")
    specs = list(spec) if isinstance(spec, (tuple, list)) else [spec[k] for k in sorted(spec)]
    return _children_of(value), specs, _child_paths(value, treedef)


def _prepare(value, spec, n: int, path: str):
    """(value with mapped axes at 0 and, inside dicts and objects that mix mapped and
    unmapped leaves, the unmapped ones broadcast; the value's batch type)."""
    from redraft.compiler.transforms.runtime.vm import move_axis
    if spec is None:
        return value, bt.U
    if isinstance(value, Array) and isinstance(spec, int):
        return (value if spec == 0 else move_axis(value, spec, 0)), bt.B
    if isinstance(spec, (int, np.integer)):
        treedef = tree_flatten(value)[1]
        if treedef.kind is None:
            leaf = _as_mapped(value, path)
            return (move_axis(leaf, int(spec), 0) if spec != 0 else leaf), bt.B
        children, specs = _children_of(value), [spec] * len(treedef.children)
    else:
        children, specs, _ = _match_prefix(value, spec, path)
    treedef = tree_flatten(value)[1]
    keys = _child_paths(value, treedef)
    prepared = [_prepare(c, s, n, path + k) for c, s, k in zip(children, specs, keys)]
    kids, kid_types = [v for v, _ in prepared], [t for _, t in prepared]
    if isinstance(value, (tuple, list)) and not hasattr(type(value), "_fields"):
        return _rebuild_like(value, kids, treedef), bt.tup(kid_types)
    if isinstance(value, dict):
        return _rebuild_like(value, kids, treedef), bt.dct(sorted(value), kid_types)
    if not any(bt.is_batched(t) for t in kid_types):
        return _rebuild_like(value, kids, treedef), bt.U
    kids = [k if bt.is_batched(t) else _broadcast_leaves(k, n) for k, t in zip(kids, kid_types)]
    return _rebuild_like(value, kids, treedef), bt.TREE


def _broadcast_leaves(value, n: int):
    from redraft.compiler.transforms.runtime.vm import broadcast
    leaves, treedef = tree_flatten(value)
    return tree_unflatten(treedef, [broadcast(v, n) for v in leaves])


def _children_of(value) -> list:
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    from redraft.runtime.pytree import _children
    node = _children(value, None)
    return list(node[2]) if node is not None else []


def _child_paths(value, treedef) -> list[str]:
    if isinstance(value, dict):
        return [f"[{k!r}]" for k in sorted(value)]
    if hasattr(type(value), "_fields"):
        return [f".{f}" for f in type(value)._fields]
    return [f"[{i}]" for i in range(len(treedef.children))]


def _rebuild_like(value, kids: list, treedef):
    if isinstance(value, list):
        return kids
    if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
        return tuple(kids)
    if isinstance(value, dict):
        return dict(zip(sorted(value), kids))
    leaves = []
    for k in kids:
        leaves.extend(tree_flatten(k)[0])
    return tree_unflatten(treedef, leaves)


def _as_mapped(leaf, path: str):
    if isinstance(leaf, Array) or (hasattr(leaf, "_data") and hasattr(leaf, "shape")):
        return leaf
    if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
        return as_array(leaf)
    raise TypeError(f"vmap: {path} is a {type(leaf).__name__}, which has no axis to map; "
                    "pass an array, or give it in_axes None")


def mapped_size(found: list, axis_size) -> int:
    """The one size of every mapped axis (JAX's error naming each argument otherwise)."""
    sizes = []
    for leaf, axis, path in found:
        shape = tuple(leaf.shape)
        if not -len(shape) <= axis < len(shape):
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies "
                f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                f"is only {len(shape)} (its shape is {shape})")
        sizes.append(shape[axis])
    if axis_size is not None:
        if any(s != axis_size for s in sizes):
            raise ValueError(inconsistent_sizes(found, sizes, axis_size))
        return axis_size
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(inconsistent_sizes(found, sizes, None))
    return sizes[0]


def inconsistent_sizes(found: list, sizes: list, axis_size) -> str:
    """JAX's message: which arguments had which sizes along their mapped axes."""
    from collections import Counter
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * axis_size was given as {axis_size};")
    counts = Counter(sizes)
    common = counts.most_common(1)[0][0] if axis_size is None else None
    described = set()
    for (leaf, axis, path), size in zip(found, sizes):
        shape = tuple(leaf.shape)
        dtype = getattr(leaf, "dtype", None)
        name = dtype.name if isinstance(dtype, np.dtype) else str(dtype)
        what = f"axis {axis} of {path} of type {name}[{','.join(map(str, shape))}]"
        if size == common and counts[size] > 1 and len(counts) > 1:
            if size not in described:
                described.add(size)
                lines.append(f"  * most axes ({counts[size]} of them) had size {size}, "
                             f"e.g. {what};")
            continue
        lines.append(f"  * one axis had size {size}: {what};")
    lines[-1] = lines[-1].rstrip(";")
    return "\n".join(lines)


# ---- the batched function ---------------------------------------------------------------------

def batched_callee(fun: Callable, core_fn: Callable, types: tuple):
    """(the loaded batched function, its result's batch type), cached per closure state."""
    def build():
        from redraft.compiler.transforms.batch.vmap_calls import callee_result_type
        out_type = callee_result_type(fun, core_fn(), types)
        return callees.vmap_of(fun, types).fn, out_type
    return TRANSFORM_CACHE.get(fun, ("batched", types, closure_state(fun)), build)


# ---- results out ------------------------------------------------------------------------------

def place_outputs(out, out_type, out_axes, n: int):
    """Each result leaf's batch axis moved from 0 to its out_axes; unbatched leaves
    broadcast (or, where out_axes is None, kept as they are)."""
    if out_axes == 0 and out_type is bt.B:
        return out
    return _place(out, out_type, out_axes, n, "the result")


def _place(value, t, spec, n: int, path: str):
    from redraft.compiler.transforms.runtime.vm import broadcast, move_axis
    if isinstance(spec, (tuple, list, dict)):
        return _place_node(value, t, spec, n, path)
    if value is None:
        return None
    if isinstance(t, (*bt.CONTAINERS, bt.Tree)) or isinstance(value, (tuple, list, dict)):
        leaves, treedef = tree_flatten(value)
        leaf_types = _leaf_types(value, t)
        placed = [_place(v, lt, spec, n, path) for v, lt in zip(leaves, leaf_types)]
        return tree_unflatten(treedef, placed)
    if spec is None:
        if bt.is_batched(t):
            raise ValueError(
                f"vmap has mapped output but out_axes is None: {path} depends on a mapped "
                "input, so it differs from example to example and has no single unmapped "
                "value; give out_axes an int to keep its batch axis")
        return value
    if not bt.is_batched(t):
        value = broadcast(as_array(value), n)
    return move_axis(value, 0, int(spec))


def _place_node(value, t, spec, n: int, path: str):
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(
            spec) == len(value):
        items = [_place(v, bt.item(t, i) if bt.is_sequence(t) else t, s, n,
                        f"{path}[{i}]") for i, (v, s) in enumerate(zip(value, spec))]
        return type(value)(items) if not hasattr(type(value), "_fields") else type(value)(
            *items)
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return {k: _place(value[k], bt.item(t, k) if isinstance(t, bt.Dict) else t, spec[k], n,
                          f"{path}[{k!r}]") for k in value}
    raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                     f"corresponding value, got specification {spec!r} for value tree "
                     f"{tree_flatten(value)[1]}.")


def _leaf_types(value, t) -> list:
    """The batch type of each leaf of `value` (flattening order), from its type t."""
    leaves = tree_flatten(value)[0]
    if isinstance(t, (bool, bt.Tree)):
        return [t if t is bt.U else bt.B] * len(leaves)
    if isinstance(value, dict) and isinstance(t, bt.Dict):
        out = []
        for k in sorted(value):
            out.extend(_leaf_types(value[k], bt.item(t, k)))
        return out
    if isinstance(value, (tuple, list)) and not hasattr(type(value), "_fields"):
        out = []
        for i, v in enumerate(value):
            it = bt.item(t, i) if bt.is_sequence(t) else (
                t.item if i == 0 else t) if isinstance(t, bt.Tape) else bt.TREE
            out.extend(_leaf_types(v, it))
        return out
    return [bt.B if bt.is_batched(t) else bt.U] * len(leaves)


def emit_vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0) -> str:
    """The batched source of `fun` and of the vmap around it, as `redraft emit` prints it."""
    from redraft.compiler.transforms.batch.vmap_wrapper import spec_type, wrapper_of
    core = core_of(fun)
    n_required = len(core.params) - len(core.defaults)
    specs = in_axes if isinstance(in_axes, (tuple, list)) else (
        (in_axes,) * n_required + (None,) * len(core.defaults))
    types = tuple(spec_type(s, bt.B) for s in specs)
    batched = callees.vmap_of(fun, types).fn
    wrapper = wrapper_of(fun, core, in_axes, out_axes, None, bt.B).fn
    return batched.__redraft_source__ + "\n" + wrapper.__redraft_source__


def _closing_axes(n_own: int, n_captured: int, args: tuple, kwargs: dict):
    """vmap's in_axes for a function taking `n_captured` more (unbatched) arguments."""
    if args:
        in_axes, args = args[0], args[1:]
    else:
        in_axes = kwargs.pop("in_axes", 0)
    own = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * n_own
    return args, dict(kwargs, in_axes=own + (None,) * n_captured)


def _register_constructors() -> None:
    """vmap(f, ...) and the AD transforms with constant arguments fold when source is read
    (compiler/frontend/static_calls.py), so `vmap(f)(x)` inside a function transforms."""
    from redraft import transforms
    from redraft.compiler.frontend.static_calls import defstatic_constructor
    from redraft.jit import jit
    from redraft.compiler.frontend.static_calls import definline_transform
    definline_transform(transforms.jvp, "jvp")
    definline_transform(transforms.vjp, "vjp")
    defstatic_constructor(vmap, _closing_axes)
    for fn in (jit, transforms.grad, transforms.value_and_grad, transforms.jacfwd,
               transforms.jacrev, transforms.jacobian, transforms.hessian):
        defstatic_constructor(fn)


def _register_transform_batching() -> None:
    """Batching entries for the transform API called inside vmap (jvp, vjp, stop_gradient):
    the rules live below the API, so the API hands its functions to them."""
    from redraft import transforms
    from redraft.compiler.transforms.batch.rules import transforms as transform_rules
    transform_rules.register(transforms)


_register_constructors()
_register_transform_batching()


install_vmap(vmap)
