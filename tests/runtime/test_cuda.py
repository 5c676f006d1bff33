"""The pycuda binding's answers where there may be no GPU, and devices()' CPU fallback."""
from __future__ import annotations

import pytest

import redraft
from redraft.runtime import cuda, devices as devices_mod


def test_gpu_count_and_reason_agree():
    reason = cuda.unavailable_reason()
    assert (cuda.gpu_count() == 0) == (reason is not None)


@pytest.mark.skipif(cuda.gpu_count() > 0, reason="a GPU is present")
def test_no_gpu_means_host_only_with_one_notice(capsys, monkeypatch):
    monkeypatch.setattr(devices_mod, "_noticed", False)
    assert redraft.devices() == [redraft.devices("cpu")[0]]
    assert redraft.devices() == redraft.devices("cpu")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "running on the CPU" in err
    with pytest.raises(RuntimeError, match=cuda.unavailable_reason().split(" (")[0]):
        redraft.devices("gpu")


@pytest.mark.skipif(cuda.gpu_count() > 0, reason="a GPU is present")
def test_cuda_driver_needs_a_driver():
    with pytest.raises(RuntimeError):
        cuda.CudaDriver(0)
