"""redraft.numpy.arrays against NumPy: diagonals, triangles, flips, rolls, tiling, splits, pads,
grids, differences, cross products, append/insert/delete, select."""
import numpy as np
import pytest
from checks import check

import redraft.numpy as jnp

RNG = np.random.RandomState(0)
X3 = RNG.randn(2, 3, 4).astype(np.float32)
M = np.arange(12, dtype=np.int32).reshape(3, 4)
V = np.arange(5, dtype=np.float32)




CASES = [
    ("diagonal", lambda m: m.diagonal(X3, 1, 2, 0)),
    ("diagonal", lambda m: m.diagonal(M, -1)),
    ("diagonal", lambda m: m.diagonal(M, 3)),
    ("diagonal", lambda m: m.diagonal(M, 7)),
    ("diag", lambda m: m.diag(V, 2)),
    ("diag", lambda m: m.diag(V, -1)),
    ("diag", lambda m: m.diag(M, 1)),
    ("diagflat", lambda m: m.diagflat(M[:2, :2])),
    ("tril", lambda m: m.tril(X3, 1)),
    ("tril", lambda m: m.tril(M, -1)),
    ("triu", lambda m: m.triu(X3)),
    ("triu", lambda m: m.triu(M, 2)),
    ("flip", lambda m: m.flip(X3)),
    ("flip", lambda m: m.flip(X3, (0, 2))),
    ("fliplr", lambda m: m.fliplr(M)),
    ("flipud", lambda m: m.flipud(M)),
    ("roll", lambda m: m.roll(X3, 5)),
    ("roll", lambda m: m.roll(X3, -2, 1)),
    ("roll", lambda m: m.roll(X3, (1, 3), (0, 2))),
    ("roll", lambda m: m.roll(M, 0, 1)),
    ("rot90", lambda m: m.rot90(M)),
    ("rot90", lambda m: m.rot90(M, 2)),
    ("rot90", lambda m: m.rot90(M, -1)),
    ("rot90", lambda m: m.rot90(X3, 1, (2, 0))),
    ("tile", lambda m: m.tile(V, 2)),
    ("tile", lambda m: m.tile(M, (2, 1, 3))),
    ("tile", lambda m: m.tile(X3, (2, 1))),
    ("repeat", lambda m: m.repeat(M, 2)),
    ("repeat", lambda m: m.repeat(M, 3, axis=0)),
    ("repeat", lambda m: m.repeat(M, [0, 2, 1, 3], axis=1)),
    ("split", lambda m: m.split(X3, 2, axis=2)),
    ("split", lambda m: m.split(X3, [1, 3, 9], axis=-1)),
    ("split", lambda m: m.split(V, [-2, 1])),
    ("array_split", lambda m: m.array_split(np.arange(7), 3)),
    ("array_split", lambda m: m.array_split(M, 5, axis=1)),
    ("hsplit", lambda m: m.hsplit(M, 2)),
    ("hsplit", lambda m: m.hsplit(V, [2])),
    ("vsplit", lambda m: m.vsplit(M, [1])),
    ("dsplit", lambda m: m.dsplit(X3, 2)),
    ("meshgrid", lambda m: m.meshgrid(V, M[0])),
    ("meshgrid", lambda m: m.meshgrid(V, M[0], V[:2], indexing="ij")),
    ("meshgrid", lambda m: m.meshgrid(V, M[0], V[:2], sparse=True)),
    ("diff", lambda m: m.diff(X3)),
    ("diff", lambda m: m.diff(X3, 2, axis=1)),
    ("diff", lambda m: m.diff(M, 0)),
    ("diff", lambda m: m.diff(M, prepend=0, append=[[1], [2], [3]])),
    ("diff", lambda m: m.diff(np.array([True, False, False, True]))),
    ("ediff1d", lambda m: m.ediff1d(M, to_begin=0, to_end=[7, 8])),
    ("cross", lambda m: m.cross(X3[:, :, :3], X3[0, :, 1:])),
    ("cross", lambda m: m.cross(X3[:, :3], X3[::-1, :3], axisa=1, axisb=1, axisc=0)),
    ("append", lambda m: m.append(M, [1, 2])),
    ("append", lambda m: m.append(M, M, axis=0)),
    ("insert", lambda m: m.insert(M, 1, 9, axis=1)),
    ("insert", lambda m: m.insert(M, -1, [5, 6, 7, 8], axis=0)),
    ("insert", lambda m: m.insert(M, 4, 0)),
    ("delete", lambda m: m.delete(M, 1, axis=1)),
    ("delete", lambda m: m.delete(M, [0, 2], axis=0)),
    ("delete", lambda m: m.delete(M, slice(None, None, 3))),
    ("select", lambda m: m.select([V < 2, V > 3], [V, V * V], 42)),
    ("select", lambda m: m.select([M > 5], [M], -1)),
    ("trim_zeros", lambda m: m.trim_zeros(np.array([0, 0, 1, 0, 2, 0]))),
    ("trim_zeros", lambda m: m.trim_zeros(np.array([0, 0, 1, 0, 2, 0]), "b")),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_numpy(name, fn):
    check(fn(jnp), fn(np))


PAD_WIDTHS = [1, (2, 3), ((1, 0), (0, 2), (3, 1)), ((5, 6), (7, 3), (0, 9))]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap",
                                  "maximum", "minimum"])
@pytest.mark.parametrize("width", PAD_WIDTHS, ids=["scalar", "pair", "per-axis", "wide"])
def test_pad_modes(mode, width):
    check(jnp.pad(X3, width, mode), np.pad(X3, width, mode))


def test_pad_constant_values_per_axis_and_dtype():
    values = ((1, 2), (3, 4), (5, 6))
    check(jnp.pad(X3, 2, constant_values=values), np.pad(X3, 2, constant_values=values))
    check(jnp.pad(M, 1, constant_values=2.7), np.pad(M, 1, constant_values=2.7))


def test_roll_dynamic_shift():
    check(jnp.roll(X3, jnp.array(-5), 1), np.roll(X3, -5, 1))


def test_repeat_total_repeat_length():
    out = jnp.repeat(V, jnp.array([1, 0, 2, 1, 1]), total_repeat_length=5)
    check(out, np.repeat(V, [1, 0, 2, 1, 1]))


def test_repeat_total_repeat_length_pads_with_the_last_element():
    assert jnp.repeat(np.int32([1, 2]), 2, total_repeat_length=6).tolist() == [1, 1, 2, 2, 2, 2]
    assert jnp.repeat(np.int32([1, 2]), 2, total_repeat_length=3).tolist() == [1, 1, 2]


def test_methods_on_arrays():
    x = jnp.asarray(X3)
    check(x.diagonal(0, 1, 2), X3.diagonal(0, 1, 2))
    check(x.repeat(2, axis=1), X3.repeat(2, axis=1))
    check(x.trace(), X3.trace())


def test_select_promotes_like_numpy_for_weak_default():
    out = jnp.select([V > 2], [V], 0)
    assert out.dtype == np.float32 and not out.weak_type


def test_trace_uses_diagonal():
    check(jnp.trace(X3, 1, 0, 2), np.trace(X3, 1, 0, 2), rtol=1e-5)


def test_cross_of_2_vectors():
    a, b = np.float32([[1, 2], [3, 4]]), np.float32([[5, 6], [7, 8]])
    check(jnp.cross(a, b), a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0])


ERRORS = [
    (lambda: jnp.diagonal(V), ValueError, "at least two dimensions"),
    (lambda: jnp.diagonal(M, 0, 1, 1), ValueError, "must differ"),
    (lambda: jnp.diagonal(M, 0, 0, 5), ValueError, "axis 5 is out of range"),
    (lambda: jnp.diag(X3), ValueError, "1-D or 2-D"),
    (lambda: jnp.tril(V), ValueError, "at least two dimensions"),
    (lambda: jnp.flip(M, 2), ValueError, "axis 2 is out of range"),
    (lambda: jnp.fliplr(V), ValueError, "at least two dimensions"),
    (lambda: jnp.roll(M, (1, 2), (0, 1, 0)), ValueError, "shifts do not match"),
    (lambda: jnp.rot90(M, 1, (0, 0)), ValueError, "axes must differ"),
    (lambda: jnp.tile(M, -1), ValueError, "non-negative"),
    (lambda: jnp.repeat(M, [1, 2], axis=1), ValueError, "do not match axis 1 of size 4"),
    (lambda: jnp.repeat(M, -1), ValueError, "non-negative"),
    (lambda: jnp.split(V, 2), ValueError, "equal"),
    (lambda: jnp.split(V, 0), ValueError, "larger than 0"),
    (lambda: jnp.vsplit(V, 1), ValueError, "2 or more dimensions"),
    (lambda: jnp.pad(M, 1, "nearest"), ValueError, "mode 'nearest' is not supported"),
    (lambda: jnp.pad(M, -1), ValueError, "non-negative"),
    (lambda: jnp.pad(M, ((1, 2, 3),)), ValueError, "does not fit an array of rank 2"),
    (lambda: jnp.pad(np.zeros((0, 2)), 1, "edge"), ValueError, "empty axis"),
    (lambda: jnp.meshgrid(V, indexing="xyz"), ValueError, "'xy' or 'ij'"),
    (lambda: jnp.diff(V, -1), ValueError, "non-negative"),
    (lambda: jnp.cross(M, M), ValueError, "must be 2 or 3"),
    (lambda: jnp.insert(M, 9, 0, axis=1), IndexError, "out of bounds"),
    (lambda: jnp.delete(M, 7, axis=0), IndexError, "out of bounds"),
    (lambda: jnp.select([V > 1], [V, V]), ValueError, "same length"),
    (lambda: jnp.select([V], [V]), TypeError, "must be boolean"),
    (lambda: jnp.append(M, V, axis=0), TypeError, "differ"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


def _log_diag_total(x):
    return jnp.sum(jnp.log(jnp.diag(x)))


def test_functions_without_a_rule_of_their_own_differentiate_through_their_source():
    """jnp.diag has no rule: grad, jit(grad), vmap and hessian read its source, which takes
    its operand through as_array (identity rules in every transform)."""
    import redraft
    x = jnp.asarray(np.diag(np.array([2.0, 4.0, 0.5], np.float32)) + 0.1)
    expected = np.diag(1.0 / np.diag(np.asarray(x)))
    np.testing.assert_allclose(redraft.grad(_log_diag_total)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(redraft.grad(_log_diag_total))(x), expected,
                               rtol=1e-6)
    assert redraft.vmap(jnp.diag)(jnp.ones((2, 3))).shape == (2, 3, 3)
    assert redraft.hessian(_log_diag_total)(x).shape == (3, 3, 3, 3)


def _running_total(x):
    return jnp.sum(jnp.cumulative_sum(x, include_initial=True) * jnp.arange(1.0, 5.0))


def _nan_extremes(x):
    return jnp.nanmax(x) + 2.0 * jnp.nanmin(x)


def test_library_functions_keep_keyword_only_arguments_and_function_arguments_under_grad():
    """jnp.cumulative_sum(x, include_initial=True) is differentiated with the keyword it was
    given (it had been dropped, a silently wrong gradient), and nanmax's helper, handed
    jnp.max, with it known."""
    import redraft
    x = jnp.asarray(np.array([1.0, 3.0, 2.0], np.float32))
    expected = np.array([2.0 + 3.0 + 4.0, 3.0 + 4.0, 4.0])  # out = [0, x0, x0+x1, x0+x1+x2]
    np.testing.assert_allclose(redraft.grad(_running_total)(x), expected)
    np.testing.assert_allclose(redraft.jit(redraft.grad(_running_total))(x), expected)
    with_nan = jnp.asarray(np.array([1.0, np.nan, 3.0, 2.0], np.float32))
    np.testing.assert_allclose(redraft.grad(_nan_extremes)(with_nan), [2.0, 0.0, 1.0, 0.0])
