"""make_array_from_* and copy_to_host_async for redraft's single-device layout."""
import numpy as np
import pytest

import redraft
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
