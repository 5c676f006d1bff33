"""The runtime helpers a batched Jacobian calls (compiler/transforms/runtime/ad.py):
standard_basis, jacobian_from_columns / jacobian_from_rows and their transposes, against
the loop's own helpers (ad.basis, ad.stack_jacobian), each other, and per-example runs
where vmaps around them add batch axes (`leads`)."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.compiler.transforms.runtime import ad
from redraft.runtime.pytree import tree_flatten, tree_map

X = {"w": jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)),
     "b": (jnp.asarray(np.float32(2.0)), jnp.asarray(np.array([1, 2], np.int32)))}
OUT = [jnp.zeros((2,)), {"s": jnp.zeros(())}]


def leaves(tree):
    return [np.asarray(v) for v in tree_flatten(tree)[0]]


def test_standard_basis_rows_are_the_loops_basis_vectors():
    basis = ad.standard_basis(X)
    n = ad.size(X)
    assert n == 9
    for i in range(n):
        row = tree_map(lambda leaf, i=i: leaf[i], basis)
        for got, want in zip(leaves(row), leaves(ad.basis(X, i))):
            np.testing.assert_array_equal(got, want)
    assert [v.dtype for v in tree_flatten(basis)[0]] == [np.float32] * 3  # int: float32
    single = ad.standard_basis(jnp.ones((2, 2)))
    np.testing.assert_array_equal(single, np.eye(4).reshape(4, 2, 2))


def _random_rows(like, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return tree_map(lambda v: jnp.asarray(rng.standard_normal((n,) + np.shape(v))
                                          .astype(np.float32)), like)


def test_columns_and_rows_match_stack_jacobian():
    n_x, n_out = ad.size(X), ad.size(OUT)
    columns = _random_rows(OUT, n_x, 0)  # one output-shaped tangent per input element
    pieces = [tree_map(lambda c, i=i: c[i], columns) for i in range(n_x)]
    want = ad.stack_jacobian(pieces, OUT, X, rows_first=False)
    got = ad.jacobian_from_columns(columns, OUT, X)
    assert tree_flatten(got)[1] == tree_flatten(want)[1]
    for g, w in zip(leaves(got), leaves(want)):
        np.testing.assert_array_equal(g, w)
    rows = _random_rows(X, n_out, 1)  # one input-shaped cotangent per output element
    pieces = [tree_map(lambda r, i=i: r[i], rows) for i in range(n_out)]
    want = ad.stack_jacobian(pieces, OUT, X, rows_first=True)
    for g, w in zip(leaves(ad.jacobian_from_rows(rows, OUT, X)), leaves(want)):
        np.testing.assert_array_equal(g, w)


def test_the_transposes_undo_and_adjoin():
    columns = _random_rows(OUT, ad.size(X), 2)
    back = ad.columns_of_jacobian(ad.jacobian_from_columns(columns, OUT, X), OUT, X)
    for g, w in zip(leaves(back), leaves(columns)):
        np.testing.assert_array_equal(g, w)
    rows = _random_rows(X, ad.size(OUT), 3)
    back = ad.rows_of_jacobian(ad.jacobian_from_rows(rows, OUT, X), OUT, X)
    for g, w in zip(leaves(back), leaves(rows)):
        np.testing.assert_array_equal(g, w)


def test_derivatives_through_the_helpers_are_their_transposes():
    rows = _random_rows(X, ad.size(OUT), 4)
    weights = _random_rows(ad.jacobian_from_rows(rows, OUT, X), 1, 5)

    def score(r):
        jac = ad.jacobian_from_rows(r, OUT, X)
        return sum(jnp.sum(j * w[0]) for j, w in zip(tree_flatten(jac)[0],
                                                      tree_flatten(weights)[0]))
    grads = redraft.grad(score)(rows)
    want = ad.rows_of_jacobian(tree_map(lambda w: w[0], weights), OUT, X)
    for g, w in zip(leaves(grads), leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_leads_treat_leading_axes_as_examples():
    k = 3
    batched = lambda tree: tree_map(lambda v: jnp.stack([v] * k), tree)  # noqa: E731
    columns = _random_rows(batched(_random_rows(OUT, ad.size(X), 6)), 1, 7)
    columns = tree_map(lambda c: c[0], columns)  # (k, n, ...) per leaf
    got = ad.jacobian_from_columns(columns, batched(OUT), X, (1, 1, 0))
    for e in range(k):
        one = ad.jacobian_from_columns(tree_map(lambda c, e=e: c[e], columns), OUT, X)
        for g, w in zip(leaves(got), leaves(one)):
            np.testing.assert_array_equal(g[e], w)
    assert ad.size(batched(X), 1) == ad.size(X)
    for g, w in zip(leaves(ad.standard_basis(batched(X), 1)), leaves(ad.standard_basis(X))):
        np.testing.assert_array_equal(g, w)
