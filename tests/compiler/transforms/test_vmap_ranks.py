"""vmap_ranks: batched code skips an alignment only where ranks are known to allow it, so
operands of different per-example ranks still broadcast per example (checked against a
Python loop over the examples)."""
import numpy as np

import redraft
import redraft.numpy as jnp


def scaled_exp(x, a):
    return a * jnp.exp(x) - a


def where_mixed(x, m):
    y = jnp.exp(x)
    return jnp.where(x > 0, y, m)


def chained(x, v):
    t = x * 2.0
    u = t + v
    return jnp.where(u > 0, t, u)


def _loop(f, args, in_axes):
    n = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax == 0)
    rows = [f(*[a[i] if ax == 0 else a for a, ax in zip(args, in_axes)]) for i in range(n)]
    return np.stack([np.asarray(r) for r in rows])


def _check(f, args, in_axes):
    args = [jnp.asarray(np.asarray(a, np.float32)) for a in args]
    got = redraft.vmap(f, in_axes=in_axes)(*args)
    np.testing.assert_allclose(np.asarray(got), _loop(f, args, in_axes), rtol=1e-6)


def test_a_per_example_scalar_meets_an_unbatched_matrix():
    rng = np.random.RandomState(0)
    _check(scaled_exp, [rng.randn(3), rng.randn(2, 2)], (0, None))
    source = redraft.emit(scaled_exp, "vmap", in_axes=(0, None))
    assert source.count("vm.align(") == 1, source  # `- a`: a already aligned against


def test_where_of_operands_of_different_ranks():
    rng = np.random.RandomState(1)
    _check(where_mixed, [rng.randn(4), rng.randn(4, 3)], (0, 0))
    _check(where_mixed, [rng.randn(4, 3), rng.randn(4)], (0, 0))


def test_ranks_follow_through_a_chain_of_elementwise_operations():
    rng = np.random.RandomState(2)
    _check(chained, [rng.randn(5), rng.randn(5, 2)], (0, 0))
    _check(chained, [rng.randn(5, 2, 3), rng.randn(5, 3)], (0, 0))
    _check(chained, [rng.randn(5), rng.randn(2)], (0, None))
