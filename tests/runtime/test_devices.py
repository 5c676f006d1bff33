"""devices(), device_put and device_get: the host always exists; GPUs only where present."""
from __future__ import annotations

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.runtime.array import Array


def test_devices_lists_a_default_device():
    devs = redraft.devices()
    assert len(devs) >= 1
    assert devs[0].platform in ("cpu", "gpu")


def test_cpu_device():
    (cpu,) = redraft.devices("cpu")
    assert cpu.platform == "cpu" and cpu.id == 0
    assert cpu.device_kind == "cpu"
    assert repr(cpu) == "CpuDevice(id=0)"
    assert cpu == redraft.devices("cpu")[0] and hash(cpu) == hash(redraft.devices("cpu")[0])


def test_default_backend_matches_devices():
    assert redraft.default_backend() == redraft.devices()[0].platform


def test_unknown_backend_raises():
    with pytest.raises(ValueError, match="unknown backend"):
        redraft.devices("tpu")


def test_gpu_backend_lists_gpus_or_says_none_is_available():
    try:
        gpus = redraft.devices("gpu")
    except RuntimeError as err:
        assert "GPU" in str(err)
    else:
        assert gpus and all(d.platform == "gpu" for d in gpus)


def test_device_put_numpy_array_copies():
    src = np.arange(3, dtype=np.float32)
    x = redraft.device_put(src)
    assert type(x) is Array and x.dtype == np.float32
    src[0] = 9.0
    assert float(x[0]) == 0.0


def test_device_put_canonicalises_to_32_bits():
    x = redraft.device_put(np.arange(3, dtype=np.float64))
    assert x.dtype == np.float32
    assert redraft.device_put(np.arange(3)).dtype == np.int32


def test_device_put_python_scalars_stay_weak():
    x = redraft.device_put(2.0)
    assert type(x) is Array and x.dtype == np.float32 and x.weak_type


def test_device_put_array_is_identity():
    x = jnp.arange(3)
    assert redraft.device_put(x) is x


def test_device_put_to_a_named_device():
    x = redraft.device_put(np.ones(2), redraft.devices("cpu")[0])
    assert x.device == redraft.devices("cpu")[0]


def test_device_put_pytree():
    out = redraft.device_put({"w": np.ones((2, 2)), "b": [np.zeros(2), 1.0]})
    assert type(out["w"]) is Array and out["w"].shape == (2, 2)
    assert type(out["b"][0]) is Array and type(out["b"][1]) is Array


def test_device_get_returns_numpy():
    x = jnp.arange(3.0)
    host = redraft.device_get(x)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [0.0, 1.0, 2.0])


def test_device_get_pytree_passes_other_leaves_through():
    out = redraft.device_get({"x": jnp.ones(2), "n": 3, "s": "label"})
    assert type(out["x"]) is np.ndarray and out["n"] == 3 and out["s"] == "label"


def test_round_trip():
    tree = (np.arange(4, dtype=np.int32).reshape(2, 2), [np.float32(1.5)])
    back = redraft.device_get(redraft.device_put(tree))
    np.testing.assert_array_equal(back[0], tree[0])
    assert float(back[1][0]) == 1.5
