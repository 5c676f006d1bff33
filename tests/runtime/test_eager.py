"""Eager transcendental math runs compiled code's vecmath loops: bit-identical to jit, close
to NumPy, shapes and layouts kept, big arrays split over threads without changing a bit."""
import math

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.runtime import eager

OPS = ["exp", "expm1", "log", "log1p", "tanh"]


def _inputs(op: str, n: int, dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 3
    if op in ("log", "log1p"):
        x = np.abs(x) + 0.01
    return x.astype(dtype)


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


@pytest.mark.parametrize("dtype", [np.float32])  # redraft's arrays are 32-bit
@pytest.mark.parametrize("n", [1, 15, 17, 1000, (1 << 17) + 3])
@pytest.mark.parametrize("op", OPS)
def test_eager_equals_jit_bit_for_bit(op: str, n: int, dtype) -> None:
    fn = getattr(jnp, op)
    x = jnp.asarray(_inputs(op, n, dtype))
    eager_out = np.asarray(fn(x))
    jit_out = np.asarray(redraft.jit(fn)(x))
    assert eager_out.dtype == dtype and eager_out.shape == (n,)
    assert np.array_equal(eager_out, jit_out, equal_nan=True)
    np.testing.assert_allclose(eager_out, getattr(np, op)(np.asarray(x)),
                               rtol=4 * np.finfo(dtype).eps, atol=1e-30)


@pytest.mark.parametrize("op", OPS + ["erf"])
def test_float64_buffers_take_the_float64_loops_or_numpy(op: str) -> None:
    from redraft.compiler.primitives import elementwise as ew
    x = _inputs(op, 1001, np.float64)
    out = eager.eager_impl(getattr(ew, f"{op}_p"))(x)
    assert out.dtype == np.float64
    reference = np.vectorize(math.erf)(x) if op == "erf" else getattr(np, op)(x)
    np.testing.assert_allclose(out, reference, rtol=8 * np.finfo(np.float64).eps)


def test_selu_eager_equals_jit_bit_for_bit() -> None:
    x = redraft.random.normal(redraft.random.key(1701), (100_003,))
    assert np.array_equal(np.asarray(selu(x)), np.asarray(redraft.jit(selu)(x)))


def test_shapes_layouts_and_scalars_are_kept() -> None:
    base = _inputs("exp", 24, np.float32).reshape(4, 6)
    for x in (base, base.T, base[:, ::2], np.float32(0.5) * np.ones((), np.float32)):
        out = np.asarray(jnp.exp(jnp.asarray(x)))
        assert out.shape == x.shape
        np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    assert jnp.exp(0.5).shape == () and jnp.exp(0.5).weak_type


def test_other_dtypes_and_special_values() -> None:
    ints = jnp.asarray(np.arange(4, dtype=np.int32))
    np.testing.assert_allclose(np.asarray(jnp.exp(ints)), np.exp(np.arange(4.0)), rtol=1e-6)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(jnp.exp(jnp.asarray(special))), np.exp(special))


def test_threads_split_without_changing_a_bit(monkeypatch) -> None:
    x = _inputs("tanh", 300_001, np.float32)
    whole = np.asarray(jnp.tanh(jnp.asarray(x)))
    monkeypatch.setattr(eager, "_SPLIT_MIN", 1 << 40)
    single = np.asarray(jnp.tanh(jnp.asarray(x)))
    assert np.array_equal(whole, single)


def test_where_on_big_arrays_runs_the_select_loop_and_equals_numpy(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(eager._SELECT_MIN + 5).astype(np.float32)
    x[:3] = [np.nan, -0.0, np.inf]
    m, y = x > 0, np.exp(x)
    calls = []
    from redraft.kernels import select as select_module
    real = select_module.select_kernel
    monkeypatch.setattr(select_module, "select_kernel",
                        lambda size: calls.append(size) or real(size))
    got = np.asarray(jnp.where(jnp.asarray(m), jnp.asarray(x), jnp.asarray(y)))
    assert calls == [4]
    assert np.array_equal(got.view(np.uint32), np.where(m, x, y).view(np.uint32))
    small = np.asarray(jnp.where(jnp.asarray(m[:10]), jnp.asarray(x[:10]), 1.0))
    assert calls == [4]  # (small or broadcast operands: NumPy's where)
    assert np.array_equal(small, np.where(m[:10], x[:10], np.float32(1.0)), equal_nan=True)


@pytest.mark.parametrize("n", [(1 << 18), (1 << 18) + 1, 3 * (1 << 18) + 77])
def test_shared_maps_cover_every_chunk(n: int, monkeypatch) -> None:
    x = _inputs("exp", n, np.float32)
    whole = np.asarray(jnp.exp(jnp.asarray(x)))
    monkeypatch.setattr(eager, "_SPLIT_MIN", 1 << 40)
    assert np.array_equal(whole, np.asarray(jnp.exp(jnp.asarray(x))))
