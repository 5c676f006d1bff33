"""A function's fingerprint: a hash of everything its compiled code depends on.

The source of the function and of every function it reaches through its globals, closures,
defaults and user modules' attributes (in any file); the values of the globals it reads
(arrays by content); transforms and jit wrappers by their options and the function they
wrap. Library code (redraft, NumPy, the standard library) counts by name: redraft's own
version and source files are part of the key (see `redraft_stamp`). A value that cannot be
fingerprinted faithfully (an object of a user class, say) makes the function uncacheable:
`fingerprint` returns None rather than risk a stale entry.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pathlib
import platform
import sys
import sysconfig
import types

import numpy as np

from redraft import version

_LIBRARY_ROOTS = {"redraft", "numpy", "builtins"}


class Unfingerprintable(Exception):
    """A value the fingerprint cannot capture."""


def fingerprint(value) -> str | None:
    """Hex digest of what compiled code for `value` depends on, or None if unknown."""
    walker = _Walker()
    try:
        walker.add(value)
    except (Unfingerprintable, OSError, TypeError, RecursionError):
        return None
    return walker.digest.hexdigest()


class _Walker:
    def __init__(self):
        self.digest = hashlib.sha256()
        self.seen: dict[int, int] = {}
        self.keep: list = []  # ids in `seen` stay valid while we walk

    def put(self, text: str) -> None:
        self.digest.update(text.encode("utf-8", "surrogatepass"))
        self.digest.update(b"\x00")

    def add(self, v) -> None:
        t = type(v)
        if v is None or t in (bool, int, float, complex, str, bytes):
            self.put(f"{t.__name__}:{v!r}")
        elif t in (tuple, list, set, frozenset):
            items = sorted(v, key=repr) if t in (set, frozenset) else v
            self.put(f"{t.__name__}:{len(items)}")
            for x in items:
                self.add(x)
        elif t is dict:
            self.put(f"dict:{len(v)}")
            for k in sorted(v, key=repr):
                self.add(k)
                self.add(v[k])
        elif isinstance(v, np.ndarray):
            self.put(f"ndarray:{v.dtype.str}:{v.shape}:"
                     + hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())
        elif isinstance(v, (np.generic, np.dtype)):
            self.put(f"{type(v).__name__}:{v!r}")
        elif _is_array(v):
            self.put(f"Array:weak={v._weak}")
            self.add(np.asarray(v))
        elif isinstance(v, types.ModuleType):
            self.put(f"module:{v.__name__}@{_version(v.__name__)}")
        elif isinstance(v, types.FunctionType):
            self.function(v)
        elif isinstance(v, types.MethodType):
            self.add(v.__func__)
            self.add(v.__self__)
        elif isinstance(v, functools.partial):
            self.put("partial")
            self.add(v.func)
            self.add(v.args)
            self.add(v.keywords)
        elif isinstance(v, type) or callable(v) and _is_library(type(v).__module__):
            self.library_object(v)
        else:
            self.wrapper(v)

    def once(self, v) -> bool:
        """True the first time `v` is met (recursive functions are walked once)."""
        if id(v) in self.seen:
            self.put(f"again:{self.seen[id(v)]}")
            return False
        self.seen[id(v)] = len(self.seen)
        self.keep.append(v)
        return True

    def library_object(self, v) -> None:
        """Classes, ufuncs, redraft's wrappers: by name, plus the user code they hold."""
        module = getattr(v, "__module__", None) or type(v).__module__
        name = getattr(v, "__qualname__", None) or type(v).__qualname__
        if isinstance(v, type) and not _is_library(module):
            if not self.once(v):
                return
            self.put(f"class:{module}.{name}")
            self.put(inspect.getsource(v))
            return
        if not isinstance(v, (type, np.ufunc, types.BuiltinFunctionType)):
            return self.wrapper(v)
        self.put(f"lib:{module}.{name}@{_version(module)}")

    def wrapper(self, v) -> None:
        """jit, vmap and other redraft objects around a user function: their type, their
        options, and what they wrap."""
        if not _is_library(type(v).__module__) or not self.once(v):
            if id(v) in self.seen:
                return
            raise Unfingerprintable(f"{type(v).__qualname__} object")
        self.put(f"object:{type(v).__module__}.{type(v).__qualname__}")
        state = dict(getattr(v, "__dict__", {}))
        for name in sorted(state):
            if name.startswith("__") or name in ("_cache", "_fast", "_sig", "_vmap_core",
                                                 "_vmap_params", "_fn"):
                continue  # memo tables and derived data, not inputs
            self.put(name)
            self.add(state[name])

    def function(self, f: types.FunctionType) -> None:
        if not self.once(f):
            return
        code = f.__code__
        self.put(f"function:{f.__module__}.{f.__qualname__}")
        if _is_library(f.__module__):
            self.put(_version(f.__module__))
            cells = _cells(f)  # a transform's closure: the user's function and options
            for name in sorted(cells):
                if not isinstance(cells[name], dict):  # dicts there are memo tables
                    self.put(name)
                    self.add(cells[name])
            return
        self.put(code.co_filename)
        self.put(inspect.getsource(f))
        self.put(_code_text(code))  # which of the lambdas a source line holds
        self.add(f.__defaults__)
        self.add(f.__kwdefaults__)
        cells = _cells(f)
        for name in sorted(cells):
            self.put(name)
            self.add(cells[name])
        names = _names(code)
        for name in sorted(names):
            if name in f.__globals__:
                value = f.__globals__[name]
                self.put(f"global:{name}")
                self.add(value)
                if isinstance(value, types.ModuleType) and not _is_library(value.__name__):
                    for attr in sorted(names):
                        if hasattr(value, attr):
                            self.put(f"attr:{name}.{attr}")
                            self.add(getattr(value, attr))


def _code_text(code: types.CodeType) -> str:
    """The code object's bytecode, the names it reads (an attribute's name is not in the
    bytecode: `nn.silu` and `nn.elu` compile alike), constants (nested code by its own text)
    and place: two lambdas on one source line share getsource's text, never all of this."""
    consts = [_code_text(c) if isinstance(c, types.CodeType)
              else repr(sorted(map(repr, c))) if isinstance(c, frozenset) else repr(c)
              for c in code.co_consts]
    place = next(iter(code.co_positions()), None) if hasattr(code, "co_positions") else None
    return f"{code.co_code.hex()}|{code.co_names}|{consts}|{code.co_firstlineno}|{place}"


def _cells(f: types.FunctionType) -> dict:
    out = {}
    for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            out[name] = None
    return out


def _names(code: types.CodeType) -> set[str]:
    """Global and attribute names the code (and code nested in it) mentions."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _version(module: str | None) -> str:
    """The installed version of a library module's package (an upgrade changes the key)."""
    root = sys.modules.get((module or "").split(".")[0])
    return str(getattr(root, "__version__", ""))


def _is_array(v) -> bool:
    from redraft.runtime.array import Array
    return isinstance(v, Array)


@functools.cache
def _is_library(module: str | None) -> bool:
    """Modules counted by name: redraft, NumPy, the standard library, installed packages."""
    if not module:
        return False
    root = module.split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.builtin_module_names:
        return True
    mod = sys.modules.get(root)
    path = getattr(mod, "__file__", None)
    if path is None:
        return root in sys.stdlib_module_names
    path = os.path.realpath(path)
    places = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                  "platlib")}
    return any(path.startswith(os.path.realpath(p) + os.sep) for p in places)


@functools.cache
def redraft_stamp() -> str:
    """redraft's version and the size and time of each of its source files (so that a
    changed compiler never loads code an older one made)."""
    digest = hashlib.sha256(version.__version__.encode())
    roots = [pathlib.Path(version.__file__).parent]
    for sub in ("compiler", "runtime", "kernels"):
        mod = sys.modules.get(f"redraft.{sub}")
        if mod is not None and getattr(mod, "__path__", None):
            roots += [pathlib.Path(p) for p in mod.__path__]
    for root in sorted(set(roots)):
        _stamp_tree(str(root), digest)
    return digest.hexdigest()


def _stamp_tree(folder: str, digest) -> None:
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _stamp_tree(entry.path, digest)
            elif entry.name.endswith(".py"):
                st = entry.stat()
                digest.update(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}".encode())


@functools.cache
def cpu_stamp() -> str:
    """The CPU's name and features (from /proc/cpuinfo, else from LLVM)."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read().split("\n\n")[0]
        fields = [line for line in text.splitlines()
                  if line.split(":")[0].strip() in ("vendor_id", "model name", "flags")]
        if fields:
            return platform.machine() + "|" + "|".join(fields)
    except OSError:
        pass
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    return f"{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features().flatten()}"
