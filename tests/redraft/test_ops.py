"""redraft.ops (jax.ops): segment reductions against NumPy loops, under jit, grad and vmap."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import ops

DATA = np.array([[1.0, -2.0], [0.5, 3.0], [4.0, 1.0], [-1.0, 0.0], [2.0, 2.0]], np.float32)
IDS = np.array([0, 2, 0, 2, 7], np.int32)  # segment 1 empty, id 7 outside: dropped
REDUCE = {"sum": (np.add, 0.0), "prod": (np.multiply, 1.0), "max": (np.maximum, -np.inf),
          "min": (np.minimum, np.inf)}


def by_loop(kind: str, data, ids, n: int) -> np.ndarray:
    op, identity = REDUCE[kind]
    out = np.full((n,) + data.shape[1:], identity, np.float32)
    for row, s in zip(data, ids):
        if 0 <= s < n:
            out[s] = op(out[s], row)
    return out


@pytest.mark.parametrize("kind", sorted(REDUCE))
def test_segments_match_a_loop_eagerly_and_compiled(kind):
    fn = getattr(ops, f"segment_{kind}")
    expected = by_loop(kind, DATA, IDS, 3)
    np.testing.assert_allclose(fn(DATA, IDS, num_segments=3), expected)
    np.testing.assert_allclose(redraft.jit(fn, static_argnums=2)(DATA, IDS, 3), expected)


def _loss(data):
    return (jnp.sum(ops.segment_sum(data, IDS, num_segments=3) ** 2)
            + jnp.sum(jnp.where(jnp.isfinite(m := ops.segment_max(data, IDS, 3)), m, 0.0)))


def test_gradients_reach_only_rows_that_land_in_a_segment():
    sums = by_loop("sum", DATA, IDS, 3)
    maxima = by_loop("max", DATA, IDS, 3)
    expected = np.zeros_like(DATA)
    for i, s in enumerate(IDS):
        if s < 3:
            expected[i] = 2 * sums[s] + (DATA[i] == maxima[s])
    np.testing.assert_allclose(redraft.grad(_loss)(DATA), expected)
    np.testing.assert_allclose(redraft.jit(redraft.grad(_loss))(DATA), expected)


def test_vmap_over_examples_is_a_loop_over_them():
    batch = np.stack([DATA, 2 * DATA])
    out = redraft.vmap(lambda d: ops.segment_sum(d, IDS, num_segments=3))(batch)
    np.testing.assert_allclose(out, [by_loop("sum", d, IDS, 3) for d in batch])


def test_num_segments_from_the_ids_and_bad_ids():
    assert ops.segment_sum(jnp.ones(3), jnp.array([0, 4, 1])).shape == (5,)
    with pytest.raises(TypeError, match="integers"):
        ops.segment_sum(jnp.ones(3), jnp.array([0.0, 1.0, 1.0]), 2)
    with pytest.raises(ValueError, match="leading axis"):
        ops.segment_sum(jnp.ones(3), jnp.array([0, 1]), 2)
