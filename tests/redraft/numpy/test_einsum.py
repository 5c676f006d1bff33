"""jnp.einsum against numpy.einsum: explicit and implicit outputs, ellipses, diagonals,
traces, several operands, the interleaved form, dtypes and errors."""
import numpy as np
import pytest

import redraft.numpy as jnp

RNG = np.random.RandomState(3)
A = RNG.randn(3, 4).astype(np.float32)
B = RNG.randn(4, 5).astype(np.float32)
C = RNG.randn(5, 3).astype(np.float32)
SQ = RNG.randn(4, 4).astype(np.float32)
V = RNG.randn(4).astype(np.float32)
T = RNG.randn(2, 3, 4).astype(np.float32)
U = RNG.randn(2, 4, 5).astype(np.float32)
W = RNG.randn(1, 3, 4).astype(np.float32)
CUBE = RNG.randn(3, 2, 3).astype(np.float32)

CASES = [
    ("ij,jk->ik", A, B), ("ij,jk", A, B), ("ij,jk,kl->il", A, B, C), ("ij,jk,ki", A, B, C),
    ("ii->i", SQ), ("ii", SQ), ("ij->ji", A), ("ij->", A), ("ij", A), ("ji", A),
    ("i,i", V, V), ("i,j->ij", V, V), ("i,i,i->", V, V, V), ("bij,bjk->bik", T, U),
    ("...ij,...jk->...ik", T, U), ("...ij,...jk", W, U), ("...j,j->...", T, V),
    ("ij...->...", T), ("iji->ij", CUBE), ("iji->j", CUBE),
    ("...ii->...i", CUBE.transpose(1, 0, 2)),
    ("ij,ij->ij", A, A), ("ij,kl->ijkl", A, A), (" i j , j k -> i k ", A, B),
    ("ab,bc->", A, B), ("ab,cd->", A, A), ("Ab,bc->cA", A, B), ("i->", V),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0].replace(" ", "_") for c in CASES])
def test_matches_numpy(case):
    subscripts, *operands = case
    out = jnp.einsum(subscripts, *operands)
    expected = np.einsum(subscripts, *operands)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-5)


def test_interleaved_sublists():
    np.testing.assert_allclose(np.asarray(jnp.einsum(A, [0, 1], B, [1, 2], [2, 0])),
                               np.einsum(A, [0, 1], B, [1, 2], [2, 0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.einsum(T, [Ellipsis, 1], V, [1])),
                               np.einsum(T, [Ellipsis, 1], V, [1]), rtol=1e-5, atol=1e-5)


def test_dtypes_promote_and_stay_integer():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = jnp.einsum("ij,jk->ik", ints, ints.T)
    assert out.dtype == np.int32 and out.tolist() == np.einsum("ij,jk->ik", ints, ints.T).tolist()
    assert jnp.einsum("ij,jk->ik", ints, np.ones((3, 2), np.float32)).dtype == np.float32
    flags = np.array([[True, False], [False, False]])
    assert jnp.einsum("ij,jk->ik", flags, flags).tolist() == np.einsum("ij,jk->ik", flags,
                                                                      flags).tolist()


def test_preferred_element_type():
    ints = np.arange(4, dtype=np.int8)
    assert jnp.einsum("i,i", ints, ints, preferred_element_type=np.int32).dtype == np.int32


ERRORS = [
    (lambda: jnp.einsum("ij,jk->ik", A, A), "label 'j' has size 4 in one operand and 3"),
    (lambda: jnp.einsum("ij->ik", A), "output label 'k' does not appear"),
    (lambda: jnp.einsum("ijk", A), "rank 2 but its subscripts 'ijk' name 3"),
    (lambda: jnp.einsum("ij,jk", A), "name 2 operands, but 1 were given"),
    (lambda: jnp.einsum("i2", A), "invalid subscript '2'"),
    (lambda: jnp.einsum("ij->ii", A), "repeat a label"),
    (lambda: jnp.einsum("i->i->i", V), "more than one '->'"),
    (lambda: jnp.einsum("......", V), "more than one ellipsis"),
    (lambda: jnp.einsum("...i,...i", T, np.ones((3, 4), np.float32)[None, :2]),
     "ellipsis dimension has size 3 in one operand and 2"),
]


@pytest.mark.parametrize("fn,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, message):
    with pytest.raises(ValueError, match=message):
        fn()
