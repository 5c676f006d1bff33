"""Compile an llvmlite `ir.Module` for the host CPU and hand back callable functions.

One responsibility: LLVM IR text in, machine code for this machine out. The target machine
uses the host CPU's name and feature string (so AVX-512 is used where present), the new pass
manager's O3 pipeline, and MCJIT. Functions come back as ctypes function pointers; ctypes
releases the GIL while they run, so threads can call them in parallel.
"""
from __future__ import annotations

import ctypes
import functools
import os
import threading
from typing import Callable, Protocol, Sequence

import llvmlite.binding as llvm
from llvmlite import ir

# LLVM's global context is not thread safe: one thread inside LLVM at a time. Reentrant, so
# that a garbage collection on the thread holding it can close LLVM objects (close_llvm).
LLVM_LOCK = threading.RLock()
# A fork while another thread compiles would hand the child a lock nobody releases (and LLVM
# state half-way through a change): fork only between compiles.
os.register_at_fork(before=LLVM_LOCK.acquire, after_in_parent=LLVM_LOCK.release,
                    after_in_child=LLVM_LOCK.release)


@functools.lru_cache(maxsize=None)
def _initialise() -> None:
    with LLVM_LOCK:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()


def close_llvm(*objects) -> None:
    """Free LLVM objects (engines, modules) now, under LLVM's lock. llvmlite frees an object
    when Python drops it, on whichever thread that happens; a module freed while another
    thread compiles in the same context corrupts that context, so owners free theirs here."""
    with LLVM_LOCK:
        for obj in objects:
            if obj is not None and not obj.closed:
                obj.close()


_CALLBACKS: dict[str, object] = {}


def install_callback(symbol: str, prototype: type, function) -> None:
    """Make the Python `function` the C symbol `symbol` of compiled code, once a process.

    The ctypes thunk lives as long as the process (compiled code may call it at any time).
    Under the lock: two threads lowering at once must not each make a thunk, since the one
    dropped would leave the symbol pointing at freed memory."""
    with LLVM_LOCK:
        if symbol not in _CALLBACKS:
            thunk = prototype(function)
            llvm.add_symbol(symbol, ctypes.cast(thunk, ctypes.c_void_p).value)
            _CALLBACKS[symbol] = thunk


def define_symbol(symbol: str, address: int) -> None:
    """Make `symbol` name `address` for modules compiled from now on (process-wide: every
    caller picks a name of its own)."""
    with LLVM_LOCK:
        _initialise()
        llvm.add_symbol(symbol, address)


def new_host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """A fresh target machine for this CPU: host triple, CPU name and features.

    An MCJIT engine takes ownership of the target machine it is given, so each engine
    gets a new one; `host_target_machine` is the shared one for passes and printing.
    """
    _initialise()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        codemodel="jitdefault",
    )


_HOST_MACHINES: dict[int, llvm.TargetMachine] = {}


def host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """The shared host target machine (never handed to an engine), made once."""
    machine = _HOST_MACHINES.get(opt_level)
    if machine is None:
        with LLVM_LOCK:
            machine = _HOST_MACHINES.get(opt_level) or new_host_target_machine(opt_level)
            _HOST_MACHINES[opt_level] = machine
    return machine


@functools.lru_cache(maxsize=None)
def host_vector_bits() -> int:
    """Widest useful SIMD register on this CPU in bits (512 with AVX-512F, else 256 or 128).
    Cached: LLVM reads the CPU's features anew on each question, and the backend asks for
    every loop nest (it was most of the MLP update's lowering time)."""
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 512
    if features.get("avx2") or features.get("avx"):
        return 256
    return 128


def prepare_module(module: ir.Module | str) -> ir.Module:
    """Give an `ir.Module` the host triple and data layout (so LLVM costs vectors right)."""
    if isinstance(module, ir.Module):
        machine = host_target_machine()
        module.triple = machine.triple
        module.data_layout = str(machine.target_data)
    return module


def optimise(llmod: llvm.ModuleRef, opt_level: int = 3, vectorise: bool = True) -> None:
    """Run LLVM's default per-module pipeline at `opt_level` on a parsed module, in place
    (without LLVM's vectorisers when `vectorise` is false: code that is vectorised by hand
    only pays their compile time)."""
    machine = host_target_machine()
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    tuning.loop_vectorization = vectorise and opt_level >= 2
    tuning.slp_vectorization = vectorise and opt_level >= 2
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(llmod, builder)


class CompiledModule:
    """Machine code for one module, kept alive as long as this object lives. `optimiser`
    replaces the default pipeline (`optimise` at `opt_level`) where a caller has its own.
    `codegen_options`: LLVM command-line options (`-name=value`) set for this module's code
    generation only, each with the value that restores it after (`{name: (value, reset)}`);
    the lock held around every compile keeps other modules from seeing them."""

    def __init__(self, module: ir.Module | str, opt_level: int = 3, vectorise: bool = True,
                 optimiser: Callable[[llvm.ModuleRef], None] | None = None,
                 codegen_options: dict[str, tuple[str, str]] | None = None) -> None:
        _initialise()
        text = str(prepare_module(module))
        self._lock = LLVM_LOCK  # kept: __del__ may run when this module's globals are gone
        options = codegen_options or {}
        with LLVM_LOCK:
            llmod = llvm.parse_assembly(text)
            llmod.verify()
            if optimiser is None:
                optimise(llmod, opt_level, vectorise)
            else:
                optimiser(llmod)
            for name, (value, _) in options.items():
                llvm.set_option("", f"-{name}={value}")
            try:
                self.engine = llvm.create_mcjit_compiler(llmod, new_host_target_machine())
                self.engine.finalize_object()
            finally:
                for name, (_, reset) in options.items():
                    llvm.set_option("", f"-{name}={reset}")
        self.llvm_module = llmod

    def __del__(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            with self._lock:  # see close_llvm
                engine.close()

    def address(self, name: str) -> int:
        """Address of the compiled function `name` (raises KeyError when absent)."""
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"no function {name!r} in compiled module")
        return addr

    def function(self, name: str, restype: type | None,
                 argtypes: Sequence[type]) -> ctypes._CFuncPtr:
        """The compiled function `name` as a ctypes callable (GIL released during the call)."""
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        fn = prototype(self.address(name))
        fn._owner = self  # keep the machine code alive while the callable is
        return fn

    def assembly(self) -> str:
        """Host assembly of the optimised module (for inspection and tests)."""
        return host_target_machine().emit_assembly(self.llvm_module)


class Precompiled(Protocol):
    """Machine code built ahead of time and loaded (the kernel library: the thread pool and
    the matmul kernels, compiler/cache/kernel_library.py)."""

    threads: int  # the threads its pool runs loops on, the caller included

    def address(self, name: str) -> int:
        """Address of the function `name`."""


_PRECOMPILED: list[Callable[[], Precompiled | None]] = []


def install_precompiled(source: Callable[[], Precompiled | None]) -> None:
    """Where `precompiled` finds the kernel library (filled by compiler/driver.py: the cache
    that builds and loads it sits above this layer)."""
    _PRECOMPILED[:] = [source]


def precompiled() -> Precompiled | None:
    """The loaded kernel library, or None: compile the pool and the kernels here instead."""
    return _PRECOMPILED[0]() if _PRECOMPILED else None


def compile_module(module: ir.Module | str, opt_level: int = 3,
                   vectorise: bool = True) -> CompiledModule:
    """Compile `module` for the host CPU; see `CompiledModule`."""
    return CompiledModule(module, opt_level, vectorise)
