"""x64 mode: the flag (redraft.config, JAX_ENABLE_X64, enable_x64), 64-bit defaults when on,
JAX's truncation warning when off, and the dtype of a table of operations in both modes
against JAX 0.10.2's (x64_dtypes.json, made by make_x64_dtypes.py). Every test restores
the flag, so the rest of the suite runs in 32-bit mode."""
import json
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax, random
from redraft.runtime import config as config_module
from redraft.runtime import dtypes

TABLE = json.loads(pathlib.Path(__file__).with_name("x64_dtypes.json").read_text())
# Where redraft knowingly differs from JAX 0.10.2 (not about x64):
KNOWN = {
    # lax.add with a Python float promotes weakly in redraft; JAX's x64 raises TypeError.
    ("x64", "lax.add(jnp.float32(1), 1.0)"),
    # redraft.lax has no `full` yet (another helper adds lax API functions).
    ("x32", "lax.full((2,), 1.0)"), ("x64", "lax.full((2,), 1.0)"),
}


@pytest.fixture
def restore_x64():
    old = redraft.config.jax_enable_x64
    yield
    redraft.config.update("jax_enable_x64", old)


def _evaluate(text: str):
    env = {"jnp": jnp, "lax": lax, "random": random, "np": np,
           "x32": np.ones(2, np.float32), "x64": np.ones(2, np.float64)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = eval(text, env)  # noqa: S307 (the stored table)
    if isinstance(value, (np.dtype, type)):
        return np.dtype(value).name
    return np.dtype(value.dtype).name


CASES = [(mode, text) for mode in ("x32", "x64") for text in TABLE[mode]
         if (mode, text) not in KNOWN and not TABLE[mode][text][0].startswith("error")]


@pytest.mark.parametrize("mode,text", CASES)
def test_dtype_matches_jax(restore_x64, mode, text):
    redraft.config.update("jax_enable_x64", mode == "x64")
    assert _evaluate(text) == TABLE[mode][text][0]


def test_config_reads_and_updates(restore_x64):
    assert redraft.config.jax_enable_x64 is False
    redraft.config.update("jax_enable_x64", True)
    assert redraft.config.jax_enable_x64 is True and redraft.config.read("jax_enable_x64")
    assert dtypes.DEFAULT_FLOAT == np.float64 and dtypes.DEFAULT_INT == np.int64
    redraft.config.update("jax_enable_x64", "false")
    assert dtypes.DEFAULT_FLOAT == np.float32
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        redraft.config.update("jax_enable_x46", True)


def test_enable_x64_context_restores():
    with redraft.enable_x64():
        assert jnp.arange(3).dtype == np.int64
        with redraft.enable_x64(False):
            assert jnp.arange(3).dtype == np.int32
        assert jnp.array(1.5).dtype == np.float64
    assert jnp.array(1.5).dtype == np.float32
    with config_module.disable_x64():
        assert not config_module.x64_enabled()


@pytest.mark.parametrize("value,expected", [("1", "float64"), ("true", "float64"),
                                            ("0", "float32"), ("", "float32")])
def test_environment_variable_at_import(value, expected):
    code = "import redraft.numpy as jnp; print(jnp.zeros(1).dtype)"
    env = {"JAX_ENABLE_X64": value, "PATH": "", "REDRAFT_CACHE": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == expected


@pytest.mark.parametrize("text,where", [
    ("jnp.array(1.0, dtype=jnp.float64)", "array"), ("jnp.float64(1.0)", "asarray"),
    ("jnp.zeros(3, dtype='float64')", "zeros"), ("jnp.arange(4, dtype=jnp.int64)", "arange"),
    ("jnp.ones(2).astype(jnp.complex128)", "astype"),
])
def test_truncation_warns_as_jax_does(text, where):
    with pytest.warns(UserWarning) as record:
        value = eval(text, {"jnp": jnp})  # noqa: S307 (the cases above)
    message = str(record[0].message)
    assert message.startswith("Explicitly requested dtype ")
    assert f" requested in {where} is not available, and will be truncated to dtype " in message
    assert "jax_enable_x64" in message and "JAX_ENABLE_X64" in message
    assert value.dtype.itemsize <= 8 and value.dtype != np.float64


def test_no_warning_with_x64_on_or_for_python_types(restore_x64):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.zeros(2, dtype=float)
        jnp.array(np.ones(2))  # NumPy float64 data: converted silently, as JAX does
        redraft.config.update("jax_enable_x64", True)
        assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float64


def test_python_ints_take_int64_range(restore_x64):
    with pytest.raises(OverflowError):
        jnp.asarray(2 ** 40) + 1
    redraft.config.update("jax_enable_x64", True)
    big = jnp.arange(3) * 2 ** 40
    assert big.dtype == np.int64 and int(big[2]) == 2 ** 41


def test_grad_carries_float64(restore_x64):
    redraft.config.update("jax_enable_x64", True)
    g = redraft.grad(lambda x: jnp.sum(jnp.sin(x) * x))(jnp.linspace(0.1, 1.0, 5))
    x = np.linspace(0.1, 1.0, 5)
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), np.cos(x) * x + np.sin(x), rtol=1e-15)
