"""Mutable references (new_ref, freeze, ...) in eager code, their refusal in compiled code,
and ds."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def test_ref_reads_writes_and_freezes():
    r = redraft.new_ref(jnp.zeros(3))
    r[1] = 5.0
    r[...] += 1
    assert r[...].tolist() == [1.0, 6.0, 1.0] and r[1:].tolist() == [6.0, 1.0]
    assert r.shape == (3,) and r.dtype == np.float32
    assert redraft.freeze(r).tolist() == [1.0, 6.0, 1.0]
    with pytest.raises(ValueError, match="freed or frozen"):
        r[0]


def test_empty_and_freed_refs():
    r = redraft.empty_ref(redraft.ShapeDtypeStruct((2,), np.int32))
    assert r[...].dtype == np.int32 and r.shape == (2,)
    redraft.free_ref(r)
    with pytest.raises(ValueError):
        r[0] = 1


def _makes_ref(x):
    r = redraft.new_ref(x)  # noqa: F841 - made, never used
    return x


def test_new_ref_in_compiled_code_says_why_not():
    with pytest.raises(NotImplementedError, match="eager code"):
        redraft.jit(_makes_ref)(jnp.ones(2))


def test_ds_slices_as_jax_does():
    x = jnp.arange(10)
    assert x[redraft.ds(2, 3)].tolist() == [2, 3, 4]
    assert x[redraft.ds(1, 3, 2)].tolist() == [1, 3, 5]
    assert x[redraft.ds(3)].tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="dynamic_slice"):
        redraft.ds(jnp.asarray(1), 2)
