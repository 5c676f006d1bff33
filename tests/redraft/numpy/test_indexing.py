"""Indexing against NumPy: basic and advanced `x[idx]`, boolean masks, `.at[]` updates,
take/take_along_axis, JAX's clamping of dynamic indices, immutability and index errors."""
from functools import partial

import numpy as np
import pytest
from checks import check as _check

import redraft
import redraft.numpy as jnp

RNG = np.random.RandomState(8)
X = RNG.randn(3, 4, 5).astype(np.float32)
M = np.arange(12, dtype=np.int32).reshape(3, 4)
IDX = np.int32([2, 0, 2])


check = partial(_check, rtol=0, atol=0)


INDICES = [
    1, -1, (0, 2), (0, 2, 4), slice(1, None), slice(2, 0, -1), (slice(None), 1),
    (Ellipsis, 0), (0, Ellipsis, 1), (None, 1), (slice(None), None, slice(1, 3)),
    (slice(None, None, 2), slice(3, 0, -1)), IDX, (IDX, IDX), (slice(None), IDX),
    (IDX, slice(None), IDX), ([0, 1], [1, 2]), (1, [0, 3]), np.array([[0, 1], [2, 0]]),
    (Ellipsis, [4, 0]), X[:, 0, 0] > 0, X > 0, (X[:, :, 0] > 0,), (1, X[1, :, 0] > 0),
    (),
]


@pytest.mark.parametrize("idx", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_getitem_matches_numpy(idx):
    check(jnp.asarray(X)[idx], X[idx])


@pytest.mark.parametrize("idx", [slice(None, None, -1), (slice(None), slice(None, None, -2))])
def test_reversed_slices(idx):
    check(jnp.asarray(X)[idx], X[idx])


def test_dynamic_indices_wrap_and_clamp_like_jax():
    x = jnp.asarray(M[0])
    check(x[jnp.array([-1, 0])], M[0][[-1, 0]])
    check(x[jnp.array([10, -10])], M[0][[3, 0]])  # out of range: clamped into the array


UPDATES = [
    ("set", 1, 0.0), ("set", (slice(None), 2), np.arange(3, dtype=np.float32)[:, None]),
    ("set", (IDX, 1), 9.0), ("add", IDX, 1.0), ("multiply", (0, 1), 3.0),
    ("min", X > 0, 0.5), ("max", (Ellipsis, 0), 0.0), ("divide", 2, 4.0),
    ("power", (0,), 2),
]


def _numpy_update(x, idx, op, value):
    out = x.copy()
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum,
             "divide": np.divide, "power": np.power}
    if op == "set":
        out[idx] = value
    else:
        ufunc[op].at(out, idx, value)
    return out


@pytest.mark.parametrize("op,idx,value", UPDATES, ids=[f"{o}-{i}" for i, (o, *_) in
                                                       enumerate(UPDATES)])
def test_at_updates_match_numpy(op, idx, value):
    x = jnp.asarray(X)
    out = getattr(x.at[idx], op)(value)
    np.testing.assert_allclose(np.asarray(out), _numpy_update(X, idx, op, value), rtol=1e-6)
    assert out.dtype == np.float32
    check(x, X)  # the original is unchanged


def test_at_add_accumulates_repeated_indices_and_drops_out_of_range():
    out = jnp.zeros(4).at[jnp.array([1, 1, 3, 7])].add(1.0)
    assert out.tolist() == [0.0, 2.0, 0.0, 1.0]


def test_at_get():
    check(jnp.asarray(M).at[1, 2].get(), M[1, 2])


def test_take_and_take_along_axis():
    check(jnp.take(X, IDX, axis=1), np.take(X, IDX, axis=1))
    check(jnp.take(M, [5, 0]), np.take(M, [5, 0]))
    order = np.argsort(X, axis=2)
    check(jnp.take_along_axis(X, order, axis=2), np.take_along_axis(X, order, axis=2))
    first = np.zeros((1, 4, 5), np.int32)
    check(jnp.take_along_axis(X, first, axis=0), np.take_along_axis(X, first, axis=0))


def test_setitem_is_refused_and_names_at():
    x = jnp.asarray(M)
    with pytest.raises(TypeError, match=r"immutable.*x\.at\[idx\]\.set\(y\)"):
        x[0] = 10
    check(x, M)


def test_iteration_and_len():
    x = jnp.asarray(M)
    assert len(x) == 3
    for row, expected in zip(x, M):
        check(row, expected)


def test_update_of_empty_axis_drops_values():
    out = jnp.zeros(0).at[jnp.array([1])].set(1.0)
    assert out.shape == (0,)


def test_static_out_of_range_reads_clamp_as_in_jax():
    """JAX clamps every out-of-range read, Python ints included (x[3] of 3 rows is x[2]); the
    gradient goes to the row read, eagerly, compiled and batched."""
    m = jnp.asarray(M)
    np.testing.assert_array_equal(m[3], M[2])
    np.testing.assert_array_equal(m[0, -5], M[0, 0])
    np.testing.assert_array_equal(m[-4, 7], M[0, -1])
    np.testing.assert_array_equal(redraft.jit(lambda a: a[5, 1])(m), M[2, 1])
    x = jnp.arange(3.0)
    expected = np.array([0.0, 0.0, 2.0])
    np.testing.assert_array_equal(redraft.grad(lambda a: 2.0 * a[10])(x), expected)
    np.testing.assert_array_equal(redraft.jit(redraft.grad(lambda a: 2.0 * a[10]))(x), expected)
    np.testing.assert_array_equal(redraft.grad(lambda a: 2.0 * a[-7])(x), expected[::-1])
    batched = redraft.vmap(redraft.grad(lambda a: 2.0 * a[10]))(jnp.ones((2, 3)))
    np.testing.assert_array_equal(batched, [expected, expected])
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros(0)[0]


ERRORS = [
    (lambda: jnp.asarray(M)[0, 0, 0], IndexError, "too many indices"),
    (lambda: jnp.asarray(M)[..., ...], IndexError, "single ellipsis"),
    (lambda: jnp.asarray(M)[np.float32([0.0])], IndexError, "integers or bools"),
    (lambda: jnp.asarray(M)["a"], TypeError, "cannot index"),
    (lambda: jnp.asarray(M)[np.ones((2, 2), bool)], IndexError, "does not match"),
    (lambda: jnp.asarray(M).at[0].set(np.ones(5)), ValueError, r"\(5,\).*\(4,\)"),
    (lambda: jnp.take(M, np.float32([0.0])), TypeError, "must be integers"),
    (lambda: jnp.take_along_axis(M, IDX, axis=0), ValueError, "rank"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


def same(actual, expected):
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


# JAX 0.10.2's values: take's default mode is 'fill' (negatives count from the end once,
# positions out of range read the fill value, and their tangents and cotangents are zero)
def test_take_fills_out_of_range_positions_as_jax():
    a = jnp.arange(5.0)
    same(jnp.take(a, np.array([-1, -5, -6, 4, 5, 7])), [4, 0, np.nan, 4, np.nan, np.nan])
    same(jnp.take(jnp.arange(5), np.array([-1, -6, 5])), [4, -2 ** 31, -2 ** 31])
    same(jnp.take(jnp.arange(5, dtype=jnp.uint8), np.array([5])), [255])
    same(jnp.take(a, np.array([5, 1]), fill_value=-1.0), [-1, 1])
    same(jnp.take(jnp.arange(6.0).reshape(2, 3), np.array([[0, 3]]), axis=1),
          [[[0, np.nan]], [[3, np.nan]]])
    same(jnp.take_along_axis(a, np.array([7, -1]), axis=0), [np.nan, 4])
    same(redraft.jit(lambda a: jnp.take(a, np.array([-1, 9])))(a), [4, np.nan])


def test_take_derivatives_skip_filled_positions():
    a = jnp.arange(5.0)
    same(redraft.grad(lambda a: jnp.sum(jnp.take(a, np.array([1, 7, 1]))))(a), [0, 2, 0, 0, 0])
    _, tangent = redraft.jvp(lambda a: jnp.take(a, np.array([-1, 9])), (a,), (a,))
    same(tangent, [4, 0])
    same(redraft.jacfwd(lambda a: jnp.take(a, np.array([-1, 9])))(a),
          [[0, 0, 0, 0, 1], [0, 0, 0, 0, 0]])
    same(redraft.grad(lambda a: jnp.sum(jnp.take_along_axis(a, np.array([7, -1, 1]), axis=0)))(a),
          [0, 1, 0, 0, 1])
