"""The kernel library: the thread pool and every matmul kernel, compiled once per machine.

Generated code calls the thread pool (compiler/backend/llvm/parallel.py) and the matmul
kernels (kernels/matmul.py, all narrow variants included): library code that does not depend
on the user's function, what jaxlib ships compiled. Compiled with MCJIT they cost each
process ~0.15 s of CPU in its first call. This library links them into one shared object,
stored with the compile cache's entries (store.py) under a key of Python's version,
redraft's source (`redraft_stamp`) and the CPU. A process loads it once (RTLD_GLOBAL, so
that cached entries resolve their calls to it) and starts its pool once: the JIT (through
kernels/jit_host.py `precompiled`) and the cached entries share that one pool.

Absent, the JIT compiles the pool and the kernels with MCJIT as before, and a background
process at the lowest priority builds the library for the next process (1.6 s of CPU: LLVM
at O3 and `cc`); where that fails (no C compiler), nothing changes. REDRAFT_KERNEL_LIBRARY=0
keeps the JIT off it. REDRAFT_CACHE=0 does not: that switch is the cache of users' functions.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from redraft.compiler.backend.llvm.parallel import requested_threads
from redraft.kernels.jit_host import close_llvm, install_precompiled

from . import store
from .fingerprint import cpu_stamp, redraft_stamp

SWITCH = "REDRAFT_KERNEL_LIBRARY"
BUILD_STALE_SECONDS = 300   # a build marker older than this belongs to a builder that died
BUILDER_WAIT_SECONDS = 60   # how long the cache's saves wait for this process's builder

_LOCK = threading.Lock()
_LOADED: list[Library] = []            # the library, once loaded
_JIT_CHOICE: list[Library | None] = []  # what the JIT took, fixed at its first question
_BUILDER: list[subprocess.Popen | bool] = []


def enabled() -> bool:
    """Whether the JIT may use the library (REDRAFT_KERNEL_LIBRARY, default on)."""
    return os.environ.get(SWITCH, "1") not in ("0", "", "off", "false")


def key() -> str:
    """The store key of the library for this Python, redraft source and CPU."""
    text = f"runtime\n{sys.version}\n{redraft_stamp()}\n{cpu_stamp()}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Library:
    """The loaded library: its symbols' addresses and the threads its pool runs on."""
    cdll: ctypes.CDLL
    path: pathlib.Path
    workers: ctypes.c_int64
    threads: int

    def address(self, name: str) -> int:
        """Address of the function `name` (AttributeError when the library lacks it)."""
        return ctypes.cast(getattr(self.cdll, name), ctypes.c_void_p).value

    def after_fork(self) -> None:
        """A forked child has no worker threads: its loops run serially."""
        self.workers.value = 0
        self.threads = 1


def load() -> Library | None:
    """The library, loaded and its pool started (once a process); None when it is absent
    or unusable (an entry that fails its hash or lacks a symbol is removed)."""
    with _LOCK:
        if _LOADED:
            return _LOADED[0]
        found = store.load(key())
        if found is None:
            return None
        try:
            library = _open(found[0])
        except (OSError, AttributeError, ValueError):
            store.remove(key())
            return None
        _LOADED.append(library)
        return library


def _open(path: pathlib.Path) -> Library:
    from redraft.compiler.aot import objects
    cdll = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    for name in sorted(objects.runtime_symbols() | {objects.POOL_START}):
        getattr(cdll, name)  # every symbol there before the pool starts
    workers = ctypes.c_int64.in_dll(cdll, objects.POOL_WORKERS)
    start = getattr(cdll, objects.POOL_START)
    start.restype, start.argtypes = ctypes.c_int64, [ctypes.c_int64]
    threads = requested_threads()
    if threads > 1:
        threads = 1 + start(threads - 1)
    library = Library(cdll, path, workers, threads)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=library.after_fork)
    return library


def for_jit() -> Library | None:
    """The library for the JIT's pool and kernels, or None: switched off, or not built yet
    (then it is built in the background for the next process). Decided once a process, so
    that the pool and the kernels never come from two places."""
    with _LOCK:
        if _JIT_CHOICE:
            return _JIT_CHOICE[0]
    library = None
    if enabled() and os.environ.get("REDRAFT_BACKEND", "auto") != "interpret":
        library = load()
        if library is None:
            build_in_background()
    with _LOCK:
        if not _JIT_CHOICE:
            _JIT_CHOICE.append(library)
        return _JIT_CHOICE[0]


def jit_used_library() -> bool | None:
    """Whether this process's JIT runs on the library (None: it has not needed it yet)."""
    return None if not _JIT_CHOICE else _JIT_CHOICE[0] is not None


def _forget_in_child() -> None:
    """A forked child keeps the loaded library, but not the parent's builder process."""
    global _LOCK
    _LOCK = threading.Lock()
    _BUILDER.clear()


os.register_at_fork(after_in_child=_forget_in_child)


# ---- building ---------------------------------------------------------------------------

def build(out: pathlib.Path) -> None:
    """Link the thread pool and every matmul kernel into the shared object `out`."""
    from redraft.compiler.aot import objects
    from redraft.compiler.aot.link import link_shared
    from redraft.compiler.aot.target import target_machine
    with objects.llvm_lock():
        modules = objects.runtime_modules(objects.runtime_symbols())
        obj = objects.emit_object(objects.link_modules(modules), target_machine())
        close_llvm(*modules)
    link_shared([obj], {}, out)


def build_and_save() -> bool:
    """Build the library and store it under its key, unless it is there already; whether it
    is there after (False where there is no C compiler or the link fails)."""
    from redraft.compiler.aot.link import LinkError
    wait_for_builder(BUILDER_WAIT_SECONDS)  # rather than build it twice (and hold LLVM here)
    if store.load(key()) is not None:
        return True
    # mkdtemp, not TemporaryDirectory (see jit_cache._save)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="redraft-kernels-"))
    try:
        out = tmp / store.LIBRARY
        build(out)
        store.save(key(), out, {"name": "runtime"})
    except (LinkError, OSError, RuntimeError):
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return store.load(key()) is not None


_BUILD_COMMAND = ("import os, sys; os.nice(19); "
                  "from redraft.compiler.cache.kernel_library import build_main; "
                  "build_main(sys.argv[1])")


def build_in_background() -> None:
    """Start a process at the lowest priority that builds the library, once a process and
    not while another process is building it (a marker file beside the entries says so).
    The caller does not wait: its own kernels compile with MCJIT meanwhile."""
    with _LOCK:
        if _BUILDER:
            return
        _BUILDER.append(True)
    marker = store.root() / f".kernel-library-{key()[:16]}.building"
    if not sys.executable or not _claim(marker):
        return
    # the child imports the redraft this process runs, wherever sys.path found it
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _BUILD_COMMAND, str(marker)], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
    except OSError:
        marker.unlink(missing_ok=True)
        return
    with _LOCK:
        _BUILDER[:] = [process]


def _claim(marker: pathlib.Path) -> bool:
    """Create `marker` unless a live builder holds it (a stale one is taken over)."""
    for _ in range(2):
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            try:
                if time.time() - marker.stat().st_mtime < BUILD_STALE_SECONDS:
                    return False
                marker.unlink()
            except FileNotFoundError:
                pass
        except OSError:
            return False
    return False


def build_main(marker: str) -> None:
    """The background builder's body: build, then give up the marker."""
    try:
        build_and_save()
    finally:
        pathlib.Path(marker).unlink(missing_ok=True)


def wait_for_builder(timeout: float | None = None) -> None:
    """Wait for the builder this process started, if any, at most `timeout` seconds."""
    with _LOCK:
        process = _BUILDER[0] if _BUILDER else None
    if isinstance(process, subprocess.Popen):
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass


def install() -> None:
    """Hand the library down to the kernels and the backend (kernels/jit_host.py)."""
    install_precompiled(for_jit)
