"""`redraft build`: every export of a module -> one shared library, a Python package and a
C header, rebuilding only the entry points whose function, signature or target changed.

Each entry point's object code is kept in DIR/.redraft-build/ under a key made like the
persistent compile cache's (the fingerprint of the function and all it reaches, the
signature, the target, redraft's own stamp); the library is linked again only when some
object or the C side changed.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import pathlib
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from .entry import BuildError, Entry, compile_entry
from .exports import REGISTRY, Export

STATE = ".redraft-build"


@dataclass
class BuildResult:
    library: pathlib.Path
    header: pathlib.Path
    package: pathlib.Path
    compiled: list[str]      # entry points compiled this time
    reused: list[str]        # entry points whose object code was still valid
    linked: bool


def load_module(path: pathlib.Path):
    """Import the file at `path` afresh (its exports register as it runs)."""
    if not path.is_file():
        raise BuildError(f"no such file: {path}")
    name = path.stem
    REGISTRY.pop(name, None)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise BuildError(f"{path}: importing it failed: {type(e).__name__}: {e}") from e
    return module


def build(path: str | pathlib.Path, out: str | pathlib.Path, target: str | None = None,
          emit_source: bool = False, log: Callable[[str], None] = print) -> BuildResult:
    """Build every export of the module at `path` into `out`."""
    folder = str(pathlib.Path(path).parent.resolve())
    sys.path.insert(0, folder)  # for the module's own imports, at import and staging time
    try:
        return _build(pathlib.Path(path), pathlib.Path(out), target, emit_source, log)
    finally:
        sys.path.remove(folder)


def _build(path: pathlib.Path, out: pathlib.Path, target: str | None, emit_source: bool,
           log: Callable[[str], None]) -> BuildResult:
    from redraft.compiler.aot import glue, objects, package
    from redraft.compiler.aot.target import cpu_key, target_machine

    module = load_module(path)
    exports = REGISTRY.get(module.__name__, [])
    if not exports:
        raise BuildError(f"{path}: no functions marked with redraft.export")
    _check_names(exports)
    prefix = glue.c_name(module.__name__)
    state = out / STATE
    state.mkdir(parents=True, exist_ok=True)
    machine = target_machine(target)
    tkey = cpu_key(target)

    compiled, reused, objects_by_entry = [], [], []
    functions: dict[str, list[tuple[Entry, str]]] = {}
    for export in exports:
        for k, _ in enumerate(export.signatures):
            c_function = f"{prefix}_{export.name}" + (
                f"_{k}" if len(export.signatures) > 1 else "")
            label = f"{export.name}({export.signatures[k]})"
            key = _entry_key(export, k, tkey)
            entry, obj = _load_entry(state, key)
            if entry is None:
                entry = compile_entry(export, k, c_function + "_impl")
                start = time.perf_counter()
                with objects.llvm_lock():
                    obj = objects.emit_object(objects.parse(entry.llvm_ir), machine)
                entry.times["codegen"] += time.perf_counter() - start
                _save_entry(state, key, entry, obj)
                compiled.append(label)
                times = ", ".join(f"{stage} {1e3 * t:.0f} ms" for stage, t in entry.times.items())
                log(f"  {label}: {times}")
            else:
                reused.append(label)
                log(f"  {label}: unchanged")
            functions.setdefault(export.name, []).append((entry, c_function))
            objects_by_entry.append((entry, obj))

    library, header_path, linked = _link(out, prefix, objects_by_entry, functions, machine,
                                         log)
    pkg = package.write_package(out, module.__name__, library.name, str(path), functions)
    if emit_source:
        _emit_source(out, module.__name__, exports)
    return BuildResult(library, header_path, pkg, compiled, reused, linked)


def _check_names(exports: list[Export]) -> None:
    seen: dict[str, Export] = {}
    for e in exports:
        if e.name in seen:
            raise BuildError(f"{e.where()}: a second export named {e.name!r} (the first is at "
                             f"{seen[e.name].where()}); give one of them name=")
        seen[e.name] = e


def _entry_key(export: Export, index: int, tkey: str) -> str | None:
    from redraft.compiler.cache.fingerprint import fingerprint, redraft_stamp
    fun_print = fingerprint(export.fun)
    if fun_print is None:
        return None
    text = "\n".join([fun_print, export.name, str(index), export.signatures[index], tkey,
                      redraft_stamp(), sys.version])
    return hashlib.sha256(text.encode()).hexdigest()


def _load_entry(state: pathlib.Path, key: str | None) -> tuple[Entry | None, bytes | None]:
    if key is None:
        return None, None
    meta, obj = state / f"{key}.json", state / f"{key}.o"
    try:
        data = json.loads(meta.read_text())
        blob = obj.read_bytes()
        if hashlib.sha256(blob).hexdigest() != data.pop("object_sha256"):
            return None, None
        return Entry(**data), blob
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def _save_entry(state: pathlib.Path, key: str | None, entry: Entry, obj: bytes) -> None:
    if key is None:
        return
    data = asdict(entry)
    data["llvm_ir"] = ""  # the object code is what a rebuild needs
    data["object_sha256"] = hashlib.sha256(obj).hexdigest()
    (state / f"{key}.o").write_bytes(obj)
    (state / f"{key}.json").write_text(json.dumps(data))


def _link(out, prefix, objects_by_entry, functions, machine, log):
    """Link the entry objects, the runtime they need and the C glue (unless nothing
    changed since the last link)."""
    from redraft.compiler.aot import glue, link, objects
    needed = set()
    for entry, _ in objects_by_entry:
        needed |= set(entry.needs)
    pool = objects.POOL_ENTRY in needed
    pairs = [(e, c) for entries in functions.values() for e, c in entries]
    header_name = f"{prefix}.h"
    header_text = glue.header(prefix, pairs)
    c_text = glue.source(header_name, pairs, pool)
    library = out / f"lib{prefix}.so"
    header_path = out / header_name
    header_path.write_text(header_text)
    digest = hashlib.sha256(c_text.encode())
    for _, obj in objects_by_entry:
        digest.update(obj)
    digest.update(",".join(sorted(needed)).encode())
    stamp = out / STATE / "link.sha256"
    if library.is_file() and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        log(f"  link: {library.name} unchanged")
        return library, header_path, False
    start = time.perf_counter()
    with objects.llvm_lock():
        runtime_objs = [objects.emit_object(m, machine) for m in objects.runtime_modules(needed)]
    link.link_shared([obj for _, obj in objects_by_entry] + runtime_objs,
                     {f"{prefix}_glue.c": c_text, header_name: header_text}, library)
    stamp.write_text(digest.hexdigest())
    log(f"  link: {library.name} in {1e3 * (time.perf_counter() - start):.0f} ms")
    return library, header_path, True


def _emit_source(out: pathlib.Path, module: str, exports: list[Export]) -> pathlib.Path:
    """DIR/<module>_source.py: the Core source redraft compiled for every export."""
    from redraft.compiler.core.printer import print_function
    from redraft.compiler.transforms.calls.callable_core import core_of
    title = (f"The transformed Core source of every export of {module} "
             "(written by `redraft build --emit-source`).")
    parts = [f'"""{title}"""\n']
    for e in exports:
        parts.append(f"# ---- {e.name}: {', '.join(e.signatures)} (declared at {e.where()})\n")
        parts.append(print_function(core_of(e.fun))[0])
    path = out / f"{module}_source.py"
    path.write_text("\n".join(parts))
    return path
