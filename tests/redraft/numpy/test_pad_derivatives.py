"""Derivatives of jnp.pad in every mode JAX differentiates: gradients against JAX 0.10.2's
(stored here; JAX is not imported), forward mode against central differences and reverse
against forward (second order too), batched, and compiled against eager. jnp.pad has no
rules of its own: the transforms read its source (slices, rev, concatenate, lax.pad, static
gathers and reductions), so these check that every mode's source stays differentiable."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import check_grads

X = (np.arange(12.0, dtype=np.float32).reshape(3, 4) / 4 - 1.3)

# (mode, keywords, per-axis pad widths, JAX's grad of sum(pad(X) ** 3) at X)
CASES = [
    ("edge", {}, ((1, 2), (3, 0)),
     [[40.56, 6.615, 3.84, 1.815],
      [1.08, 0.00749999, 0.12, 0.6075],
      [17.64, 8.1225, 12.96, 18.9225]]),
    ("reflect", {}, ((2, 1), (5, 6)),
     [[10.14, 16.5375, 9.6, 2.7225],
      [1.62, 0.1125, 1.8, 5.4675],
      [5.88, 27.075, 43.2, 37.845]]),
    ("reflect", {'reflect_type': 'odd'}, ((2, 1), (5, 9)),
     [[1617.3, 157.5, 78.75, -535.163],
      [222.66, 8.09999, 4.04999, -775.507],
      [-2202.12, -160.2, -80.1, 3156.61]]),
    ("symmetric", {}, ((4, 1), (2, 6)),
     [[40.56, 26.46, 7.68, 3.63],
      [2.16, 0.0599999, 0.48, 2.43],
      [23.52, 43.32, 34.56, 50.46]]),
    ("symmetric", {'reflect_type': 'odd'}, ((4, 1), (2, 9)),
     [[482.64, -86.4, 66.96, 846],
      [-146.4, 12, 2.4, 84],
      [-585.6, 48, 9.6, 336]]),
    ("wrap", {}, ((4, 1), (2, 9)),
     [[60.84, 29.7675, 23.04, 10.89],
      [2.16, 0.0449999, 0.96, 4.86],
      [17.64, 24.3675, 51.84, 75.69]]),
    ("linear_ramp", {'end_values': ((1.0, 2.0), (-1.0, 3.0))}, ((2, 1), (2, 3)),
     [[7.33547, 3.30844, 1.935, 8.56125],
      [0.90375, 0.00749999, 0.12, 8.61],
      [1.50375, 2.7075, 4.32, 20.21]]),
    ("maximum", {}, ((2, 1), (2, 3)),
     [[5.07, 3.3075, 1.92, 5.445],
      [0.27, 0.00749999, 0.12, 3.645],
      [5.88, 10.83, 17.28, 151.38]]),
    ("minimum", {'stat_length': 2}, ((2, 1), (2, 3)),
     [[45.63, 9.9225, 23.04, 2.7225],
      [1.62, 0.015, 0.96, 1.215],
      [4.41, 2.7075, 17.28, 6.3075]]),
    ("mean", {'stat_length': ((1, 2), (3, 2))}, ((2, 1), (2, 3)),
     [[21.825, 16.5375, 18.5259, 8.87344],
      [0.5375, 0.51875, 3.06922, 3.96797],
      [3.5375, 5.01875, 16.4942, 17.093]]),
    ("median", {}, ((2, 1), (2, 3)),
     [[5.07, 9.72469, 8.33719, 0.9075],
      [1.08, 0.19875, 0.64875, 2.43],
      [1.47, 11.3747, 12.9872, 6.3075]]),
    ("empty", {}, ((2, 1), (2, 3)),
     [[5.07, 3.3075, 1.92, 0.9075],
      [0.27, 0.00749999, 0.12, 0.6075],
      [1.47, 2.7075, 4.32, 6.3075]]),
    ("constant", {'constant_values': ((1.0, 2.0), (-1.0, 3.0))}, ((2, 1), (0, 3)),
     [[5.07, 3.3075, 1.92, 0.9075],
      [0.27, 0.00749999, 0.12, 0.6075],
      [1.47, 2.7075, 4.32, 6.3075]]),
]
IDS = [f"{mode}-{kw.get('reflect_type', '')}" for mode, kw, _, _ in CASES]


def cubed_sum(mode, kw, widths):
    def f(x):
        return jnp.sum(jnp.pad(x, widths, mode=mode, **kw) ** 3)
    return f


@pytest.mark.parametrize("mode, kw, widths, expected", CASES, ids=IDS)
def test_gradient_matches_jax(mode, kw, widths, expected):
    got = redraft.grad(cubed_sum(mode, kw, widths))(X)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("mode, kw, widths, expected", CASES, ids=IDS)
def test_forward_and_reverse_against_differences(mode, kw, widths, expected):
    """First and second order: jvp against central differences, vjp against jvp; X's
    entries are 0.25 apart, so max, min and median keep their choice within eps."""
    rng = np.random.default_rng(len(IDS))
    x = (X + rng.uniform(-0.05, 0.05, X.shape)).astype(np.float32)
    check_grads(cubed_sum(mode, kw, widths), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("mode, kw, widths, expected", CASES, ids=IDS)
def test_batched_gradient_and_tangent(mode, kw, widths, expected):
    f = cubed_sum(mode, kw, widths)
    xs = np.stack([X, -2 * X, X[::-1]])
    batched = redraft.vmap(redraft.grad(f))(xs)
    for x, got in zip(xs, batched):
        np.testing.assert_allclose(got, redraft.grad(f)(x), rtol=1e-5, atol=1e-4)
    ts = np.ones_like(xs)
    _, tangents = redraft.vmap(lambda x, t: redraft.jvp(f, (x,), (t,)))(xs, ts)
    for x, t, got in zip(xs, ts, tangents):
        np.testing.assert_allclose(got, redraft.jvp(f, (x,), (t,))[1], rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("mode, kw, widths, expected", CASES, ids=IDS)
def test_compiled_gradient_matches_eager(mode, kw, widths, expected):
    f = cubed_sum(mode, kw, widths)
    np.testing.assert_allclose(redraft.jit(redraft.grad(f))(X), redraft.grad(f)(X),
                               rtol=1e-5, atol=1e-4)


def test_probe_cases_against_jax():
    reflect = redraft.grad(lambda x: jnp.sum(jnp.pad(x, 2, mode="reflect") ** 2))
    np.testing.assert_allclose(reflect(jnp.arange(5.0)), [0.0, 4.0, 12.0, 12.0, 8.0])
    edge = redraft.grad(lambda x: jnp.sum(jnp.pad(x, (1, 3), mode="edge") ** 2))
    np.testing.assert_allclose(edge(jnp.arange(5.0)), [0.0, 2.0, 4.0, 6.0, 32.0])


def test_ties_share_the_statistic_gradient_as_in_jax():
    x = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
    tied = redraft.grad(lambda x: jnp.sum(jnp.pad(x, 2, mode="maximum")))(x)
    np.testing.assert_allclose(tied, [1.0, 3.0, 3.0, 1.0])
    middle = redraft.grad(lambda x: jnp.sum(jnp.pad(x, 2, mode="median")))(x)
    np.testing.assert_allclose(middle, [1.0, 3.0, 1.0, 3.0])


def test_higher_order_and_jacobians_against_jax():
    hess = redraft.hessian(lambda a: jnp.sum(jnp.pad(a, 2, mode="reflect") ** 3))
    np.testing.assert_allclose(hess(np.arange(3.0, dtype=np.float32)),
                               [[0, 0, 0], [0, 18, 0], [0, 0, 24]])
    jac = redraft.jacfwd(lambda a: jnp.pad(a, (1, 2), mode="wrap"))(
        np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(jac, [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0],
                                     [0, 1, 0]])
    rows = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]], np.float32)
    outer = redraft.grad(lambda a: jnp.sum(
        redraft.vmap(lambda r: jnp.pad(r, 2, mode="median"))(a) ** 2))(rows)
    np.testing.assert_allclose(outer, [[2, 10, 20], [8, 0, 30]])


def test_3d_edge_gradient_against_jax():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 10
    got = redraft.grad(lambda a: jnp.sum(jnp.pad(a, ((1, 0), (0, 2), (2, 1)), mode="edge")
                                         ** 3))(a)
    np.testing.assert_allclose(got, [[[0.0, 0.06, 0.24, 1.08], [2.88, 1.5, 2.16, 5.88],
                                      [34.56, 14.58, 18.0, 43.56]],
                                     [[12.96, 5.07, 5.88, 13.5], [23.04, 8.67, 9.72, 21.66],
                                      [108.0, 39.69, 43.56, 95.22]]], rtol=1e-5)


def test_compiled_gradient_of_a_wide_odd_reflection_against_jax():
    f = redraft.jit(redraft.grad(lambda a: jnp.sum(
        jnp.pad(a, (5, 4), mode="reflect", reflect_type="odd") ** 2)))
    np.testing.assert_allclose(f(np.arange(3.0, dtype=np.float32)), [-140.0, 12.0, 140.0])


def test_pad_has_no_rules_of_its_own():
    """Every mode differentiates through pad's source; a rule on jnp.pad would take that
    over (the constant-only rules it had refused every other mode)."""
    from redraft.compiler.primitives.registry import DIFFERENTIATED_BY_SOURCE, rules_for
    assert rules_for(jnp.pad) is None and jnp.pad in DIFFERENTIATED_BY_SOURCE


@pytest.mark.parametrize("mode, kw, widths, expected", CASES, ids=IDS)
def test_batched_pad_matches_each_example(mode, kw, widths, expected):
    """vmap reads pad's source too (no loop over the examples), eager and compiled."""
    xs = np.stack([X, 3 * X - 1])
    one = [np.asarray(jnp.pad(x, widths, mode=mode, **kw)) for x in xs]
    f = redraft.vmap(lambda x: jnp.pad(x, widths, mode=mode, **kw))
    np.testing.assert_allclose(f(xs), np.stack(one), rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(f)(xs), np.stack(one), rtol=1e-6)


def test_odd_reflection_values_against_jax():
    x = jnp.array([1.0, 2.0, 4.0, 8.0])
    np.testing.assert_array_equal(
        jnp.pad(x, (9, 7), mode="reflect", reflect_type="odd"),
        [-20, -16, -14, -13, -12, -10, -6, -2, 0, 1, 2, 4, 8, 12, 14, 15, 16, 18, 22, 26])
    np.testing.assert_array_equal(
        jnp.pad(x, (9, 7), mode="symmetric", reflect_type="odd"),
        [-13, -13, -12, -10, -6, -6, -2, 0, 1, 1, 2, 4, 8, 8, 12, 14, 15, 15, 16, 18])
    m = jnp.array([[1, 2, 4], [8, 16, 32]])
    reflected = jnp.pad(m, ((3, 2), (4, 5)), mode="reflect", reflect_type="odd")
    assert reflected.dtype == m.dtype
    np.testing.assert_array_equal(reflected, [
        [100, 80, 40, 0, -20, -40, -80, -120, -140, -160, -200, -240],
        [65, 52, 26, 0, -13, -26, -52, -78, -91, -104, -130, -156],
        [30, 24, 12, 0, -6, -12, -24, -36, -42, -48, -60, -72],
        [-5, -4, -2, 0, 1, 2, 4, 6, 7, 8, 10, 12],
        [-40, -32, -16, 0, 8, 16, 32, 48, 56, 64, 80, 96],
        [-75, -60, -30, 0, 15, 30, 60, 90, 105, 120, 150, 180],
        [-110, -88, -44, 0, 22, 44, 88, 132, 154, 176, 220, 264]])
    np.testing.assert_array_equal(
        jnp.pad(m, ((3, 2), (4, 5)), mode="symmetric", reflect_type="odd"), [
            [12, 12, 0, -6, -6, -12, -24, -24, -36, -42, -42, -48],
            [12, 12, 0, -6, -6, -12, -24, -24, -36, -42, -42, -48],
            [-2, -2, 0, 1, 1, 2, 4, 4, 6, 7, 7, 8],
            [-2, -2, 0, 1, 1, 2, 4, 4, 6, 7, 7, 8],
            [-16, -16, 0, 8, 8, 16, 32, 32, 48, 56, 56, 64],
            [-16, -16, 0, 8, 8, 16, 32, 32, 48, 56, 56, 64],
            [-30, -30, 0, 15, 15, 30, 60, 60, 90, 105, 105, 120]])
    single = jnp.array([3.0])
    for mode in ("reflect", "symmetric"):
        np.testing.assert_array_equal(jnp.pad(single, (2, 3), mode=mode, reflect_type="odd"),
                                      [3.0] * 6)


def test_reflect_type_is_checked():
    with pytest.raises(ValueError, match="reflect_type must be 'even' or 'odd'"):
        jnp.pad(jnp.ones(3), 1, mode="reflect", reflect_type="bogus")
