"""lax.select_n, broadcast_like, empty, index_take, optimization_barrier, stack, unstack
(redraft/lax/structure.py), and bitcast_convert_type, reduce_precision, mulhi, complex
(redraft/lax/bits.py): values and errors against JAX 0.10.2's (stored below) and NumPy,
derivatives against finite differences, jit (compiled by LLVM) and vmap against eager."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.backend import host_runner
from redraft.compiler.driver import stage
from redraft.compiler.ir.passes import run_pipeline
from redraft.test_util import check_grads

POINTS = np.array([1.0, 1.0009765625, 1.00048828125, 1.00146484375, 65504.0, 65520.0, 1e5,
                   6e-5, 6.1e-5, 1e-8, -2.5, np.inf, -np.inf, np.nan, 0.0, -0.0, 3.14159],
                  np.float32)
# jax.lax.reduce_precision(POINTS, exponent_bits, mantissa_bits) (JAX 0.10.2, CPU)
REDUCED = {
    (5, 10): [1.0, 1.0009765625, 1.0, 1.001953125, 65504.0, np.inf, np.inf, 0.0, 0.0, 0.0,
              -2.5, np.inf, -np.inf, np.nan, 0.0, -0.0, 3.140625],
    (8, 7): [1.0, 1.0, 1.0, 1.0, 65536.0, 65536.0, 99840.0, 6.008148193359375e-05,
             6.103515625e-05, 1.0011717677116394e-08, -2.5, np.inf, -np.inf, np.nan, 0.0,
             -0.0, 3.140625],
    (4, 0): [1.0, 1.0, 1.0, 1.0, np.inf, np.inf, np.inf, 0.0, 0.0, 0.0, -2.0, np.inf, -np.inf,
             np.nan, 0.0, -0.0, 4.0],
    (2, 1): [1.0, 1.0, 1.0, 1.0, np.inf, np.inf, np.inf, 0.0, 0.0, 0.0, -2.0, np.inf, -np.inf,
             np.nan, 0.0, -0.0, 3.0],
}


def _compiled_by_llvm(fn, *args) -> bool:
    ir_fn, _ = stage(fn, args, set())
    return host_runner(run_pipeline(ir_fn))[1] == "llvm"


# ---- select_n ---------------------------------------------------------------------------------

def test_select_n_matches_jax():
    cases = (jnp.zeros(4), jnp.ones(4), jnp.full(4, 2.0))
    assert list(lax.select_n(jnp.asarray([0, 1, 2, 1]), *cases)) == [0.0, 1.0, 2.0, 1.0]
    assert list(lax.select_n(True, jnp.zeros(4), jnp.ones(4))) == [1.0] * 4
    assert list(lax.select_n(jnp.asarray([True, False]), jnp.zeros(2), jnp.ones(2))) == [1, 0]
    assert list(lax.select_n(jnp.asarray([0, 1]), jnp.zeros(2))) == [0.0, 0.0]
    # out of range: implementation-defined in JAX; its CPU backend (and redraft) clamp
    got = lax.select_n(jnp.asarray([5, -1]), jnp.zeros(2), jnp.ones(2), jnp.full(2, 2.0))
    assert list(got) == [2.0, 0.0]
    out = lax.select_n(0, 1.0, 2.0)
    assert out == 1.0 and out.weak_type


@pytest.mark.parametrize("call,error,match", [
    (lambda: lax.select_n(jnp.asarray([0.0, 1.0]), jnp.zeros(2), jnp.ones(2)), TypeError,
     "boolean or integer"),
    (lambda: lax.select_n(0, jnp.zeros(2), jnp.ones(3)), TypeError, "same shapes"),
    (lambda: lax.select_n(0, jnp.zeros(2), jnp.ones(2, jnp.int32)), TypeError, "same dtype"),
    (lambda: lax.select_n(jnp.asarray([0, 1, 0]), jnp.zeros(2), jnp.ones(2)), TypeError,
     "same shapes"),
    (lambda: lax.select_n(0), ValueError, "at least one case"),
])
def test_select_n_errors_as_jax(call, error, match):
    with pytest.raises(error, match=match):
        call()


W = jnp.asarray([0, 1, 2, 1, 5, -1])


def _three(a, b, c):
    return jnp.sum(lax.select_n(W, a, b, c) ** 2)


def test_select_n_derivatives_follow_the_choice():
    a, b, c = jnp.arange(6.0), jnp.full(6, 2.0), jnp.full(6, 3.0)
    da, db, dc = redraft.grad(_three, argnums=(0, 1, 2))(a, b, c)
    assert list(da) == [0, 0, 0, 0, 0, 10] and list(db) == [0, 4, 0, 4, 0, 0]
    assert list(dc) == [0, 0, 6, 0, 6, 0]
    check_grads(_three, (a, b, c), 2, atol=1e-2, rtol=1e-2)
    assert redraft.jit(_three)(a, b, c) == _three(a, b, c)


def test_select_n_batches_some_cases_and_not_others():
    got = redraft.vmap(lambda w, x: lax.select_n(w, x, 7.0))(jnp.asarray([True, False]),
                                                             jnp.asarray([1.0, 2.0]))
    assert list(got) == [7.0, 2.0]
    got = redraft.vmap(lambda x: lax.select_n(jnp.asarray([True, False]), x, jnp.zeros(2)))(
        jnp.ones((3, 2)))
    np.testing.assert_array_equal(got, np.tile([0.0, 1.0], (3, 1)))


# ---- shapes -----------------------------------------------------------------------------------

def test_broadcast_like_empty_stack_unstack_match_jax():
    got = lax.broadcast_like(jnp.asarray([1, 2, 3]), jnp.zeros((2, 3)))
    np.testing.assert_array_equal(got, [[1, 2, 3], [1, 2, 3]])
    assert got.dtype == np.int32
    assert lax.broadcast_like(1.0, jnp.zeros((2, 3))).weak_type
    assert lax.empty((2, 3), jnp.float32).shape == (2, 3)
    assert lax.empty(3, jnp.int32).dtype == np.int32
    got = lax.stack([jnp.asarray([1, 2]), jnp.asarray([3, 4])], axis=1)
    np.testing.assert_array_equal(got, [[1, 3], [2, 4]])
    with pytest.raises(TypeError, match="same dtype"):
        lax.stack([jnp.asarray([1, 2]), jnp.asarray([3.0, 4.0])])
    parts = lax.unstack(jnp.asarray([[1, 2], [3, 4]]), axis=1)
    assert isinstance(parts, tuple) and [list(p) for p in parts] == [[1, 3], [2, 4]]
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack(jnp.asarray(3))


def test_index_take_matches_jax():
    src = jnp.arange(24).reshape(2, 3, 4)
    got = lax.index_take(src, jnp.asarray([[1, 2], [0, 0]]), (0, 2))
    np.testing.assert_array_equal(got, [[12, 16, 20], [0, 4, 8]])  # jax.lax.index_take
    got = lax.index_take(src, (jnp.asarray([2, -1]), jnp.asarray([3, 1])), (1, 2))
    np.testing.assert_array_equal(got, np.asarray(src)[:, [2, 2], [3, 1]].T)


def test_optimization_barrier_is_the_identity_on_pytrees():
    x = jnp.ones(2)
    out = lax.optimization_barrier((x, 3.0))
    assert out[0] is x and out[1] == 3.0
    assert redraft.grad(lambda v: jnp.sum(lax.optimization_barrier(v * 2.0)))(x).tolist() == [
        2.0, 2.0]


def _shapes(x):
    y = lax.index_take(x, (jnp.asarray([1, 0, -1]), jnp.asarray([2, 2, 0])), (0, 1))
    s = lax.stack([x[0], x[1]], 1)
    u = lax.unstack(x, 1)
    b = lax.broadcast_like(x[0, 0], x)
    o = lax.optimization_barrier((x * 2.0, 3.0))
    return (jnp.sum(y ** 2) + jnp.sum(s * s) + jnp.sum(u[0] * u[1]) + jnp.sum(b * x)
            + jnp.sum(o[0]) * o[1])


def test_shape_conveniences_differentiate_batch_and_compile():
    x = jnp.arange(6.0).reshape(2, 3) / 3
    check_grads(_shapes, (x,), 2, atol=1e-2, rtol=1e-2)
    np.testing.assert_allclose(redraft.jit(redraft.grad(_shapes))(x), redraft.grad(_shapes)(x),
                               rtol=1e-6)
    xs = jnp.stack([x, x + 1.0])
    per = redraft.vmap(redraft.grad(_shapes))(xs)
    np.testing.assert_allclose(per, [redraft.grad(_shapes)(xs[i]) for i in range(2)],
                               rtol=1e-6)


# ---- bits -------------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", sorted(REDUCED))
def test_reduce_precision_matches_jax(bits):
    got = lax.reduce_precision(jnp.asarray(POINTS), *bits)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.asarray(REDUCED[bits], np.float32))
    assert np.signbit(np.asarray(got)[15])  # -0.0 keeps its sign


def test_reduce_precision_agrees_with_numpy_casts():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(2000) * 10.0 ** rng.integers(-4, 6, 2000)).astype(np.float32)
    x = x[np.abs(x) >= np.finfo(np.float16).tiny]  # XLA flushes float16's subnormals to 0
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(jnp.asarray(x), 5, 10), want)
    with redraft.enable_x64():
        y = rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)
        np.testing.assert_array_equal(lax.reduce_precision(jnp.asarray(y), 8, 23),
                                      y.astype(np.float32).astype(np.float64))
    with pytest.raises(TypeError, match="floating"):
        lax.reduce_precision(jnp.arange(3), 5, 10)


def test_reduce_precision_derivative_is_the_rounded_cotangent():
    g = redraft.grad(lambda v: jnp.sum(lax.reduce_precision(v, 5, 10) * 1.0009765625))(
        jnp.ones(3))
    np.testing.assert_array_equal(g, [1.0009765625] * 3)


def test_bitcast_convert_type_matches_jax():
    got = lax.bitcast_convert_type(jnp.float32(1.0), jnp.int32)
    assert got.shape == () and int(got) == 1065353216
    got = lax.bitcast_convert_type(jnp.asarray([1.0, -2.0], jnp.float32), jnp.uint8)
    np.testing.assert_array_equal(got, [[0, 0, 128, 63], [0, 0, 0, 192]])
    got = lax.bitcast_convert_type(jnp.asarray([[0, 0, 128, 63]], jnp.uint8), jnp.float32)
    assert got.dtype == np.float32 and list(got) == [1.0]
    got = lax.bitcast_convert_type(jnp.asarray([1, -1], jnp.int32), jnp.int16)
    np.testing.assert_array_equal(got, [[1, 0], [-1, -1]])
    with pytest.raises(ValueError, match="trailing axis"):
        lax.bitcast_convert_type(jnp.asarray([[0, 0, 128]], jnp.uint8), jnp.float32)
    with pytest.raises(TypeError, match="bool or complex"):
        lax.bitcast_convert_type(jnp.asarray([True]), jnp.uint8)


def test_bitcast_round_trips_agree_with_numpy_views():
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_array_equal(lax.bitcast_convert_type(jnp.asarray(x), jnp.uint16),
                                  x.view(np.uint16).reshape(3, 5, 2))
    back = lax.bitcast_convert_type(lax.bitcast_convert_type(jnp.asarray(x), jnp.int8),
                                    jnp.float32)
    np.testing.assert_array_equal(back, x)


def test_mulhi_matches_jax():
    got = lax.mulhi(jnp.asarray([3, -3, 2**30, -2**31, 123456789], jnp.int32),
                    jnp.asarray([7, 7, 8, -2**31, 987654321], jnp.int32))
    assert list(got) == [0, -1, 2, 1073741824, 28389652]
    got = lax.mulhi(jnp.asarray([3, 2**31 + 5, 2**32 - 1], jnp.uint32),
                    jnp.asarray([7, 2**31 + 7, 2**32 - 1], jnp.uint32))
    assert np.asarray(got).tolist() == [0, 1073741830, 4294967294]
    got = lax.mulhi(jnp.asarray([100, -100], jnp.int8), jnp.asarray([100, 100], jnp.int8))
    assert list(got) == [39, -40]
    with pytest.raises(TypeError, match="integer"):
        lax.mulhi(1.0, 2.0)


def test_mulhi_agrees_with_wide_products():
    rng = np.random.default_rng(2)
    for dtype in (np.int16, np.uint16, np.int32, np.uint32):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 500, dtype=np.int64, endpoint=True)
        y = rng.integers(info.min, info.max, 500, dtype=np.int64, endpoint=True)
        want = ((x * y) >> (8 * np.dtype(dtype).itemsize)).astype(dtype)
        got = lax.mulhi(jnp.asarray(x.astype(dtype)), jnp.asarray(y.astype(dtype)))
        np.testing.assert_array_equal(got, want)


def test_complex_matches_jax():
    z = lax.complex(1.0, 2.0)
    assert z == 1 + 2j and z.dtype == np.complex64 and z.weak_type
    z = lax.complex(jnp.float32(1.0), jnp.float32(np.inf))
    assert complex(z) == complex(1.0, np.inf)  # no 0 * inf in the real part
    assert list(lax.complex(jnp.asarray([1.0, 2.0]), 3.0)) == [1 + 3j, 2 + 3j]
    with pytest.raises(TypeError, match="float32 or float64"):
        lax.complex(1, 2)
    # d/dy real((1 + i y)(2 + 3i)) = -3, through JAX's transposition of complex
    grad = redraft.grad(lambda y: lax.real(lax.complex(1.0, y) * lax.complex(2.0, 3.0)))(0.5)
    assert grad == -3.0


def _bits(x, n):
    return (lax.reduce_precision(x, 5, 10), lax.bitcast_convert_type(x, jnp.uint8),
            lax.mulhi(n, jnp.int32(12345)),
            lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint16), jnp.float32),
            lax.select_n(n % 3, x, x * 2.0, x * 3.0), lax.stack([x, x], 1),
            lax.igamma(2.0, jnp.abs(x)), lax.igamma_grad_a(2.0, jnp.abs(x)),
            lax.polygamma(0.0, jnp.abs(x) + 0.5))


def test_compiled_by_llvm_with_eager_results():
    x = jnp.asarray(POINTS[:-4])
    n = jnp.arange(len(POINTS) - 4, dtype=jnp.int32) * 100000007
    assert _compiled_by_llvm(_bits, x, n)
    for got, want in zip(redraft.jit(_bits)(x, n), _bits(x, n)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    per = redraft.vmap(_bits)(jnp.stack([x, -x]), jnp.stack([n, n + 1]))
    for k, part in enumerate(per):
        np.testing.assert_array_equal(part[1], _bits(-x, n + 1)[k])
