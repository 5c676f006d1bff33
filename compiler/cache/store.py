"""Cache entries on disk: one directory per key holding a shared library and its metadata.

An entry is written under a temporary name and renamed into place (a reader never sees
half an entry; of two concurrent writers one wins). The metadata records the library's
SHA-256 and is itself hashed, so a truncated, corrupted or foreign file is never loaded:
`load` deletes such an entry and reports a miss, and the caller compiles again.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import tempfile

LIBRARY = "code.so"
META = "meta.json"


def root() -> pathlib.Path:
    base = os.environ.get("REDRAFT_CACHE_DIR")
    path = pathlib.Path(base) if base else pathlib.Path.home() / ".cache" / "redraft"
    return path / "compiled"


def enabled() -> bool:
    return os.environ.get("REDRAFT_CACHE", "1") not in ("0", "", "off", "false")


def entry_dir(key: str) -> pathlib.Path:
    return root() / key[:2] / key


def load(key: str) -> tuple[pathlib.Path, dict] | None:
    """(library path, metadata) of a sound entry, else None (a bad entry is removed)."""
    where = entry_dir(key)
    meta_path = where / META
    if not meta_path.is_file():
        return None
    try:
        digest, _, payload = meta_path.read_text().partition("\n")
        if hashlib.sha256(payload.encode()).hexdigest() != digest:
            raise ValueError("metadata hash mismatch")
        meta = json.loads(payload)
        library = where / LIBRARY
        if hashlib.sha256(library.read_bytes()).hexdigest() != meta["library_sha256"]:
            raise ValueError("library hash mismatch")
        if meta.get("key") != key:
            raise ValueError("entry of another key")
    except FileNotFoundError:
        return None  # another process is replacing the entry: a miss, not a bad entry
    except (OSError, ValueError, KeyError):
        remove(key)
        return None
    return library, meta


def save(key: str, library: pathlib.Path, meta: dict) -> pathlib.Path:
    """Move `library` and write `meta` into the entry for `key`, atomically, unless a sound
    entry is there already (another process wrote it: theirs is as good, and replacing it
    would pull it from under a process that is reading it)."""
    final = entry_dir(key)
    if load(key) is not None:
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=final.parent))
    try:
        shutil.move(str(library), staging / LIBRARY)
        meta = dict(meta, key=key,
                    library_sha256=hashlib.sha256((staging / LIBRARY).read_bytes()).hexdigest())
        payload = json.dumps(meta)
        (staging / META).write_text(hashlib.sha256(payload.encode()).hexdigest() + "\n"
                                    + payload)
        if final.exists():  # unsound (load removes those it reads): moved aside, then gone
            os.rename(final, staging.with_name(staging.name + "-old"))
        os.rename(staging, final)
    except OSError:
        pass  # another process put the entry in place first: theirs is as good
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staging.with_name(staging.name + "-old"), ignore_errors=True)
    return final


def remove(key: str) -> None:
    shutil.rmtree(entry_dir(key), ignore_errors=True)


def info() -> dict:
    """Where the cache is, how many entries and bytes it holds."""
    base = root()
    entries = [p for p in base.glob("*/*") if p.is_dir() and not p.name.startswith(".")]
    size = sum(f.stat().st_size for p in entries for f in p.iterdir() if f.is_file())
    return {"path": str(base), "entries": len(entries), "bytes": size,
            "enabled": enabled()}


def clear() -> int:
    """Remove every entry; return how many there were."""
    count = info()["entries"]
    shutil.rmtree(root(), ignore_errors=True)
    return count
