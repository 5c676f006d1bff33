"""A compiled function on a GPU: its program loaded on the device and called asynchronously.

`compile_for_device(ir_fn, out_treedef, device)` builds the GPU program of an optimised SSA
function and loads it through the device's driver (runtime/device_driver.py): PTX for a
real GPU, the host emulation for an emulated one. A call queues the launch sequence on the
device's dispatch thread and returns Arrays over device buffers at once; arguments on the
host (Arrays, NumPy arrays, Python scalars) are copied to the device first.

Where the GPU backend does not lower an operation (`Unsupported`), the function runs on the
host instead: its inputs are read back, the CPU backend runs it, and its results are copied
to the device, so they live where the caller's arrays live. A one-line notice says so once
per function; REDRAFT_GPU_FALLBACK=0 makes it an error instead. Eager operations on device
arrays (`bind_on_device`) compile one-equation functions the same way; one whose result
shape depends on its operands' values (`x[mask]`) runs on the host.
"""
from __future__ import annotations

import itertools
import os
import sys
from typing import Any, Callable

import numpy as np

from redraft.compiler.backend.llvm.types import Unsupported
from redraft.compiler.ir.ssa import Function
from redraft.runtime import device_buffer
from redraft.runtime.array import Array, wrap_device, wrap_host
from redraft.runtime.device_driver import LaunchTarget, PtxImage
from redraft.runtime.devices import Device
from redraft.runtime.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from redraft.runtime.pytree import PyTreeDef, tree_unflatten

from . import execute, libnvvm
from .program import Program, build

_PROGRAM_IDS = itertools.count()


def image_for(program: Program, driver) -> object:
    """What `driver.load` takes for `program`: PTX for its arch, or the host emulation."""
    if driver.target == "host":
        from .emulate import Emulator
        return Emulator(program)
    from . import module_of
    prefix = f"p{next(_PROGRAM_IDS)}_"
    text = libnvvm.compile_ptx(str(module_of(program, prefix)), driver.arch)
    return PtxImage(text, {k.name: prefix + k.name for k in program.kernels})


class DeviceCompiled:
    """A function compiled for one GPU (or run on the host for it, see the module's notes);
    calling it with the flattened argument leaves returns the result pytree of device
    Arrays."""

    backend = "nvvm"

    def __init__(self, ir_fn: Function, out_treedef: PyTreeDef, device: Device,
                 host_runner: Callable[[], Callable[[list], list]]):
        self.ir = ir_fn
        self.out_treedef = out_treedef
        self.out_weak = tuple(r.aval.weak_type for r in ir_fn.results)
        self.device = device
        self.stream = device_buffer.stream_of(device)
        try:
            self.program: Program | None = build(ir_fn)
        except Unsupported as e:
            self.program = None
            self.fallback_reason = str(e)
            self.host_runner = host_runner()
            self.backend = "host-fallback"
            _fall_back(ir_fn.name, device, self.fallback_reason)
            return
        # compiled here, on the caller's thread (LLVM and llvmlite's printer are not thread
        # safe); loaded on the dispatch thread, where the device's context is current
        image = image_for(self.program, self.stream.driver)
        self.target = LaunchTarget(self.stream.driver, self.stream.run(_load, image))

    def __call__(self, leaves: list) -> Any:
        handles = [self._on_device(v, p.aval.dtype) for v, p in zip(leaves, self.ir.params)]
        work = _run_program if self.program is not None else _run_on_host
        pending = self.stream.submit(work, self, handles)
        avals = [r.aval for r in self.ir.results]
        bufs = device_buffer.buffers_of(pending, self.device, avals)
        arrays = [wrap_device(b, w) for b, w in zip(bufs, self.out_weak)]
        return tree_unflatten(self.out_treedef, arrays)

    def _on_device(self, v, dtype) -> device_buffer.DeviceBuffer:
        """Argument `v` as a buffer of this device (the caller checked it is not on
        another one): host values are copied."""
        if isinstance(v, Array) and type(v._buf) is device_buffer.DeviceBuffer:
            return v._buf
        return device_buffer.put(np.asarray(v, dtype=dtype), self.device)


def _load(driver, image):
    return driver.load(image)


def _run_program(driver, compiled: DeviceCompiled, inputs: list) -> list:
    return execute.run_on_device(compiled.program, compiled.target,
                                 [b.handle() for b in inputs])


def _run_on_host(driver, compiled: DeviceCompiled, inputs: list) -> list:
    host = [driver.copy_to_host(b.handle(), b.dtype, b.shape) for b in inputs]
    outs = compiled.host_runner(host)
    return [driver.copy_to_device(np.ascontiguousarray(o, dtype=r.aval.dtype))
            for o, r in zip(outs, compiled.ir.results)]


_NOTICED: set[tuple[str, str]] = set()


def _fall_back(name: str, device: Device, reason: str) -> None:
    if os.environ.get("REDRAFT_GPU_FALLBACK", "1").strip() in ("0", "false", "no", "off"):
        raise Unsupported(f"{name} cannot run on {device}: {reason} is not lowered to the "
                          "GPU (REDRAFT_GPU_FALLBACK=0 forbids running it on the host)")
    if (name, reason) not in _NOTICED:
        _NOTICED.add((name, reason))
        print(f"redraft: {name} runs on the host for {device}: {reason} is not lowered to the "
              "GPU yet (its results are copied to the device)", file=sys.stderr)


_EAGER: dict[tuple, DeviceCompiled] = {}


def bind_on_device(prim, args: tuple, params: dict, device: Device):
    """`prim(*args, **params)` run now on GPU `device` (eager operations on device arrays):
    a one-equation function compiled for the device, cached by types and parameters."""
    from redraft.compiler.core.abstract import ShapedArray
    from redraft.compiler.ir.build import Builder
    from redraft.compiler.ir.passes import run_pipeline
    from redraft.runtime.pytree import tree_flatten
    avals = tuple(ShapedArray(a.shape, a.dtype, a._weak) for a in args)
    key = _eager_key(prim, avals, params, device)
    compiled = _EAGER.get(key) if key is not None else None
    if compiled is None:
        builder = Builder(prim.name)
        staged = [builder.new_param(a) for a in avals]
        try:
            out = builder.stage(prim, staged, params)
        except (NonConcreteBooleanIndexError, ConcretizationTypeError):
            return _bind_on_host(prim, args, params, device)  # x[mask]: shape from values
        leaves, treedef = tree_flatten(out)
        ir_fn = run_pipeline(builder.finish(leaves))
        compiled = DeviceCompiled(ir_fn, treedef, device, lambda: _host_runner(ir_fn))
        if key is not None:
            _EAGER[key] = compiled
    return compiled(list(args))


def _bind_on_host(prim, args: tuple, params: dict, device: Device):
    """An operation whose result type depends on its operands' values, run on the host
    (where they are known) and its results copied to `device`."""
    from redraft.runtime.eager import bind
    from redraft.runtime.transfer import to_device
    out = bind(prim, *(wrap_host(np.asarray(a), a._weak) for a in args), **params)
    if isinstance(out, tuple):
        return tuple(to_device(o, device) for o in out)
    return to_device(out, device)


def _host_runner(ir_fn: Function):
    from redraft.compiler.backend import host_runner
    return host_runner(ir_fn)[0]


def _eager_key(prim, avals: tuple, params: dict, device: Device) -> tuple | None:
    """A cache key for an eager operation, or None when a parameter is not hashable."""
    key = (prim, avals, tuple(sorted(params.items())), device)
    try:
        hash(key)
    except TypeError:
        return None
    return key
