"""From a Python function and argument types to something that runs: stage, optimise, lower.

    signature -> stage (Core interpreted on staged values) -> SSA IR -> passes -> backend
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from redraft.compiler.backend import host_runner
from redraft.compiler.cache import kernel_library
from redraft.compiler.core.abstract import ShapedArray
from redraft.compiler.ir.build import Builder
from redraft.compiler.ir.ssa import Function
from redraft.compiler.staging.interpreter import Interpreter
from redraft.compiler.transforms.calls.callable_core import core_of, reading_once
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.config import x64_enabled
from redraft.runtime.eager import install_device_binder
from redraft.runtime.pytree import PyTreeDef, tree_flatten, tree_unflatten
from redraft.runtime.staging_context import staging


@dataclass(frozen=True)
class Signature:
    """What a compiled function is specialised on (the cache key)."""
    treedef: PyTreeDef  # structure of the non-static arguments
    avals: tuple[ShapedArray, ...]  # types of their array leaves
    statics: tuple  # (position, value) of the static arguments
    x64: bool = False  # the x64 flag when compiled: it changes the defaults inside the code

    def describe(self) -> str:
        types = ", ".join(a.str_short() + ("~" if a.weak_type else "") for a in self.avals)
        statics = ", ".join(f"arg{i}={v!r:.30}" for i, v in self.statics)
        x64 = "; x64" if self.x64 else ""
        return f"({types}{'; static ' + statics if statics else ''}{x64})"


def leaf_aval(leaf) -> ShapedArray:
    """The type a leaf argument is compiled for: Python scalars are weakly typed."""
    if isinstance(leaf, Array):
        return ShapedArray(leaf.shape, leaf.dtype, leaf._weak)
    from redraft.runtime.convert import as_array
    a = as_array(leaf)
    return ShapedArray(a.shape, a.dtype, a._weak)


def signature_of(args: tuple, static: set[int]) -> tuple[Signature, list]:
    dynamic = tuple(a for i, a in enumerate(args) if i not in static)
    leaves, treedef = tree_flatten(dynamic)
    statics = tuple((i, args[i]) for i in sorted(static) if i < len(args))
    return Signature(treedef, tuple(leaf_aval(v) for v in leaves), statics,
                     x64_enabled()), leaves


@dataclass
class Compiled:
    """A staged, optimised function and the runner of its backend."""
    ir: Function
    out_treedef: PyTreeDef
    out_weak: tuple[bool, ...]
    runner: Callable[[list], list]
    backend: str

    def call_arrays(self, arrays: tuple) -> Any:
        """Run on host Arrays already known to match the signature."""
        return self.call_buffers([a._buf for a in arrays])

    def call_buffers(self, bufs: list) -> Any:
        """Run on host buffers already known to match the signature (jit's hot path)."""
        outs = self.runner(bufs)
        if self.single_leaf:
            o = outs[0]
            return wrap_host(o if type(o) is np.ndarray else np.asarray(o), self.out_weak[0])
        return self(bufs, outs)

    @property
    def single_leaf(self) -> bool:
        return self.out_treedef.kind is None

    def __call__(self, leaves: list, outs: list | None = None) -> Any:
        if outs is None:
            bufs = [_host_buffer(v, a.aval) for v, a in zip(leaves, self.ir.params)]
            outs = self.runner(bufs)
        arrays = [wrap_host(o if type(o) is np.ndarray else np.asarray(o), w)
                  for o, w in zip(outs, self.out_weak)]
        return tree_unflatten(self.out_treedef, arrays)


def _host_buffer(v, aval: ShapedArray) -> np.ndarray:
    if isinstance(v, Array):
        return v._buf
    return np.asarray(v, dtype=aval.dtype)


def stage(fun: Callable, args: tuple, static: set[int], name: str | None = None
          ) -> tuple[Function, PyTreeDef]:
    """The SSA IR of `fun` for `args` (static positions are used as Python values)."""
    sig, _ = signature_of(args, static)
    builder = Builder(name or getattr(fun, "__name__", "f"))
    staged_leaves = [builder.new_param(a) for a in sig.avals]
    dynamic = tree_unflatten(sig.treedef, staged_leaves)
    it = iter(dynamic)
    call_args = [args[i] if i in static else next(it) for i in range(len(args))]
    from redraft.compiler.frontend.specialise import specialise_deep
    with staging(builder), reading_once():
        out = Interpreter(builder).call_function(core_of(specialise_deep(fun, args)),
                                                 call_args)
    out_leaves, out_treedef = tree_flatten(out)
    return builder.finish(out_leaves), out_treedef


def compile_function(fun: Callable, args: tuple, static: set[int]) -> Compiled:
    from redraft.compiler.ir.passes import run_pipeline
    _warm_up_backend()
    ir_fn, out_treedef = stage(fun, args, static)
    ir_fn = run_pipeline(ir_fn)  # its first pass verifies what staging made
    runner, backend = host_runner(ir_fn)
    out_weak = tuple(r.aval.weak_type for r in ir_fn.results)
    return Compiled(ir_fn, out_treedef, out_weak, runner, backend)


def _warm_up_backend() -> None:
    """Let the LLVM backend compile its kernels on another core while we stage."""
    if os.environ.get("REDRAFT_BACKEND", "auto") != "interpret":
        try:
            from redraft.compiler.backend.llvm import warm_up
        except ImportError:
            return
        warm_up()


def placement(args: tuple, static: set[int], leaves: list, names: list[str] | None = None,
              target=None):
    """The GPU the call runs on: `target` (jit's `device=`) or the one its array arguments
    (`leaves`, flattened) live on; None for the host. Arguments on two different devices (or
    on another one than `target`) are an error naming them; host arguments are copied."""
    from redraft.runtime.device_buffer import DeviceBuffer
    found = {leaf._buf.device for leaf in leaves
             if type(leaf) is Array and type(leaf._buf) is DeviceBuffer}
    if target is not None:
        found.add(target)
    if len(found) > 1:
        _incompatible(args, static, names, target)
    device = found.pop() if found else None
    return None if device is None or device.platform == "cpu" else device


def _bind_on_device(prim, args: tuple, params: dict):
    """An eager primitive with an operand on a GPU, run there (runtime/eager.py calls it)."""
    from redraft.compiler.backend.nvvm.device import bind_on_device
    return bind_on_device(prim, args, params, placement(args, set(), list(args)))


install_device_binder(_bind_on_device)
kernel_library.install()  # the JIT's pool and matmul kernels, compiled once per machine


def _incompatible(args: tuple, static: set[int], names: list[str] | None, target) -> None:
    """Raise the error naming the first two arguments (or device=) on different devices."""
    from redraft.runtime.device_buffer import DeviceBuffer
    found = None if target is None else (target, "the jitted function's device=", None)
    for i, arg in enumerate(args):
        if i in static:
            continue
        leaves, _ = tree_flatten(arg)
        for k, leaf in enumerate(leaves):
            if not (type(leaf) is Array and type(leaf._buf) is DeviceBuffer):
                continue
            name = names[i] if names and i < len(names) else f"argument {i}"
            name += f" (leaf {k})" if len(leaves) > 1 else ""
            if found is None:
                found = (leaf.device, name, leaf)
            elif leaf.device != found[0]:
                first = (f"{found[1]} ({_type_str(found[2])}) is on" if found[2] is not None
                         else f"{found[1]} is")
                raise ValueError(
                    f"incompatible devices for a jitted computation: {first} {found[0]} and "
                    f"{name} ({_type_str(leaf)}) on {leaf.device}; device_put them on one "
                    "device")


def _type_str(a: Array) -> str:
    return f"{a.dtype.name}{list(a.shape)}"


def compile_for_device(fun: Callable, args: tuple, static: set[int], device):
    """`fun` staged and optimised as for the CPU, then compiled for GPU `device`
    (compiler/backend/nvvm/device.py; a function it cannot lower runs on the host)."""
    from redraft.compiler.backend.nvvm.device import DeviceCompiled
    from redraft.compiler.ir.passes import run_pipeline
    ir_fn, out_treedef = stage(fun, args, static)
    ir_fn = run_pipeline(ir_fn)  # its first pass verifies what staging made
    return DeviceCompiled(ir_fn, out_treedef, device, lambda: host_runner(ir_fn)[0])


def log_compile(name: str, sig: Signature, reason: str) -> None:
    if os.environ.get("REDRAFT_LOG_COMPILES"):
        print(f"redraft: compiling {name}{sig.describe()}: {reason}", file=sys.stderr)


def compile_cached(fun: Callable, args: tuple, static: set[int]) -> Compiled:
    """`compile_function`, answered from the persistent compile cache when it holds this
    function and signature (compiler/cache/), and saved there when it does not."""
    from redraft.compiler.cache import jit_cache
    key = jit_cache.cache_key(fun, signature_of(args, static)[0])
    compiled = jit_cache.lookup(key, Compiled) if key else None
    if compiled is None:
        compiled = compile_function(fun, args, static)
        if key:
            jit_cache.remember(key, compiled)
    return compiled
