"""Reductions over every subset of axes, dtypes, fused reductions, and the arg/empty cases."""
import itertools

import numpy as np
import pytest
from backend_util import build_ir, check, check_ir, sample

import redraft.numpy as jnp
from redraft import lax

AXES_3D = [c for r in range(4) for c in itertools.combinations(range(3), r)]


def reducer(op, axes):
    def f(x):
        return op(x, axes)
    return f


@pytest.mark.parametrize("axes", AXES_3D, ids=str)
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
def test_float_reductions_every_axis(name, axes):
    x = sample((5, 6, 37), np.float32, low=0.5, high=1.5)
    check(reducer(getattr(lax, name), axes), x, rtol=2e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1), ()], ids=str)
def test_integer_and_bool_reductions(dtype, axes):
    x = sample((9, 33), dtype, seed=2)
    names = ["reduce_sum", "reduce_max", "reduce_min"]
    if np.dtype(dtype) == np.bool_:
        names += ["reduce_and", "reduce_or", "reduce_prod"]
    for name in names:
        check(reducer(getattr(lax, name), axes), x)


def test_nan_propagates_through_max():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    check(reducer(lax.reduce_max, (1,)), x)
    check(reducer(lax.reduce_min, (0,)), x)
    check(reducer(lax.reduce_max, (0,)), np.full(40, np.nan, np.float32))


def test_empty_reductions():
    x = np.zeros((0, 4), np.float32)
    check(reducer(lax.reduce_sum, (0,)), x)
    check(reducer(lax.reduce_prod, (0, 1)), x)


def test_long_reduction_to_scalar():
    x = sample((1 << 18,), np.float32, seed=4, low=0, high=1)
    check(reducer(lax.reduce_sum, (0,)), x, rtol=1e-4)
    check(reducer(lax.reduce_max, (0,)), x)


def test_fused_elementwise_then_reduce():
    def f(x, y):
        return jnp.sum(jnp.exp(x) * y, axis=1), jnp.max(x - y, axis=0)
    check(f, sample((300, 70), np.float32), sample((300, 70), np.float32, seed=1), rtol=1e-5,
          atol=1e-4)


def test_mean_and_var():
    def f(x):
        m = x.mean(0)
        return m, ((x - m) ** 2).mean(0), x.sum()
    check(f, sample((1000, 10), np.float32), rtol=1e-5, atol=1e-5)


def test_reduce_of_view():
    def f(x):
        return jnp.sum(x.T[::2], axis=1), jnp.max(x[:, ::-1], axis=1)
    check(f, sample((12, 40), np.float32))


def test_float64_reduction():
    from redraft.compiler.core.abstract import ShapedArray
    from redraft.compiler.primitives import reductions as red
    x = sample((7, 300), np.float64, seed=5)
    fn = build_ir("r", [ShapedArray(x.shape, x.dtype)], lambda b, ps: [
        b.stage(red.reduce_sum_p, ps, {"axes": (1,)}),
        b.stage(red.reduce_max_p, ps, {"axes": (0, 1)})])
    check_ir(fn, [x], rtol=1e-13)




def scan(op, axis, reverse=False):
    def f(x):
        return op(x, axis, reverse)
    return f


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, False), (1, True), (0, True)])
def test_cumulative(name, axis, reverse):
    x = sample((7, 33), np.float32, low=0.5, high=1.5, seed=3)
    check(scan(getattr(lax, name), axis, reverse), x, rtol=1e-5)


def test_cumulative_int_and_bool():
    check(scan(lax.cumsum, 0), sample((40,), np.int32))
    check(scan(lax.cummax, 1), sample((3, 9), np.bool_))


def arg(op, axis):
    def f(x):
        return op(x, axis)
    return f


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_arg_reductions(name, axis):
    x = sample((4, 5, 37), np.float32, seed=4)
    x[1, 2, 3] = np.nan
    x[2, :, :] = x[0, :, :]  # ties: the first index wins
    check(arg(getattr(jnp, name), axis), x)
    check(arg(getattr(jnp, name), axis), sample((4, 5, 37), np.int32, seed=5))


@pytest.mark.parametrize("shape", [(1000, 10), (999, 7), (64, 3), (10, 5), (4096, 1)],
                         ids=str)
def test_short_rows(shape):
    """Short rows are widened (several rows per vector); row broadcasts are tiled and
    reductions over the rows folded."""
    def f(x, r):
        y = x * r + 1.0
        return y, jnp.max(x - r, axis=0), jnp.sum(y, axis=0), jnp.min(y)
    x = sample(shape, np.float32, seed=6)
    r = sample(shape[1:], np.float32, seed=7)
    check(f, x, r, rtol=1e-5, atol=1e-4)


def _sign_product(d):
    return jnp.prod(d / jnp.where(d == 0, 1.0, d + 10.0), -1)


@pytest.mark.parametrize("shape", [(3, 4, 4), (8, 4, 4), (2, 16, 3)], ids=str)
def test_a_region_lowered_equation_by_equation_keeps_its_operand_alive(shape):
    """A fused region the backend lowers one equation at a time reads its operand after the
    region's first equation; the operand's buffer must not be handed to the second one (jit
    gave all ones here: the product of a clobbered row)."""
    check(lambda x: _sign_product(jnp.sum(x, -1)), sample(shape, np.float32), rtol=1e-5)
