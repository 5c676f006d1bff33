"""dot_general through the matmul kernel (float products) and the loop nest (the rest)."""
import numpy as np
import pytest
from backend_util import check, sample

import redraft.numpy as jnp
from redraft import lax


def matmul(a, b):
    return a @ b


@pytest.mark.parametrize("m,k,n", [(2, 3, 4), (64, 64, 64), (130, 70, 33), (128, 784, 10),
                                   (1, 50, 40), (40, 50, 1), (7, 1, 9), (300, 200, 257)])
def test_matmul_shapes(m, k, n):
    a, b = sample((m, k), np.float32, seed=1), sample((k, n), np.float32, seed=2)
    check(matmul, a, b, rtol=2e-5, atol=2e-6 * k)


def test_transposed_operands_use_strides():
    def f(a, b):
        return a.T @ b, a.T @ b.T, jnp.dot(b[:, :60], a.T[:, :30])
    a, b = sample((90, 60), np.float32, seed=1), sample((90, 90), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)


def test_transposed_products_and_constant_operands():
    """(A @ B).T is computed as B.T @ A.T (fold), also when an operand is a uniform constant
    that must be laid out transposed (the zero initial state of an RNN's gradient)."""
    def f(a, b):
        zeros = jnp.zeros((32, 128), jnp.float32)
        twos = jnp.full((128, 32), 2.0, jnp.float32)
        return (a @ b).T, (zeros @ b).T, (twos.T @ b).T + (twos.T @ b.T).T
    a, b = sample((32, 128), np.float32, seed=1), sample((128, 128), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-4)


def test_vector_products():
    def f(v, m):
        return jnp.dot(v, v), m @ v, v @ m.T
    check(f, sample((70,), np.float32), sample((50, 70), np.float32, seed=1), rtol=2e-5,
          atol=2e-5)


def test_batched_dot_general():
    def f(a, b):
        return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    a, b = sample((3, 40, 50), np.float32, seed=1), sample((3, 50, 45), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)
    a, b = sample((4, 3, 5), np.float32, seed=3), sample((4, 5, 2), np.float32, seed=4)
    check(f, a, b, rtol=2e-5, atol=2e-5)


def test_multi_axis_contraction():
    def f(a, b):
        return lax.dot_general(a, b, (((1, 2), (2, 0)), ((), ())))
    a, b = sample((30, 4, 5), np.float32, seed=1), sample((5, 40, 4), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_integer_and_bool_dot(dtype):
    check(matmul, sample((6, 7), dtype, seed=1), sample((7, 5), dtype, seed=2))


def test_large_threaded_matmul():
    a, b = sample((256, 300), np.float32, seed=1), sample((300, 270), np.float32, seed=2)
    check(matmul, a, b, rtol=2e-5, atol=5e-5)
