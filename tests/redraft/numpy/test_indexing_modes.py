"""JAX's out-of-bounds semantics of `.at[]`: get with mode='fill'/'clip'/'drop'/
'promise_in_bounds', updates dropped (default, 'drop') or clamped ('clip'); eagerly, under
jit, grad and vmap. Expected values are JAX 0.10.2's for the same calls. And dot/matmul's
TypeError on mismatched shapes."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

X = jnp.arange(5.0)
IDX = jnp.asarray([1, 10, -1, -6])


def test_get_modes_match_jax():
    assert float(X.at[10].get(mode="fill", fill_value=-1.0)) == -1.0
    assert np.isnan(float(X.at[10].get(mode="fill")))
    assert int(jnp.arange(5).at[10].get(mode="fill")) == np.iinfo(np.int32).min
    assert X.at[IDX].get(mode="fill", fill_value=-1.0).tolist() == [1.0, -1.0, 4.0, -1.0]
    assert float(X.at[10].get(mode="clip")) == 4.0
    assert X.at[jnp.asarray([-1, -7])].get(mode="clip").tolist() == [4.0, 0.0]
    assert np.isnan(float(X.at[10].get(mode="drop")))
    assert float(X.at[2].get(mode="promise_in_bounds")) == 2.0
    m = jnp.ones((3, 3))
    assert float(m.at[1, 5].get(mode="fill", fill_value=7.0)) == 7.0
    assert m.at[5, :].get(mode="fill", fill_value=7.0).tolist() == [7.0, 7.0, 7.0]
    assert m.at[:, jnp.asarray([0, 4])].get(mode="fill", fill_value=7.0).tolist() == \
        [[1.0, 7.0]] * 3
    with pytest.raises(ValueError, match="invalid indexing mode"):
        X.at[1].get(mode="wrap")


def test_updates_drop_or_clip_as_jax():
    assert X.at[10].set(1.0).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert X.at[10].set(1.0, mode="clip").tolist() == [0.0, 1.0, 2.0, 3.0, 1.0]
    assert X.at[-7].set(1.0, mode="clip").tolist() == [1.0, 1.0, 2.0, 3.0, 4.0]
    assert X.at[10].set(1.0, mode="fill").tolist() == X.tolist()
    assert X.at[jnp.asarray([1, 10])].add(1.0, mode="drop").tolist() == [0, 2, 2, 3, 4]
    assert X.at[jnp.asarray([1, -1])].multiply(2.0, mode="drop").tolist() == [0, 2, 2, 3, 8]
    assert X.at[jnp.asarray([1, 9])].subtract(1.0, mode="clip").tolist() == [0, 0, 2, 3, 3]
    assert X.at[jnp.asarray([-1])].set(9.0, mode="drop", wrap_negative_indices=False) \
        .tolist() == X.tolist()


def _fill(x, i):
    return x.at[i].get(mode="fill", fill_value=-1.0)


def _clip_set(x, i):
    return x.at[i].set(7.0, mode="clip")


def test_modes_under_jit():
    np.testing.assert_array_equal(redraft.jit(_fill)(X, jnp.asarray([1, 10, -1])),
                                  [1.0, -1.0, 4.0])
    np.testing.assert_array_equal(redraft.jit(_clip_set)(X, jnp.asarray([1, 10])),
                                  [0.0, 7.0, 2.0, 3.0, 7.0])


def test_modes_under_grad_and_vmap():
    g = redraft.grad(lambda x: _fill(x, jnp.asarray([1, 10, 1])).sum())(X)
    assert g.tolist() == [0.0, 2.0, 0.0, 0.0, 0.0]
    g = redraft.grad(lambda x: x.at[jnp.asarray([1, 10])].get(mode="clip").sum())(X)
    assert g.tolist() == [0.0, 1.0, 0.0, 0.0, 1.0]
    g = redraft.grad(lambda v: (X.at[jnp.asarray([1, 10])].set(v, mode="clip") ** 2).sum())(
        jnp.ones(2))
    assert g.tolist() == [2.0, 2.0]
    g = redraft.grad(lambda x: (x.at[jnp.asarray([1, 10])].set(3.0, mode="drop") ** 2).sum())(X)
    assert g.tolist() == [0.0, 0.0, 4.0, 6.0, 8.0]
    out = redraft.vmap(_fill)(jnp.ones((2, 3)), jnp.asarray([1, 5]))
    assert out.tolist() == [1.0, -1.0]
    assert redraft.jit(redraft.grad(lambda x: _fill(x, jnp.asarray([1, 10])).sum()))(X) \
        .tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_mode_derivatives_to_order_two():
    idx = jnp.asarray([0, 3, 7, -2])
    check_grads(lambda x: jnp.sin(x.at[idx].get(mode="fill", fill_value=2.0)) ** 2,
                (np.linspace(0.1, 0.9, 5),), order=2)
    check_grads(lambda x, v: x.at[idx].add(v * v, mode="clip") ** 2,
                (np.linspace(0.1, 0.9, 5), np.float64([0.5, -1.0, 2.0, 1.5])), order=2)


@pytest.mark.parametrize("fn", [jnp.dot, jnp.matmul, lambda a, b: a @ b])
def test_contraction_mismatch_raises_type_error_as_jax(fn):
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions to have "
                                        r"the same shape, got \(3,\) and \(2,\)"):
        fn(jnp.ones((2, 3)), jnp.ones((2, 3)))
    with pytest.raises(ValueError):   # and NumPy's ValueError, for code written for NumPy
        fn(jnp.ones(3), jnp.ones(2))


def test_plain_reads_clamp_and_their_gradients_follow():
    """x[i] and x.at[i].get() clamp out-of-range indices (after wrapping negatives once), so
    the cotangent of each read goes where it was clamped to, under grad, jit and vmap."""
    i = jnp.asarray([-1, -7, 9])
    assert X[i].tolist() == [4.0, 0.0, 4.0]
    assert float(X.at[10].get()) == 4.0 and float(X.at[-7].get()) == 0.0
    want = [1.0, 0.0, 0.0, 0.0, 2.0]
    assert redraft.grad(lambda x: x[i].sum())(X).tolist() == want
    assert redraft.grad(lambda x: x.at[i].get().sum())(X).tolist() == want
    assert redraft.jit(redraft.grad(lambda x: x[i].sum()))(X).tolist() == want
    assert redraft.vmap(redraft.grad(lambda x: x[i].sum()))(jnp.ones((2, 5))).tolist() == \
        [want, want]
    per_example = redraft.vmap(redraft.grad(lambda x, j: x[j].sum()))(
        jnp.ones((2, 5)), jnp.asarray([[0, 9], [-9, 2]]))
    assert per_example.tolist() == [[1, 0, 0, 0, 1], [1, 0, 1, 0, 0]]
    assert redraft.grad(lambda x: x.at[10].get())(X).tolist() == [0, 0, 0, 0, 1]
