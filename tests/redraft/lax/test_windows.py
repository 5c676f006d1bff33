"""reduce_window, reduce, reduce_xor and the window and convolution shape helpers
(redraft/lax/windows.py) against NumPy loops, with derivatives, jit and vmap."""
import itertools

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads

RNG = np.random.default_rng(1)
X = RNG.normal(size=(2, 5, 6)).astype(np.float32)


def _reference_window(x, init, op, window, strides, pads, base=None, dilation=None):
    """A direct loop over windows of the padded, base-dilated operand."""
    base = base or (1,) * x.ndim
    dilation = dilation or (1,) * x.ndim
    shape = [(d - 1) * b + 1 if d else 0 for d, b in zip(x.shape, base)]
    spread = np.full(shape, init, x.dtype)
    spread[tuple(slice(None, None, b) for b in base)] = x
    padded = np.pad(spread, pads, constant_values=init)
    eff = [(w - 1) * r + 1 for w, r in zip(window, dilation)]
    out_shape = [(p - e) // s + 1 for p, e, s in zip(padded.shape, eff, strides)]
    out = np.full(out_shape, init, x.dtype)
    for index in itertools.product(*map(range, out_shape)):
        for offset in itertools.product(*map(range, window)):
            at = tuple(i * s + o * r for i, s, o, r in zip(index, strides, offset, dilation))
            out[index] = op(out[index], padded[at])
    return out


@pytest.mark.parametrize("window,strides,padding,base,dilation", [
    ((1, 2, 2), (1, 2, 2), "VALID", None, None),
    ((1, 3, 3), (1, 1, 1), "SAME", None, None),
    ((1, 3, 2), (1, 2, 1), ((0, 0), (1, 2), (0, 1)), (1, 2, 1), (1, 1, 2)),
])
def test_reduce_window_matches_loop(window, strides, padding, base, dilation):
    x = jnp.asarray(X)
    got_max = lax.reduce_window(x, -np.inf, lax.max, window, strides, padding, base, dilation)
    pads = (padding if not isinstance(padding, str) else
            lax.padtype_to_pads(X.shape, window, strides, padding))
    want = _reference_window(X, -np.inf, np.maximum, window, strides, pads, base, dilation)
    np.testing.assert_array_equal(got_max, want)
    got_sum = lax.reduce_window(x, 0.0, jnp.add, window, strides, padding, base, dilation)
    want = _reference_window(X, 0.0, np.add, window, strides, pads, base, dilation)
    np.testing.assert_allclose(got_sum, want, rtol=1e-5, atol=1e-6)
    assert got_sum.shape == lax.reduce_window_shape_tuple(X.shape, window, strides, pads,
                                                          base, dilation)


def test_reduce_window_on_integers_and_errors():
    x = jnp.arange(12, dtype=jnp.int32).reshape(3, 4)
    got = lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "VALID")
    want = _reference_window(np.arange(12, dtype=np.int32).reshape(3, 4), 0, np.add, (2, 2),
                             (1, 1), ((0, 0), (0, 0)))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    with pytest.raises(TypeError):
        lax.reduce_window(x, 0, lambda a, b: a + b, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError):
        lax.reduce_window(x, 0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError):
        lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "FULL")


def test_reduce_and_reduce_xor_match_numpy():
    x = jnp.asarray(X)
    np.testing.assert_allclose(lax.reduce(x, 0.0, lax.add, (1,)), X.sum(1), rtol=1e-5)
    np.testing.assert_allclose(lax.reduce(x, 1.0, jnp.multiply, (1, 2)), X.prod((1, 2)),
                               rtol=1e-4)
    np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, (0, 2)), X.max((0, 2)))
    ints = RNG.integers(0, 1000, size=(4, 7)).astype(np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(jnp.asarray(ints), (1,)),
                                  np.bitwise_xor.reduce(ints, axis=1))
    np.testing.assert_array_equal(lax.reduce_xor(jnp.asarray(ints > 500), (0, 1)),
                                  np.bitwise_xor.reduce((ints > 500).ravel()))
    np.testing.assert_array_equal(lax.reduce(jnp.asarray(ints), 0, lax.bitwise_or, (0,)),
                                  np.bitwise_or.reduce(ints, axis=0))
    assert lax.reduce(jnp.zeros((0, 3)), 0.0, lax.add, (0,)).shape == (3,)


def test_conv_shape_helpers():
    assert lax.conv_general_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (2, 2), "SAME",
                                        ("NHWC", "HWIO", "NHWC")) == (1, 3, 3, 8)
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (2, 2), "VALID") == (2, 4, 4, 4)
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (1, 1), ((1, 1), (0, 0))) == (
        2, 4, 9, 7)
    assert lax.conv_transpose_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (2, 2), "SAME",
                                          ("NHWC", "HWIO", "NHWC")) == (1, 10, 10, 8)
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == (
        (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    lhs = jnp.asarray(RNG.normal(size=(1, 6, 6, 3)).astype(np.float32))
    rhs = jnp.asarray(RNG.normal(size=(3, 3, 3, 4)).astype(np.float32))
    dn = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_general_dilated(lhs, rhs, (2, 2), "SAME", dimension_numbers=dn)
    assert out.shape == lax.conv_general_shape_tuple(lhs.shape, rhs.shape, (2, 2), "SAME", dn)
    out = lax.conv_transpose(lhs, rhs, (2, 2), "SAME", dimension_numbers=dn)
    assert out.shape == lax.conv_transpose_shape_tuple(lhs.shape, rhs.shape, (2, 2), "SAME",
                                                       dn)


def _pooling(x):
    a = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "SAME")
    b = lax.reduce_window(x, 0.0, lax.add, (1, 3, 2), (1, 1, 2), ((0, 0), (1, 1), (0, 1)),
                          (1, 2, 1), (1, 1, 2))
    c = lax.reduce(x, 1.0, lax.mul, (2,))
    return jnp.sum(a * a) + jnp.sum(jnp.sin(b)) + jnp.sum(c)


def test_derivatives_to_order_two():
    check_grads(_pooling, (X,), 2, atol=3e-2, rtol=3e-2)


def test_jit_matches_eager_and_vmap_matches_loop():
    x = jnp.asarray(X)
    np.testing.assert_allclose(redraft.jit(_pooling)(x), _pooling(x), rtol=1e-5)
    grad = redraft.grad(_pooling)
    stack = np.stack([X, -X])
    batched = redraft.vmap(grad)(jnp.asarray(stack))
    for i in range(2):
        np.testing.assert_allclose(batched[i], grad(jnp.asarray(stack[i])), rtol=1e-5)
