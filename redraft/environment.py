"""What redraft runs on, and forgetting what it has compiled: print_environment_info and
clear_caches, as in JAX."""
from __future__ import annotations

import platform
import sys
from importlib import metadata

__all__ = ["print_environment_info", "clear_caches"]

_PACKAGES = ("numpy", "llvmlite", "gast", "scipy", "pycuda", "mpi4py")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions of redraft, Python and the packages it uses, the platform and the
    devices; printed, or returned when return_string is True."""
    from redraft.processes import devices, process_count
    from redraft.runtime.devices import default_backend
    from redraft.version import __version__
    lines = [f"redraft:    {__version__}"]
    lines += [f"{name + ':':<11} {_version(name)}" for name in _PACKAGES]
    lines += [f"python:     {sys.version.split()[0]}",
              f"platform:   {platform.platform()}",
              f"backend:    {default_backend()}",
              f"devices:    {devices()}",
              f"processes:  {process_count()}"]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


def clear_caches() -> None:
    """Forget every jitted function's compiled code and every cached transform (grad, vmap,
    ... of a function are derived again on next use). The on-disk compile cache is kept:
    `redraft cache clear` empties it."""
    from redraft.compiler.transforms.cache import TRANSFORM_CACHE
    from redraft.jit import clear_compiled
    clear_compiled()
    TRANSFORM_CACHE.clear()
