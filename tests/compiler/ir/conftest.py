"""Fixtures for the IR pass tests: the helper modules beside this file are importable, and
every compiled function runs on the reference interpreter."""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def interpreter_backend(monkeypatch):
    """The passes are checked against the reference backend, whatever else is installed."""
    monkeypatch.setenv("REDRAFT_BACKEND", "interpret")
