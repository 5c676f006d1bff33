"""Fixtures for the frontend tests: generated modules go to a temporary cache directory."""
import pytest


@pytest.fixture(autouse=True, scope="session")
def redraft_cache_dir(tmp_path_factory):
    """Generated source is written under a fresh REDRAFT_CACHE_DIR, not ~/.cache/redraft."""
    path = tmp_path_factory.mktemp("redraft-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REDRAFT_CACHE_DIR", str(path))
        yield path
