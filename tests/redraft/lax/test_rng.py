"""lax.rng_bit_generator against JAX 0.10.2's bits for the ThreeFry algorithm (stored in
rng_bit_generator_vectors.json): every shape layout, counter carries and narrow dtypes,
eagerly and compiled; batched per example."""
import json
from pathlib import Path

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax

VECTORS = json.loads((Path(__file__).parent / "rng_bit_generator_vectors.json").read_text())


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['shape']}-{c['dtype']}")
def test_bits_and_state_are_jaxs(case):
    key = np.array(case["key"], np.uint32)
    new_key, bits = lax.rng_bit_generator(key, tuple(case["shape"]), dtype=case["dtype"],
                                          algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    np.testing.assert_array_equal(new_key, case["new_key"])
    assert bits.dtype == np.dtype(case["dtype"]) and bits.shape == tuple(case["shape"])
    np.testing.assert_array_equal(np.asarray(bits).ravel(), case["bits"])


def test_compiled_default_and_batched():
    case = VECTORS["cases"][3 * 4]  # shape (4, 3), uint32
    fn = redraft.jit(lambda k: lax.rng_bit_generator(k, (4, 3)))
    new_key, bits = fn(jnp.array(case["key"], jnp.uint32))
    np.testing.assert_array_equal(new_key, case["new_key"])
    np.testing.assert_array_equal(np.asarray(bits).ravel(), case["bits"])
    keys = jnp.array([[0, 42, 0, 0], [1, 2, 3, 4]], jnp.uint32)
    batched = redraft.vmap(lambda k: lax.rng_bit_generator(k, (2,))[1])(keys)
    for k, row in zip(keys, batched):
        np.testing.assert_array_equal(row, lax.rng_bit_generator(k, (2,))[1])


def test_refusals():
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (2,), dtype=np.int32)
    with pytest.raises(NotImplementedError, match="RNG_PHILOX"):
        lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (2,),
                              algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(jnp.zeros(2, jnp.uint32), (2,))
