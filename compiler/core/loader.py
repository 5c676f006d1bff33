"""Turn a Core function into a live Python function, loaded from a real file.

The printed source is written under the cache directory (REDRAFT_CACHE_DIR, default
~/.cache/redraft/generated) so that tracebacks, `inspect.getsource` and pdb all work inside
generated code. Each file's lines remember the user's (file, line) they came from.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import re
import threading
import types

from redraft.compiler.core import ir
from redraft.compiler.core.printer import print_function
from redraft.runtime.errors import install_origin_lookup

# generated file path -> origin of each line (index 0 is line 1)
LINE_ORIGINS: dict[str, list[ir.Origin | None]] = {}


# the cache directories made by this process: each is made once (a mkdir of one that is
# there took 0.4 ms here, for each generated function of a first call)
_MADE: set[pathlib.Path] = set()


def cache_dir() -> pathlib.Path:
    root = os.environ.get("REDRAFT_CACHE_DIR")
    path = pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "redraft"
    path = path / "generated"
    if path not in _MADE:
        path.mkdir(parents=True, exist_ok=True)
        _MADE.add(path)
    return path


def namespace_for(fn: ir.Function) -> tuple[ir.Function, dict]:
    """The globals the printed function needs; Refs whose names clash get fresh aliases."""
    bindings: dict[str, object] = {}
    renames: dict[tuple[str, int], str] = {}
    reserved = {fn.name} | set(fn.params)  # a global must not be shadowed by these

    def bind(ref: ir.Ref) -> ir.Ref:
        binding = ref.root_binding()
        head = ref.path.split(".")[0]
        if binding is None and re.search(r"<\w+>", head):  # `<lambda>_batched`, from a list
            binding = head, (ref.root if ref.root is not None else ref.value)
        if binding is None:
            return ref
        name, value = binding
        base = name if name.isidentifier() else re.sub(r"\W", "_", name)
        key = (name, id(value))
        if key in renames:
            alias = renames[key]
        elif base == name and name not in reserved and (name not in bindings
                                                        or bindings[name] is value):
            alias = name
        else:
            k = 1
            while f"{base}_{k}" in reserved or (f"{base}_{k}" in bindings
                                               and bindings[f"{base}_{k}"] is not value):
                k += 1
            alias = f"{base}_{k}"
        renames[key] = alias
        bindings[alias] = value
        if alias == name:
            return ref
        return ir.Ref(ref.value, alias + ref.path[len(name):], ref.root)

    body = [_map_refs(s, bind) for s in fn.body]
    defaults = _named_defaults(fn, bindings, reserved)
    out = ir.Function(fn.name, fn.params, body, defaults, fn.filename, fn.firstline,
                      fn.doc, fn.meta)
    return out, bindings


class _DefaultName(str):
    """A parameter's default that Python cannot spell as a literal (an enum member, an
    object), printed as the global name it is bound to."""

    def __repr__(self) -> str:
        return str(self)


def _named_defaults(fn: ir.Function, bindings: dict, reserved: set) -> tuple:
    """fn's defaults, each that is not a literal replaced by a global `<param>_default`."""
    if not fn.defaults:
        return fn.defaults
    params = fn.params[len(fn.params) - len(fn.defaults):]
    out = []
    for param, value in zip(params, fn.defaults):
        if _literal(value):
            out.append(value)
            continue
        name = f"{param}_default"
        while name in reserved or (name in bindings and bindings[name] is not value):
            name += "_"
        bindings[name] = value
        out.append(_DefaultName(name))
    return tuple(out)


def _literal(value) -> bool:
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes)) and (
        type(value) in (bool, int, float, complex, str, bytes))


def _map_refs(s: ir.Stmt, f) -> ir.Stmt:
    return ir.map_stmt(s, lambda a: f(a) if isinstance(a, ir.Ref) else a)


def source_of(fn: ir.Function, header: str = "") -> tuple[str, dict, list]:
    """(module source, namespace, line origins) for `fn`."""
    fn, namespace = namespace_for(fn)
    text, origins = print_function(fn)
    head_lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    prefix = "\n".join(head_lines) + "\n" if head_lines else ""
    return prefix + text, namespace, [None] * len(head_lines) + origins


def load(fn: ir.Function, header: str = "") -> types.FunctionType:
    """Print `fn`, write it to a file in the cache, execute it and return the function."""
    text, namespace, origins = source_of(fn, header)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = cache_dir() / f"{fn.name}_{digest}.py"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # pmap: threads
        try:
            tmp.write_text(text)
        except FileNotFoundError:  # the directory was removed since this process made it
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text)
        tmp.replace(path)
    module_globals = dict(namespace)
    module_globals.update({"__name__": f"redraft_generated.{fn.name}", "__file__": str(path),
                           "__builtins__": __builtins__})
    code = compile(text, str(path), "exec")
    exec(code, module_globals)
    LINE_ORIGINS[str(path)] = origins
    out = module_globals[fn.name]
    out.__redraft_transformable__ = lambda: fn  # the Core it was printed from
    out.__redraft_source__ = text
    return out


def user_origin(filename: str, lineno: int) -> ir.Origin | None:
    """The user's (file, line) behind line `lineno` of a generated file, if known."""
    origins = LINE_ORIGINS.get(filename)
    if origins and 0 < lineno <= len(origins):
        return origins[lineno - 1]
    return None


install_origin_lookup(user_origin)
