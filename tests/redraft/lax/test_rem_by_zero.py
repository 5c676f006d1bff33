"""lax.rem by zero as JAX 0.10.2 gives it: NaN for floats, the dividend for integers (XLA's
rule), eagerly and compiled."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax


def test_integer_rem_by_zero_is_the_dividend():
    x, y = jnp.array([5, -5, 0, -7]), jnp.array([0, 0, 0, 3])
    for fn in (lax.rem, redraft.jit(lax.rem)):
        np.testing.assert_array_equal(fn(x, y), [5, -5, 0, -1])


def test_unsigned_rem_by_zero_is_the_dividend():
    x, y = jnp.array([5, 7], dtype=np.uint32), jnp.array([0, 4], dtype=np.uint32)
    for fn in (lax.rem, redraft.jit(lax.rem)):
        np.testing.assert_array_equal(fn(x, y), [5, 3])


def test_float_rem_by_zero_is_nan():
    x, y = jnp.array([5.0, -5.0, 0.0]), jnp.zeros(3)
    for fn in (lax.rem, redraft.jit(lax.rem)):
        assert np.all(np.isnan(np.asarray(fn(x, y))))
