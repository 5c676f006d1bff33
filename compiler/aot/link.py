"""Object code and C sources -> one shared library, with the system C compiler."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile
import threading


class LinkError(RuntimeError):
    """The system C compiler is missing or failed."""


def c_compiler() -> str | None:
    """The system C compiler (`CC`, else cc, gcc or clang on PATH), or None."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def link_shared(objects: list[bytes], c_sources: dict[str, str],
                out: pathlib.Path) -> pathlib.Path:
    """Link `objects` and the C `c_sources` (file name -> text) into the library `out`,
    written atomically (a reader never sees half a library)."""
    cc = c_compiler()
    if cc is None:
        raise LinkError("no C compiler found (set CC, or install cc/gcc/clang): redraft "
                        "needs one to link the shared library")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="redraft-link-"))  # (see jit_cache._save)
    try:
        inputs = []
        for k, data in enumerate(objects):
            path = work / f"part{k}.o"
            path.write_bytes(data)
            inputs.append(str(path))
        for name, text in c_sources.items():
            path = work / name
            path.write_text(text)
            inputs.append(str(path))
        staged = work / out.name
        command = [cc, "-shared", "-fPIC", "-O2", "-o", str(staged), *inputs,
                   "-Wl,-Bsymbolic", "-lm", "-lpthread"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise LinkError(f"linking {out.name} failed:\n{done.stderr.strip()}")
        temp_out = out.with_name(f".{out.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.copyfile(staged, temp_out)
        os.replace(temp_out, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out
