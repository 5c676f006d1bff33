"""The jit's side of the persistent cache.

`lookup` answers a compilation from disk when an entry for the same key exists: it loads
the entry's shared library with ctypes and builds the same runner the LLVM backend would
(no staging, no passes, no LLVM). `remember` saves a fresh compilation in a background
thread (object code and a `cc` link cost tens of milliseconds that the caller need not
wait for); the process waits for pending saves at exit. Functions whose code calls back
into Python (print), that ran on the interpreter, that read a large constant (over 64 KiB:
it is not in the module's code) or whose dependencies cannot be fingerprinted are not
saved. Entries call the thread pool and the matmul kernels in the
kernel library (kernel_library.py), shared by all entries of a process and by the JIT.
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import pathlib
import shutil
import sys
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
from redraft.compiler.core.abstract import ShapedArray
from redraft.kernels.jit_host import close_llvm
from redraft.runtime.pytree import PyTreeDef

from . import kernel_library, store
from .fingerprint import cpu_stamp, fingerprint, redraft_stamp
from .runner import LibraryRunner

_PENDING: list[threading.Thread] = []
_LOADED: dict[str, ctypes.CDLL] = {}
_LOCK = threading.Lock()


def cache_key(fun, sig) -> str | None:
    """The key of `fun` compiled for `sig` (a driver.Signature), or None if uncacheable."""
    if not store.enabled() or os.environ.get("REDRAFT_BACKEND", "auto") == "interpret":
        return None
    fun_print = fingerprint(fun)
    static_print = fingerprint(sig.statics)
    aux_print = fingerprint(_aux_data(sig.treedef))  # the treedef's repr leaves it out
    if fun_print is None or static_print is None or aux_print is None:
        return None
    types = ",".join(f"{a.str_short()}{'~' if a.weak_type else ''}" for a in sig.avals)
    knobs = ",".join(f"{k}={os.environ.get(k, '')}" for k in (
        "REDRAFT_NUM_THREADS", "REDRAFT_LLVM_STRICT", "REDRAFT_LLVM_OPT"))
    knobs += f",cpus={_cpus()}"  # the products' chunks of work are per thread
    text = "\n".join([sys.version, fun_print, static_print, aux_print, repr(sig.treedef),
                      types, f"x64={sig.x64}", knobs, redraft_stamp(), cpu_stamp()])
    return hashlib.sha256(text.encode()).hexdigest()


def _cpus() -> int:
    """The CPUs this process may use (the thread pool's default size)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def _aux_data(treedef) -> list:
    """The auxiliary data of every registered node in `treedef` (a model's static settings
    change the compiled code, so they are part of the key)."""
    out, stack = [], [treedef]
    while stack:
        node = stack.pop()
        if node.kind not in (None, tuple, list, dict, type(None)):
            out.append(node.aux)
        stack.extend(node.children)
    return out


@dataclass
class CachedIR:
    """Stands for the IR of a function loaded from the cache (the IR itself is not kept)."""
    name: str
    params: list
    key: str

    def __str__(self) -> str:
        types = ", ".join(p.aval.str_short() for p in self.params)
        return f"# {self.name}({types}) loaded from the compile cache (entry {self.key[:16]})"


@dataclass
class _Param:
    aval: ShapedArray


def lookup(key: str, make_compiled: Callable):
    """What `make_compiled(ir, out_tree, out_weak, runner, backend)` (the driver's Compiled,
    passed in since the driver sits above this cache) builds for `key` from disk, or None."""
    found = store.load(key)
    if found is None:
        return None
    library, meta = found
    try:
        return _compiled(library, meta, key, make_compiled)
    except (OSError, AttributeError, KeyError, ValueError, TypeError):
        store.remove(key)
        return None


def _compiled(library: pathlib.Path, meta: dict, key: str, make_compiled: Callable):
    runner = LibraryRunner(_load_library(library, key, meta["needs_runtime"]), meta)
    params = [_Param(ShapedArray(tuple(s), np.dtype(d), w)) for s, d, w in meta["params"]]
    return make_compiled(CachedIR(meta["name"], params, key), tree_from_json(meta["out_tree"]),
                    tuple(meta["out_weak"]), runner, "llvm")


def _load_library(path: pathlib.Path, key: str, needs_runtime: bool) -> ctypes.CDLL:
    """dlopen an entry (after the shared runtime library, when it calls into it)."""
    with _LOCK:
        lib = _LOADED.get(key)
        if lib is None:
            if needs_runtime and kernel_library.load() is None:
                raise OSError("the kernel library is missing from the cache")
            lib = _LOADED[key] = ctypes.CDLL(str(path))
        return lib


# ---- saving ----------------------------------------------------------------------------------

def remember(key: str, compiled) -> None:
    """Save `compiled` (a fresh driver.Compiled) under `key`, in the background."""
    runner = compiled.runner
    machine = getattr(getattr(runner, "compiled", None), "llvm_module", None)
    if compiled.backend != "llvm" or machine is None:
        return
    if getattr(runner.compiled, "constants", None):
        return  # large constants live in this process's memory, not in the module
    try:
        meta = _metadata(compiled)
    except ValueError:
        return  # a custom pytree node in the results: not saved
    from redraft.compiler.aot.objects import llvm_lock
    with llvm_lock():  # printing uses LLVM's context, which a pending save may be using
        text = str(machine)
    thread = threading.Thread(target=_save, args=(key, text, meta), daemon=True,
                              name="redraft-cache-save")
    with _LOCK:
        _PENDING[:] = [t for t in _PENDING if t.is_alive()]
        _PENDING.append(thread)
    thread.start()


def _metadata(compiled) -> dict:
    r = compiled.runner
    return {
        "name": r.name,
        "in_specs": [(list(s), d.name) for s, d in r.in_specs],
        "out_specs": [(list(s), d.name) for s, d in r.out_specs],
        "results": [(p.kind, p.index, None if p.value is None else p.value.tolist(),
                     None if p.value is None else p.value.dtype.name) for p in r.results],
        "workspace_bytes": r.workspace_bytes, "by_object": not r.raw,
        "params": [(list(p.aval.shape), np.dtype(p.aval.dtype).name, bool(p.aval.weak_type))
                   for p in compiled.ir.params],
        "out_tree": tree_to_json(compiled.out_treedef),
        "out_weak": list(compiled.out_weak),
    }


def _save(key: str, text: str, meta: dict) -> None:
    import tempfile

    from redraft.compiler.aot.link import LinkError
    from redraft.compiler.aot.objects import NotStandalone
    # mkdtemp, not TemporaryDirectory: the latter's exit hook would delete the folder
    # under a save that the exit hook of this module is still waiting for
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="redraft-cache-"))
    try:
        library = tmp / store.LIBRARY
        needs_runtime = _build_library(text, library)
        if needs_runtime and not kernel_library.build_and_save():
            return  # (no C compiler: the entry's own link failed before this)
        store.save(key, library, dict(meta, needs_runtime=needs_runtime))
    except (NotStandalone, LinkError, OSError, RuntimeError):
        pass  # not cacheable here (a print callback, no C compiler): compiled next time
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _build_library(text: str, out: pathlib.Path) -> bool:
    """Link the entry's code alone into `out`; True if it calls the shared runtime."""
    from redraft.compiler.aot import objects
    from redraft.compiler.aot.link import link_shared
    from redraft.compiler.aot.target import target_machine
    with objects.llvm_lock():
        llmod = objects.parse(text)
        try:
            objects.check_standalone(llmod)
            needs_runtime = bool(objects.undefined_functions(llmod) & objects.runtime_symbols())
            obj = objects.emit_object(llmod, target_machine())
        finally:
            close_llvm(llmod)  # here, under the lock, not where Python would drop it
    link_shared([obj], {}, out)
    return needs_runtime


def flush() -> None:
    """Wait for every pending save (at exit, and in tests)."""
    with _LOCK:
        pending = list(_PENDING)
    for t in pending:
        t.join()


atexit.register(flush)


# ---- result structure as JSON ---------------------------------------------------------------

def tree_to_json(tree: PyTreeDef):
    if tree.kind is None:
        return "*"
    kids = [tree_to_json(c) for c in tree.children]
    names = {tuple: "tuple", list: "list", dict: "dict", type(None): "none"}
    if tree.kind not in names:
        raise ValueError("custom pytree node")
    return [names[tree.kind], list(tree.aux) if tree.kind is dict else None, kids]


def tree_from_json(data) -> PyTreeDef:
    if data == "*":
        return PyTreeDef(None, None, ())
    kind = {"tuple": tuple, "list": list, "dict": dict, "none": type(None)}[data[0]]
    aux = tuple(data[1]) if kind is dict else None
    return PyTreeDef(kind, aux, tuple(tree_from_json(c) for c in data[2]))
