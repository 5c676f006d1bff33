"""redraft.pure_callback: eager, compiled (called with each run's values), under vmap; its
result checks; and effects_barrier."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp

CALLS = []


def host_sin(x):
    CALLS.append(np.asarray(x).copy())
    return np.sin(x)


def scaled_sin(x):
    y = redraft.pure_callback(host_sin, redraft.ShapeDtypeStruct(x.shape, x.dtype), x)
    return y * 2


def two_results(x):
    return redraft.pure_callback(lambda v: (np.cos(v), np.sum(v)),
                                 (redraft.ShapeDtypeStruct(x.shape, x.dtype),
                                  redraft.ShapeDtypeStruct((), x.dtype)), x)


def test_eager_and_compiled_agree_with_numpy():
    x = jnp.arange(3.0)
    want = 2 * np.sin(np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(scaled_sin(x)), want, rtol=1e-6)
    f = redraft.jit(scaled_sin)
    CALLS.clear()
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x + 1)), 2 * np.sin(np.arange(1.0, 4.0)),
                               rtol=1e-6)
    assert [c.tolist() for c in CALLS] == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]


def test_pytree_results_eager_and_compiled():
    x = jnp.arange(3.0)
    for fn in (two_results, redraft.jit(two_results)):
        c, s = fn(x)
        np.testing.assert_allclose(np.asarray(c), np.cos(np.arange(3.0)), rtol=1e-6)
        assert float(s) == 3.0 and s.shape == ()


def test_vmap_calls_once_per_example():
    CALLS.clear()
    out = redraft.vmap(scaled_sin)(jnp.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.arange(6.0).reshape(2, 3)),
                               rtol=1e-6)
    assert len(CALLS) == 2


def test_result_shape_and_dtype_are_checked():
    with pytest.raises(TypeError, match="shape"):
        redraft.pure_callback(lambda v: v[:2], redraft.ShapeDtypeStruct((3,), np.float32),
                              jnp.ones(3))
    with pytest.raises(TypeError, match="dtype"):
        redraft.pure_callback(lambda v: v.astype(np.complex64),
                              redraft.ShapeDtypeStruct((3,), np.float32), jnp.ones(3))
    with pytest.raises(ValueError, match="vmap_method"):
        redraft.pure_callback(host_sin, jnp.ones(3), jnp.ones(3), vmap_method="bogus")


def test_effects_barrier_returns_after_effects_ran(capsys):
    redraft.jit(lambda x: redraft.debug.print("v={}", x) or x)(jnp.ones(1))
    assert redraft.effects_barrier() is None
    assert "v=[1.]" in capsys.readouterr().out


def _through_a_callback(x):
    return jnp.sum(redraft.pure_callback(np.sin, redraft.ShapeDtypeStruct(x.shape, x.dtype), x))


def test_differentiating_a_pure_callback_is_refused_at_the_users_line():
    """As JAX: a pure callback has no derivative (zero would be silently wrong); the error
    names the call's line and says to give the caller custom rules."""
    x = jnp.arange(3.0)
    for transform in (redraft.grad, lambda f: lambda x: redraft.jvp(f, (x,), (x,))):
        with pytest.raises(redraft.compiler.transforms.common.TransformError,
                           match=r"test_callbacks.py:\d+: pure callbacks have no derivative"):
            transform(_through_a_callback)(x)
