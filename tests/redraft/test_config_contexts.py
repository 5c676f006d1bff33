"""JAX's top-level switches (redraft/config_contexts.py over runtime/config.py): debug_nans
and debug_infs raise FloatingPointError naming the operation, eagerly and under jit;
numpy_dtype_promotion("strict") and numpy_rank_promotion("raise"/"warn") act as JAX 0.10.2's
do on the cases below (its messages and outcomes, recorded); the transfer guards refuse or
log copies between the host and an emulated GPU; live_arrays lists live Arrays."""
import logging
import warnings

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.runtime.transfer_guard import TransferGuardError


def test_options_are_config_entries_and_restored():
    assert redraft.config.jax_debug_nans is False
    with redraft.debug_nans(True):
        assert redraft.config.jax_debug_nans is True
    assert redraft.config.jax_debug_nans is False
    with pytest.raises(ValueError, match="must be one of"):
        redraft.config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError, match="must be one of"):
        with redraft.transfer_guard("never"):
            pass
    assert redraft.config.jax_transfer_guard is None


def test_debug_nans_names_the_eager_operation():
    with redraft.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            jnp.log(-1.0)
        with pytest.raises(FloatingPointError, match="nan"):
            jnp.sqrt(jnp.asarray([1.0, -1.0]))
        with pytest.raises(FloatingPointError, match="nan"):
            jnp.zeros(2) / 0.0
        assert jnp.log(2.0) > 0  # finite results pass
        assert float(jnp.log(0.0)) == -np.inf  # infinities are debug_infs' business
    assert np.isnan(jnp.log(-1.0))  # off again: NaN is a value


def _twice_log(x):
    return jnp.log(x) * 2.0


def test_debug_nans_under_jit_reruns_op_by_op():
    f = redraft.jit(_twice_log)
    assert f(2.0) > 0  # compiled before the switch
    redraft.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(-1.0)
        assert f(2.0) > 0
        with pytest.raises(FloatingPointError, match="nan"):
            redraft.grad(lambda x: jnp.sum(jnp.sqrt(x)))(jnp.asarray([-1.0, 1.0]))
    finally:
        redraft.config.update("jax_debug_nans", False)
    assert np.isnan(f(-1.0))


def test_debug_infs():
    with redraft.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log"):
            jnp.log(0.0)
        with pytest.raises(FloatingPointError, match="inf"):
            redraft.jit(lambda x: jnp.exp(x))(1000.0)
        assert np.isnan(jnp.log(-1.0))


def test_strict_dtype_promotion_as_jax():
    with redraft.numpy_dtype_promotion("strict"):
        with pytest.raises(TypeError, match=r"Input dtypes \('int32', 'float32'\) have no "
                                            "available implicit dtype promotion path"):
            jnp.int32(1) + jnp.float32(2)
        assert (jnp.ones(3, jnp.float32) + 1.0).dtype == np.float32
        assert (jnp.ones(3, jnp.int32) + 1).dtype == np.int32
        with pytest.raises(TypeError, match="strict"):
            jnp.ones(3, jnp.int32) + 1.0
        with pytest.raises(TypeError, match="strict"):
            jnp.ones(3, jnp.float32) + jnp.ones(3, jnp.float16)
        with pytest.raises(TypeError, match="strict"):
            jnp.where(True, jnp.ones(3, jnp.int32), jnp.ones(3))
        with pytest.raises(TypeError, match="strict"):
            jnp.result_type(jnp.int32, jnp.float32)
        with pytest.raises(TypeError, match="strict"):
            jnp.concatenate([jnp.ones(3, jnp.int32), jnp.ones(3)])
    assert (jnp.int32(1) + jnp.float32(2)).dtype == np.float32


def test_rank_promotion_raise_and_warn_as_jax():
    with redraft.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"shapes \(2, 3\) \(3,\) and with the config "
                                             "option jax_numpy_rank_promotion='raise'"):
            jnp.ones((2, 3)) + jnp.ones(3)
        with pytest.raises(ValueError, match="rank_promotion"):
            jnp.ones((2, 3)) * jnp.ones(3, jnp.int32)
        with pytest.raises(ValueError, match="rank_promotion"):
            redraft.jit(lambda a, b: a - b)(jnp.ones((2, 3)), jnp.ones(3))
        assert (jnp.ones((2, 3)) + 1.0).shape == (2, 3)  # scalars broadcast freely
        assert (jnp.ones((2, 3)) + jnp.ones((1, 3))).shape == (2, 3)  # equal ranks
        assert jnp.dot(jnp.ones((2, 3)), jnp.ones(3)).shape == (2,)  # not elementwise
    with redraft.numpy_rank_promotion("warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert (jnp.ones((2, 3)) + jnp.ones(3)).shape == (2, 3)
        assert any("rank_promotion='warn'" in str(w.message) for w in caught)


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setenv("REDRAFT_EMULATE_GPU", "1")
    return redraft.devices("gpu")[-1]


def test_transfer_guards_on_an_emulated_gpu(gpu, caplog):
    with redraft.transfer_guard("disallow"):
        x = redraft.device_put(np.ones(3, np.float32), gpu)  # explicit: allowed
        with pytest.raises(TransferGuardError, match="implicit device-to-host"):
            np.asarray(x * 2.0)
        np.testing.assert_array_equal(redraft.device_get(x), np.ones(3))  # explicit
        assert (jnp.ones(3) + 1.0).shape == (3,)  # host arrays are never guarded
    with redraft.transfer_guard_host_to_device("disallow_explicit"):
        with pytest.raises(TransferGuardError, match="explicit host-to-device"):
            redraft.device_put(np.ones(2, np.float32), gpu)
    with redraft.transfer_guard_device_to_host("log"):
        y = redraft.device_put(np.ones(2, np.float32), gpu) * 3.0
        with caplog.at_level(logging.WARNING, logger="redraft.transfer_guard"):
            np.testing.assert_array_equal(np.asarray(y), [3.0, 3.0])
        assert "implicit device-to-host transfer" in caplog.text


def test_live_arrays():
    x = jnp.arange(7.0)
    live = redraft.live_arrays()
    assert any(a is x for a in live)
    assert all(isinstance(a, redraft.Array) for a in live)
    assert redraft.live_arrays("gpu") == []
