"""redraft.numpy.searching against NumPy: sort, argsort, searchsorted, nonzero, unique,
quantiles."""
import numpy as np
import pytest
from checks import check

import redraft.numpy as jnp

RNG = np.random.RandomState(1)
X = RNG.randn(3, 4, 5).astype(np.float32)
TIES = RNG.randint(0, 4, size=(4, 6)).astype(np.int32)
NANS = np.array([3.0, np.nan, 1.0, 2.0, np.nan, 1.0], np.float32)
SORTED = np.sort(RNG.randint(0, 10, 20)).astype(np.int32)




CASES = [
    ("sort", lambda m: m.sort(X)),
    ("sort", lambda m: m.sort(X, axis=0)),
    ("sort", lambda m: m.sort(X, axis=None)),
    ("sort", lambda m: m.sort(NANS)),
    ("argsort", lambda m: m.argsort(TIES, kind="stable")),
    ("argsort", lambda m: m.argsort(TIES, axis=0, kind="stable")),
    ("argsort", lambda m: m.argsort(X, axis=None, kind="stable")),
    ("argsort", lambda m: m.argsort(NANS, kind="stable")),
    ("searchsorted", lambda m: m.searchsorted(SORTED, np.arange(-1, 12))),
    ("searchsorted", lambda m: m.searchsorted(SORTED, np.arange(-1, 12), side="right")),
    ("searchsorted", lambda m: m.searchsorted(SORTED, np.int32(4))),
    ("searchsorted", lambda m: m.searchsorted(SORTED, [[2.5, 9.5], [0.0, 100.0]])),
    ("searchsorted", lambda m: m.searchsorted(np.float32([1, 2, np.nan]), [np.nan, 1.5, 3])),
    ("searchsorted", lambda m: m.searchsorted(np.float32([1, 2, np.nan]), [np.nan, 2.0],
                                              side="right")),
    ("searchsorted", lambda m: m.searchsorted(np.int32([]), [1, 2])),
    ("searchsorted", lambda m: m.searchsorted(np.int32([3, 1, 2]), [2], sorter=[1, 2, 0])),
    ("nonzero", lambda m: m.nonzero(TIES)),
    ("nonzero", lambda m: m.nonzero(X > 0.5)),
    ("nonzero", lambda m: m.nonzero(np.zeros(4))),
    ("flatnonzero", lambda m: m.flatnonzero(TIES)),
    ("argwhere", lambda m: m.argwhere(TIES)),
    ("argwhere", lambda m: m.argwhere(np.float32(2.0))),
    ("argwhere", lambda m: m.argwhere(np.float32(0.0))),
    ("count_nonzero", lambda m: m.count_nonzero(TIES)),
    ("count_nonzero", lambda m: m.count_nonzero(TIES, axis=1)),
    ("where", lambda m: m.where(TIES > 1)),
    ("unique", lambda m: m.unique(TIES)),
    ("unique", lambda m: m.unique(NANS)),
    ("unique", lambda m: m.unique(TIES, return_index=True, return_inverse=True,
                                  return_counts=True)),
    ("unique", lambda m: m.unique(NANS, return_index=True, return_inverse=True,
                                  return_counts=True)),
    ("unique", lambda m: m.unique(np.float32([]))),
    ("unique_values", lambda m: getattr(m, "unique_values" if m is jnp else "unique")(TIES)),
    ("unique_counts", lambda m: tuple(m.unique_counts(np.sort(TIES, None)))),
    ("unique_inverse", lambda m: tuple(m.unique_inverse(np.sort(TIES, None)))),
    ("median", lambda m: m.median(X)),
    ("median", lambda m: m.median(X, axis=1)),
    ("median", lambda m: m.median(X, axis=(0, 2), keepdims=True)),
    ("median", lambda m: m.median(TIES)),
    ("median", lambda m: m.median(NANS)),
    ("nanmedian", lambda m: m.nanmedian(NANS)),
    ("quantile", lambda m: m.quantile(X, 0.3)),
    ("quantile", lambda m: m.quantile(X, [0.0, 0.25, 1.0], axis=-1)),
    ("quantile", lambda m: m.quantile(X, np.float32([[0.1], [0.9]]), axis=0, keepdims=True)),
    ("quantile", lambda m: m.quantile(TIES, 0.5, axis=0)),
    ("percentile", lambda m: m.percentile(X, [10, 50, 90], axis=(1, 2))),
    ("nanquantile", lambda m: m.nanquantile(np.stack([NANS, NANS[::-1]]), [0.2, 0.7],
                                            axis=1)),
    ("nanpercentile", lambda m: m.nanpercentile(NANS, 40)),
]


def _as_float32(result):
    """NumPy's float64 quantiles, as the float32 redraft computes."""
    if isinstance(result, tuple):
        return tuple(_as_float32(r) for r in result)
    result = np.asarray(result)
    return result.astype(np.float32) if result.dtype == np.float64 else result


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_numpy(name, fn):
    expected = fn(np)
    if name in ("median", "nanmedian", "quantile", "percentile", "nanquantile",
                "nanpercentile"):
        expected = _as_float32(expected)
    check(fn(jnp), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [None, 0, (0, 2)])
def test_quantile_methods(method, axis):
    q = [0.0, 0.1, 0.5, 0.77, 1.0]
    expected = np.quantile(X, q, axis=axis, method=method).astype(np.float32)
    if method == "nearest":
        # JAX's nearest takes the lower neighbour at a position halfway between two (NumPy
        # rounds the position half to even): NumPy's lower or higher by the fraction
        n = X.size if axis is None else int(np.prod([X.shape[a] for a in np.atleast_1d(axis)]))
        frac = np.asarray(q) * (n - 1) % 1
        lower = np.quantile(X, q, axis=axis, method="lower")
        higher = np.quantile(X, q, axis=axis, method="higher")
        take_lower = (frac <= 0.5).reshape((-1,) + (1,) * (lower.ndim - 1))
        expected = np.where(take_lower, lower, higher).astype(np.float32)
    check(jnp.quantile(X, q, axis=axis, method=method), expected, rtol=1e-5, atol=1e-6)


def test_sort_descending_and_stable_argsort_descending():
    check(jnp.sort(X, axis=1, descending=True), np.sort(X, axis=1)[:, ::-1])
    values = np.int32([2, 1, 2, 3, 1])
    assert jnp.argsort(values, descending=True).tolist() == [3, 0, 2, 1, 4]


def test_methods_on_arrays():
    x = jnp.asarray(TIES)
    check(x.sort(axis=0), np.sort(TIES, axis=0))
    check(x.argsort(kind="stable"), np.argsort(TIES, kind="stable"))
    check(x.nonzero(), np.nonzero(TIES))
    check(jnp.asarray(SORTED).searchsorted(5), np.searchsorted(SORTED, 5))


def test_nonzero_with_static_size_pads_and_truncates():
    rows, cols = jnp.nonzero(np.eye(3), size=5, fill_value=-1)
    assert rows.tolist() == [0, 1, 2, -1, -1] and cols.tolist() == [0, 1, 2, -1, -1]
    rows, cols = jnp.nonzero(np.eye(3), size=2)
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    rows, cols = jnp.nonzero(np.eye(2), size=3, fill_value=(7, 8))
    assert rows.tolist() == [0, 1, 7] and cols.tolist() == [0, 1, 8]
    assert jnp.flatnonzero(np.eye(2), size=3).tolist() == [0, 3, 0]
    assert jnp.argwhere(np.eye(2), size=3, fill_value=9).tolist() == [[0, 0], [1, 1], [9, 9]]


def test_unique_with_static_size():
    out = jnp.unique(np.int32([3, 1, 3, 2]), size=5)
    assert out.tolist() == [1, 2, 3, 1, 1]  # padded with the smallest value, as in JAX
    out = jnp.unique(np.int32([3, 1, 3, 2]), size=5, fill_value=-1)
    assert out.tolist() == [1, 2, 3, -1, -1]
    values, counts = jnp.unique(np.int32([3, 1, 3, 2]), return_counts=True, size=2)
    assert values.tolist() == [1, 2] and counts.tolist() == [1, 1]


def test_unique_all_names_fields():
    result = jnp.unique_all(TIES)
    values, indices, inverse, counts = np.unique(TIES, True, True, True)
    check(result.values, values)
    check(result.indices, indices)
    check(result.inverse_indices, inverse)
    check(result.counts, counts)


def test_quantile_dtypes():
    assert jnp.median(TIES).dtype == np.float32
    assert jnp.quantile(X.astype(np.float16), 0.5).dtype == np.float16


ERRORS = [
    (lambda: jnp.sort(np.float32(1)), ValueError, "0-d"),
    (lambda: jnp.sort(X, axis=3), ValueError, "axis 3 is out of range"),
    (lambda: jnp.sort(X, order="a"), NotImplementedError, "order"),
    (lambda: jnp.argsort(X, axis=-4), ValueError, "axis -4 is out of range"),
    (lambda: jnp.searchsorted(TIES, 1), ValueError, "must be 1-D"),
    (lambda: jnp.searchsorted(SORTED, 1, side="middle"), ValueError, "'left' or 'right'"),
    (lambda: jnp.nonzero(np.float32(1)), ValueError, "0-d"),
    (lambda: jnp.nonzero(TIES, size=-1), ValueError, "non-negative"),
    (lambda: jnp.nonzero(TIES, size=2, fill_value=(1, 2, 3)), ValueError, "fill_value"),
    (lambda: jnp.unique(TIES, axis=2), ValueError, "axis 2 is out of range"),
    (lambda: jnp.quantile(X, 1.5), ValueError, r"range \[0, 1\]"),
    (lambda: jnp.quantile(X, 0.5, method="magic"), ValueError, "method 'magic'"),
    (lambda: jnp.quantile(X, 0.5, axis=5), ValueError, "axis 5 is out of range"),
    (lambda: jnp.median(np.float32([])), ValueError, "empty"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
