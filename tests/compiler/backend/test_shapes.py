"""Shape primitives: views (broadcast_in_dim, transpose, reshape, squeeze, slice, rev,
getitem) and copies (concatenate, pad, iota, dynamic slices), alone and feeding loops."""
import numpy as np
import pytest
from backend_util import check, sample

import redraft.numpy as jnp
from redraft import lax


def test_broadcast_in_dim():
    def f(x):
        return (lax.broadcast_in_dim(x, (4, 3, 5), (1,)) * 2.0,
                lax.broadcast_in_dim(x[:1], (2, 3), (1,)))
    check(f, sample((3,), np.float32))


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 1, 0), (0, 2, 1), (2, 0, 1)])
def test_transpose(perm):
    def f(x):
        return lax.transpose(x, perm) + 1.0
    check(f, sample((3, 4, 5), np.float32))


def test_transpose_result_is_copied_out():
    def f(x):
        return x.T
    check(f, sample((37, 19), np.float32))


@pytest.mark.parametrize("shape", [(20,), (4, 5), (2, 2, 5), (1, 20, 1)])
def test_reshape(shape):
    def f(x):
        return jnp.reshape(x, shape) * 3.0
    check(f, sample((4, 5), np.float32))


def test_reshape_of_transposed_view_copies():
    def f(x):
        return jnp.reshape(x.T, (6, 4)) + 0.5, jnp.reshape(x[:, ::2], (12,))
    check(f, sample((4, 6), np.float32))


def test_squeeze_and_expand():
    def f(x):
        return lax.squeeze(x, (0, 2)) - 1.0, jnp.expand_dims(x, 1)
    check(f, sample((1, 7, 1), np.float32))


def test_slices():
    def f(x):
        return (lax.slice(x, (1, 0), (5, 7), (2, 3)), x[::-1, 1:6:2], x[2], x[:, -1],
                x[None, 1:3, None])
    check(f, sample((6, 8), np.float32))


def test_rev():
    def f(x):
        return lax.rev(x, (0,)), lax.rev(x, (0, 1)) * 2.0
    check(f, sample((5, 9), np.float32))


def test_concatenate():
    def f(x, y):
        return jnp.concatenate([x, y, x], axis=1), jnp.concatenate([x.T, y.T], axis=0)
    check(f, sample((3, 4), np.float32), sample((3, 2), np.float32, seed=1))


@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=lambda d: np.dtype(d).name)
def test_iota(dtype):
    def f():
        return lax.broadcasted_iota(dtype, (4, 37), 1), lax.broadcasted_iota(dtype, (4, 3), 0)
    check(f)


def test_arange_and_linspace():
    def f(x):
        return x * jnp.arange(10.0), jnp.linspace(0.0, 1.0, 10) + x
    check(f, sample((10,), np.float32))


@pytest.mark.parametrize("config", [((1, 2, 0), (0, 0, 0)), ((0, 0, 1), (2, 1, 2)),
                                    ((-1, 2, 0), (1, -2, 1))])
def test_pad(config):
    def f(x):
        return lax.pad(x, np.float32(-7.0), config)
    check(f, sample((4, 6), np.float32))


def test_dynamic_slice_clamps():
    def f(x, i, j):
        return lax.dynamic_slice(x, (i, j), (2, 3))
    x = sample((5, 6), np.float32)
    for i, j in [(0, 0), (2, 1), (4, 5), (-3, 9)]:
        check(f, x, np.int32(i), np.int32(j))


def test_dynamic_update_slice():
    def f(x, u, i):
        return lax.dynamic_update_slice(x, u, (i, 1))
    x, u = sample((5, 6), np.float32), sample((2, 3), np.float32, seed=1)
    for i in (0, 3, 7):
        check(f, x, u, np.int32(i))


def test_at_set_in_loop():
    def f(x):
        for i in range(4):
            x = x.at[i].set(x[i] * 2.0 + i)
        return x
    check(f, sample((6, 5), np.float32))


def test_scalar_index_reads_and_updates():
    def f(x, i):
        y = x.at[i].add(1.0)
        y = y.at[i, 2].mul(3.0)
        y = y.at[-1].max(0.0)
        return y, x[i], x[:, i]
    x = sample((5, 6), np.float32)
    for i in (0, 3, -2):
        check(f, x, np.int32(i))
    for i in (9, -9):  # eager indexing raises; compiled code clamps reads, drops updates
        check(f, x, np.int32(i), eager=False)


def test_no_in_place_write_over_a_buffer_read_through_another_view():
    def f(x):
        y = x * 2.0
        z = y + y.T           # y dies here but is also read transposed
        w = x[:-1] * 3.0
        u = w.at[1:].set(w[:-1])   # overlapping shift of a dying buffer
        return z.T, u.T              # (transposed: z and u are not the output buffers)
    check(f, sample((6, 6), np.float32))
