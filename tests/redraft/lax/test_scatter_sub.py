"""lax.scatter_sub (redraft/lax/scatter_updates.py) against np.subtract.at, with derivatives to
order 2, jit against eager and vmap against a loop."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

DN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
INDICES = np.array([[1], [3], [1], [7]], np.int32)  # 7 is out of bounds: dropped
X = np.arange(15, dtype=np.float32).reshape(5, 3)
U = np.linspace(-1, 1, 12).astype(np.float32).reshape(4, 3)


def test_matches_subtract_at():
    got = lax.scatter_sub(jnp.asarray(X), jnp.asarray(INDICES), jnp.asarray(U), DN)
    want = X.copy()
    np.subtract.at(want, INDICES[:3, 0], U[:3])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == np.float32
    ints = lax.scatter_sub(jnp.zeros((5, 3), jnp.int32), jnp.asarray(INDICES),
                           jnp.ones((4, 3), jnp.int32), DN, mode="clip")
    want = np.zeros((5, 3), np.int32)
    np.subtract.at(want, np.minimum(INDICES[:, 0], 4), 1)
    np.testing.assert_array_equal(ints, want)


def _sub(x, u):
    return jnp.sum(jnp.sin(lax.scatter_sub(x, jnp.asarray(INDICES), u, DN)))


def test_derivatives_jit_and_vmap():
    check_grads(_sub, (X, U), 2, atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(redraft.jit(_sub)(X, U), _sub(jnp.asarray(X), U), rtol=1e-6)
    rows = jnp.asarray(np.stack([U, 2 * U]))
    grad = redraft.grad(_sub, argnums=1)
    batched = redraft.vmap(grad, in_axes=(None, 0))(jnp.asarray(X), rows)
    for i in range(2):
        np.testing.assert_allclose(batched[i], grad(jnp.asarray(X), rows[i]), rtol=1e-6)
