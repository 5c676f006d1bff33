"""lax.gather and the lax.scatter family against element-by-element loops over XLA's rules."""
import numpy as np
import pytest

import redraft.lax as lax
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.gather import (GatherDimensionNumbers, GatherScatterMode,
                                                ScatterDimensionNumbers, gather_p,
                                                scatter_add_p)

CLIP, FILL, PROMISE = (GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP,
                       GatherScatterMode.PROMISE_IN_BOUNDS)


# ---- references: one element at a time -------------------------------------------------------

def _start(operand_shape, index_vector, batch_pos, index_map, operand_batching,
           indices_batching):
    start = [0] * len(operand_shape)
    for k, axis in enumerate(index_map):
        start[axis] = int(index_vector[k])
    for axis, batch_axis in zip(operand_batching, indices_batching):
        start[axis] = batch_pos[batch_axis]
    return start


def _fits(start, operand_shape, window):
    return all(0 <= s <= n - w for s, n, w in zip(start, operand_shape, window))


def _clamp(start, operand_shape, window):
    return [min(max(s, 0), n - w) for s, n, w in zip(start, operand_shape, window)]


def reference_gather(operand, indices, dn, slice_sizes, mode, fill):
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    batch_axes = [d for d in range(out_rank) if d not in dn.offset_dims]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window_axes = [d for d in range(operand.ndim) if d not in dropped]
    shape = [0] * out_rank
    for axis, size in zip(batch_axes, indices.shape[:-1]):
        shape[axis] = size
    for axis, operand_axis in zip(dn.offset_dims, window_axes):
        shape[axis] = slice_sizes[operand_axis]
    out = np.zeros(shape, operand.dtype)
    for pos in np.ndindex(*shape):
        batch = tuple(pos[d] for d in batch_axes)
        start = _start(operand.shape, indices[batch], batch, dn.start_index_map,
                       dn.operand_batching_dims, dn.start_indices_batching_dims)
        if mode is FILL and not _fits(start, operand.shape, slice_sizes):
            out[pos] = fill
            continue
        element = _clamp(start, operand.shape, slice_sizes)
        for offset_axis, operand_axis in zip(dn.offset_dims, window_axes):
            element[operand_axis] += pos[offset_axis]
        out[pos] = operand[tuple(element)]
    return out


COMBINE = {"scatter": lambda old, new: new, "scatter_add": np.add,
           "scatter_mul": np.multiply, "scatter_min": np.minimum, "scatter_max": np.maximum}


def reference_scatter(name, operand, indices, updates, dn, mode):
    out = operand.copy()
    scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    absent = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_axes = [d for d in range(operand.ndim) if d not in absent]
    window = [1] * operand.ndim
    for operand_axis, update_axis in zip(window_axes, dn.update_window_dims):
        window[operand_axis] = updates.shape[update_axis]
    for pos in np.ndindex(*updates.shape):
        batch = tuple(pos[d] for d in scatter_axes)
        start = _start(operand.shape, indices[batch], batch, dn.scatter_dims_to_operand_dims,
                       dn.operand_batching_dims, dn.scatter_indices_batching_dims)
        if mode is CLIP:
            start = _clamp(start, operand.shape, window)
        elif not _fits(start, operand.shape, window):
            continue
        for operand_axis, update_axis in zip(window_axes, dn.update_window_dims):
            start[operand_axis] += pos[update_axis]
        out[tuple(start)] = COMBINE[name](out[tuple(start)], updates[pos])
    return out


# ---- random dimension numbers ----------------------------------------------------------------

def random_case(seed):
    """A random valid gather (operand, indices, dn, slice_sizes) and its result shape."""
    rng = np.random.RandomState(seed)
    rank = rng.randint(1, 4)
    shape = tuple(rng.randint(1, 5, rank))
    axes = list(rng.permutation(rank))
    operand_batching = sorted(axes[:1]) if rank > 1 and rng.rand() < 0.3 else []
    free = [a for a in axes if a not in operand_batching]
    index_map = [int(a) for a in free[:rng.randint(0, len(free) + 1)]]
    collapsed = sorted(int(a) for a in index_map if rng.rand() < 0.6)
    slice_sizes = [1 if a in collapsed or a in operand_batching else
                   int(rng.randint(0 if rng.rand() < 0.1 else 1, shape[a] + 1))
                   for a in range(rank)]
    batch = list(rng.randint(1, 4, rng.randint(0, 3)))
    indices_batching = []
    if operand_batching:
        where = rng.randint(0, len(batch) + 1)
        batch.insert(where, shape[operand_batching[0]])
        indices_batching = [where]
    indices = rng.randint(-2, max(shape) + 2, tuple(batch) + (len(index_map),))
    n_offsets = rank - len(collapsed) - len(operand_batching)
    out_rank = n_offsets + len(batch)
    offset_dims = sorted(int(d) for d in rng.permutation(out_rank)[:n_offsets])
    dn = GatherDimensionNumbers(tuple(offset_dims), tuple(collapsed), tuple(index_map),
                                tuple(int(a) for a in operand_batching),
                                tuple(indices_batching))
    operand = rng.randint(-50, 50, shape).astype(np.float32)
    return operand, indices.astype(np.int32), dn, tuple(slice_sizes)


def as_scatter(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                   dn.operand_batching_dims, dn.start_indices_batching_dims)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("mode", [CLIP, FILL, PROMISE])
def test_gather_matches_reference(seed, mode):
    operand, indices, dn, sizes = random_case(seed)
    out = lax.gather(operand, indices, dn, sizes, mode=mode, fill_value=-7.0)
    expected = reference_gather(operand, indices, dn, sizes, mode, -7.0)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("name", ["scatter_add", "scatter_mul", "scatter_min", "scatter_max"])
def test_scatter_matches_reference(seed, name):
    operand, indices, dn, sizes = random_case(seed)
    mode = [CLIP, FILL, PROMISE][seed % 3]
    updates_shape = reference_gather(operand, indices, dn, sizes, CLIP, 0).shape
    updates = np.random.RandomState(seed).randint(-3, 4, updates_shape).astype(np.float32)
    out = getattr(lax, name)(operand, indices, updates, as_scatter(dn), mode=mode)
    expected = reference_scatter(name, operand, indices, updates, as_scatter(dn), mode)
    assert out.dtype == np.float32 and out.shape == operand.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_scatter_set_matches_reference_with_unique_windows():
    operand = np.zeros((5, 4), np.float32)
    indices = np.array([[3], [0], [9], [-1]], np.int32)
    updates = np.arange(16, dtype=np.float32).reshape(4, 4)
    dn = ScatterDimensionNumbers((1,), (0,), (0,))
    for mode in (CLIP, FILL):
        if mode is CLIP:
            indices = np.array([[3], [0], [9], [1]], np.int32)
        out = lax.scatter(operand, indices, updates, dn, mode=mode)
        expected = reference_scatter("scatter", operand, indices, updates, dn, mode)
        np.testing.assert_array_equal(np.asarray(out), expected)


# ---- the common forms, spelled out ---------------------------------------------------------

def test_gather_elements_and_rows():
    x = np.arange(10., 15., dtype=np.float32)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    out = lax.gather(x, np.array([[0], [2], [4]]), dn, (1,))
    np.testing.assert_array_equal(np.asarray(out), [10, 12, 14])
    m = np.arange(12, dtype=np.int32).reshape(4, 3)
    rows = lax.gather(m, np.array([[3], [1]]), GatherDimensionNumbers((1,), (0,), (0,)), (1, 3))
    np.testing.assert_array_equal(np.asarray(rows), m[[3, 1]])


def test_gather_out_of_bounds_modes():
    x = np.arange(5, dtype=np.float32)
    dn = GatherDimensionNumbers((), (0,), (0,))
    idx = np.array([[-1], [2], [7]])
    np.testing.assert_array_equal(np.asarray(lax.gather(x, idx, dn, (1,))), [0, 2, 4])
    np.testing.assert_array_equal(np.asarray(lax.gather(x, idx, dn, (1,), mode="clip")),
                                  [0, 2, 4])
    filled = np.asarray(lax.gather(x, idx, dn, (1,), mode="fill"))
    assert np.isnan(filled[0]) and filled[1] == 2 and np.isnan(filled[2])
    ints = lax.gather(x.astype(np.int32), idx, dn, (1,), mode="fill")
    assert np.asarray(ints).tolist() == [np.iinfo(np.int32).min, 2, np.iinfo(np.int32).min]


def test_gather_window_partly_out_of_bounds_is_filled_whole():
    x = np.arange(6, dtype=np.float32)
    out = lax.gather(x, np.array([[4]]), GatherDimensionNumbers((1,), (), (0,)), (3,),
                     mode="fill", fill_value=-1)
    np.testing.assert_array_equal(np.asarray(out), [[-1, -1, -1]])


def test_gather_batching_dims_is_take_along_axis():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    idx = np.array([[[4], [0]], [[1], [1]]], np.int32)  # (batch 2, 2 picks, vector 1)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out = lax.gather(x, idx, dn, (1, 1))
    np.testing.assert_array_equal(np.asarray(out), np.take_along_axis(x, idx[..., 0], 1))


def test_scatter_add_accumulates_duplicates_and_drops_out_of_bounds():
    dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
    idx = np.array([[0], [0], [1], [5], [-1]])
    ones = np.ones(5, np.float32)
    out = lax.scatter_add(np.zeros(3, np.float32), idx, ones, dn)
    np.testing.assert_array_equal(np.asarray(out), [2, 1, 0])
    clipped = lax.scatter_add(np.zeros(3, np.float32), idx, ones, dn, mode="clip")
    np.testing.assert_array_equal(np.asarray(clipped), [3, 1, 1])


def test_scatter_leaves_its_operand_alone():
    operand = np.zeros(3, np.float32)
    dn = ScatterDimensionNumbers((), (0,), (0,))
    lax.scatter(operand, np.array([[1]]), np.array([5.], np.float32), dn)
    assert operand.tolist() == [0, 0, 0]


def test_scatter_takes_python_scalar_updates_in_the_operand_dtype():
    dn = ScatterDimensionNumbers((), (0,), (0,))
    out = lax.scatter(np.zeros(3, np.float32), np.array([1]), 2.0, dn)
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [0, 2, 0]


# ---- abstract evaluation and errors -------------------------------------------------------

@pytest.mark.parametrize("seed", range(10))
def test_abstract_eval_matches_impl(seed):
    operand, indices, dn, sizes = random_case(seed)
    params = dict(dimension_numbers=dn, slice_sizes=sizes, mode=CLIP, fill_value=None)
    aval = abstract_eval_rules[gather_p](ShapedArray(operand.shape, operand.dtype),
                                         ShapedArray(indices.shape, indices.dtype), **params)
    out = lax.gather(operand, indices, dn, sizes, mode=CLIP)
    assert (aval.shape, aval.dtype, aval.weak_type) == (out.shape, out.dtype, out.weak_type)
    updates = np.zeros(out.shape, np.float32)
    aval = abstract_eval_rules[scatter_add_p](
        ShapedArray(operand.shape, operand.dtype), ShapedArray(indices.shape, indices.dtype),
        ShapedArray(updates.shape, updates.dtype), dimension_numbers=as_scatter(dn), mode=CLIP)
    out = lax.scatter_add(operand, indices, updates, as_scatter(dn), mode=CLIP)
    assert (aval.shape, aval.dtype, aval.weak_type) == (out.shape, out.dtype, out.weak_type)


X = np.zeros((4, 3), np.float32)
ROWS = GatherDimensionNumbers((1,), (0,), (0,))
ROW_UPDATES = ScatterDimensionNumbers((1,), (0,), (0,))
IDX = np.array([[1], [2]], np.int32)


@pytest.mark.parametrize("call,error,words", [
    (lambda: lax.gather(X, IDX.astype(np.float32), ROWS, (1, 3)), TypeError,
     "indices must be integers"),
    (lambda: lax.gather(X, np.int32(1), ROWS, (1, 3)), TypeError, "index vector"),
    (lambda: lax.gather(X, IDX, ROWS, (1, 4)), TypeError, "slice size 4 of axis 1"),
    (lambda: lax.gather(X, IDX, ROWS, (2, 3)), TypeError, "collapsed axis 0 needs slice size 1"),
    (lambda: lax.gather(X, IDX, ROWS, (1, 3, 1)), TypeError, "slice_sizes"),
    (lambda: lax.gather(X, IDX, GatherDimensionNumbers((1, 0), (), (0,)), (1, 3)), TypeError,
     "offset_dims .* ascending"),
    (lambda: lax.gather(X, IDX, GatherDimensionNumbers((1,), (0,), (0, 1)), (1, 3)),
     TypeError, "index vectors of length 1"),
    (lambda: lax.gather(X, IDX, ROWS, (1, 3), mode="wrap"), ValueError, "unknown"),
    (lambda: lax.gather(X, IDX, ((1,), (0,), (0,)), (1, 3)), TypeError,
     "GatherDimensionNumbers"),
    (lambda: lax.scatter_add(X, IDX, np.ones((2, 3), np.int32), ROW_UPDATES), TypeError,
     "same dtype"),
    (lambda: lax.scatter(X, IDX, np.ones((3, 3), np.float32), ROW_UPDATES), TypeError,
     r"sizes \(3,\), but the indices of shape \(2, 1\)"),
    (lambda: lax.scatter(X, IDX, np.ones((2, 5), np.float32), ROW_UPDATES), TypeError,
     "do not fit"),
    (lambda: lax.scatter(X, IDX, np.ones((2,), np.float32), ROW_UPDATES), TypeError,
     "need rank 2"),
    (lambda: lax.gather(X, np.zeros((4, 2, 1), np.int32), GatherDimensionNumbers(
        (1,), (0,), (1,), (0,), (0,)), (1, 1)), TypeError, "disjoint"),
    (lambda: lax.gather(X, np.zeros((3, 1), np.int32), GatherDimensionNumbers(
        (1,), (), (1,), (0,), (0,)), (1, 1)), TypeError, r"sizes \(4,\) but the indices"),
])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call()
