"""Where the CUDA compiler pieces are: libNVVM, libdevice and ptxas.

Looked up, in order, under $CUDA_HOME, $CUDA_PATH, the `nvidia-nvvm` / `nvidia-cuda-nvcc`
pip packages (CUDA 13 puts them under site-packages/nvidia/cu13/, CUDA 12 under
nvidia/cuda_nvcc/), /usr/local/cuda and /usr/local/cuda-*. Nothing here needs a GPU.
"""
from __future__ import annotations

import functools
import glob
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

LIBNVVM_NAMES = ("libnvvm.so", "libnvvm.so.4", "libnvvm.so.3")
LIBNVVM_DIRS = ("nvvm/lib64", "lib64", "lib", "nvvm/lib")
LIBDEVICE = "nvvm/libdevice/libdevice.10.bc"


@dataclass(frozen=True)
class Toolkit:
    """Paths of the pieces found (None for a piece that is missing)."""
    libnvvm: Path | None
    libdevice: Path | None
    ptxas: Path | None

    def describe(self) -> str:
        return (f"libNVVM: {self.libnvvm or 'not found'}; libdevice: "
                f"{self.libdevice or 'not found'}; ptxas: {self.ptxas or 'not found'}")


def candidate_roots() -> list[Path]:
    """Directories that may hold a CUDA toolkit layout, most specific first."""
    roots: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]))
    for site in sys.path:
        for sub in ("nvidia/cu13", "nvidia/cu12", "nvidia/cuda_nvcc", "nvidia/nvvm"):
            p = Path(site) / sub
            if p.is_dir():
                roots.append(p)
    roots.append(Path("/usr/local/cuda"))
    roots += [Path(p) for p in sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    return roots


def _first(paths) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


@functools.cache
def find() -> Toolkit:
    """The toolkit pieces (cached for the process)."""
    roots = candidate_roots()
    libnvvm = _first(r / d / n for r in roots for d in LIBNVVM_DIRS for n in LIBNVVM_NAMES)
    libdevice = _first(r / LIBDEVICE for r in roots)
    ptxas = _first(r / "bin" / "ptxas" for r in roots)
    if ptxas is None and shutil.which("ptxas"):
        ptxas = Path(shutil.which("ptxas"))
    return Toolkit(libnvvm, libdevice, ptxas)
