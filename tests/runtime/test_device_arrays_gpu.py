"""The device path on a real NVIDIA GPU through pycuda (`make test-gpu`); skipped without
one. The same checks run on the emulated device in test_device_arrays.py."""
from __future__ import annotations

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.compiler.backend.nvvm import libnvvm
from redraft.runtime import cuda
from redraft.runtime.device_buffer import DeviceBuffer, stream_of

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(cuda.gpu_count() == 0,
                                 reason=f"no GPU: {cuda.unavailable_reason()}"),
              pytest.mark.skipif(not libnvvm.available(), reason="libNVVM not found")]


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.delenv("REDRAFT_EMULATE_GPU", raising=False)
    return redraft.devices("gpu")[0]


def test_the_driver_is_pycuda(gpu):
    driver = stream_of(gpu).driver
    assert driver.target == "ptx" and driver.arch.startswith("sm_")


@pytest.mark.parametrize("n", [1, 31, 1000003])
def test_jit_on_the_gpu_agrees_with_the_cpu(gpu, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    f = redraft.jit(lambda x: (jnp.tanh(x) * 2.0, jnp.sum(x * x)))
    got = f(redraft.device_put(x, gpu))
    assert all(type(g._buf) is DeviceBuffer for g in got)
    want = f(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.block_until_ready()), np.asarray(w),
                                   rtol=1e-4, atol=1e-5)


def test_eager_and_fallback_on_the_gpu(gpu):
    x = np.random.default_rng(0).standard_normal(257).astype(np.float32)
    dx = redraft.device_put(x, gpu)
    np.testing.assert_allclose(np.asarray(jnp.exp(dx) + 1.0), np.exp(x) + 1.0, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.sort(dx)), np.sort(x))
