"""redraft's context managers: disable_jit, no_tracing, log_compiles, named_scope,
ensure_compile_time_eval, default_device, default_matmul_precision."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp

SEEN = []


def records_its_buffer(x):
    SEEN.append(type(x._buf).__name__)
    return x * 2


def test_disable_jit_runs_op_by_op():
    f = redraft.jit(records_its_buffer)
    SEEN.clear()
    with redraft.disable_jit():
        assert f(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert SEEN == ["ndarray"]
    f(jnp.ones(2))
    assert SEEN[-1] == "StagedBuf"


def test_no_tracing_forbids_compiling_not_running():
    f = redraft.jit(lambda x: x + 1)
    f(jnp.ones(2))
    with redraft.no_tracing():
        assert f(jnp.ones(2)).tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(jnp.ones(3))


def test_log_compiles_reports_each_compilation(capfd):
    with redraft.log_compiles():
        g = redraft.jit(lambda x: x - 1)
        g(jnp.ones(2))
        g(jnp.ones(4))
    with redraft.explain_cache_misses():
        g(jnp.ones(5))
    err = capfd.readouterr().err
    assert "first call" in err and "new signature (1 compiled before)" in err
    assert "new signature (2 compiled before)" in err


def test_named_scope_nests_and_checks_names():
    from redraft.contexts import current_name_stack
    with redraft.named_scope("layer"), redraft.named_scope("dense"):
        assert current_name_stack() == "layer/dense"
    assert current_name_stack() == ""
    with pytest.raises(TypeError):
        with redraft.named_scope(3):
            pass


def test_ensure_compile_time_eval_gives_concrete_values():
    with redraft.ensure_compile_time_eval():
        assert int(jnp.arange(4).sum()) == 6


def test_default_device_and_precision_accept_jax_values():
    with redraft.default_device(redraft.devices()[0]):
        assert redraft.numpy.ones(2).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        with redraft.default_device("tpu"):
            pass
    a = np.float32([[1.0, 2.0], [3.0, 4.0]])
    with redraft.default_matmul_precision("highest"):
        np.testing.assert_allclose(np.asarray(jnp.matmul(a, a)), a @ a)
    with pytest.raises(ValueError, match="precision"):
        with redraft.default_matmul_precision("fast-ish"):
            pass


def scoped_layer(x):
    with redraft.named_scope("dense"):
        y = jnp.tanh(x) * 2
    if x.sum() > 100:
        with redraft.default_matmul_precision("highest"):
            return y + 1
    with redraft.named_scope("out"), redraft.ensure_compile_time_eval():
        return y


def opens_a_file(x):
    with open("f") as fh:
        return x + len(fh.read())


def test_value_free_contexts_inside_transformed_functions():
    x = jnp.ones(3)
    want = np.tanh(np.ones(3, np.float32)) * 2
    np.testing.assert_allclose(np.asarray(redraft.jit(scoped_layer)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.vmap(scoped_layer)(jnp.ones((2, 3)))),
                               [want, want], rtol=1e-6)
    g = redraft.grad(lambda v: scoped_layer(v).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * (1 - np.tanh(1.0) ** 2) * np.ones(3),
                               rtol=1e-6)
    from redraft.compiler.frontend.normalize import UnsupportedSyntaxError
    with pytest.raises(UnsupportedSyntaxError, match="named_scope"):
        redraft.jit(opens_a_file)(x)
