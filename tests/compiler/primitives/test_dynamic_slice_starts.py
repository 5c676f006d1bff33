"""lax.dynamic_slice and dynamic_update_slice count a negative start from the end of its
axis (JAX's allow_negative_indices=True), then clamp the window into the array: eagerly,
under jit, grad and vmap, against NumPy slicing."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax

X = np.linspace(-1.0, 2.0, 6).astype(np.float32)


def _window(start: int, size: int, n: int = 6) -> int:
    start = start + n if start < 0 else start
    return min(max(start, 0), n - size)


@pytest.mark.parametrize("start", [-2, -4, -6, -9, 0, 2, 5])
def test_negative_starts_count_from_the_end_then_clamp(start):
    lo = _window(start, 3)
    want = X[lo:lo + 3]
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(jnp.asarray(X), (start,), (3,))),
                                  want)
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice_in_dim(jnp.asarray(X), start, 3)),
                                  want)
    got = redraft.jit(lambda x, i: lax.dynamic_slice(x, (i,), (3,)))(jnp.asarray(X), start)
    np.testing.assert_array_equal(np.asarray(got), want)
    lo = _window(start, 2)
    want = X.copy()
    want[lo:lo + 2] = 7.0
    got = lax.dynamic_update_slice(jnp.asarray(X), jnp.full((2,), 7.0), (start,))
    np.testing.assert_array_equal(np.asarray(got), want)
    got = redraft.jit(lambda x, i: lax.dynamic_update_slice(x, jnp.full((2,), 7.0), (i,)))(
        jnp.asarray(X), start)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_allow_negative_indices_false_only_clamps():
    got = lax.dynamic_slice(jnp.asarray(X), (-2,), (3,), allow_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(got), X[:3])


def test_negative_starts_under_grad_and_vmap():
    def f(x, i):
        return jnp.sum(lax.dynamic_slice(x, (i,), (3,)) ** 2)

    starts = np.array([-2, 1, -6, -9])
    got = redraft.vmap(f, in_axes=(None, 0))(jnp.asarray(X), jnp.asarray(starts))
    want = [np.sum(X[_window(int(s), 3):_window(int(s), 3) + 3] ** 2) for s in starts]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    grads = redraft.vmap(redraft.grad(f), in_axes=(None, 0))(jnp.asarray(X), jnp.asarray(starts))
    for g, s in zip(np.asarray(grads), starts):
        lo = _window(int(s), 3)
        want = np.zeros(6, np.float32)
        want[lo:lo + 3] = 2 * X[lo:lo + 3]
        np.testing.assert_allclose(g, want, rtol=1e-6)
