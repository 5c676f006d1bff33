"""The `redraft` command: print what redraft makes of a function.

    redraft emit path/to/file.py::func                 # its Core source
    redraft emit path/to/file.py::func --grad          # the gradient's source
    redraft emit path/to/file.py::func --grad --argnums 0,1
    redraft emit path/to/file.py::func --jvp           # forward mode
    redraft emit path/to/file.py::func --vjp           # reverse mode with a cotangent
    redraft emit path/to/file.py::func --jacfwd | --jacrev
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
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
        print(emit(fn, "vmap", in_axes=_argnums(args.vmap)), end="")
    else:
        print(emit(fn, mode, argnums=_argnums(args.argnums)), end="")
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
