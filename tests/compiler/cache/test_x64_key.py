"""The persistent compile cache's key includes the x64 flag: code compiled with float32
defaults is never loaded for a process that runs with x64 on, nor the reverse."""
import redraft
import redraft.numpy as jnp
from redraft.compiler import driver
from redraft.compiler.cache import jit_cache


def make_constant():
    return jnp.zeros(2) + 1.0


def test_cache_key_differs_with_x64(monkeypatch, tmp_path):
    monkeypatch.setenv("REDRAFT_CACHE", "1")
    monkeypatch.setenv("REDRAFT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("REDRAFT_BACKEND", raising=False)
    sig32, _ = driver.signature_of((), set())
    with redraft.enable_x64():
        sig64, _ = driver.signature_of((), set())
    assert sig32 != sig64 and not sig32.x64 and sig64.x64
    key32, key64 = jit_cache.cache_key(make_constant, sig32), jit_cache.cache_key(
        make_constant, sig64)
    assert key32 is not None and key64 is not None and key32 != key64
