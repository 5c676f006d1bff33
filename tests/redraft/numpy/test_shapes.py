"""Shape manipulation against NumPy: reshapes, axis moves, broadcasting, joins; errors."""
from functools import partial

import numpy as np
import pytest
from checks import check as _check

import redraft.numpy as jnp

RNG = np.random.RandomState(6)
X = RNG.randn(2, 3, 4).astype(np.float32)
M = np.arange(6, dtype=np.int32).reshape(2, 3)
V = np.arange(3, dtype=np.float32)
S = np.float32(7)


check = partial(_check, rtol=0, atol=0)


CASES = [
    ("reshape", lambda m: m.reshape(X, (4, 6))),
    ("reshape", lambda m: m.reshape(X, (-1, 2))),
    ("reshape", lambda m: m.reshape(X, 24)),
    ("reshape", lambda m: m.reshape(S, (1, 1))),
    ("ravel", lambda m: m.ravel(X)),
    ("transpose", lambda m: m.transpose(X)),
    ("transpose", lambda m: m.transpose(X, (1, 0, 2))),
    ("transpose", lambda m: m.transpose(X, (-1, 0, 1))),
    ("swapaxes", lambda m: m.swapaxes(X, 0, 2)),
    ("moveaxis", lambda m: m.moveaxis(X, 0, -1)),
    ("moveaxis", lambda m: m.moveaxis(X, (0, 1), (2, 0))),
    ("expand_dims", lambda m: m.expand_dims(M, 1)),
    ("expand_dims", lambda m: m.expand_dims(M, (0, -1))),
    ("squeeze", lambda m: m.squeeze(np.ones((1, 3, 1)))),
    ("squeeze", lambda m: m.squeeze(np.ones((1, 3, 1)), axis=2)),
    ("atleast_1d", lambda m: m.atleast_1d(S)),
    ("atleast_2d", lambda m: m.atleast_2d(V)),
    ("atleast_3d", lambda m: m.atleast_3d(M)),
    ("atleast_3d", lambda m: m.atleast_3d(V)),
    ("broadcast_to", lambda m: m.broadcast_to(V, (2, 3))),
    ("broadcast_to", lambda m: m.broadcast_to(S, 4)),
    ("broadcast_arrays", lambda m: m.broadcast_arrays(M, V[:, None][:2], S)),
    ("concatenate", lambda m: m.concatenate([M, M], axis=1)),
    ("concatenate", lambda m: m.concatenate([M, M.astype(np.float32)])),
    ("concatenate", lambda m: m.concatenate([M, X[0]], axis=None)),
    ("stack", lambda m: m.stack([V, V, V])),
    ("stack", lambda m: m.stack([M, M], axis=-1)),
    ("hstack", lambda m: m.hstack([V, V])),
    ("hstack", lambda m: m.hstack([M, M])),
    ("vstack", lambda m: m.vstack([V, V])),
    ("vstack", lambda m: m.vstack([M, V[None]])),
    ("dstack", lambda m: m.dstack([M, M])),
    ("column_stack", lambda m: m.column_stack([V, V])),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_numpy(name, fn):
    check(fn(jnp), fn(np))


def test_shape_queries():
    assert jnp.shape(X) == (2, 3, 4) and jnp.shape([1, 2]) == (2,)
    assert jnp.ndim(M) == 2 and jnp.ndim(3.0) == 0
    assert jnp.size(X) == 24 and jnp.size(X, 1) == 3
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)


def test_methods_and_attributes():
    x = jnp.asarray(X)
    check(x.reshape(6, 4), X.reshape(6, 4))
    check(x.reshape((3, -1)), X.reshape((3, -1)))
    check(x.T, X.T)
    check(x.transpose(2, 0, 1), X.transpose(2, 0, 1))
    check(x.flatten(), X.flatten())
    check(x.squeeze(), X.squeeze())
    check(x.swapaxes(0, 1), X.swapaxes(0, 1))


def test_joins_promote_like_jax():
    out = jnp.concatenate([M, np.float32([[0.5, 0.5, 0.5]])])
    assert out.dtype == np.float32
    assert jnp.stack([1, 2.0]).dtype == np.float32


ERRORS = [
    (lambda: jnp.reshape(X, (5, 5)), TypeError, r"shape \(2, 3, 4\).*\(5, 5\)"),
    (lambda: jnp.reshape(X, (-1, -1)), ValueError, "only infer one dimension"),
    (lambda: jnp.transpose(X, (0, 1)), ValueError, "not a permutation"),
    (lambda: jnp.swapaxes(X, 0, 3), ValueError, "axis 3 is out of range"),
    (lambda: jnp.squeeze(X, 1), ValueError, "cannot squeeze axis 1 of size 3"),
    (lambda: jnp.expand_dims(M, 4), ValueError, "axis 4 is out of range"),
    (lambda: jnp.broadcast_to(V, (2, 4)), ValueError, r"\(3,\).*\(2, 4\)"),
    (lambda: jnp.broadcast_arrays(V, np.ones(4)), ValueError, r"\(3,\).*\(4,\)"),
    (lambda: jnp.concatenate([M, V]), TypeError, "differ"),
    (lambda: jnp.concatenate([]), ValueError, "at least one array"),
    (lambda: jnp.concatenate([S, S]), ValueError, "zero-dimensional"),
    (lambda: jnp.stack([V, V[:2]]), ValueError, "same shape"),
    (lambda: jnp.moveaxis(X, (0, 1), 2), ValueError, "same number of axes"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


def test_lax_slice():
    from redraft import lax
    check(lax.slice(M, (0, 1), (2, 3)), M[0:2, 1:3])
