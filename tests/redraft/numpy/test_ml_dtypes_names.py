"""jnp.bfloat16, the float8 types and int4 are named as in JAX, and an array of one is
refused with a clear TypeError (the runtime computes with NumPy's own dtypes only)."""
import ml_dtypes
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def test_names_are_the_ml_dtypes_types():
    assert np.dtype(jnp.bfloat16) == np.dtype(ml_dtypes.bfloat16)
    assert np.dtype(jnp.float8_e4m3fn) == np.dtype(ml_dtypes.float8_e4m3fn)
    assert jnp.int4 == ml_dtypes.int4 and jnp.bfloat16 != jnp.float16


@pytest.mark.parametrize("make", [
    lambda: jnp.ones(3).astype(jnp.bfloat16),
    lambda: jnp.zeros(2, jnp.bfloat16),
    lambda: jnp.bfloat16(1.0),
    lambda: jnp.asarray(np.ones(2, dtype=ml_dtypes.bfloat16)),
    lambda: jnp.asarray(np.ones(2, dtype=ml_dtypes.float8_e5m2)),
    lambda: redraft.jit(lambda x: x.astype(jnp.bfloat16))(jnp.ones(2)),
])
def test_arrays_of_them_are_refused(make):
    with pytest.raises(TypeError, match="redraft has no (bfloat16|float8_e5m2) arrays"):
        make()
