"""Products against NumPy: dot, matmul (and @), vdot, vecdot, inner, outer, tensordot,
trace, kron; dtypes and shape errors."""
from functools import partial

import numpy as np
import pytest
from checks import check as _check

import redraft.numpy as jnp

RNG = np.random.RandomState(7)
A = RNG.randn(3, 4).astype(np.float32)
B = RNG.randn(4, 5).astype(np.float32)
V4 = RNG.randn(4).astype(np.float32)
V3 = RNG.randn(3).astype(np.float32)
T = RNG.randn(2, 3, 4).astype(np.float32)
U = RNG.randn(2, 4, 5).astype(np.float32)
W = RNG.randn(4, 5).astype(np.float32)
INTS = RNG.randint(-3, 4, size=(3, 4)).astype(np.int32)


check = partial(_check, rtol=1e-05, atol=1e-05)


CASES = [
    ("dot", lambda m: m.dot(A, B)), ("dot", lambda m: m.dot(A, V4)),
    ("dot", lambda m: m.dot(V4, V4)), ("dot", lambda m: m.dot(T, B)),
    ("dot", lambda m: m.dot(2.0, A)), ("dot", lambda m: m.dot(INTS, INTS.T)),
    ("matmul", lambda m: m.matmul(A, B)), ("matmul", lambda m: m.matmul(T, U)),
    ("matmul", lambda m: m.matmul(T, W)), ("matmul", lambda m: m.matmul(V3, T)),
    ("matmul", lambda m: m.matmul(T, V4)), ("matmul", lambda m: m.matmul(V4, V4)),
    ("matmul", lambda m: m.matmul(INTS, A.T)),
    ("vdot", lambda m: m.vdot(A, A)), ("vecdot", lambda m: m.vecdot(T, V4)),
    ("inner", lambda m: m.inner(A, A)), ("inner", lambda m: m.inner(V4, V4)),
    ("outer", lambda m: m.outer(V3, V4)), ("outer", lambda m: m.outer(A, V3)),
    ("tensordot", lambda m: m.tensordot(T, U, axes=([0, 2], [0, 1]))),
    ("tensordot", lambda m: m.tensordot(A, B, axes=1)),
    ("tensordot", lambda m: m.tensordot(T, T, axes=3)),
    ("trace", lambda m: m.trace(A)), ("trace", lambda m: m.trace(A, 1)),
    ("trace", lambda m: m.trace(T, -1, 1, 2)), ("trace", lambda m: m.trace(INTS)),
    ("kron", lambda m: m.kron(A[:2, :2], INTS[:2, :3])), ("kron", lambda m: m.kron(V3, V4)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_numpy(name, fn):
    check(fn(jnp), fn(np))


def test_matmul_operator():
    check(jnp.asarray(A) @ B, A @ B)
    check(A @ jnp.asarray(B), A @ B)
    check(jnp.asarray(A).dot(B), A.dot(B))


def test_preferred_element_type():
    ints = np.int8([[1, 2], [3, 4]])
    assert jnp.matmul(ints, ints, preferred_element_type=jnp.int32).dtype == np.int32


ERRORS = [
    (lambda: jnp.dot(A, A), ValueError, r"\(3, 4\) and \(3, 4\) are not aligned"),
    (lambda: jnp.matmul(A, A), ValueError, r"\(3, 4\) and \(3, 4\)"),
    (lambda: jnp.matmul(A, 2.0), ValueError, "at least 1-dimensional"),
    (lambda: jnp.vdot(A, V4), ValueError, "sizes 12 and 4"),
    (lambda: jnp.tensordot(A, B, axes=3), ValueError, "axes=3"),
    (lambda: jnp.tensordot(A, B, axes=([0], [0])), TypeError, "disagree"),
    (lambda: jnp.trace(V4), ValueError, "at least two dimensions"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
