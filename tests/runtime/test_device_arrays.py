"""Arrays on a GPU, through the emulated device (REDRAFT_EMULATE_GPU): device_put and
device_get, jit compiling for the device with results staying there, asynchronous dispatch,
mixed host and device arguments, eager operations and the host fallback, all checked
against NumPy and the CPU jit."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.backend.llvm.types import Unsupported
from redraft.runtime import device_buffer
from redraft.runtime.device_buffer import DeviceBuffer
from redraft.runtime.emulated_gpu import EmulatedDriver, emulated_count


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setenv("REDRAFT_EMULATE_GPU", "1")
    return redraft.devices("gpu")[-1]


@pytest.fixture
def two_gpus(monkeypatch):
    monkeypatch.setenv("REDRAFT_EMULATE_GPU", "2")
    return redraft.devices("gpu")[-2:]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def on_device(x) -> bool:
    return type(x._buf) is DeviceBuffer


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def predict(w, b, x):
    return jnp.tanh(x @ w + b)


def decay(x):
    for _ in range(5):
        x = x * 0.9 + jnp.mean(x)
    return x


def halve_until_small(x):
    return lax.while_loop(lambda v: jnp.sum(v * v) > 1.0, lambda v: v * 0.5, x)


def test_emulation_is_off_unless_asked(monkeypatch):
    monkeypatch.delenv("REDRAFT_EMULATE_GPU", raising=False)
    assert emulated_count() == 0
    monkeypatch.setenv("REDRAFT_EMULATE_GPU", "two")
    with pytest.raises(ValueError, match="REDRAFT_EMULATE_GPU"):
        emulated_count()


def test_devices_list_the_emulated_gpu(gpu, capsys):
    assert redraft.devices()[0].platform == "cpu"
    assert gpu in redraft.devices()
    assert gpu.platform == "gpu" and gpu.emulated
    assert "emulated" in gpu.device_kind and "Emulated" in repr(gpu)
    assert "no GPU" not in capsys.readouterr().err


def test_device_put_and_get_round_trip(gpu):
    host = rand(3, 5)
    x = redraft.device_put(host, gpu)
    assert on_device(x) and x.device == gpu and x.devices() == {gpu}
    assert x.shape == (3, 5) and x.dtype == np.float32 and x.size == 15 and x.nbytes == 60
    host[0, 0] = 100.0  # the device copy was taken at device_put
    back = redraft.device_get({"x": x, "n": 3})
    assert type(back["x"]) is np.ndarray and back["n"] == 3
    assert back["x"][0, 0] != 100.0
    np.testing.assert_array_equal(np.asarray(x)[1:], host[1:])
    assert not np.asarray(x).flags.writeable
    assert x.tolist() == np.asarray(x).tolist()
    assert repr(x).startswith("Array([[") and "dtype=float32" in repr(x)


def test_device_put_of_scalars_arrays_and_back_to_the_host(gpu):
    s = redraft.device_put(2.5, gpu)
    assert on_device(s) and s.weak_type and float(s) == 2.5
    a = jnp.arange(4)
    d = redraft.device_put(a, gpu)
    assert d.dtype == a.dtype and d.device == gpu
    assert redraft.device_put(d, gpu) is d
    h = redraft.device_put(d, redraft.devices("cpu")[0])
    assert not on_device(h) and h.device.platform == "cpu"
    np.testing.assert_array_equal(h, a)


def test_device_arrays_are_immutable(gpu):
    x = redraft.device_put(np.zeros(3, np.float32), gpu)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    y = x.at[1].set(5.0)
    np.testing.assert_array_equal(x, [0, 0, 0])
    np.testing.assert_array_equal(y, [0, 5, 0])


@pytest.mark.parametrize("n", [1, 31, 1000003])
def test_jit_runs_on_the_device_and_results_stay_there(gpu, n):
    host = rand(n, seed=n)
    f = redraft.jit(selu)
    got = f(redraft.device_put(host, gpu))
    assert on_device(got) and got.device == gpu
    want = f(host)
    assert not on_device(want)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    ref = 1.05 * np.where(host > 0, host, 1.67 * np.exp(host) - 1.67)
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)


def test_results_feed_the_next_call_without_leaving_the_device(gpu):
    w, b, x = rand(784, 33, seed=1), rand(33, seed=2), rand(31, 784, seed=3)
    f = redraft.jit(predict)
    dw, db, dx = redraft.device_put((w, b, x), gpu)
    h = f(dw, db, dx)
    assert on_device(h)
    g = redraft.jit(lambda h: jnp.sum(h * h, axis=1))(h)
    assert on_device(g)
    ref = np.tanh(x.astype(np.float64) @ w + b)
    np.testing.assert_allclose(np.asarray(g), (ref * ref).sum(axis=1), rtol=1e-4)


def test_control_flow_and_pytrees_on_the_device(gpu):
    x = rand(257, seed=4) * 10
    dx = redraft.device_put(x, gpu)
    for fn in (decay, halve_until_small):
        np.testing.assert_allclose(np.asarray(redraft.jit(fn)(dx)),
                                   np.asarray(redraft.jit(fn)(x)), rtol=1e-5, atol=1e-6)
    out = redraft.jit(lambda p: {"s": jnp.sum(p["a"]), "t": (p["a"] * 2, p["b"])})(
        {"a": dx, "b": 3.0})
    assert all(on_device(leaf) for leaf in redraft.tree_util.tree_leaves(out))
    np.testing.assert_allclose(float(out["s"]), x.sum(dtype=np.float64), rtol=1e-5)
    assert float(out["t"][1]) == 3.0


def test_grad_of_a_device_argument(gpu):
    x = rand(1000, seed=5)
    g = redraft.jit(redraft.grad(lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x)))))
    got = g(redraft.device_put(x, gpu))
    assert on_device(got)
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(np.asarray(got), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_compiled_once_per_signature_and_device(gpu):
    f = redraft.jit(lambda x: x * 2.0)
    dx = redraft.device_put(rand(8), gpu)
    f(dx), f(dx), f(rand(8))
    assert f.cache_size == 2  # one for the device, one for the host
    f(redraft.device_put(rand(9), gpu))
    assert f.cache_size == 3


def test_dispatch_is_asynchronous(gpu):
    """A call returns while the device is still busy; block_until_ready waits for it."""
    stream = device_buffer.stream_of(gpu)
    f = redraft.jit(lambda x: x + 1.0)
    dx = redraft.device_put(np.zeros(4, np.float32), gpu)
    f(dx).block_until_ready()  # compiled and warm
    gate = threading.Event()
    busy = stream.submit(lambda driver: gate.wait(10))
    y = f(dx)
    assert not y._buf._pending.done()  # queued behind the busy work, not run
    gate.set()
    assert y.block_until_ready() is y
    assert busy.done() and y._buf._pending is None  # done, and its handle handed over
    np.testing.assert_array_equal(np.asarray(y), np.ones(4))


def test_errors_of_queued_work_are_raised_when_the_result_is_read(gpu):
    stream = device_buffer.stream_of(gpu)

    def fail(driver):
        raise RuntimeError("the device failed")
    buf = DeviceBuffer(gpu, (2,), np.float32, stream.submit(fail))
    a = redraft.runtime.array.wrap_device(buf)
    with pytest.raises(RuntimeError, match="the device failed"):
        a.block_until_ready()
    with pytest.raises(RuntimeError, match="the device failed"):
        np.asarray(a)


def test_numpy_and_host_arguments_are_copied_to_the_device(gpu):
    x, y = rand(31, seed=6), rand(31, seed=7)
    f = redraft.jit(lambda x, y, s: x * y + s)
    got = f(redraft.device_put(x, gpu), y, 2.0)  # device, NumPy, Python scalar
    assert on_device(got)
    np.testing.assert_allclose(np.asarray(got), x * y + 2.0, rtol=1e-6)
    got = f(jnp.asarray(x), redraft.device_put(y, gpu), jnp.float32(2.0))  # host Arrays too
    assert on_device(got)
    np.testing.assert_allclose(np.asarray(got), x * y + 2.0, rtol=1e-6)


def test_arguments_on_two_gpus_are_an_error_naming_them(two_gpus):
    g0, g1 = two_gpus
    assert g0 != g1
    f = redraft.jit(lambda x, y: x + y)
    with pytest.raises(ValueError, match=r"x \(float32\[3\]\) is on .*id=0.* y \(float32\[3\]\)"
                                         r" on .*id=1"):
        f(redraft.device_put(np.ones(3, np.float32), g0),
          redraft.device_put(np.ones(3, np.float32), g1))
    out = f(redraft.device_put(np.ones(3, np.float32), g1), np.ones(3, np.float32))
    assert out.device == g1


def test_eager_operations_on_device_arrays_stay_on_the_device(gpu):
    x = rand(31, seed=8)
    dx = redraft.device_put(x, gpu)
    checks = [(dx * 2 + 1, x * 2 + 1), (jnp.sin(dx), np.sin(x)),
              (jnp.sum(dx), x.sum()), (dx[3], x[3]), (dx[2:9:2], x[2:9:2]),
              (dx.reshape(1, 31).T, x.reshape(1, 31).T), (dx @ dx, x @ x),
              (jnp.maximum(dx, 0.0), np.maximum(x, 0))]
    for got, want in checks:
        assert on_device(got), got
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    assert float(dx[3]) == x[3] and int(redraft.device_put(np.int32(7), gpu)) == 7
    assert bool(jnp.all(dx == dx))


def test_not_lowered_operations_fall_back_to_the_host(gpu, capsys, monkeypatch):
    from redraft.compiler.backend.nvvm import device
    monkeypatch.setattr(device, "_NOTICED", set())  # the notice is said once per process
    x = rand(1001, seed=9)
    f = redraft.jit(lambda x: jnp.sort(x) * 2.0)
    got = f(redraft.device_put(x, gpu))
    assert on_device(got)
    np.testing.assert_array_equal(np.asarray(got), np.sort(x) * 2.0)
    err = capsys.readouterr().err
    assert "runs on the host" in err and "sort" in err
    eager = jnp.argsort(redraft.device_put(x, gpu))
    assert on_device(eager)
    np.testing.assert_array_equal(np.asarray(eager), np.argsort(x, kind="stable"))


def test_the_host_fallback_can_be_forbidden(gpu, monkeypatch):
    monkeypatch.setenv("REDRAFT_GPU_FALLBACK", "0")
    f = redraft.jit(lambda x: jnp.cumsum(jnp.sort(x)))
    with pytest.raises(Unsupported, match="cannot run on .*REDRAFT_GPU_FALLBACK=0"):
        f(redraft.device_put(rand(5), gpu))


def test_unavailable_devices_are_refused(monkeypatch):
    monkeypatch.delenv("REDRAFT_EMULATE_GPU", raising=False)
    from redraft.runtime.devices import Device
    with pytest.raises(RuntimeError, match="not available"):
        redraft.device_put(np.ones(2), Device("gpu", 7, emulated=True))


def test_the_emulated_driver_implements_the_interface():
    driver = EmulatedDriver()
    value = np.arange(6, dtype=np.int64).reshape(2, 3)
    h = driver.copy_to_device(value)
    np.testing.assert_array_equal(driver.copy_to_host(h, value.dtype, (2, 3)), value)
    assert driver.read_scalar(h, np.dtype(np.int64), 4) == 4
    assert driver.allocate(0).nbytes >= 1
    with pytest.raises(TypeError, match="host-emulated"):
        driver.load("ptx text")
    driver.synchronize()


def test_jit_with_a_device_copies_numpy_arguments_there(two_gpus):
    g0, g1 = two_gpus
    x = rand(31, seed=10)
    f = redraft.jit(lambda x, s: jnp.exp(x) * s, device=g1)
    got = f(x, 3.0)  # every argument from the host
    assert on_device(got) and got.device == g1
    np.testing.assert_allclose(np.asarray(got), np.exp(x) * 3.0, rtol=1e-6)
    assert f(redraft.device_put(x, g1), 3.0).device == g1
    with pytest.raises(ValueError, match=r"device= is .*id=1.* x \(float32\[31\]\) on .*id=0"):
        f(redraft.device_put(x, g0), 3.0)
    on_host = redraft.jit(lambda x: x + 1.0, device=redraft.devices("cpu")[0])
    assert not on_device(on_host(x))
    with pytest.raises(ValueError, match="device= is CpuDevice"):
        on_host(redraft.device_put(x, g0))


def test_device_put_is_queued_too(gpu):
    stream = device_buffer.stream_of(gpu)
    gate = threading.Event()
    stream.submit(lambda driver: gate.wait(10))
    x = redraft.device_put(np.arange(3.0, dtype=np.float32), gpu)
    assert not x._buf._pending.done()
    gate.set()
    np.testing.assert_array_equal(np.asarray(x.block_until_ready()), [0, 1, 2])


def test_a_dropped_result_frees_its_device_memory_while_its_sibling_lives(gpu):
    import gc
    import weakref

    def big_and_small(x):
        big = x * 2.0
        return big, jnp.sum(big)
    big, small = redraft.jit(big_and_small)(redraft.device_put(rand(100_000), gpu))
    small.block_until_ready()
    assert small._buf._pending is None  # resolved: each buffer holds its own handle only
    handle = weakref.ref(big._buf.handle())
    del big
    gc.collect()
    assert handle() is None
    assert np.isfinite(float(small))


@pytest.mark.parametrize("driver_class", ["runtime.cuda.CudaDriver",
                                          "runtime.emulated_gpu.EmulatedDriver"])
def test_both_drivers_implement_the_whole_interface(driver_class):
    import importlib
    import inspect
    from redraft.runtime.device_driver import DeviceDriver
    module, name = driver_class.rsplit(".", 1)
    cls = getattr(importlib.import_module("redraft." + module), name)
    for method, proto in vars(DeviceDriver).items():
        if callable(proto) and not method.startswith("_"):
            impl = getattr(cls, method)
            assert (list(inspect.signature(impl).parameters)
                    == list(inspect.signature(proto).parameters)), method
    assert cls.target in ("ptx", "host")
