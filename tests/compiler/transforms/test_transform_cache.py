"""The identity table of the rule registries and the one transform cache: entries are found by
identity (never by `==`), and a cached entry lives exactly as long as its function."""
import gc

import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.compiler.transforms.cache import (TRANSFORM_CACHE, IdentityTable, TransformCache,
                                               closure_state)


class _EqualToEverything:
    def __eq__(self, other):
        return True

    __hash__ = None


def test_identity_table_compares_by_identity_and_takes_unhashable_keys():
    table = IdentityTable()
    a, b = _EqualToEverything(), _EqualToEverything()
    table[a] = "a"
    assert a in table and b not in table
    assert table.get(b) is None and table[a] == "a"
    table[b] = "b"
    assert len(table) == 2 and set(table.values()) == {"a", "b"}
    del table[a]
    assert list(table) == [b]


def test_an_entry_lives_as_long_as_its_function():
    cache = TransformCache()

    def f(x):
        return x

    calls = []
    assert cache.get(f, "core", lambda: calls.append(1) or "core of f") == "core of f"
    assert cache.get(f, "core", lambda: calls.append(1) or "again") == "core of f"
    assert cache.get(f, "other", lambda: "other of f") == "other of f"
    assert calls == [1] and len(cache) == 1
    del f
    gc.collect()
    assert len(cache) == 0


def test_builtins_are_kept_for_good():
    cache = TransformCache()
    assert cache.get(len, "signature", lambda: 1) == 1
    assert cache.get(len, "signature", lambda: 2) == 1


def test_a_new_function_never_sees_a_freed_ones_entry():
    cache = TransformCache()
    for i in range(50):  # CPython reuses the memory (the id) of a freed function at once
        f = eval("lambda x: x")
        assert cache.get(f, "core", lambda i=i: i) == i
        del f


def test_closure_state_follows_what_the_cells_hold():
    scale = np.float32(2.0)

    def f(x):
        return x * scale

    before = closure_state(f)
    scale = np.float32(3.0)
    assert closure_state(f) != before
    assert closure_state(f) == closure_state(f)


def test_vmap_of_a_closure_reads_its_cells_again():
    scale = 2.0

    def f(x):
        return x * scale

    batched = redraft.vmap(f)
    np.testing.assert_allclose(np.asarray(batched(jnp.arange(3.0))), [0.0, 2.0, 4.0])
    scale = 3.0
    np.testing.assert_allclose(np.asarray(redraft.vmap(f)(jnp.arange(3.0))), [0.0, 3.0, 6.0])
    assert len(TRANSFORM_CACHE) > 0


def test_the_core_of_a_library_function_is_read_once():
    from redraft.compiler.transforms.calls.callable_core import core_of
    from redraft.compiler.transforms.runtime import ad
    assert core_of(ad._dot_dims) is core_of(ad._dot_dims)  # vmap of a gradient reads it often
