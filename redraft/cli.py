"""The `redraft` command: print what redraft makes of a function.

    redraft emit path/to/file.py::func                 # its Core source
    redraft emit path/to/file.py::func --grad          # the gradient's source
    redraft emit path/to/file.py::func --grad --argnums 0,1
    redraft emit path/to/file.py::func --jvp           # forward mode
    redraft emit path/to/file.py::func --vjp           # reverse mode with a cotangent
    redraft emit path/to/file.py::func --jacfwd | --jacrev
    redraft ir path/to/file.py::func --sig 'f32[1000],i32[]'   # the SSA IR after passes
    redraft ir path/to/file.py::func --sig 'f32[8]' --stage core|ssa|llvm|asm
    redraft build path/to/module.py --out DIR   # its exports: .so, Python package, C header
    redraft cache info|clear                    # the persistent compile cache
    redraft ir path/to/file.py::func --sig 'f32[8]' --stage nvvm|ptx [--arch sm_80|sm_90]
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re
import sys
from typing import Callable, Sequence


def load_function(target: str) -> Callable:
    """The function `name` of the file in `path::name` (nested attributes with dots)."""
    if "::" not in target:
        raise SystemExit(f"redraft: expected path/to/file.py::function, got {target!r}")
    path_text, name = target.rsplit("::", 1)
    path = pathlib.Path(path_text)
    if not path.is_file():
        raise SystemExit(f"redraft: no such file: {path}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)
    sys.path.insert(0, str(path.parent.resolve()))
    spec.loader.exec_module(module)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise SystemExit(f"redraft: {path} has no function {name!r}")
        obj = getattr(obj, part)
    return obj


def _argnums(text: str):
    nums = tuple(int(n) for n in text.split(",") if n.strip())
    return nums[0] if len(nums) == 1 and "," not in text else nums


def emit_command(args: argparse.Namespace) -> int:
    from redraft.transforms import emit
    fn = load_function(args.target)
    modes = [m for m in ("grad", "jvp", "vjp", "jacfwd", "jacrev") if getattr(args, m)]
    if args.vmap is not None:
        modes.append("vmap")
    if len(modes) > 1:
        raise SystemExit(f"redraft emit: choose one of --{', --'.join(modes)}")
    mode = modes[0] if modes else "core"
    if mode == "vmap":
        print(emit(fn, "vmap", in_axes=_in_axes(args.vmap)), end="")
    else:
        print(emit(fn, mode, argnums=_argnums(args.argnums)), end="")
    return 0


def _in_axes(text: str):
    """'0' -> 0; '0,None' -> (0, None): one entry per argument."""
    items = [None if t.strip() in ("None", "none", "") else int(t) for t in text.split(",")]
    return items[0] if len(items) == 1 and "," not in text else tuple(items)


_SIG_TYPE = re.compile(r"\s*([a-z]+\d*)\[([\d,\s]*)\]\s*")
_SIG_DTYPES = {"bool": "bool", "f16": "float16", "f32": "float32", "f64": "float64",
               "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
               "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def parse_signature(text: str) -> list:
    """'f32[3,4],i32[]' -> zero arrays of those types (the arguments to stage with)."""
    import numpy as np
    args, at = [], 0
    while at < len(text):
        match = _SIG_TYPE.match(text, at)
        if match is None or match.group(1) not in _SIG_DTYPES:
            raise SystemExit(f"redraft ir: cannot read the signature at {text[at:]!r}; "
                             "expected types like f32[1000],i32[]")
        dims = tuple(int(d) for d in match.group(2).split(",") if d.strip())
        args.append(np.zeros(dims, _SIG_DTYPES[match.group(1)]))
        at = match.end()
        if at < len(text):
            if text[at] != ",":
                raise SystemExit(f"redraft ir: expected ',' at {text[at:]!r}")
            at += 1
    return args


def ir_command(args: argparse.Namespace) -> int:
    """Print one stage of the compilation of a function for a signature."""
    from redraft.transforms import emit
    fn = load_function(args.target)
    if args.stage == "core":
        print(emit(fn, "core"), end="")
        return 0
    from redraft.jit import make_ir
    ir_fn = make_ir(fn)(*parse_signature(args.sig or ""))
    if args.stage == "ssa":
        print(ir_fn)
        return 0
    if args.stage in ("nvvm", "ptx"):
        return _gpu_stage(ir_fn, args.stage, args.arch)
    from redraft.compiler.backend.llvm import Unsupported, assembly, llvm_ir
    try:
        text = llvm_ir(ir_fn) if args.stage == "llvm" else assembly(ir_fn)
    except Unsupported as e:
        print(f"redraft ir: the LLVM backend does not lower this function ({e}); it runs "
              "on the interpreter", file=sys.stderr)
        return 1
    print(text, end="")
    return 0


def build_command(args: argparse.Namespace) -> int:
    """Build every `redraft.export` of a module ahead of time."""
    import time
    from redraft.compiler.aot.build import build
    from redraft.compiler.aot.entry import BuildError
    from redraft.compiler.aot.link import LinkError
    start = time.perf_counter()
    print(f"redraft build: {args.module} -> {args.out}")
    try:
        result = build(args.module, args.out, target=args.target,
                       emit_source=args.emit_source)
    except (BuildError, LinkError) as e:
        print(f"redraft build: error: {e}", file=sys.stderr)
        return 1
    print(f"redraft build: {len(result.compiled)} compiled, {len(result.reused)} unchanged in "
          f"{time.perf_counter() - start:.1f} s: {result.library}, {result.header}, "
          f"{result.package}/")
    return 0


def cache_command(args: argparse.Namespace) -> int:
    from redraft.compiler.cache import store
    if args.action == "clear":
        print(f"redraft cache: removed {store.clear()} entries from {store.root()}")
        return 0
    info = store.info()
    state = "on" if info["enabled"] else "off (REDRAFT_CACHE=0)"
    print(f"redraft cache: {info['path']}: {info['entries']} entries, "
          f"{info['bytes'] / 1e6:.1f} MB; {state}")
    return 0


def _add_build_commands(commands) -> None:
    b = commands.add_parser(
        "build", help="compile a module's exports ahead of time",
        description="Compile every function a module marks with redraft.export into one "
                    "shared library, an importable NumPy-only Python package (DIR/<module>/) "
                    "and a C header (DIR/<module>.h). Only changed entry points are rebuilt.")
    b.add_argument("module", help="path/to/module.py")
    b.add_argument("--out", required=True, metavar="DIR", help="where to write the build")
    b.add_argument("--target", default=None, metavar="CPU",
                   help="an LLVM CPU name such as x86-64-v3 or skylake (default: this host)")
    b.add_argument("--emit-source", action="store_true",
                   help="also write the transformed Core source of every export")
    b.set_defaults(run=build_command)
    c = commands.add_parser("cache", help="show or clear the persistent compile cache")
    c.add_argument("action", choices=("info", "clear"))
    c.set_defaults(run=cache_command)


def _gpu_stage(ir_fn, stage: str, arch: str) -> int:
    """Print the NVVM IR or the PTX (libNVVM) of the GPU kernels of `ir_fn`."""
    from redraft.compiler.backend import nvvm
    try:
        text = nvvm.nvvm_ir(ir_fn) if stage == "nvvm" else nvvm.ptx(ir_fn, arch)
    except (nvvm.Unsupported, nvvm.NvvmError) as e:
        print(f"redraft ir: no {stage} for this function: {e}", file=sys.stderr)
        return 1
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="redraft", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    e = commands.add_parser("emit", help="print the (transformed) source of a function")
    e.add_argument("target", help="path/to/file.py::function")
    for mode in ("grad", "jvp", "vjp", "jacfwd", "jacrev"):
        e.add_argument(f"--{mode}", action="store_true", help=f"print the {mode} source")
    e.add_argument("--argnums", default="0", help="differentiated arguments, e.g. 0 or 0,1")
    e.add_argument("--vmap", default=None, metavar="IN_AXES",
                   help="print the batched source, e.g. --vmap 0 or --vmap 0,None")
    e.set_defaults(run=emit_command)
    i = commands.add_parser("ir", help="print a compilation stage of a function")
    i.add_argument("target", help="path/to/file.py::function")
    i.add_argument("--sig", default="", help="argument types, e.g. 'f32[1000],i32[]'")
    i.add_argument("--stage", choices=("core", "ssa", "llvm", "asm", "nvvm", "ptx"),
                   default="ssa", help="Core source, SSA IR after passes, LLVM IR, host "
                   "assembly, GPU kernels as NVVM IR, or their PTX")
    i.add_argument("--arch", choices=("sm_80", "sm_90"), default="sm_80",
                   help="GPU architecture of --stage ptx")
    i.set_defaults(run=ir_command)
    _add_build_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (SyntaxError, TypeError, ValueError) as e:
        print(f"redraft: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
