"""The whole device path on the emulated GPU for every function of the transforms'
catalogue: arguments put on the device, `jit` compiling the GPU program (or running on the
host for what the backend does not lower), results left on the device and read back, all
agreeing with the CPU jit."""
import pathlib
import sys

import numpy as np
import pytest
from nvvm_util import assert_close

import redraft
from redraft.compiler.backend import nvvm
from redraft.runtime.array import Array
from redraft.runtime.device_buffer import DeviceBuffer
from redraft.runtime.pytree import tree_flatten, tree_map

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "transforms"))
from catalogue import CATALOGUE, arguments, entry_id  # noqa: E402

ENTRIES = [e for e in CATALOGUE if "xfail" not in e[2]]


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setenv("REDRAFT_EMULATE_GPU", "1")
    monkeypatch.setenv("REDRAFT_GPU_FALLBACK", "1")
    return redraft.devices("gpu")[-1]


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_catalogue_on_the_emulated_gpu_agrees_with_the_cpu_jit(entry, gpu):
    fn, args = entry[0], arguments(entry)
    with np.errstate(all="ignore"):
        try:
            want = redraft.jit(fn)(*args)
        except Exception as e:  # noqa: BLE001 - jit cannot compile it at all: not this path
            pytest.skip(f"not jittable: {e}")
        on_gpu = tree_map(lambda v: redraft.device_put(v, gpu) if isinstance(v, Array)
                          else v, args)
        got = redraft.jit(fn)(*on_gpu)
        got_leaves = tree_flatten(got)[0]
        assert all(type(leaf._buf) is DeviceBuffer and leaf.device == gpu
                   for leaf in got_leaves)
        got_host = [np.asarray(leaf) for leaf in got_leaves]
    assert_close(got_host, [np.asarray(w) for w in tree_flatten(want)[0]], rtol=2e-5, atol=1e-6)


def test_compiled_for_the_device_says_which_backend(gpu):
    from redraft.compiler.driver import compile_for_device
    x = redraft.device_put(np.ones(3, np.float32), gpu)
    lowered = compile_for_device(lambda x: x * 2.0, (x,), set(), gpu)
    assert lowered.backend == "nvvm" and lowered.program is not None
    fallback = compile_for_device(lambda x: redraft.numpy.sort(x), (x,), set(), gpu)
    assert fallback.backend == "host-fallback" and "sort" in fallback.fallback_reason
    assert isinstance(nvvm.device.image_for(lowered.program, lowered.stream.driver),
                      nvvm.emulate.Emulator)


def test_mlp_steps_on_the_device_agree_with_the_cpu(gpu):
    """The README's MLP update step (examples/gpu_kernels.py), parameters kept on the
    device across steps, against the same steps on the CPU."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "examples"))
    from gpu_kernels import mlp_step
    rng = np.random.default_rng(0)
    params = (rng.standard_normal((37, 33)).astype(np.float32) * 0.1,
              np.zeros(33, np.float32),
              rng.standard_normal((33, 10)).astype(np.float32) * 0.1, np.zeros(10, np.float32))
    x = rng.standard_normal((17, 37)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 17)]
    step = redraft.jit(mlp_step)
    on_cpu = params
    on_gpu = redraft.device_put(params, gpu)
    dx, dy = redraft.device_put((x, y), gpu)
    for _ in range(3):
        on_cpu = step(*on_cpu, x, y)
        on_gpu = step(*on_gpu, dx, dy)
    assert all(p.device == gpu for p in on_gpu)
    assert_close([np.asarray(p) for p in on_gpu], [np.asarray(p) for p in on_cpu],
                 rtol=1e-4, atol=1e-6)
