"""pmap: run a function once per device, in parallel, with collectives over a named axis.

    step = pmap(update, axis_name="batch", in_axes=(None, 0))
    params = step(params, shards)      # shards.shape[0] == local_device_count()

Semantics are JAX's: the mapped axis of every mapped argument is split over the devices
(its size must not exceed the local device count), each device runs `fun` on its slice with
the axis bound to `axis_name`, and the results are stacked along `out_axes`. Inside `fun`,
`lax.psum/pmean/pmax/pmin/all_gather/all_to_all/psum_scatter/ppermute/axis_index(axis_name)`
are collectives over the devices (redraft/compiler/primitives/collectives.py).

Design: each device is a thread of this process (NumPy and compiled code release the GIL),
running `fun` as it is: eagerly, or compiled when `fun` is `jit(g)` (one compiled body for
every device; its collectives call back into the runtime). Under redraft.distributed the
axis spans every process: each passes its local shards, and collectives combine the local
threads' values and then run one MPI collective per process.

Differentiation: a pmapped function is a custom_vjp whose backward pass is again a pmap, of
the per-device vjp of `fun` (recomputing the forward pass on each device), so `grad` of a
pmapped loss runs in parallel; `pmap(grad(f))` differentiates `f`'s source, collectives
included (psum's transpose is psum).
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from redraft import distributed
from redraft.compiler.transforms.calls.custom import custom_vjp
from redraft.jit import jit
from redraft.processes import local_devices
from redraft.runtime import collectives as rc
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.pytree import tree_flatten, tree_map, tree_unflatten
from redraft.runtime.staged import StagedBuf
from redraft.vmap import install_named_vmap


class Pmapped(custom_vjp):
    """The function `pmap(fun, ...)` returns (a custom_vjp, so reverse mode maps too)."""

    def __init__(self, fun: Callable, axis_name: Any, in_axes: Any, out_axes: Any,
                 static_argnums: tuple[int, ...], devices: Sequence | None):
        # updated=(): a wrapped pmap's attributes must not be copied over this one's
        @functools.wraps(fun, updated=())
        def run(*args):
            return self._run(args)
        name = getattr(fun, "__name__", "")
        run.__name__ = name if name.isidentifier() else "pmapped"
        super().__init__(run, nondiff_argnums=static_argnums)
        self.defvjp(self._fwd, self._bwd)
        self.jvp_rule = self._jvp
        self.pmap_fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static_argnums = static_argnums
        self.pmap_devices = list(devices) if devices is not None else None
        self._checked_sizes: set[int] = set()  # sizes checked equal across MPI processes

    def __repr__(self) -> str:
        return f"<pmap of {getattr(self.pmap_fun, '__name__', self.pmap_fun)!r}>"

    def __redraft_jit__(self) -> "Pmapped":
        """jit(pmap(f)): the same map over a compiled `f` (what JAX compiles jit(pmap(f))
        to: one per-device program whose collectives join the other devices)."""
        return type(self)(jit(self.pmap_fun), self.axis_name, self.in_axes, self.out_axes,
                          self.static_argnums, self.pmap_devices)

    # ---- running ---------------------------------------------------------------------------
    def _run(self, args: tuple):
        specs = _arg_specs(self.in_axes, len(args), self.static_argnums)
        n = _mapped_size(args, specs)
        _check_not_staged(args)
        devices = self._devices(n)
        remote = self._remote(n)
        group = rc.Group(n, remote)
        first = remote.rank * n if remote is not None else 0
        size = remote.size * n if remote is not None else n
        outer = list(rc.frames())
        per_device = [_slice_args(args, specs, i) for i in range(n)]

        def body(i: int):
            frame = rc.AxisFrame(self.axis_name, size, first + i, i, group, first)
            saved = list(rc.frames())
            rc.frames()[:] = outer
            try:
                with rc.bound(frame):
                    return self.pmap_fun(*per_device[i])
            finally:
                rc.frames()[:] = saved

        outs = _on_threads(body, n, group, devices)
        return _stack_outputs(outs, self.out_axes)

    def _remote(self, n: int):
        """The MPI side of the axis (None on one process)."""
        if rc.frames() and distributed.is_initialized():
            raise NotImplementedError("a pmap inside another pmap under redraft.distributed: "
                                      "only the outermost pmap may span the MPI processes")
        remote = distributed.collective_context(n, check=n not in self._checked_sizes)
        self._checked_sizes.add(n)
        return remote

    def _devices(self, n: int) -> list:
        devices = self.pmap_devices
        if devices is None:
            devices = _local_cpu_devices()
        if n > len(devices):
            raise ValueError(
                f"pmap of {getattr(self.pmap_fun, '__name__', 'f')}: the mapped axis has size "
                f"{n}, but only {len(devices)} local devices are available (set "
                f"REDRAFT_NUM_CPU_DEVICES={n} to split the host CPU into {n} devices)")
        return devices[:n]

    # ---- forward mode ----------------------------------------------------------------------
    def _jvp(self, primals: tuple, tangents: tuple):
        """(out, out_dot): a pmap of the per-device jvp of `fun`, each tangent mapped as its
        primal is."""
        from redraft.transforms import jvp
        fun, n = self.pmap_fun, len(primals)
        if self.static_argnums:
            raise NotImplementedError(
                f"forward mode through a pmap with static_broadcasted_argnums ({fun!r}): "
                "differentiate inside the pmap instead, pmap(jvp(f), ...)")

        def device_jvp(*args):
            return jvp(fun, args[:n], args[n:])

        specs = tuple(_arg_specs(self.in_axes, n, ()))
        mapped = type(self)(device_jvp, self.axis_name, specs + specs,
                            (self.out_axes, self.out_axes), (), self.pmap_devices)
        return mapped(*primals, *tangents)

    # ---- reverse mode ----------------------------------------------------------------------
    def _fwd(self, *args):
        return self._run(args), args

    def _bwd(self, args: tuple, g):
        """Cotangents of every argument: a pmap of the per-device vjp; an argument every
        device shares (in_axes None) gets the sum of the devices' cotangents."""
        from redraft.transforms import vjp
        specs = _arg_specs(self.in_axes, len(args), self.static_argnums)
        static = set(self.static_argnums)
        fun = self.pmap_fun

        if static:
            raise NotImplementedError(
                f"reverse mode through a pmap with static_broadcasted_argnums ({fun!r}): "
                "differentiate inside the pmap instead, pmap(grad(f), ...)")

        def device_bwd(*args_and_g):
            _, pull = vjp(fun, *args_and_g[:-1])
            return tuple(pull(args_and_g[-1]))

        out_spec = _one_out_axis(self.out_axes, fun)
        bars = type(self)(device_bwd, self.axis_name, tuple(specs) + (out_spec,), 0,
                       self.static_argnums, self.pmap_devices)(*args, g)
        out, it = [], iter(bars)
        for k, spec in enumerate(specs):
            if k in static:
                out.append(None)
                continue
            bar = next(it)
            out.append(tree_map(lambda b, s=spec: _device_axis_to(np.asarray(b), s), bar))
        return tuple(out)


_LOCAL: dict = {}


def _local_cpu_devices() -> list:
    """This process's CPU devices, looked up once per device setting and MPI job (a pmap
    call would otherwise spend much of its own cost listing them)."""
    key = (os.environ.get("REDRAFT_NUM_CPU_DEVICES", ""), distributed.remote())
    found = _LOCAL.get(key)
    if found is None:
        found = _LOCAL[key] = local_devices(backend="cpu")
    return found


def _one_out_axis(out_axes, fun) -> int:
    """The mapped axis of every output, for mapping their cotangents the same way."""
    axes = set(out_axes) if isinstance(out_axes, (tuple, list)) else {out_axes}
    if len(axes) != 1 or None in axes:
        raise NotImplementedError(
            f"reverse mode through a pmap of {getattr(fun, '__name__', fun)!r} with "
            f"out_axes={out_axes!r}: redraft maps output cotangents along one axis shared by "
            "every output (out_axes=None outputs are one device's; differentiate inside the "
            "pmap instead)")
    return int(next(iter(axes)))


class NamedVmapped(Pmapped):
    """`vmap(fun, axis_name=...)`: each example is a participant of the collectives over
    `axis_name`, run on a thread of its own in this process (the semantics of a named vmap
    axis, as JAX defines them; the examples are not batched into one computation)."""

    def _remote(self, n: int):
        return None  # a vmapped axis never spans processes

    def _devices(self, n: int) -> list:
        return [f"example{i}" for i in range(n)]

    def __repr__(self) -> str:
        return f"<vmap of {getattr(self.pmap_fun, '__name__', self.pmap_fun)!r} over axis " \
               f"{self.axis_name!r}>"


def named_vmap(fun: Callable, axis_name: Any, in_axes: Any, out_axes: Any) -> NamedVmapped:
    """vmap with an axis name (see NamedVmapped): in_axes and out_axes as pmap takes them."""
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")
    return NamedVmapped(fun, axis_name, in_axes, out_axes, (), None)


def _device_axis_to(bar: np.ndarray, spec) -> Array:
    """Per-device cotangents (device axis 0) placed as the argument was mapped: summed over
    the devices for an argument they all shared (spec None)."""
    if spec is None:
        return wrap_host(np.asarray(bar.sum(axis=0)))
    return wrap_host(np.moveaxis(bar, 0, spec))


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Sequence[int] = (), devices: Sequence | None = None,
         backend: str | None = None, axis_size: int | None = None, donate_argnums=()
         ) -> Pmapped:
    """Map `fun` over the leading (or `in_axes`) axis of its arguments, one device per slice,
    with collectives over `axis_name` inside (see the module docstring)."""
    if not callable(fun):
        raise TypeError(f"pmap requires a callable argument, got {fun!r}")
    if backend not in (None, "cpu"):
        raise NotImplementedError(f"pmap over {backend!r} devices: redraft maps over CPU "
                                  "devices (REDRAFT_NUM_CPU_DEVICES) and MPI processes")
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")
    return Pmapped(fun, axis_name, in_axes, out_axes, tuple(int(k) for k in static), devices)


# ---- arguments ---------------------------------------------------------------------------------

def _check_axes(spec, what: str) -> None:
    items = spec if isinstance(spec, (tuple, list)) else (spec,)
    for s in items:
        if s is not None and not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"pmap {what} must be an int, None, or a tuple of them (one per "
                            f"positional argument), got {spec!r}")


def _arg_specs(in_axes, n_args: int, static: tuple[int, ...]) -> list:
    """The mapped axis of each positional argument (None: broadcast; static args: None)."""
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != n_args:
            raise ValueError(f"pmap in_axes has {len(in_axes)} entries but the function got "
                             f"{n_args} positional arguments")
        specs = list(in_axes)
    else:
        specs = [in_axes] * n_args
    return [None if k in static else s for k, s in enumerate(specs)]


def _mapped_size(args: tuple, specs: list) -> int:
    sizes = {}
    for k, (arg, spec) in enumerate(zip(args, specs)):
        if spec is None:
            continue
        for leaf in tree_flatten(arg)[0]:
            shape = np.shape(leaf)
            axis = spec % len(shape) if shape else None
            if axis is None:
                raise ValueError(f"pmap: argument {k} is a scalar but in_axes maps its axis "
                                 f"{spec} (use in_axes=None to give every device the value)")
            sizes.setdefault(shape[axis], k)
    if not sizes:
        raise ValueError("pmap needs at least one mapped argument (in_axes not all None)")
    if len(sizes) > 1:
        detail = ", ".join(f"argument {k} has {n}" for n, k in sizes.items())
        raise ValueError(f"pmap got inconsistent sizes for the mapped axis: {detail}")
    return next(iter(sizes))


def _check_not_staged(args: tuple) -> None:
    for leaf in tree_flatten(args)[0]:
        if isinstance(leaf, Array) and type(leaf._buf) is StagedBuf:
            raise NotImplementedError(
                "pmap called inside a jitted function: redraft compiles a pmap's "
                "per-device body, not the pmap; jit the pmapped function itself "
                "(jit(pmap(f)), i.e. pmap(jit(f))) or move the pmap out of the jit")


def _slice_args(args: tuple, specs: list, i: int) -> list:
    out = []
    for arg, spec in zip(args, specs):
        if spec is None:
            out.append(arg)
        else:
            out.append(tree_map(lambda leaf, s=spec: _take(leaf, s, i), arg))
    return out


def _take(leaf, axis: int, i: int) -> Array:
    """Slice i of `leaf` along `axis`: a view where that is row-major (arrays are immutable)."""
    a = as_array(leaf)
    buf = np.asarray(a)
    axis = axis % buf.ndim
    if axis == 0 and buf.flags.c_contiguous:
        return wrap_host(buf[i:i + 1].reshape(buf.shape[1:]), a._weak)
    return wrap_host(np.array(np.take(buf, i, axis=axis), order="C"), a._weak)


# ---- threads --------------------------------------------------------------------------------

def _on_threads(body: Callable[[int], Any], n: int, group: rc.Group, devices: list) -> list:
    """body(i) for every device i, each on a thread of its own (device 0 on this one); the
    first failure aborts the group and is raised here, with the device it happened on."""
    results: list = [None] * n
    errors: list = [None] * n

    def run(i: int) -> None:
        try:
            results[i] = body(i)
        except BaseException as e:  # noqa: BLE001 - re-raised below, once all have stopped
            errors[i] = e
            group.abort(i, e)

    threads = [threading.Thread(target=run, args=(i,), name=f"redraft-pmap-{devices[i]}",
                                daemon=True) for i in range(1, n)]
    for t in threads:
        t.start()
    run(0)
    for t in threads:
        t.join()
    failed = [e for e in errors if e is not None]
    if failed:
        root = next((e for e in failed if not isinstance(e, rc.CollectiveError)), failed[0])
        raise root
    return results


def _stack_outputs(outs: list, out_axes):
    leaves0, treedef = tree_flatten(outs[0])
    per_leaf = [tree_flatten(o)[0] for o in outs]
    axes = _out_axes(out_axes, treedef, len(leaves0))
    stacked = []
    for k, axis in enumerate(axes):
        values = [np.asarray(leaves[k]) for leaves in per_leaf]
        if axis is None:
            stacked.append(wrap_host(np.asarray(values[0])))
        elif len(values) == 1:  # one device: a new unit axis, no copy
            stacked.append(wrap_host(np.expand_dims(values[0], axis % (values[0].ndim + 1))))
        else:
            stacked.append(wrap_host(np.stack(values, axis=axis % (values[0].ndim + 1))))
    return tree_unflatten(treedef, stacked)


def _out_axes(out_axes, treedef, n_leaves: int) -> list:
    """One axis per output leaf: an int or None for all, or a tuple with one entry per
    top-level output."""
    if not isinstance(out_axes, (tuple, list)):
        return [out_axes] * n_leaves
    marked = tree_unflatten(treedef, list(range(n_leaves)))
    if not isinstance(marked, (tuple, list)) or len(marked) != len(out_axes):
        raise ValueError(f"pmap out_axes {out_axes!r} needs a tuple of {len(out_axes)} "
                         "outputs")
    return [a for a, item in zip(out_axes, marked) for _ in tree_flatten(item)[0]]


install_named_vmap(named_vmap)
