"""Fixtures for the LLVM backend tests: backend failures raise (instead of falling back to
the interpreter with a warning), and the shared helpers in backend_util.py are importable."""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def strict_backend(monkeypatch):
    """A lowering bug raises here; an unsupported primitive still falls back (None)."""
    monkeypatch.setenv("REDRAFT_LLVM_STRICT", "1")
    monkeypatch.delenv("REDRAFT_BACKEND", raising=False)
