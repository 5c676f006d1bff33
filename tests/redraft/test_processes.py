"""Top-level device queries, block_until_ready, and the value-keeping annotations."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def test_device_and_process_queries():
    assert redraft.device_count() == redraft.local_device_count() == len(redraft.devices())
    assert redraft.local_devices() == redraft.devices()
    assert redraft.process_count() == 1 and redraft.process_index() == 0
    with pytest.raises(ValueError):
        redraft.local_devices(process_index=3)


def test_block_until_ready_returns_the_tree():
    tree = {"a": jnp.ones(2), "b": [3]}
    assert redraft.block_until_ready(tree)["b"] == [3]


def f(x):
    return jnp.sum(jnp.sin(x) ** 2)


def test_checkpoint_and_named_call_keep_values_and_derivatives():
    x = jnp.arange(3.0)
    for wrapped in (redraft.checkpoint(f), redraft.remat(f), redraft.checkpoint(policy=None)(f),
                    redraft.named_call(f, name="f")):
        np.testing.assert_allclose(float(wrapped(x)), float(f(x)))
        np.testing.assert_allclose(np.asarray(redraft.grad(wrapped)(x)),
                                   np.sin(2 * np.arange(3.0)), rtol=1e-6)
    with pytest.raises(TypeError):
        redraft.checkpoint(3)
