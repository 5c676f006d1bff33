"""Fixtures for the IR pass tests: the helper modules beside this file are importable, every
compiled function runs on the reference interpreter, and generated source goes to a
temporary cache directory."""
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


@pytest.fixture(autouse=True, scope="session")
def redraft_cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("redraft-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REDRAFT_CACHE_DIR", str(path))
        yield path
