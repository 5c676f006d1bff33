"""redraft.random's families against JAX 0.10.2's samples for the same keys (jax_vectors.json,
written by make_vectors.py): dtypes and shapes exactly, values bit for bit unless a case
records why JAX's own bits depend on the machine (its `note`) and how far they may differ."""
import json
import pathlib

import numpy as np
import pytest

import redraft
from redraft import random
from stored_vectors import stored_samples, ulp_distance

DATA = json.loads(pathlib.Path(__file__).with_name("jax_vectors.json").read_text())
CASES = {case["name"]: case for case in DATA["cases"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_samples_as_jax(name):
    case = CASES[name]
    env = {"R": random, "np": np, "jit": redraft.jit, "grad": redraft.grad,
           "key": random.PRNGKey(case["seed"])}
    actual = np.asarray(eval(case["expr"], env))
    expected = stored_samples(case)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if case["rtol"]:
        np.testing.assert_allclose(actual, expected, rtol=case["rtol"], atol=1e-6,
                                   err_msg=case["note"])
    elif expected.dtype.kind == "f":
        distance = ulp_distance(actual, expected)
        assert distance.max() <= case["ulp"], (
            f"{distance.max()} ulp from JAX at {np.argmax(distance)}: {case['note']}")
    else:
        np.testing.assert_array_equal(actual, expected)


def test_bit_identical_cases_are_most_of_them():
    exact = [name for name, case in CASES.items() if case["ulp"] == 0 and not case["rtol"]]
    assert len(exact) >= 0.8 * len(CASES)


@pytest.mark.parametrize("name", ["gamma/0", "poisson_rejection/7", "binomial_btrs/0",
                                  "multinomial/7", "cauchy/0", "dirichlet/7"])
def test_typed_keys_give_the_same_samples(name):
    case = CASES[name]
    env = {"R": random, "np": np, "jit": redraft.jit, "grad": redraft.grad,
           "key": random.wrap_key_data(np.asarray(random.PRNGKey(case["seed"])))}
    actual = np.asarray(eval(case["expr"], env))
    assert actual.tobytes() == stored_samples(case).tobytes()
