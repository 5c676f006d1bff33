"""Gather and scatter (indexing with integer arrays) lowered by the LLVM backend: the layout
against NumPy's, and compiled results against the interpreter and eager mode, for fixed
cases and for random indices."""
from __future__ import annotations

import numpy as np
import pytest
from backend_util import check

import redraft
import redraft.numpy as jnp
from redraft.compiler.backend.llvm.gather import advanced_layout

X = np.arange(3 * 4 * 5 * 6, dtype=np.float32).reshape(3, 4, 5, 6) * 0.5 - 7.0


def index_of(arrays, desc):
    """The index `desc` describes: ("slice", start, stop, step), ("int", i), ("none",) or
    ("array", k) for arrays[k]."""
    index = []
    for entry in desc:
        if entry[0] == "slice":
            index.append(slice(entry[1], entry[2], entry[3]))
        elif entry[0] == "int":
            index.append(entry[1])
        elif entry[0] == "none":
            index.append(None)
        else:
            index.append(arrays[entry[1]])
    return tuple(index)


def pick(x, arrays, desc):
    return x[index_of(arrays, desc)]


def update(x, arrays, y, desc, mode):
    """x.at[desc].<mode>(y)."""
    index = index_of(arrays, desc)
    if mode == "set":
        return x.at[index].set(y)
    if mode == "add":
        return x.at[index].add(y)
    if mode == "mul":
        return x.at[index].multiply(y)
    if mode == "min":
        return x.at[index].min(y)
    return x.at[index].max(y)


I2 = np.array([2, 0, 1, 2], np.int32)
J = np.array([[0, 3], [-1, 2]], np.int32)

CASES = [
    ((("array", 0),), [I2]),
    ((("slice", 0, 4, 1), ("array", 0)), [np.array([3, -4, 1], np.int64)]),
    ((("array", 0), ("int", 1)), [I2]),
    ((("int", 0), ("slice", 0, 4, 1), ("array", 0)), [J]),          # B first: not adjacent
    ((("slice", 0, 3, 1), ("int", 2), ("array", 0)), [J]),          # adjacent: in place
    ((("array", 0), ("none",), ("array", 1)), [I2, np.array([1], np.int32)]),
    ((("none",), ("array", 0), ("array", 1)), [J, np.array([3, 0], np.int32)]),
    ((("slice", 2, None, -1), ("array", 0), ("slice", 1, 5, 2)), [J]),
    ((("array", 0), ("slice", 0, 4, 1), ("slice", 0, 5, 1), ("array", 1)),
     [I2[:, None], np.array([5, 0, 1], np.uint8)]),
    ((("array", 0),), [np.array([7, -9, 2], np.int32)]),            # clamped reads
]


@pytest.mark.parametrize("desc, arrays", CASES)
def test_layout_matches_numpy(desc, arrays):
    layout = advanced_layout(X.shape, _spec(desc), [a.shape for a in arrays])
    clipped = [np.clip(a, 0, 2) for a in arrays]  # any in-range values give the shape
    assert layout.shape == X[index_of(clipped, desc)].shape


def _spec(desc):
    """`desc` as getitem's spec stores it: slices by slice.indices on their axis."""
    spec, axis = [], 0
    for entry in desc:
        if entry[0] == "slice":
            entry = ("slice",) + slice(*entry[1:]).indices(X.shape[axis])
        spec.append(entry)
        axis += entry[0] != "none"
    return tuple(spec)


@pytest.mark.parametrize("desc, arrays", CASES)
def test_gather(desc, arrays):
    check(pick, X, arrays, desc, static_argnums=(2,))


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("desc, arrays", CASES[:9])
def test_scatter(desc, arrays, mode):
    shape = np.zeros(X.shape)[index_of([np.clip(a, 0, 2) for a in arrays], desc)].shape
    y = np.linspace(-2, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    check(update, X, arrays, y, desc, mode, static_argnums=(3, 4))


def test_scatter_drops_out_of_range_and_repeats_accumulate():
    def f(x, i, v):
        return x.at[i].add(v), x.at[i].set(v), x.at[i].max(v)
    i = np.array([1, 1, -1, 9, -7, 1], np.int32)
    v = np.arange(6, dtype=np.float32)
    check(f, np.zeros(5, np.float32), i, v)


def test_scatter_broadcasts_values_and_integer_arrays():
    def f(x, i):
        return x.at[i, 1:].add(3), x.at[:, i].mul(2)
    check(f, np.arange(20, dtype=np.int32).reshape(4, 5), np.array([0, 3, 0], np.int64))


def test_scatter_with_indices_from_the_updated_array():
    def f(x):
        return x.at[x].add(1), x.at[x[::-1]].set(x)
    check(f, np.array([2, 0, 1, 2, 4], np.int32))


def test_gather_of_bools_and_float64():
    def f(m, d, i):
        return m[i], d[i, ::-1]
    check(f, np.array([True, False, True]), np.arange(12.0).reshape(3, 4), np.array([2, 0]))


def test_cross_entropy_and_embedding_gradients():
    def xent(logits, labels):
        logp = logits - redraft.nn.logsumexp(logits, axis=1, keepdims=True)
        return -jnp.mean(logp[jnp.arange(logits.shape[0]), labels])

    def embed(table, ids):
        return jnp.sum(jnp.tanh(table[ids]) * 0.5)

    rng = np.random.default_rng(0)
    logits = rng.standard_normal((16, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 16).astype(np.int32)
    check(redraft.grad(xent), logits, labels, rtol=1e-5)
    table = rng.standard_normal((50, 8)).astype(np.float32)
    ids = rng.integers(0, 50, (6, 3)).astype(np.int32)
    check(redraft.grad(embed), table, ids, rtol=1e-5)
    check(lambda x, i: jnp.take_along_axis(x, i, axis=1), logits, labels[:, None])


def _random_case(rng):
    """A random index into X: slices, ints, Nones and 1-3 index arrays that broadcast."""
    entries, arrays = [], []
    b_shape = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 3)))
    for axis in range(int(rng.integers(1, X.ndim + 1))):
        if rng.random() < 0.2:
            entries.append(("none",))
        n = X.shape[axis]
        kind = rng.choice(["slice", "int", "array", "array"])
        if kind == "slice":
            start, stop = sorted(int(v) for v in rng.integers(0, n + 1, 2))
            step = int(rng.choice([1, 2, -1]))
            entries.append(("slice", stop, start, step) if step < 0 else
                           ("slice", start, stop, step))
        elif kind == "int":
            entries.append(("int", int(rng.integers(-n, n))))
        else:
            shape = b_shape[int(rng.integers(0, len(b_shape) + 1)):]
            shape = tuple(1 if rng.random() < 0.3 else d for d in shape)
            dtype = rng.choice([np.int32, np.int64, np.int8])
            arrays.append(rng.integers(-n - 1, n + 1, shape).astype(dtype))
            entries.append(("array", len(arrays) - 1))
    if not any(e[0] == "array" and arrays[e[1]].ndim for e in entries):
        arrays.append(rng.integers(0, 3, (2,)).astype(np.int32))
        first = next(k for k, e in enumerate(entries) if e[0] != "none")
        entries[first] = ("array", len(arrays) - 1)
    return tuple(entries), arrays


@pytest.mark.parametrize("seed", range(40))
def test_random_gathers_and_scatters(seed):
    rng = np.random.default_rng(seed)
    desc, arrays = _random_case(rng)
    check(pick, X, arrays, desc, static_argnums=(2,))
    shape = jnp.asarray(X)[index_of([jnp.asarray(a) for a in arrays], desc)].shape
    y = rng.standard_normal(shape[int(rng.integers(0, len(shape) + 1)):]).astype(np.float32)
    check(update, X, arrays, y, desc, str(rng.choice(["set", "add", "min"])),
          static_argnums=(3, 4))
