"""Fixtures for the whole suite: generated source goes to a fresh REDRAFT_CACHE_DIR per
test session, never to the user's ~/.cache/redraft. The kernel library is off (the tests'
processes compile the pool and kernels, as they did before it, whether or not another test
built it): tests/compiler/cache/test_kernel_library.py turns it on in its own processes."""
import pytest


@pytest.fixture(autouse=True, scope="session")
def redraft_cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("redraft-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REDRAFT_CACHE_DIR", str(path))
        mp.setenv("REDRAFT_CACHE", "0")  # the persistent cache's own tests turn it on
        mp.setenv("REDRAFT_KERNEL_LIBRARY", "0")
        yield path
