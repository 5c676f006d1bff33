"""random with x64 on: float64/int64/uint64 defaults, and samples bit for bit JAX 0.10.2's
(x64_random.json, made by make_x64_random.py). The flag is restored after each test."""
import json
import pathlib

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import random

DATA = json.loads(pathlib.Path(__file__).with_name("x64_random.json").read_text())


@pytest.fixture
def x64():
    with redraft.enable_x64(True):
        yield


@pytest.mark.parametrize("case", sorted(DATA["samples"]))
def test_samples_bit_identical_with_jax(x64, case):
    name, seed = case.split("/")
    env = {"random": random, "jnp": jnp, "key": random.PRNGKey(int(seed))}
    got = np.asarray(eval(DATA["cases"][name], env))  # noqa: S307 (the stored table)
    dtype, bits = DATA["samples"][case]
    assert got.dtype.name == dtype
    if got.dtype.kind == "c":  # stored as (real, imaginary) pairs
        got = np.stack([got.real, got.imag], axis=-1)
    if got.dtype.kind != "b":
        got = got.view(np.dtype(f"uint{got.dtype.itemsize * 8}"))
    assert got.ravel().tolist() == bits


def test_defaults_follow_the_flag():
    key = random.PRNGKey(0)
    assert random.uniform(key).dtype == np.float32
    assert random.randint(key, (2,), 0, 3).dtype == np.int32
    with redraft.enable_x64():
        assert random.uniform(key).dtype == np.float64
        assert random.normal(key, (2,)).dtype == np.float64
        assert random.randint(key, (2,), 0, 3).dtype == np.int64
        assert random.bits(key, (2,)).dtype == np.uint64
    assert random.normal(key, (2,)).dtype == np.float32


def test_float64_normal_moments(x64):
    z = np.asarray(random.normal(random.PRNGKey(3), (200_000,)))
    assert z.dtype == np.float64
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01


def test_float64_fma_and_erfinv_against_exact_arithmetic():
    from fractions import Fraction

    from redraft.kernels import threefry
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((3, 2000)) * np.array([[1.0], [1e3], [1e-3]])
    got = threefry.fma_float64(a, b, c)
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert got.tolist() == exact  # float(Fraction) rounds to nearest once
    scipy_special = pytest.importorskip("scipy.special")
    u = rng.uniform(-1, 1, 5000)
    # Giles' polynomials as XLA evaluates them: measured 1.4e-13 relative against SciPy's
    # (a float32 evaluation would be ~1e-7 off)
    np.testing.assert_allclose(threefry.erfinv_float64(u), scipy_special.erfinv(u), rtol=3e-13,
                               atol=0)
