"""Array creation against NumPy: values, 32-bit default dtypes, weak types, errors."""
import numpy as np
import pytest
from checks import check

import redraft
import redraft.numpy as jnp

CASES = [
    ("array", lambda m: m.array([[1, 2], [3, 4]])),
    ("array", lambda m: m.array([1.5, 2])),
    ("array", lambda m: m.array([True, False])),
    ("array", lambda m: m.array(np.arange(4, dtype=np.int64))),
    ("array", lambda m: m.array([1, 2], dtype=m.float32)),
    ("array", lambda m: m.array(3, ndmin=2)),
    ("asarray", lambda m: m.asarray([[1.0], [2.0]])),
    ("zeros", lambda m: m.zeros((2, 3))),
    ("zeros", lambda m: m.zeros(4, dtype=m.int32)),
    ("ones", lambda m: m.ones((2, 0))),
    ("ones", lambda m: m.ones(3, dtype=bool)),
    ("full", lambda m: m.full((2, 2), 7)),
    ("full", lambda m: m.full((2, 2), 7.5)),
    ("full", lambda m: m.full((2, 3), [1, 2, 3])),
    ("zeros_like", lambda m: m.zeros_like(np.ones((2, 3), np.int32))),
    ("ones_like", lambda m: m.ones_like(np.ones((2, 3), np.float32), dtype=np.int32)),
    ("full_like", lambda m: m.full_like(np.ones(3, np.float32), 2)),
    ("arange", lambda m: m.arange(5)),
    ("arange", lambda m: m.arange(1, 10, 3)),
    ("arange", lambda m: m.arange(0.5, 3)),
    ("arange", lambda m: m.arange(5, 0, -1)),
    ("arange", lambda m: m.arange(4, dtype=m.float32)),
    ("linspace", lambda m: m.linspace(0, 1, 5)),
    ("linspace", lambda m: m.linspace(0, 1, 4, endpoint=False)),
    ("linspace", lambda m: m.linspace([0, 1], [2, 3], 3, axis=1)),
    ("logspace", lambda m: m.logspace(0, 2, 3)),
    ("eye", lambda m: m.eye(3)),
    ("eye", lambda m: m.eye(2, 4, k=1, dtype=m.int32)),
    ("identity", lambda m: m.identity(3)),
    ("tri", lambda m: m.tri(3, 4, -1)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_numpy(name, fn):
    check(fn(jnp), fn(np))


def test_default_dtypes_are_32_bit():
    assert jnp.zeros(3).dtype == np.float32
    assert jnp.array([1, 2]).dtype == np.int32
    assert jnp.array([1.0, 2.0]).dtype == np.float32
    assert jnp.array(np.float64(1.0)).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32
    assert jnp.linspace(0, 1, 3).dtype == np.float32


def test_arrays_made_from_python_numbers_are_weak_as_in_jax():
    """JAX 0.10.2: jnp.array(1.0), asarray(2) and full((), 3.0) are weakly typed; a dtype,
    a list, a NumPy value or a bool makes a strongly typed array."""
    assert jnp.array(1.0).weak_type and jnp.asarray(2).weak_type
    assert jnp.full((), 3.0).weak_type and jnp.full((2,), 3.0).weak_type
    assert not jnp.array(1.0, dtype=jnp.float32).weak_type
    assert not jnp.array([1.0, 2.0]).weak_type and not jnp.asarray(np.float32(1)).weak_type
    assert not jnp.array(True).weak_type and not jnp.full((), 3.0, jnp.float32).weak_type
    assert (jnp.array(1.0) * jnp.ones(2, jnp.float16)).dtype == np.float16


def test_linspace_retstep():
    values, step = jnp.linspace(0, 1, 5, retstep=True)
    check(values, np.linspace(0, 1, 5))
    assert float(step) == 0.25


def test_array_does_not_alias_numpy_input():
    source = np.arange(3, dtype=np.int32)
    out = jnp.array(source)
    source[0] = 99
    assert out.tolist() == [0, 1, 2]


def test_scalar_type_constructors():
    check(jnp.float32(1.5), np.float32(1.5))
    check(jnp.int32([1, 2]), np.int32([1, 2]))
    assert jnp.zeros(2, dtype=jnp.float32).dtype == np.float32


ERRORS = [
    (lambda: jnp.zeros((2, -1)), ValueError, "negative dimensions"),
    (lambda: jnp.zeros(object()), TypeError, "shape must be an int"),
    (lambda: jnp.zeros(3, dtype="notadtype"), TypeError, "not a valid dtype"),
    (lambda: jnp.array(["a", "b"]), TypeError, "strings"),
    (lambda: jnp.array([[1, 2], [3]]), (TypeError, ValueError), "inhomogeneous|ragged"),
    (lambda: jnp.arange(0, 3, 0), ValueError, "step must not be zero"),
    (lambda: jnp.arange(jnp.ones(2)), TypeError, "scalars"),
    (lambda: jnp.linspace(0, 1, -1), ValueError, "non-negative"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()


def test_string_shape_names_the_problem():
    with pytest.raises(TypeError, match="shape must be an int"):
        jnp.zeros("ab")


# ---- jnp.array of a list whose items are known only when compiled code runs ------------------

def _pair(y, th):
    return jnp.array([y[1], -th * y[0]])


def _nested(y):
    return jnp.array([[y[0], 1.0], [2, y[1]]])


def test_array_of_staged_items_stacks_them_under_jit():
    y = jnp.asarray(np.array([1.0, 3.0], np.float32))
    out = redraft.jit(_pair)(y, 2.0)
    np.testing.assert_allclose(out, [3.0, -2.0])
    assert out.dtype == np.float32 and not out._weak
    nested = redraft.jit(_nested)(y)
    np.testing.assert_allclose(nested, [[1.0, 1.0], [2.0, 3.0]])
    assert nested.dtype == np.float32 and not nested._weak
    ints = redraft.jit(lambda i: jnp.array([i, 2 * i, 7]))(jnp.int32(3))
    assert ints.dtype == np.int32 and ints.tolist() == [3, 6, 7]
    assert redraft.jit(lambda a: jnp.array([a, a], dtype=jnp.int32))(2.7).tolist() == [2, 2]


def test_array_of_staged_items_differentiates_and_batches():
    y = jnp.asarray(np.array([1.0, 3.0], np.float32))
    loss = lambda th, y: jnp.sum(_pair(y, th) ** 2)  # 9 + th^2 → 2 th
    np.testing.assert_allclose(redraft.jit(redraft.grad(loss))(2.0, y), 4.0)
    np.testing.assert_allclose(redraft.jit(redraft.grad(loss, argnums=1))(2.0, y), [8.0, 6.0])
    rows = jnp.asarray(np.array([[1.0, 3.0], [2.0, 5.0]], np.float32))
    np.testing.assert_allclose(redraft.jit(redraft.vmap(_pair, in_axes=(0, None)))(rows, 2.0),
                               [[3.0, -2.0], [5.0, -4.0]])


def test_array_of_a_ragged_staged_list_is_an_error():
    with pytest.raises(ValueError, match="ragged"):
        redraft.jit(lambda y: jnp.array([y, y[0]]))(jnp.ones(2))
