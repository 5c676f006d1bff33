"""make_array_from_* and copy_to_host_async for redraft's single-device layout."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.sharding import SingleDeviceSharding

SHARDING = SingleDeviceSharding(redraft.devices()[0])
DATA = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_from_callback_asks_for_the_whole_array():
    seen = []

    def data(index):
        seen.append(index)
        return DATA[index]

    out = redraft.make_array_from_callback((2, 3), SHARDING, data)
    assert out.tolist() == DATA.tolist() and out.dtype == np.float32
    assert seen == [(slice(None), slice(None))]
    assert redraft.make_array_from_callback((2, 3), SHARDING, data, dtype=np.int32).dtype \
        == np.int32


def test_from_single_device_arrays_and_local_data():
    out = redraft.make_array_from_single_device_arrays((2, 3), SHARDING, [DATA])
    assert out.tolist() == DATA.tolist()
    with pytest.raises(ValueError, match="one shard"):
        redraft.make_array_from_single_device_arrays((2, 3), SHARDING, [DATA, DATA])
    with pytest.raises(ValueError, match="shape"):
        redraft.make_array_from_single_device_arrays((3, 2), SHARDING, [DATA])
    assert redraft.make_array_from_process_local_data(SHARDING, DATA).shape == (2, 3)
    with pytest.raises(TypeError, match="SingleDeviceSharding"):
        redraft.make_array_from_process_local_data("mesh", DATA)


def test_copy_to_host_async_accepts_arrays_only():
    assert redraft.copy_to_host_async({"a": redraft.numpy.ones(2)}) is None
    with pytest.raises(TypeError):
        redraft.copy_to_host_async(["text"])


def test_conversions_of_values_known_only_at_run_time():
    """jnp.asarray/array(x, dtype) and jnp.float32(x) of a value being compiled are casts
    (they read the value into NumPy, which a compiled value cannot be), differentiable
    as JAX's are."""
    f = redraft.jit(lambda x: (jnp.asarray(jnp.floor(x), dtype=jnp.int32), jnp.int32(x * 2),
                               jnp.array(x, jnp.float16, ndmin=2)))
    i, j, h = f(1.5)
    assert (int(i), i.dtype, int(j), h.shape, h.dtype) == (1, np.int32, 3, (1, 1), np.float16)
    for transform in (redraft.grad, lambda g: redraft.jit(redraft.grad(g))):
        np.testing.assert_allclose(transform(lambda x: jnp.float32(x) ** 2)(1.5), 3.0)
        np.testing.assert_allclose(transform(lambda x: jnp.int32(x) * x)(2.5), 2.0)
    assert repr(redraft.ShapeDtypeStruct((3,), jnp.float32)) == (
        "ShapeDtypeStruct(shape=(3,), dtype=float32)")


def test_numpy_reductions_of_an_array_call_its_methods():
    """np.sum(x) calls x.sum(axis=None, dtype=None, out=None): redraft's methods take
    NumPy's out=None (any other out is refused), so NumPy's reductions work on Arrays as
    they do on JAX's."""
    x = jnp.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(np.sum(x), 15.0)
    np.testing.assert_allclose(np.mean(x, axis=0), [2.0, 3.0])
    np.testing.assert_allclose(np.std(x), np.std(np.arange(6.0)), rtol=1e-6)
    assert isinstance(np.max(x, axis=1), redraft.Array)
    with pytest.raises(TypeError, match="out="):
        x.sum(out=np.zeros(()))


def test_round_view_tobytes_as_on_jax_arrays():
    x = jnp.array([1.6, 2.4])
    r = round(x[0])
    assert int(r) == 2 and r.dtype == np.int32  # round() gives an int array, as JAX's
    assert round(x[0], 1).dtype == np.float32
    np.testing.assert_array_equal(x.view(jnp.int32), np.float32([1.6, 2.4]).view(np.int32))
    assert x.view(jnp.float16).shape == (4,)
    assert x.tobytes() == np.float32([1.6, 2.4]).tobytes() and x.is_fully_addressable
