"""Second-order derivative checks of commonly used redraft.numpy, redraft.nn and
redraft.scipy.special functions (forward and reverse mode against finite differences).

Some go through the AD reading their source; the others through explicit rules in
rules/jnp_extra.py (NEEDED_RULES lists them; a test checks that they are registered). Every
function under test is a module-level def, since the AD reads its source.
"""
import zlib

import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import nn
from redraft.compiler.primitives.registry import rules_for
from redraft.numpy import promotion
from redraft.scipy import special
from redraft.test_util import check_grads
from redraft.transforms import grad
import redraft

RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return RNG.uniform(0.5, 1.5, shape).astype(np.float32)


def distinct(*shape):
    """Values 0.15 apart in random order: no ties for max, min and sort."""
    n = int(np.prod(shape))
    return ((RNG.permutation(n) - n / 2) * 0.15).astype(np.float32).reshape(shape)


# ---- reductions ----------------------------------------------------------------------------------

def prod(x): return jnp.prod(x, axis=1)
def prod_all_with_zero(x): return jnp.prod(x * jnp.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]))
def var(x): return jnp.var(x, axis=0)
def std(x): return jnp.std(x, ddof=1)
def logsumexp(x): return jnp.logsumexp(x, axis=1)
def nn_logsumexp(x): return nn.logsumexp(x, axis=-1, keepdims=True)
def special_logsumexp_b(x, b): return special.logsumexp(x, b=b)
def mean_axes(x): return jnp.mean(x, axis=(0, 2))
def max_axis(x): return jnp.max(x, axis=1)
def min_axis(x): return jnp.min(x, axis=0)
def cumsum(x): return jnp.cumsum(x, axis=1)
def cumprod(x): return jnp.cumprod(x, axis=1)
def sort(x): return jnp.sort(x, axis=0)
def sort_flat(x): return jnp.sort(x, axis=None)


REDUCTIONS = [
    (prod, lambda: [positive(3, 4)]),
    (prod_all_with_zero, lambda: [positive(2, 3)]),
    (var, lambda: [normal(3, 4)]),
    (std, lambda: [normal(3, 4)]),
    (logsumexp, lambda: [normal(3, 4)]),
    (nn_logsumexp, lambda: [normal(3, 4)]),
    (special_logsumexp_b, lambda: [normal(4), positive(4)]),
    (mean_axes, lambda: [normal(2, 3, 4)]),
    (max_axis, lambda: [distinct(3, 4)]),
    (min_axis, lambda: [distinct(3, 4)]),
    (cumsum, lambda: [normal(3, 4)]),
    (cumprod, lambda: [positive(3, 4)]),
    (sort, lambda: [distinct(3, 4)]),
    (sort_flat, lambda: [distinct(2, 3)]),
]

# ---- nn ------------------------------------------------------------------------------------------

def softmax(x): return nn.softmax(x, axis=-1)
def log_softmax(x): return nn.log_softmax(x, axis=0)
def relu(x): return nn.relu(x)
def gelu(x): return nn.gelu(x)
def gelu_exact(x): return nn.gelu(x, approximate=False)
def softplus(x): return nn.softplus(x)
def sigmoid(x): return nn.sigmoid(x)
def silu(x): return nn.silu(x)
def elu(x): return nn.elu(x)
def leaky_relu(x): return nn.leaky_relu(x)
def log_sigmoid(x): return nn.log_sigmoid(x)
def special_erf(x): return special.erf(x)
def special_gammaln(x): return special.gammaln(x)
def special_logit(x): return special.logit(x)
def special_log_ndtr(x): return special.log_ndtr(x)


AWAY_FROM_ZERO = np.array([-1.3, -0.4, 0.3, 0.8, 1.6], np.float32)
NN = [
    (softmax, lambda: [normal(3, 4)]),
    (log_softmax, lambda: [normal(3, 4)]),
    (relu, lambda: [AWAY_FROM_ZERO]),
    (gelu, lambda: [normal(5)]),
    (gelu_exact, lambda: [normal(5)]),
    (softplus, lambda: [normal(5)]),
    (sigmoid, lambda: [normal(5)]),
    (silu, lambda: [normal(5)]),
    (elu, lambda: [AWAY_FROM_ZERO]),
    (leaky_relu, lambda: [AWAY_FROM_ZERO]),
    (log_sigmoid, lambda: [normal(5)]),
    (special_erf, lambda: [normal(5)]),
    (special_gammaln, lambda: [positive(5) + 1]),
    (special_logit, lambda: [positive(5) * 0.5]),
    (special_log_ndtr, lambda: [normal(5)]),
]

# ---- norms and products --------------------------------------------------------------------------

def norm(x): return jnp.linalg.norm(x)
def norm_axis(x): return jnp.linalg.norm(x, axis=1)
def einsum(x, y): return jnp.einsum("ij,jk->ik", x, y)
def einsum_summed(x, y): return jnp.einsum("ijk,j->k", x, y)
def einsum_unary(x): return jnp.einsum("ij->j", x)
def einsum_keywords(x, y):  # JAX's keywords bind; redraft's products are at full precision
    return jnp.einsum("ij,jk,k->i", x, y, y[0], precision="highest", optimize="optimal",
                      preferred_element_type=jnp.float32)
def tensordot(x, y): return jnp.tensordot(x, y, axes=1)
def tensordot_pairs(x, y): return jnp.tensordot(x, y, axes=([0, 2], [1, 0]))
def outer(x, y): return jnp.outer(x, y)
def kron(x, y): return jnp.kron(x, y)
def inner(x, y): return jnp.inner(x, y)
def trace(x): return jnp.trace(x, 1)
def diagonal(x): return jnp.diagonal(x, -1)


PRODUCTS = [
    (norm, lambda: [normal(3, 4)]),
    (norm_axis, lambda: [normal(3, 4)]),
    (einsum, lambda: [normal(2, 3), normal(3, 4)]),
    (einsum_summed, lambda: [normal(2, 3, 2), normal(3)]),
    (einsum_unary, lambda: [normal(2, 3)]),
    (einsum_keywords, lambda: [normal(2, 3), normal(3, 3)]),
    (tensordot, lambda: [normal(2, 3), normal(3, 4)]),
    (tensordot_pairs, lambda: [normal(2, 3, 4), normal(4, 2, 3)]),
    (outer, lambda: [normal(3), normal(4)]),
    (kron, lambda: [normal(2, 2), normal(2, 3)]),
    (inner, lambda: [normal(2, 3), normal(4, 3)]),
    (trace, lambda: [normal(3, 4)]),
    (diagonal, lambda: [normal(4, 3)]),
]

# ---- shapes and selection ------------------------------------------------------------------------

def where(x, y): return jnp.where(x > 0, x, y)
def clip(x): return jnp.clip(x, -0.5, 0.5)
def tril(x): return jnp.tril(x)
def triu(x): return jnp.triu(x, 1)
def flip(x): return jnp.flip(x, 0)
def roll(x): return jnp.roll(x, 1, axis=1)
def tile(x): return jnp.tile(x, (2, 1, 2))
def repeat(x): return jnp.repeat(x, 2, axis=0)
def repeat_flat(x): return jnp.repeat(x, 3)
def pad(x): return jnp.pad(x, ((1, 0), (0, 2)))
def split(x): return jnp.split(x, 2, axis=1)[1]
def concatenate(x, y): return jnp.concatenate([x, y], axis=0)
def stack(x, y): return jnp.stack([x, y], axis=1)


COLUMNS = np.array([2, 0, 1, 1], np.int32)
ALONG = np.array([[0, 2, 1, 0], [1, 1, 0, 3], [3, 2, 1, 0]], np.int32)
def take(x): return jnp.take(x, COLUMNS, axis=1)
def take_along_axis(x): return jnp.take_along_axis(x, ALONG, axis=1)
def squeeze_expand(x): return jnp.squeeze(jnp.expand_dims(x, 0), 0)
def swapaxes(x): return jnp.swapaxes(x, 0, 1)
def moveaxis(x): return jnp.moveaxis(x, 0, -1)
def atleast_2d(x): return jnp.atleast_2d(x)


SHAPES = [
    (where, lambda: [AWAY_FROM_ZERO, normal(5)]),
    (clip, lambda: [np.array([-1.2, -0.3, 0.1, 0.4, 0.9], np.float32)]),
    (tril, lambda: [normal(3, 3)]),
    (triu, lambda: [normal(3, 4)]),
    (flip, lambda: [normal(3, 4)]),
    (roll, lambda: [normal(3, 4)]),
    (tile, lambda: [normal(3, 2)]),
    (repeat, lambda: [normal(3, 2)]),
    (repeat_flat, lambda: [normal(2, 2)]),
    (pad, lambda: [normal(3, 4)]),
    (split, lambda: [normal(3, 4)]),
    (concatenate, lambda: [normal(2, 3), normal(1, 3)]),
    (stack, lambda: [normal(3), normal(3)]),
    (take, lambda: [normal(3, 4)]),
    (take_along_axis, lambda: [normal(3, 4)]),
    (squeeze_expand, lambda: [normal(3, 4)]),
    (swapaxes, lambda: [normal(3, 4)]),
    (moveaxis, lambda: [normal(2, 3, 4)]),
    (atleast_2d, lambda: [normal(3)]),
]

# ---- elementwise ---------------------------------------------------------------------------------

def hypot(x, y): return jnp.hypot(x, y)
def logaddexp(x, y): return jnp.logaddexp(x, y)
def arctan2(x, y): return jnp.arctan2(x, y)
def sinc(x): return jnp.sinc(x)
def expm1(x): return jnp.expm1(x)
def log1p(x): return jnp.log1p(x)
def log2(x): return jnp.log2(x)
def log10(x): return jnp.log10(x)
def square(x): return jnp.square(x)
def power(x): return jnp.power(x, 2.5)
def absolute(x): return jnp.abs(x)


ELEMENTWISE = [
    (hypot, lambda: [normal(4), normal(4)]),
    (logaddexp, lambda: [normal(4), normal(4)]),
    (arctan2, lambda: [normal(4), normal(4)]),
    (sinc, lambda: [np.array([-1.3, -0.01, 0.0, 0.02, 0.7], np.float32)]),
    (expm1, lambda: [normal(4)]),
    (log1p, lambda: [positive(4)]),
    (log2, lambda: [positive(4)]),
    (log10, lambda: [positive(4)]),
    (square, lambda: [normal(4)]),
    (power, lambda: [positive(4)]),
    (absolute, lambda: [AWAY_FROM_ZERO]),
]

CASES = REDUCTIONS + NN + PRODUCTS + SHAPES + ELEMENTWISE


@pytest.mark.parametrize("fn, make_args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_second_order(fn, make_args):
    RNG.bit_generator.state = np.random.PCG64(zlib.crc32(fn.__name__.encode())).state
    check_grads(fn, make_args(), order=2, modes=("fwd", "rev"))


# The functions that needed explicit rules (the AD could not transform their source);
# promote and promote_inexact (*args) unlock most of nn and scipy.special. (jnp.pad is read
# from its source now, every mode: tests/redraft/numpy/test_pad_derivatives.py.)
NEEDED_RULES = [
    promotion.promote, promotion.promote_inexact, special.erf, special.erfc, special.erfinv,
    special.expit, special.gammaln, special.digamma, jnp.prod, jnp.var, jnp.std,
    jnp.logsumexp, jnp.cumprod, jnp.sort, nn.softmax, nn.log_softmax, nn.gelu, nn.softplus,
    nn.sigmoid, nn.silu, jnp.linalg._euclidean_norm, jnp.einsum, jnp.tensordot, jnp.outer,
    jnp.inner,
    jnp.trace, jnp.diagonal, jnp.tril, jnp.triu, jnp.flip, jnp.roll, jnp.tile, jnp.repeat,
    jnp.split, jnp.take_along_axis, jnp.atleast_1d, jnp.atleast_2d, jnp.atleast_3d,
    jnp.hypot, jnp.sinc, jnp.log2, jnp.log10]


def test_needed_rules_are_registered():
    missing = [f.__name__ for f in NEEDED_RULES if rules_for(f) is None]
    assert not missing, f"no rules for {missing}"


def test_same_logsumexp_everywhere():
    assert nn.logsumexp is jnp.logsumexp and special.logsumexp is jnp.logsumexp


def prod_through_zero(x): return jnp.prod(x)


def test_prod_gradient_at_a_zero():
    """The product's gradient at a zero is the product of the others, not NaN."""
    x = np.array([2.0, 0.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(grad(prod_through_zero)(x)), [0.0, 6.0, 0.0])


def logsumexp_sum(x): return jnp.sum(jnp.logsumexp(x, axis=0))


def test_logsumexp_gradient_does_not_overflow():
    x = np.array([[1000.0, -1000.0], [1000.0, 0.0]], np.float32)
    out = np.asarray(grad(logsumexp_sum)(x))
    np.testing.assert_allclose(out, [[0.5, 0.0], [0.5, 1.0]], atol=1e-4)


MASK = np.array([True, False, True])
def masked_prod(x): return jnp.prod(x, where=MASK)
def l1_norm(x): return jnp.linalg.norm(x, ord=1)


@pytest.mark.parametrize("fn", [masked_prod])
def test_uncovered_forms_say_so(fn):
    """Forms the rules do not cover raise NotImplementedError, never a wrong derivative."""
    with pytest.raises(NotImplementedError, match="not implemented"):
        grad(fn)(np.array([0.5, 2.0, 3.0], np.float32))


def test_norms_other_than_the_euclidean_differentiate_through_their_source():
    x = np.array([0.5, -2.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(grad(l1_norm)(x)), np.sign(x))


def cast_through_int(x): return jnp.sum(x.astype(np.int32).astype(np.float32) * x)


def test_bug_gradient_through_integer_cast():
    x = np.array([0.3, 1.2, 2.5], np.float32)
    np.testing.assert_allclose(np.asarray(grad(cast_through_int)(x)), [0.0, 1.0, 2.0])


def cast_to_float32(x): return jnp.sum(x.astype(np.float32) * x)


def test_bug_tangent_astype_numpy_type():
    x = np.array([0.3, 1.2, 2.5], np.float32)
    check_grads(cast_to_float32, [x], order=1, modes=("fwd",))


def positional_only(x, /): return x * x
def calls_positional_only(x): return jnp.sum(positional_only(x))


def test_bug_positional_only_parameters():
    np.testing.assert_allclose(np.asarray(grad(calls_positional_only)(np.ones(2, np.float32))),
                               [2.0, 2.0])


def _masked_sum(x):
    return jnp.sum(jnp.sin(x), axis=1, where=x > 0)


def _masked_mean(x):
    return jnp.sum(jnp.mean(x * x, axis=0, where=x > 0) ** 2)


def _masked_mean_all(x):
    return jnp.mean(jnp.exp(x), where=x < 1.0)


@pytest.mark.parametrize("fn", [_masked_sum, _masked_mean, _masked_mean_all])
def test_reductions_with_where_differentiate_only_the_kept_elements(fn):
    """sum/mean(where=m): the elements m leaves out get no cotangent, and a mean divides by
    the number kept (the rules ignored `where`: a silently wrong gradient)."""
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
    m = x > 0 if fn is not _masked_mean_all else x < 1.0
    g = np.asarray(grad(lambda t: jnp.sum(fn(t)))(x))
    assert np.all(g[~m] == 0)
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


KINKS = [  # (function, point, JAX 0.10.2's derivative there)
    (nn.relu, 0.0, 0.0), (nn.relu6, 0.0, 0.0), (nn.relu6, 6.0, 0.0), (jnp.abs, 0.0, 1.0),
    (nn.hard_tanh, 1.0, 1.0), (nn.hard_tanh, -1.0, 1.0),
    (lambda x: jnp.clip(x, 0.0, 1.0), 0.0, 0.5), (lambda x: jnp.clip(x, 0.0, 1.0), 1.0, 0.5),
    (lambda x: jnp.clip(x, min=0.0), 0.0, 0.5), (lambda x: jnp.maximum(x, 0.0), 0.0, 0.5),
    (lambda x: jnp.fmax(x, 0.0), 0.0, 0.0), (lambda x: jnp.fmin(x, 0.0), 0.0, 0.0),
    (lambda x: jnp.fmin(0.0, x), 0.0, 1.0), (nn.leaky_relu, 0.0, 1.0), (nn.elu, 0.0, 1.0),
]


@pytest.mark.parametrize("fn, x, slope", KINKS)
def test_derivatives_at_kinks_follow_jax(fn, x, slope):
    """Where a function has no derivative, redraft returns the one JAX's rules give, so
    that gradients at exact zeros (zero-initialised biases, ReLU inputs) agree with JAX's,
    in both modes and compiled."""
    assert float(grad(fn)(x)) == slope
    assert float(redraft.jit(grad(fn))(x)) == slope
    assert float(redraft.jvp(fn, (x,), (1.0,))[1]) == slope


@pytest.mark.parametrize("mode, value, slope", [
    ("clip", [0.0, 3.0, 0.0, 0.0], [8.0, 0.0, 0.0, 2.0]),   # JAX 0.10.2's values
    ("wrap", [0.0, 1.0, 3.0, 1.0], [1.0, 6.0, 0.0, 3.0]),
])
def test_take_modes_read_and_differentiate_as_jax(mode, value, slope):
    """take(x, [0, 5, -1, -7], mode=...): 'clip' clips (a negative index is not wrapped),
    'wrap' wraps; the cotangent goes where each index read (it went to the unmapped index,
    and out-of-range ones were dropped: a silently wrong gradient)."""
    x = np.arange(4.0, dtype=np.float32)
    idx = np.array([0, 5, -1, -7])

    def f(x):
        return jnp.sum(jnp.take(x, idx, mode=mode) * np.float32([1, 2, 3, 4]))
    np.testing.assert_array_equal(jnp.take(x, idx, mode=mode), value)
    np.testing.assert_array_equal(grad(f)(x), slope)
    np.testing.assert_array_equal(redraft.jit(grad(f))(x), slope)


def _bilinear(x, a):
    return jnp.einsum("i,ij,j->", x, a, x)


def _chain_of_three(b, c):
    return jnp.sum(jnp.einsum("ij,jk,kl", b, c, b) ** 2)


def test_einsum_of_three_operands_differentiates():
    """The frontend reads jnp.einsum of n > 2 operands as a chain of two-operand einsums
    (the rules' form); such calls were refused under grad."""
    a = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 10
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(grad(_bilinear)(x, a), x @ (a + a.T), rtol=1e-5)
    np.testing.assert_allclose(redraft.jit(grad(_bilinear))(x, a), x @ (a + a.T), rtol=1e-5)
    check_grads(_chain_of_three, (a[:3, :3], a[1:, 1:]), order=1, modes=("fwd", "rev"))


def _diffs(x):
    return jnp.sum(jnp.diff(x) ** 2) + jnp.sum(jnp.diff(x, n=2) ** 2)


def _cross_product(x):
    return jnp.sum(jnp.cross(x[:3], x[1:]) ** 2)


@pytest.mark.parametrize("fn, want", [(_diffs, [2.0, -8.0, -8.0, 14.0]),
                                      (_cross_product, [-80.0, -90.0, 120.0, -14.0])])
def test_diff_and_cross_differentiate(fn, want):
    """Values from JAX 0.10.2 at x = [0, 1, 4, 9]: diff picked its step through a function
    value and cross broadcast through *args, which the AD could not read."""
    x = np.float32([0.0, 1.0, 4.0, 9.0])
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(grad(fn))(x), want, rtol=1e-6)


def _trace(b):
    return jnp.einsum("ii", b) ** 2


def _diagonal_contraction(t, a):
    return jnp.sum(jnp.einsum("iij,ki->kj", t, a) ** 2)


def _weighted_diagonal(t):
    return jnp.sum(jnp.einsum("iji->j", t) * jnp.arange(3.0))


def test_einsum_with_a_label_repeated_in_one_operand_differentiates():
    # traces and diagonals ('ii', 'iij'): the cotangent lies on the diagonal (was refused)
    b = normal(3, 3)
    np.testing.assert_allclose(grad(_trace)(b), 2 * np.trace(b) * np.eye(3), rtol=1e-5)
    t = normal(3, 3, 4)
    t3 = normal(3, 3, 3)
    got = grad(_weighted_diagonal)(t3)
    want = np.zeros((3, 3, 3), np.float32)
    for i in range(3):
        want[i, :, i] = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(got), want)
    check_grads(_diagonal_contraction, (t, normal(2, 3)), order=2, modes=("fwd", "rev"))
    check_grads(_trace, (b,), order=2, modes=("fwd", "rev"))
