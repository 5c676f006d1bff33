"""jnp.pad's 'linear_ramp' and 'mean' modes, eager and compiled, against JAX 0.10.2's
results (stored here; JAX is not imported)."""
import numpy as np

import redraft
import redraft.numpy as jnp


def test_linear_ramp_with_end_values():
    out = jnp.pad(jnp.arange(6.0), 2, mode="linear_ramp", end_values=(1, -1))
    np.testing.assert_allclose(out, [1.0, 0.5, 0, 1, 2, 3, 4, 5, 2.0, -1.0])


def test_linear_ramp_compiled_and_per_axis():
    out = redraft.jit(lambda a: jnp.pad(a, (3, 1), mode="linear_ramp"))(jnp.arange(6.0))
    np.testing.assert_allclose(out, [0, 0, 0, 0, 1, 2, 3, 4, 5, 0])
    m = jnp.arange(12.0).reshape(3, 4)
    out = jnp.pad(m, ((1, 2), (2, 1)), mode="linear_ramp", end_values=((0, 5), (-2, 3)))
    np.testing.assert_allclose(out, [[-2, -1, 0, 0, 0, 0, 3], [-2, -1, 0, 1, 2, 3, 3],
                                     [-2, 1, 4, 5, 6, 7, 3], [-2, 3, 8, 9, 10, 11, 3],
                                     [-2, 2.25, 6.5, 7, 7.5, 8, 3], [-2, 1.5, 5, 5, 5, 5, 3]])


def test_linear_ramp_of_integers_truncates():
    out = jnp.pad(jnp.arange(5), (3, 2), mode="linear_ramp", end_values=(10, -3))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [10, 6, 3, 0, 1, 2, 3, 4, 0, -3])


def test_linear_ramp_under_vmap():
    out = redraft.vmap(lambda a: jnp.pad(a, 2, mode="linear_ramp"))(jnp.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(out, [[0, 0, 0, 1, 2, 3, 1.5, 0], [0, 2, 4, 5, 6, 7, 3.5, 0],
                                     [0, 4, 8, 9, 10, 11, 5.5, 0]])


def test_mean_mode():
    out = jnp.pad(jnp.arange(12.0).reshape(3, 4), 1, mode="mean")
    np.testing.assert_allclose(out, [[5.5, 4, 5, 6, 7, 5.5], [1.5, 0, 1, 2, 3, 1.5],
                                     [5.5, 4, 5, 6, 7, 5.5], [9.5, 8, 9, 10, 11, 9.5],
                                     [5.5, 4, 5, 6, 7, 5.5]])
    np.testing.assert_array_equal(jnp.pad(jnp.arange(5), 2, mode="mean"),
                                  [2, 2, 0, 1, 2, 3, 4, 2, 2])


A = np.array([[1.0, 5.0, 2.0, 8.0], [3.0, 0.0, 7.0, 4.0]], np.float32)


def test_median_mode():
    np.testing.assert_allclose(jnp.pad(A, ((1, 2), (2, 1)), mode="median"),
                               [[3.5, 3.5, 2, 2.5, 4.5, 6, 3.5], [3.5, 3.5, 1, 5, 2, 8, 3.5],
                                [3.5, 3.5, 3, 0, 7, 4, 3.5], [3.5, 3.5, 2, 2.5, 4.5, 6, 3.5],
                                [3.5, 3.5, 2, 2.5, 4.5, 6, 3.5]])
    np.testing.assert_array_equal(jnp.pad(jnp.arange(7), 2, mode="median", stat_length=3),
                                  [1, 1, 0, 1, 2, 3, 4, 5, 6, 5, 5])


def test_stat_length():
    np.testing.assert_allclose(jnp.pad(A, 2, mode="maximum", stat_length=2),
                               [[5, 5, 3, 5, 7, 8, 8, 8]] * 2 + [[5, 5, 1, 5, 2, 8, 8, 8],
                                                                 [3, 3, 3, 0, 7, 4, 7, 7]]
                               + [[5, 5, 3, 5, 7, 8, 8, 8]] * 2)
    out = jnp.pad(A, ((1, 1), (2, 3)), mode="mean", stat_length=((1, 2), (3, 1)))
    np.testing.assert_allclose(out, [[8 / 3, 8 / 3, 1, 5, 2, 8, 8, 8, 8]] * 2
                               + [[10 / 3, 10 / 3, 3, 0, 7, 4, 4, 4, 4],
                                  [3, 3, 2, 2.5, 4.5, 6, 6, 6, 6]], rtol=1e-6)
    out = redraft.jit(lambda a: jnp.pad(a, 2, mode="median", stat_length=2))(A)
    np.testing.assert_allclose(out, [[2.25, 2.25, 2, 2.5, 4.5, 6, 5.25, 5.25]] * 2
                               + [[3, 3, 1, 5, 2, 8, 5, 5], [1.5, 1.5, 3, 0, 7, 4, 5.5, 5.5]]
                               + [[2.25, 2.25, 2, 2.5, 4.5, 6, 5.25, 5.25]] * 2)
