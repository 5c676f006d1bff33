"""The comparison every redraft.numpy test makes against NumPy's own result."""
import numpy as np
from redraft.runtime import dtypes

import redraft.numpy as jnp


def check(actual, expected, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Same shape, same (32-bit canonical) dtype and close values as NumPy's result (equal
    values with rtol=atol=0); lists and tuples are compared item by item."""
    if isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            check(a, e, rtol, atol)
        return
    expected = np.asarray(expected)
    assert isinstance(actual, jnp.ndarray), type(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == dtypes.canonicalize(expected.dtype), (actual.dtype, expected.dtype)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)
