"""Fixtures for the transform tests: generated modules go to a temporary cache directory,
and the shared catalogue of test functions (catalogue.py, beside this file) is importable."""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True, scope="session")
def redraft_cache_dir(tmp_path_factory):
    """Generated source is written under a fresh REDRAFT_CACHE_DIR, not ~/.cache/redraft."""
    path = tmp_path_factory.mktemp("redraft-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REDRAFT_CACHE_DIR", str(path))
        yield path
