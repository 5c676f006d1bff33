"""Numerical checks of the lax derivative rules: forward and reverse mode, to second order,
against finite differences (redraft.test_util.check_grads).

The AD reads the source of the function it differentiates, so every function under test is
a module-level def here; integer operands (indices, start positions) are module constants,
since check_grads differentiates every argument. Inputs are small, smooth and away from
kinks and ties.
"""
import zlib

import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import lax
from redraft.test_util import check_grads
from redraft.transforms import grad

RNG = np.random.default_rng(1234)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def uniform(lo, hi, *shape):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def distinct(*shape, offset=0.0):
    """Values 0.15 apart (no ties for max, sort and friends), in random order; arrays that
    meet in a min/max take different offsets so that they never tie either."""
    n = int(np.prod(shape))
    return ((RNG.permutation(n) * 0.3 - 0.15 * n) / 2 + offset).astype(np.float32).reshape(shape)


# ---- elementwise ---------------------------------------------------------------------------------

def erf(x): return lax.erf(x)
def erfc(x): return lax.erfc(x)
def erf_inv(x): return lax.erf_inv(x)
def lgamma(x): return lax.lgamma(x)
def digamma(x): return lax.digamma(x)
def logistic(x): return lax.logistic(x)
def exp2(x): return lax.exp2(x)
def rsqrt(x): return lax.rsqrt(x)
def integer_pow_3(x): return lax.integer_pow(x, 3)
def integer_pow_neg2(x): return lax.integer_pow(x, -2)
def integer_pow_0(x): return lax.mul(lax.integer_pow(x, 0), x)
def rem(x, y): return lax.rem(x, y)


PRED = np.array([True, False, True, True, False])
def select(x, y): return lax.select(PRED, x, y)
def select_broadcast(x, y): return lax.select(PRED, x, y)  # y is a scalar array
def clamp_scalar(x): return lax.clamp(-0.5, x, 0.5)
def clamp_arrays(lo, x, hi): return lax.clamp(lo, x, hi)
def convert(x): return lax.mul(lax.convert_element_type(x, np.float32), x)
def convert_through_int(x):
    steps = lax.convert_element_type(lax.convert_element_type(lax.mul(x, 3.0), np.int32),
                                     np.float32)
    return lax.mul(steps, x)
def max_arrays(x, y): return lax.max(x, y)
def min_arrays(x, y): return lax.min(x, y)
def real_imag(x, y):
    z = lax.mul(lax.convert_element_type(x, np.complex64), np.complex64(1.5 - 0.5j))
    w = lax.mul(lax.conj(z), lax.convert_element_type(y, np.complex64))
    return lax.add(lax.real(w), lax.mul(lax.imag(w), lax.real(z)))


ELEMENTWISE = [
    (erf, lambda: [normal(5)]),
    (erfc, lambda: [normal(5)]),
    (erf_inv, lambda: [uniform(-0.6, 0.6, 5)]),
    (lgamma, lambda: [uniform(0.8, 3.0, 5)]),
    (digamma, lambda: [uniform(0.8, 3.0, 5)]),
    (logistic, lambda: [normal(5)]),
    (exp2, lambda: [normal(5)]),
    (rsqrt, lambda: [uniform(0.5, 2.0, 5)]),
    (integer_pow_3, lambda: [normal(5)]),
    (integer_pow_neg2, lambda: [uniform(0.5, 2.0, 5)]),
    (integer_pow_0, lambda: [normal(5)]),
    (rem, lambda: [np.array([2.3, -3.7, 5.2, 0.4, -1.1], np.float32),
                   np.array([1.1, 1.5, -2.0, 0.9, 0.7], np.float32)]),
    (select, lambda: [normal(5), normal(5)]),
    (select_broadcast, lambda: [normal(5), normal()]),
    (clamp_scalar, lambda: [np.array([-1.2, -0.3, 0.1, 0.4, 0.9], np.float32)]),
    (clamp_arrays, lambda: [np.full(4, -0.5, np.float32),
                            np.array([-1.0, 0.1, 0.3, 1.2], np.float32),
                            np.full(4, 0.5, np.float32)]),
    (convert, lambda: [normal(4)]),
    (convert_through_int, lambda: [np.array([0.1, 0.45, 1.2, -0.7], np.float32)]),
    (max_arrays, lambda: [distinct(4), distinct(4, offset=0.05)]),
    (min_arrays, lambda: [distinct(4), distinct(4, offset=0.05)]),
    (real_imag, lambda: [normal(4), normal(4)]),
]

# ---- reductions, scans and sorting ---------------------------------------------------------------

def reduce_prod_axis(x): return lax.reduce_prod(x, (1,))
def reduce_prod_axes(x): return lax.reduce_prod(x, (0, 2))
def reduce_max(x): return lax.reduce_max(x, (1,))
def reduce_min(x): return lax.reduce_min(x, (0,))
def cumsum(x): return lax.cumsum(x, 1)
def cumsum_reverse(x): return lax.cumsum(x, 0, reverse=True)
def cumprod(x): return lax.cumprod(x, 1)
def cumprod_reverse(x): return lax.cumprod(x, 0, reverse=True)
def cummax(x): return lax.cummax(x, 1)
def cummin_reverse(x): return lax.cummin(x, 0, reverse=True)
def sort_last(x): return lax.sort(x)
def sort_first(x): return lax.sort(x, 0)


def with_zero(*shape):
    x = uniform(0.5, 1.5, *shape)
    x.flat[1] = 0.0  # products through a zero need the division-free rules
    return x


REDUCTIONS = [
    (reduce_prod_axis, lambda: [uniform(0.5, 1.5, 2, 3)]),
    (reduce_prod_axis, lambda: [with_zero(2, 3)]),
    (reduce_prod_axes, lambda: [with_zero(2, 3, 2)]),
    (reduce_max, lambda: [distinct(3, 4)]),
    (reduce_min, lambda: [distinct(3, 4)]),
    (cumsum, lambda: [normal(2, 4)]),
    (cumsum_reverse, lambda: [normal(3, 2)]),
    (cumprod, lambda: [uniform(0.5, 1.5, 2, 4)]),
    (cumprod, lambda: [with_zero(2, 4)]),
    (cumprod_reverse, lambda: [with_zero(3, 2)]),
    (cummax, lambda: [distinct(2, 5)]),
    (cummin_reverse, lambda: [distinct(4, 2)]),
    (sort_last, lambda: [distinct(2, 4)]),
    (sort_first, lambda: [distinct(3, 2)]),
]

# ---- shapes, padding, slices ---------------------------------------------------------------------

def broadcast_in_dim(x): return lax.broadcast_in_dim(x, (2, 3, 4), (1, 2))
def broadcast(x): return lax.broadcast(x, (2,))
def transpose(x): return lax.transpose(x, (2, 0, 1))
def squeeze(x): return lax.squeeze(x, (1,))
def expand_dims(x): return lax.expand_dims(x, (0, 2))
def rev(x): return lax.rev(x, (1,))
def concatenate(x, y): return lax.concatenate([x, y], 1)
def pad(x, v): return lax.pad(x, v, ((1, 2, 0), (0, 1, 0)))
def pad_negative(x): return lax.pad(x, 0.0, ((-1, -1, 0), (2, -2, 0)))
def pad_interior(x, v): return lax.pad(x, v, ((1, 2, 0), (-1, 1, 1)))
def slice_unit(x): return lax.slice(x, (0, 1), (2, 4))
def slice_strided(x): return lax.slice(x, (0, 1), (3, 4), (2, 2))


START = np.array(1, np.int32)
def dynamic_slice(x): return lax.dynamic_slice(x, (START, 1), (2, 2))
def dynamic_update_slice(x, u): return lax.dynamic_update_slice(x, u, (START, 0))
def dynamic_index(x): return lax.dynamic_index_in_dim(x, START, 1, False)


SHAPES = [
    (broadcast_in_dim, lambda: [normal(3, 1)]),
    (broadcast, lambda: [normal(3)]),
    (transpose, lambda: [normal(2, 3, 4)]),
    (squeeze, lambda: [normal(2, 1, 3)]),
    (expand_dims, lambda: [normal(3)]),
    (rev, lambda: [normal(2, 3)]),
    (concatenate, lambda: [normal(2, 1), normal(2, 3)]),
    (pad, lambda: [normal(2, 3), normal()]),
    (pad_negative, lambda: [normal(4, 3)]),
    (pad_interior, lambda: [normal(2, 3), normal()]),
    (slice_unit, lambda: [normal(3, 5)]),
    (slice_strided, lambda: [normal(3, 5)]),
    (dynamic_slice, lambda: [normal(4, 3)]),
    (dynamic_update_slice, lambda: [normal(4, 3), normal(2, 3)]),
    (dynamic_index, lambda: [normal(2, 3)]),
]

# ---- products and convolutions -------------------------------------------------------------------

def dot(x, y): return lax.dot(x, y)
def dot_general(x, y): return lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))
def conv_same(x, w): return lax.conv_general_dilated(x, w, (1, 1), "SAME")
def conv_strided(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, -1)), lhs_dilation=(1, 2),
                                    rhs_dilation=(2, 1))
def conv_nhwc(x, w):
    return lax.conv_general_dilated(x, w, (1, 2), "VALID",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
def conv_feature_groups(x, w):
    return lax.conv_general_dilated(x, w, (1,), ((1, 1),), feature_group_count=2)
def conv_batch_groups(x, w):
    return lax.conv_general_dilated(x, w, (1,), ((0, 1),), batch_group_count=2)
def conv(x, w): return lax.conv(x, w, (1, 1), "VALID")
def conv_general_padding(x, w):
    return lax.conv_with_general_padding(x, w, (1,), ((1, 2),), (2,), None)
def conv_transpose(x, w): return lax.conv_transpose(x, w, (2,), "SAME",
                                                    dimension_numbers=("NCH", "OIH", "NCH"))
def conv_transpose_kernel(x, w):
    return lax.conv_transpose(x, w, (2, 1), "VALID", transpose_kernel=True)


PRODUCTS = [
    (dot, lambda: [normal(2, 3), normal(3, 2)]),
    (dot_general, lambda: [normal(2, 3, 2), normal(2, 2, 3)]),
    (conv_same, lambda: [normal(1, 2, 4, 3), normal(3, 2, 3, 2)]),
    (conv_strided, lambda: [normal(2, 1, 5, 3), normal(2, 1, 2, 2)]),
    (conv_nhwc, lambda: [normal(1, 3, 5, 2), normal(2, 2, 2, 3)]),
    (conv_feature_groups, lambda: [normal(1, 4, 5), normal(4, 2, 3)]),
    (conv_batch_groups, lambda: [normal(4, 2, 5), normal(4, 2, 2)]),
    (conv, lambda: [normal(1, 1, 4, 4), normal(2, 1, 2, 2)]),
    (conv_general_padding, lambda: [normal(1, 2, 4), normal(3, 2, 2)]),
    (conv_transpose, lambda: [normal(1, 2, 3), normal(2, 2, 3)]),
    (conv_transpose_kernel, lambda: [normal(1, 3, 2, 2), normal(2, 2, 3, 2)]),
]

# ---- gather and scatter --------------------------------------------------------------------------

ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
ROW_UPDATES = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))
REPEATED = np.array([[1], [3], [1]], np.int32)
UNIQUE = np.array([[4], [0], [2]], np.int32)
OUT_OF_BOUNDS = np.array([[1], [7], [2]], np.int32)
WINDOWS = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                     start_index_map=(0, 1))
CORNERS = np.array([[0, 1], [2, 0]], np.int32)


def gather_rows(x): return lax.gather(x, REPEATED, ROWS, (1, 3))
def gather_fill(x): return lax.gather(x, OUT_OF_BOUNDS, ROWS, (1, 3), mode="fill", fill_value=0.5)
def gather_windows(x): return lax.gather(x, CORNERS, WINDOWS, (2, 2))
def scatter_add(x, u): return lax.scatter_add(x, REPEATED, u, ROW_UPDATES)
def scatter_add_drop(x, u): return lax.scatter_add(x, OUT_OF_BOUNDS, u, ROW_UPDATES)
def scatter_unique(x, u): return lax.scatter(x, UNIQUE, u, ROW_UPDATES)
def scatter_repeated(x, u): return lax.scatter(x, REPEATED, u, ROW_UPDATES)
def scatter_mul(x, u): return lax.scatter_mul(x, REPEATED, u, ROW_UPDATES)
def scatter_min(x, u): return lax.scatter_min(x, REPEATED, u, ROW_UPDATES)
def scatter_max(x, u): return lax.scatter_max(x, REPEATED, u, ROW_UPDATES)


POSITIONS = np.array([1, 3, 1], np.int32)
UNIQUE_POSITIONS = np.array([4, 0, 2], np.int32)
def at_subtract(x, v): return x.at[POSITIONS].subtract(v)
def at_multiply(x, v): return x.at[POSITIONS].multiply(v)
def at_divide(x, v): return x.at[UNIQUE_POSITIONS].divide(v)
def at_power(x, v): return x.at[UNIQUE_POSITIONS].power(v)
def at_min(x, v): return x.at[POSITIONS].min(v)
def at_max(x, v): return x.at[1:3].max(v)
# rows 7 and -9 fall outside 5 rows (their updates are dropped, so they get no cotangent);
# row 1 is written twice (a set keeps the last write, which alone gets the cotangent)
DROPPED = np.array([1, 7, -1, -9, 1], np.int32)
def at_set_dropped(x, v): return x.at[DROPPED].set(v)
def at_add_dropped(x, v): return x.at[DROPPED].add(v)
def at_subtract_dropped(x, v): return x.at[DROPPED].subtract(v)
def at_multiply_dropped(x, v): return x.at[DROPPED].multiply(v)
def at_max_dropped(x, v): return x.at[DROPPED].max(v)


INDEXED = [
    (gather_rows, lambda: [normal(5, 3)]),
    (gather_fill, lambda: [normal(5, 3)]),
    (gather_windows, lambda: [normal(4, 3)]),
    (scatter_add, lambda: [normal(5, 3), normal(3, 3)]),
    (scatter_add_drop, lambda: [normal(5, 3), normal(3, 3)]),
    (scatter_unique, lambda: [normal(5, 3), normal(3, 3)]),
    (scatter_repeated, lambda: [normal(5, 3), normal(3, 3)]),
    (scatter_mul, lambda: [uniform(0.5, 1.5, 5, 3), uniform(0.5, 1.5, 3, 3)]),
    (scatter_min, lambda: [distinct(5, 3), distinct(3, 3, offset=0.05)]),
    (scatter_max, lambda: [distinct(5, 3), distinct(3, 3, offset=0.05)]),
    (at_subtract, lambda: [normal(5, 2), normal(3, 2)]),
    (at_multiply, lambda: [normal(5, 2), uniform(0.5, 1.5, 3, 2)]),
    (at_divide, lambda: [normal(5, 2), uniform(0.5, 1.5, 3, 1)]),
    (at_power, lambda: [uniform(0.5, 1.5, 5), uniform(0.5, 2.0, 3)]),
    (at_min, lambda: [distinct(5, 2), distinct(3, 2, offset=0.05)]),
    (at_max, lambda: [distinct(4, 3), distinct(3, offset=0.05)]),
    (at_set_dropped, lambda: [normal(5, 2), normal(5, 2)]),
    (at_add_dropped, lambda: [normal(5, 2), normal(5, 2)]),
    (at_subtract_dropped, lambda: [normal(5, 2), normal(5, 1)]),
    (at_multiply_dropped, lambda: [normal(5, 2), uniform(0.5, 1.5, 5, 2)]),
    (at_max_dropped, lambda: [distinct(5, 2), distinct(5, 2, offset=0.05)]),
]

# Failures caused by bugs outside the rules (each also has a minimal test below).
DOT_GENERAL_BAR_BUG = ("rules/helpers.py registers ad.dot_general_lhs_bar's rhs jvp rule "
                       "under `lhs` and gives dot_general_lhs_bar/rhs_bar no vjp rules")
KNOWN_BUGS: dict = {}  # functions whose second-order rules are known wrong (none now)

CASES = ELEMENTWISE + REDUCTIONS + SHAPES + PRODUCTS + INDEXED


def _param(fn, make_args, i):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[fn])] if fn in KNOWN_BUGS else []
    return pytest.param(fn, make_args, marks=marks, id=f"{fn.__name__}-{i}")


@pytest.mark.parametrize("fn, make_args", [_param(f, m, i) for i, (f, m) in enumerate(CASES)])
def test_second_order(fn, make_args):
    RNG.bit_generator.state = np.random.PCG64(zlib.crc32(fn.__name__.encode())).state
    check_grads(fn, make_args(), order=2, modes=("fwd", "rev"))


def test_dropped_and_overwritten_updates_get_no_cotangent():
    """Against the closed form: only updates that land in the result are differentiated."""
    x, v = jnp.asarray(normal(5, 2)), normal(5, 2)
    weights = np.arange(10.0, dtype=np.float32).reshape(5, 2)
    live = np.array([0, 0, 1, 0, 1], np.float32)[:, None]  # row 1's last write, and row -1
    expected = weights[DROPPED % 5] * live
    got = grad(lambda v: (at_set_dropped(x, v) * weights).sum())(v)
    np.testing.assert_allclose(np.asarray(got), expected)
    landed = np.array([1, 0, 1, 0, 1], np.float32)[:, None]  # adds accumulate: both row 1s
    got = grad(lambda v: (at_add_dropped(x, v) * weights).sum())(v)
    np.testing.assert_allclose(np.asarray(got), weights[DROPPED % 5] * landed)


def test_an_update_that_multiplies_by_zero_has_a_gradient():
    """d/dv of x.at[idx].multiply(v) is x times the other updates of the position: no
    division by v, so an update of 0 gets a number, not NaN."""
    x = jnp.asarray(np.array([2.0, 3.0], np.float32))
    idx = np.array([0, 0, 1], np.int32)
    v = np.array([0.0, 5.0, 0.0], np.float32)
    got = grad(lambda v: x.at[idx].multiply(v).sum())(v)
    np.testing.assert_allclose(np.asarray(got), [10.0, 0.0, 3.0])


def max_all(x): return lax.reduce_max(x, (0,))
def cumprod_total(x): return lax.reduce_sum(lax.cumprod(x, 0), (0,))


def test_reduce_max_ties_share_the_gradient():
    out = grad(max_all)(np.array([1.0, 3.0, 3.0], np.float32))
    np.testing.assert_allclose(np.asarray(out), [0.0, 0.5, 0.5])


def test_cumprod_gradient_through_a_zero():
    """d/dx of x0 + x0 x1 + x0 x1 x2 at (2, 0, 3): exact, where division would give NaN."""
    out = grad(cumprod_total)(np.array([2.0, 0.0, 3.0], np.float32))
    np.testing.assert_allclose(np.asarray(out), [1.0, 8.0, 0.0])


# ---- minimal reproductions of bugs outside the rules ---------------------------------------------

def dot_general_matmul(x, y): return lax.dot_general(x, y, (((1,), (0,)), ((), ())))


def test_bug_dot_general_second_order():
    check_grads(dot_general_matmul, [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)],
                order=2, modes=("rev",))
