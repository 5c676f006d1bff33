"""Programs whose derivatives redraft once got silently wrong (issue 8), each checked in
every transform against float64 central differences of the same math in NumPy.

Mechanisms covered: a reverse rule reading a forward value that a later loop rebinds (SSA
gives a loop fresh carried names); a reversed loop body that kept the cotangent of what it
assigns; parameters rebound in loops nested in `if`/`while`/`break`; `jnp.full` with a traced
fill value. Every program is a function of one float vector with a scalar result, so one
harness checks grad, jvp, vjp, jit(grad), vmap(grad), both Hessian-vector products and
grad of grad along a line. Then the NaN-safe rules: the untaken side of a selection stays
exactly zero against an infinite partial, a taken path is never zeroed (NaN where its
arithmetic has no derivative), and log1p(exp(x)) has its true derivative at overflow.
"""
import numpy as np
import pytest
from redraft.compiler.transforms.calls import callees

import redraft
import redraft.numpy as jnp
from redraft.test_util import numerical_grad as fd_grad

RTOL, ATOL = 3e-3, 3e-4


# ---- float64 references --------------------------------------------------------------------------

def fd_uhv(f, x, u, v, h=1e-3):
    """uᵀ H v by a second-order central difference of f in float64."""
    x, u, v = (np.asarray(a, np.float64) for a in (x, u, v))
    return (f(x + h * u + h * v) - f(x + h * u - h * v) - f(x - h * u + h * v)
            + f(x - h * u - h * v)) / (4 * h * h)


def close(got, want, scale=1.0):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=RTOL,
                               atol=ATOL * max(1.0, scale))


# ---- the programs, each with its NumPy twin ------------------------------------------------------

def tanh_then_loop(x):  # issue 8, case 1, on one vector
    h = jnp.tanh(x * 0.7)
    for i in range(3):
        h = h * 0.5 + jnp.sin(h)
    return jnp.sum(h ** 2)


def np_tanh_then_loop(x):
    h = np.tanh(x * 0.7)
    for i in range(3):
        h = h * 0.5 + np.sin(h)
    return np.sum(h ** 2)


def param_rebound_to_constant(x):  # sin's rule read cos(1.0)
    v = jnp.sin(x)
    for k in range(2):
        x = 1.0
    return jnp.sum(v)


def np_param_rebound_to_constant(x):
    return np.sum(np.sin(x))


def param_rebound_then_used(x):  # the rebound value is used too
    v = jnp.exp(x * 0.5)
    for k in range(2):
        x = x * 2.0
    return jnp.sum(v * x)


def np_param_rebound_then_used(x):
    return np.sum(np.exp(x * 0.5) * x * 4.0)


def assigned_in_loop(x):  # the reversed body did not clear a_bar: 0.75 for 0.25
    for i in range(3):
        a = x
    return jnp.mean(a)


def np_assigned_in_loop(x):
    return np.mean(x)


def assigned_from_carried(x):
    s = x
    for i in range(3):
        a = jnp.sin(s)
        s = s * 1.5
    return jnp.sum(a * s)


def np_assigned_from_carried(x):
    s = x
    for i in range(3):
        a = np.sin(s)
        s = s * 1.5
    return np.sum(a * s)


def assigned_on_one_iteration(x):
    a = x * 0.0
    for i in range(3):
        if i == 1:
            a = jnp.cos(x) * 2.0
    return jnp.sum(a)


def np_assigned_on_one_iteration(x):
    return np.sum(np.cos(x) * 2.0)


def first_defined_in_loop_branch(x):
    for i in range(3):
        if i == 0:
            b = jnp.sin(x)
    return jnp.sum(b * x)


def np_first_defined_in_loop_branch(x):
    return np.sum(np.sin(x) * x)


def loop_in_if(x):
    y = jnp.sin(x)
    if True:
        for i in range(2):
            x = x * 1.5
    return jnp.sum(x * y)


def np_loop_in_if(x):
    y = np.sin(x)
    for i in range(2):
        x = x * 1.5
    return np.sum(x * y)


def rebound_then_loop_in_if(x):
    y = jnp.sin(x)
    if True:
        x = x * 2.0
        for i in range(2):
            x = x + y
    return jnp.sum(x * x)


def np_rebound_then_loop_in_if(x):
    y = np.sin(x)
    x = x * 2.0
    for i in range(2):
        x = x + y
    return np.sum(x * x)


def loop_in_value_if(x):
    y = jnp.sin(x)
    if jnp.sum(x) > 0:
        for i in range(2):
            x = x * 1.5
    else:
        x = x * 2.0
    return jnp.sum(x * y)


def np_loop_in_value_if(x):
    y = np.sin(x)
    if np.sum(x) > 0:
        for i in range(2):
            x = x * 1.5
    else:
        x = x * 2.0
    return np.sum(x * y)


def loop_in_while(x):
    n = 0
    while n < 2:
        for i in range(2):
            x = jnp.sin(x) + 0.5 * x
        n = n + 1
    return jnp.sum(x)


def np_loop_in_while(x):
    for n in range(4):
        x = np.sin(x) + 0.5 * x
    return np.sum(x)


def loop_with_break(x):
    for j in range(4):
        for i in range(2):
            x = x * 1.1 + 0.1
        if j >= 1:
            break
    return jnp.sum(x ** 2)


def np_loop_with_break(x):
    for j in range(4):
        x = x * 1.1 + 0.1
    return np.sum(x ** 2)


def nested_loops(x):
    s = x
    for i in range(2):
        t = s * 2.0
        for j in range(2):
            s = jnp.sin(s) + t
    return jnp.sum(s * x)


def np_nested_loops(x):
    s = x
    for i in range(2):
        t = s * 2.0
        for j in range(2):
            s = np.sin(s) + t
    return np.sum(s * x)


def full_of_element(x):  # jnp.full gave no derivative to its fill value
    v = jnp.full((3,), x[0]) * jnp.sin(x)
    return jnp.sum(v * x[1])


def np_full_of_element(x):
    return np.sum(np.full((3,), x[0]) * np.sin(x) * x[1])


def full_like_of_element(x):
    return jnp.sum(jnp.full_like(x, x[2]) ** 2 * x)


def np_full_like_of_element(x):
    return np.sum(np.full_like(x, x[2]) ** 2 * x)


def rebound_then_loop(x):  # found by hand: exp's rule read the loop's y
    y = jnp.exp(x * 0.3)
    x = x * 2.0
    for i in range(2):
        y = y * x
        x = jnp.sin(x)
    return jnp.sum(y + x)


def np_rebound_then_loop(x):
    y = np.exp(x * 0.3)
    x = x * 2.0
    for i in range(2):
        y = y * x
        x = np.sin(x)
    return np.sum(y + x)


def nested_loop_after_tanh(x):
    h = x
    for i in range(2):
        h = jnp.tanh(h)
        for j in range(2):
            h = h + 0.1 * jnp.sin(h)
    return jnp.sum(h * h)


def np_nested_loop_after_tanh(x):
    h = x
    for i in range(2):
        h = np.tanh(h)
        for j in range(2):
            h = h + 0.1 * np.sin(h)
    return np.sum(h * h)


def loops_in_both_branches(x):
    y = x
    if jnp.sum(x) > 0:
        y = y * 2.0
        for i in range(2):
            y = jnp.sin(y)
    else:
        for i in range(2):
            y = jnp.cos(y)
    return jnp.sum(y * x)


def np_loops_in_both_branches(x):
    y = x
    if np.sum(x) > 0:
        y = y * 2.0
        for i in range(2):
            y = np.sin(y)
    else:
        for i in range(2):
            y = np.cos(y)
    return np.sum(y * x)


def alias_then_loop(x):
    v = jnp.tanh(x)
    w = v
    for i in range(3):
        v = v * 0.5
    return jnp.sum(w * v)


def np_alias_then_loop(x):
    v = np.tanh(x)
    return np.sum(v * v * 0.125)


def exp_then_loop(x):
    y = jnp.exp(x)
    for i in range(2):
        y = y / (1.0 + y)
    return jnp.sum(jnp.log(y))


def np_exp_then_loop(x):
    y = np.exp(x)
    for i in range(2):
        y = y / (1.0 + y)
    return np.sum(np.log(y))


PROGRAMS = [tanh_then_loop, param_rebound_to_constant, param_rebound_then_used,
            assigned_in_loop, assigned_from_carried, assigned_on_one_iteration,
            first_defined_in_loop_branch, loop_in_if, rebound_then_loop_in_if,
            loop_in_value_if, loop_in_while, loop_with_break, nested_loops, full_of_element,
            full_like_of_element, rebound_then_loop, nested_loop_after_tanh,
            loops_in_both_branches, alias_then_loop, exp_then_loop]
# an `if` on a traced value cannot be compiled (as in JAX)
NO_JIT = {loop_in_value_if, loops_in_both_branches}
X = np.array([0.3, -0.5, 0.8])
U = np.array([0.6, 0.2, -0.7])
V = np.array([-0.4, 0.9, 0.5])


def twin(f):
    return globals()[f"np_{f.__name__}"]


def ids(fs):
    return [f.__name__ for f in fs]


@pytest.mark.parametrize("f", PROGRAMS, ids=ids(PROGRAMS))
def test_grad_and_jit_grad(f):
    want = fd_grad(twin(f), X)
    close(redraft.grad(f)(X.astype(np.float32)), want)
    if f not in NO_JIT:
        close(redraft.jit(redraft.grad(f))(X.astype(np.float32)), want)


@pytest.mark.parametrize("f", PROGRAMS, ids=ids(PROGRAMS))
def test_jvp_and_vjp(f):
    want = fd_grad(twin(f), X)
    out, tangent = redraft.jvp(f, (X.astype(np.float32),), (V.astype(np.float32),))
    close(out, twin(f)(X))
    close(tangent, want @ V)
    out, pullback = redraft.vjp(f, X.astype(np.float32))
    (bar,) = pullback(np.float32(-1.5))
    close(bar, -1.5 * want)


@pytest.mark.parametrize("f", PROGRAMS, ids=ids(PROGRAMS))
def test_vmap_grad(f):
    xs = np.stack([X, U, -V])
    got = redraft.vmap(redraft.grad(f))(xs.astype(np.float32))
    close(got, np.stack([fd_grad(twin(f), x) for x in xs]))


@pytest.mark.parametrize("f", PROGRAMS, ids=ids(PROGRAMS))
def test_hessian_vector_products_both_ways(f):
    want = fd_uhv(twin(f), X, U, V)
    x, v = X.astype(np.float32), V.astype(np.float32)
    _, fwd_over_rev = redraft.jvp(redraft.grad(f), (x,), (v,))
    close(U @ np.asarray(fwd_over_rev, np.float64), want, abs(want))

    f_jvp = callees.jvp_of(f, (True,))  # the jvp function itself, to differentiate again

    def directional(y):
        out, out_dot = f_jvp(y, v)
        return out_dot

    rev_over_fwd = redraft.grad(directional)(x)
    close(U @ np.asarray(rev_over_fwd, np.float64), want, abs(want))


@pytest.mark.parametrize("f", PROGRAMS, ids=ids(PROGRAMS))
def test_grad_of_grad_along_a_line(f):
    x, v = X.astype(np.float32), V.astype(np.float32)

    def along(s):
        return f(x + s * v)

    want = fd_uhv(twin(f), X, V, V)
    close(redraft.grad(redraft.grad(along))(np.float32(0.0)), want, abs(want))


# ---- the programs exactly as issue 8 gives them --------------------------------------------------

def issue_case_1(x, w):
    h = jnp.tanh(x @ w)
    for i in range(3):
        h = h * 0.5 + jnp.sin(h)
    return jnp.sum(h ** 2)


def np_issue_case_1(x, w):
    h = np.tanh(x @ w)
    for i in range(3):
        h = h * 0.5 + np.sin(h)
    return np.sum(h ** 2)


def test_issue_case_1_in_both_arguments():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5
    want_x = fd_grad(lambda a: np_issue_case_1(a, w), x)
    want_w = fd_grad(lambda a: np_issue_case_1(x, a), w)
    args = (x.astype(np.float32), w.astype(np.float32))
    for grad in (redraft.grad(issue_case_1, argnums=(0, 1)),
                 redraft.jit(redraft.grad(issue_case_1, argnums=(0, 1)))):
        gx, gw = grad(*args)
        close(gx, want_x)
        close(gw, want_w)


def test_tanh_adjoint_reads_tanh_output_not_the_loop_value():
    """The emitted reverse pass reads `h` as tanh made it: the loop writes its own name."""
    text = redraft.emit(issue_case_1, "grad")
    loop_writes = [line.split("=")[0].strip() for line in text.splitlines()
                   if line.startswith("        ") and "=" in line]
    assert "h" not in loop_writes
    assert "t1 = x @ w\n    h = jnp.tanh(t1)" in text


def test_mean_of_name_assigned_in_loop_is_a_quarter():
    got = redraft.grad(assigned_in_loop)(np.ones(4, np.float32))
    np.testing.assert_allclose(got, np.full(4, 0.25))


def test_rebound_parameter_cotangent_has_the_parameter_shape():
    got = redraft.grad(param_rebound_to_constant)(X.astype(np.float32))
    assert got.shape == X.shape
    close(got, np.cos(X))


def test_full_derivative_in_the_fill_value():
    close(redraft.grad(lambda v: jnp.sum(jnp.full((3,), v)))(np.float32(1.5)), 3.0)
    _, t = redraft.jvp(lambda v: jnp.full((2, 2), v), (np.float32(1.5),), (np.float32(2.0),))
    close(t, np.full((2, 2), 2.0))


# ---- structural zeros: the branch a selection did not take, and only that ------------------------

def untaken_exp(x):
    return jnp.sum(jnp.where(x < 50.0, jnp.exp(x), 0.0))


def untaken_sqrt(x):
    return jnp.sum(jnp.where(x > 0.0, jnp.sqrt(x), 0.0))


def _doubled_exp(x):
    return jnp.exp(x) * 2.0


def untaken_through_a_call(x):
    return jnp.sum(jnp.where(x < 50.0, _doubled_exp(x), 0.0))


def untaken_by_two_wheres(x):
    y = jnp.exp(x)
    return jnp.sum(jnp.where(x < 50.0, y, 0.0) + jnp.where(x < 60.0, y * 3.0, 1.0))


def untaken_by_minimum(x):
    return jnp.sum(jnp.minimum(jnp.exp(x), 1.0))


def untaken_by_clip(x):
    return jnp.sum(jnp.clip(jnp.exp(x), 0.0, 1.0))


def untaken_by_select(x):
    from redraft import lax
    return jnp.sum(lax.select(x < 50.0, jnp.exp(x), jnp.zeros_like(x)))


UNTAKEN = [untaken_exp, untaken_through_a_call, untaken_by_two_wheres, untaken_by_minimum,
           untaken_by_clip, untaken_by_select]
EDGE = np.array([1.0, 100.0], np.float32)  # exp(100) overflows float32


@pytest.mark.parametrize("f", UNTAKEN, ids=ids(UNTAKEN))
def test_untaken_branch_stays_zero_against_an_infinite_partial(f):
    slope = {untaken_through_a_call: 2.0, untaken_by_two_wheres: 4.0}.get(f, 1.0)
    if f in (untaken_by_minimum, untaken_by_clip):
        slope = 0.0  # exp(1) > 1: the bound is taken at both points
    want = np.array([slope * np.e, 0.0])
    for grad in (redraft.grad(f), redraft.jit(redraft.grad(f))):
        close(grad(EDGE), want)
    close(redraft.vmap(redraft.grad(f))(np.stack([EDGE, EDGE])), np.stack([want, want]))
    _, hvp = redraft.jvp(redraft.grad(f), (EDGE,), (np.ones(2, np.float32),))
    close(hvp, want)


def test_untaken_sqrt_of_a_negative_number_stays_zero():
    close(redraft.grad(untaken_sqrt)(np.array([-1.0, 0.0, 4.0], np.float32)), [0.0, 0.0, 0.25])


def test_second_derivative_of_an_untaken_branch_stays_zero():
    def scalar(x):
        return jnp.where(x < 50.0, jnp.exp(x), 0.0)

    assert float(redraft.grad(redraft.grad(scalar))(np.float32(100.0))) == 0.0
    close(redraft.grad(redraft.grad(scalar))(np.float32(1.0)), np.e)


def softplus_as_written(x):
    return jnp.log1p(jnp.exp(x))


def test_softplus_as_written_has_its_true_derivative_at_overflow():
    """Issue 8, case 3: 0.0 before (JAX gives NaN); sigmoid(100) = 1 is the truth."""
    x = np.float32(100.0)
    close(redraft.grad(softplus_as_written)(x), 1.0)
    close(redraft.jit(redraft.grad(softplus_as_written))(x), 1.0)
    out, tangent = redraft.jvp(softplus_as_written, (x,), (np.float32(1.0),))
    assert np.isinf(float(out))  # the value is what the function computes, unchanged
    close(tangent, 1.0)
    xs = np.array([-100.0, -2.0, 0.0, 3.0, 100.0], np.float32)
    sig = 1.0 / (1.0 + np.exp(-xs.astype(np.float64)))
    close(redraft.vmap(redraft.grad(softplus_as_written))(xs), sig)
    close(redraft.vmap(redraft.grad(redraft.grad(softplus_as_written)))(xs), sig * (1 - sig))


def log_of_exp(x):
    return jnp.log(jnp.exp(x))


def exp_times_zero(x):
    return jnp.sum(jnp.exp(x) * 0.0)


def test_a_taken_path_gets_nan_where_its_arithmetic_has_no_derivative_never_zero():
    """exp(100) overflows on a path the function takes: its rules meet 0 * inf, which is
    NaN (as in JAX); the NaN-safe products once turned it into a made-up 0."""
    assert np.isnan(float(redraft.grad(log_of_exp)(np.float32(100.0))))
    close(redraft.grad(log_of_exp)(np.float32(1.0)), 1.0)
    got = np.asarray(redraft.grad(exp_times_zero)(EDGE))
    assert got[0] == 0.0 and np.isnan(got[1])


def untaken_after_reshape(x):
    return jnp.sum(jnp.where(x.reshape(2, 2) < 50.0, jnp.exp(x).reshape(2, 2), 0.0))


def untaken_after_broadcast(x):
    return jnp.sum(jnp.where(x < 50.0, jnp.exp(x)[None, :] * jnp.ones((3, 1)), 0.0))


def untaken_element(x):
    return jnp.where(x[1] < 50.0, jnp.exp(x)[1], 0.0) + jnp.sum(x.T)


REARRANGED = [untaken_after_reshape, untaken_after_broadcast, untaken_element]


@pytest.mark.parametrize("f", REARRANGED, ids=ids(REARRANGED))
def test_structural_zeros_move_through_reshapes_indexing_and_sums(f):
    x = np.array([1.0, 100.0, 2.0, 3.0], np.float32)
    e = np.exp(x.astype(np.float64))
    want = {untaken_after_reshape: e, untaken_after_broadcast: 3 * e,
            untaken_element: np.ones(4)}[f]
    want[1] = 0.0 if f is not untaken_element else 1.0
    for grad in (redraft.grad(f), redraft.jit(redraft.grad(f))):
        close(grad(x), want, np.abs(want).max())
    close(redraft.vmap(redraft.grad(f))(np.stack([x, x]))[0], want, np.abs(want).max())


# ---- known wrong, kept as strict xfails ---------------------------------------------------------

def defined_on_one_path_then_loop(x, flag):
    if flag:
        h = jnp.tanh(x)
    for j in range(2):
        h = h * 0.5 + jnp.sin(h)
    return jnp.sum(h)


def test_loop_over_a_name_defined_on_one_path():
    def reference(a):
        h = np.tanh(a)
        for j in range(2):
            h = h * 0.5 + np.sin(h)
        return np.sum(h)

    x = np.array([0.3, 0.5])
    want = fd_grad(reference, x)
    close(redraft.grad(defined_on_one_path_then_loop)(x.astype(np.float32), True), want)


def untaken_after_a_loop(x):
    y = jnp.exp(x)
    for i in range(1):
        y = y * 1.0
    return jnp.sum(jnp.where(x < 50.0, y, 0.0))


def test_untaken_branch_through_a_loop_stays_zero():
    """The structural-zero mask the `where` makes is carried through the reversed loop, so
    exp's rule keeps the untaken position 0 (JAX: NaN), eagerly, under jit and vmap."""
    close(redraft.grad(untaken_after_a_loop)(EDGE), [np.e, 0.0])
    close(redraft.jit(redraft.grad(untaken_after_a_loop))(EDGE), [np.e, 0.0])
    close(redraft.vmap(redraft.grad(untaken_after_a_loop))(np.stack([EDGE, EDGE])),
          [[np.e, 0.0], [np.e, 0.0]])


def masks_rewritten_in_a_loop(x):
    y = jnp.exp(x)
    z = x * 2.0
    for i in range(2):
        z = z * 0.5 + jnp.where(x < 50.0, y, 0.0)
        y = y * 0.9
    return jnp.sum(z) + jnp.sum(jnp.where(x < 50.0, y, 0.0))


def test_masks_through_a_loop_keep_taken_derivatives():
    """Where the loop's own `where` takes a position, its true derivative flows (checked by
    finite differences on inputs that take every branch); the untaken one stays 0."""
    x = np.array([1.0, 1.5, 0.3], np.float32)

    def reference(a):
        y, z = np.exp(a), a * 2.0
        for i in range(2):
            z = z * 0.5 + y
            y = y * 0.9
        return np.sum(z) + np.sum(y)
    close(redraft.grad(masks_rewritten_in_a_loop)(x), fd_grad(reference, x.astype(np.float64)))
    g = redraft.grad(masks_rewritten_in_a_loop)(np.array([1.0, 100.0, 0.3], np.float32))
    assert np.asarray(g)[1] == 0.5  # only z's linear path: 2 * 0.5 * 0.5


# ---- reverse over reverse through an operation with several results ----------------------------
LU_WEIGHTS = np.array([[0.3, -1.2, 0.5], [0.7, 0.2, -0.4], [1.1, 0.6, 0.9]], np.float32)


def lu_unpacked(a):
    lu, _pivots, _perm = redraft.lax.linalg.lu(a)
    return jnp.sum(lu * LU_WEIGHTS * lu)


def test_second_order_through_unpacked_results_of_an_operation():
    """<u, J v> = <J^T u, v> for J the Jacobian of grad(lu_unpacked): unpacking the results
    of an operation (integer pivots among them) once lost the cotangent of the second
    reverse pass."""
    a = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.3], [0.1, 0.4, 1.8]], np.float32)
    v = np.full((3, 3), 0.1, np.float32)
    u = np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    g = redraft.grad(lu_unpacked)
    _, jv = redraft.jvp(g, (a,), (v,))
    (jtu,) = redraft.vjp(g, a)[1](u)
    np.testing.assert_allclose(np.sum(u * np.asarray(jv)), np.sum(np.asarray(jtu) * v), rtol=1e-4)


def _mlp_loss(params, x):
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.sum(h)


def test_gradient_of_unpacked_parameters_adds_no_zeros():
    """The cotangent of a parameter list a loop unpacks is built slot by slot (index_add of
    a container): the slots it does not write are zeros that ad.add drops, as JAX adds no
    symbolic zero, so the staged gradient has no `x + 0` and keeps a -0.0 as it is."""
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(rng.standard_normal((3, 3)), jnp.float32), jnp.zeros(3)),
              (jnp.asarray(rng.standard_normal((3, 3)), jnp.float32), jnp.zeros(3))]
    x = jnp.asarray(rng.standard_normal((2, 3)), jnp.float32)
    text = str(redraft.make_ir(redraft.grad(_mlp_loss))(params, x))
    assert "add 0.0" not in text and " 0.0:f32[])" not in text
    got = redraft.jit(redraft.grad(_mlp_loss))(params, x)
    want = redraft.grad(_mlp_loss)(params, x)
    for (gw, gb), (ww, wb) in zip(got, want):
        np.testing.assert_allclose(np.asarray(gw), np.asarray(ww), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gb), np.asarray(wb), rtol=1e-6, atol=1e-6)
    # a gradient of -0.0 keeps its sign, under jit as eagerly
    neg = redraft.jit(redraft.grad(lambda ws: jnp.sum(ws[0] * 0.0) + jnp.sum(ws[1] * -0.0)))
    signs = neg([jnp.ones(2), jnp.ones(2)])
    assert np.signbit(np.asarray(signs[1])).all() and not np.signbit(np.asarray(signs[0])).any()


def _unpacking_model(state, p):
    x, y = state
    a, b = p
    return a * x * x - b * y * a


def test_the_cotangent_of_an_unpacked_array_is_an_array():
    # `a, b = p` of an array p: grad gave the tuple (a_bar, b_bar), and inside lax.scan the
    # tuple met p's array cotangent (tree_map: structures differ)
    s, p = np.array([2.0, 1.0], np.float32), np.array([1.0, 0.5], np.float32)
    gs, gp = redraft.grad(_unpacking_model, argnums=(0, 1))(jnp.asarray(s), jnp.asarray(p))
    assert isinstance(gp, redraft.Array) and gp.shape == (2,)
    flat = lambda v: float(_unpacking_model(jnp.asarray(v[:2]), jnp.asarray(v[2:])))
    want = fd_grad(flat, np.concatenate([s, p]).astype(np.float64), eps=1e-2)
    np.testing.assert_allclose(np.concatenate([gs, gp]), want, rtol=1e-3, atol=1e-3)
    per_example = redraft.vmap(redraft.grad(_unpacking_model, argnums=1), in_axes=(0, None))(
        jnp.stack([jnp.asarray(s), 2 * jnp.asarray(s)]), jnp.asarray(p))
    for k, scale in enumerate((1.0, 2.0)):
        np.testing.assert_allclose(np.asarray(per_example[k]), np.asarray(
            redraft.grad(_unpacking_model, argnums=1)(jnp.asarray(scale * s), jnp.asarray(p))))
    h = redraft.hessian(lambda p: _unpacking_model(jnp.asarray(s), p))(jnp.asarray(p))
    np.testing.assert_allclose(np.asarray(h), [[0.0, -1.0], [-1.0, 0.0]], atol=1e-6)


def _scan_of_unpacking(p):
    def step(y, _):
        a, b = p
        y = y + 0.1 * jnp.stack([a * y[1], -b * y[0]])
        return y, y[0]
    return jnp.sum(redraft.lax.scan(step, jnp.array([1.0, 0.0]), None, length=5)[1])


def test_an_array_unpacked_inside_a_scan_body_differentiates():
    p = np.array([1.0, 0.5], np.float32)
    g = redraft.grad(_scan_of_unpacking)(jnp.asarray(p))
    want = fd_grad(lambda v: float(_scan_of_unpacking(jnp.asarray(v, jnp.float32))),
                   p.astype(np.float64), eps=1e-3)
    np.testing.assert_allclose(np.asarray(g), want, rtol=2e-3, atol=2e-3)


def _overwrite_with_broadcast(a, b):
    xs = [a, b]
    xs[1] = jnp.broadcast_to(xs[1], (3, 2))
    return jnp.sum(xs[0] * xs[1]) + jnp.sum(xs[1] ** 2)


def _overwrite_dict_items(a, b):
    d = {"a": a}
    d["b"] = b * 2.0
    d["a"] = jnp.stack([d["a"], d["a"]])
    return jnp.sum(d["a"] ** 2) + jnp.sum(d["b"])


def test_an_overwritten_container_item_of_another_shape():
    """`xs[1] = broadcast_to(xs[1], ...)`: the reverse rule of the write gave the old item a
    zero shaped like the new value (a wrong gradient, or a broadcasting error); a dict key
    the write adds has no cotangent in the original dict. Values are JAX 0.10.2's."""
    a = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    b = np.array([1.0, 2.0], np.float32)
    for transform in (lambda f: f, redraft.jit):
        ga, gb = transform(redraft.grad(_overwrite_with_broadcast, argnums=(0, 1)))(a, b)
        np.testing.assert_allclose(ga, [[1, 2], [1, 2], [1, 2]])
        np.testing.assert_allclose(gb, [12, 21])
        ga, gb = transform(redraft.grad(_overwrite_dict_items, argnums=(0, 1)))(b, b)
        np.testing.assert_allclose(ga, [4, 8])
        np.testing.assert_allclose(gb, [2, 2])
    np.testing.assert_allclose(redraft.vmap(redraft.grad(_overwrite_dict_items))(a, a),
                               4 * a)


# ---- local functions used as values: never a silent zero -----------------------------------------

def _pick_layer(w, x, i):
    layers = [lambda v: v * w, lambda v: jnp.sin(v) + w]
    return jnp.sum(layers[i](x))


def _make_layer(w):
    def layer(v):
        return v @ w
    return layer


def _through_a_made_layer(w, x):
    return jnp.sum(_make_layer(w)(x) ** 2)


def test_a_list_of_capturing_lambdas_indexed_when_it_runs():
    """`layers[i](x)` with i known only when the code runs: the lambdas keep what they
    capture (the list was read as a constant of local functions, and calling an item
    raised); the gradient in the argument is right, the one in the captured value is
    refused, never zero."""
    x = np.array([0.3, -1.2, 2.0], np.float32)
    for i, want in ((0, np.full(3, 2.0)), (1, np.cos(x))):
        got = redraft.grad(_pick_layer, argnums=1)(2.0, x, i)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    with pytest.raises(Exception, match="not in the values it captures"):
        redraft.grad(_pick_layer)(2.0, x, 0)


def test_a_closure_made_by_a_factory_is_differentiated_in_what_it_captured():
    """A function returning a local function that captures its argument (a layer factory):
    the derivative through the captured value was silently zero. The factory is inlined
    and the closure's call made a direct call (transforms/calls/closures.py)."""
    w = np.array([[2.0, 0.5], [-1.0, 1.5]], np.float32)
    x = np.array([[1.0, 2.0]], np.float32)
    got = redraft.grad(_through_a_made_layer, argnums=1)(w, x)
    np.testing.assert_allclose(np.asarray(got), 2 * (x @ w) @ w.T, rtol=1e-6)
    for grad in (redraft.grad(_through_a_made_layer),
                 redraft.jit(redraft.grad(_through_a_made_layer))):
        np.testing.assert_allclose(np.asarray(grad(w, x)), 2 * x.T @ (x @ w), rtol=1e-6)
    t = np.ones_like(w)
    _, tangent = redraft.jvp(lambda w: _through_a_made_layer(w, x), (w,), (t,))
    np.testing.assert_allclose(float(tangent), np.sum(2 * x.T @ (x @ w) * t), rtol=1e-6)


def _make_scaled_stack(*layers, scale=1.0, **extra):
    def apply(v):
        for w in layers:
            v = v @ w
        return v * scale + extra.get("bias", 0.0)
    return apply


def _through_a_made_stack(w1, w2, x):
    return jnp.sum(_make_scaled_stack(w1, w2, scale=2.0, bias=1.0)(x))


def test_a_factory_with_star_args_and_keywords():
    w1, w2 = np.eye(2, dtype=np.float32), np.ones((2, 2), np.float32)
    x = np.ones((1, 2), np.float32)
    g1, g2 = redraft.grad(_through_a_made_stack, argnums=(0, 1))(w1, w2, x)
    np.testing.assert_allclose(np.asarray(g1), np.full((2, 2), 4.0))   # JAX's values
    np.testing.assert_allclose(np.asarray(g2), np.full((2, 2), 2.0))


# ---- iterating a dict visits its keys; reversed() is a sequence ----------------------------------

def _dict_loops(params, x):
    for name in sorted(params):
        x = x * params[name]
    for name in list(params):
        x = x * params[name]
    for i, name in enumerate(params):
        x = x * params[name] * (i + 1)
    for name in reversed(list(params)):
        x = x * params[name]
    keys = sorted(params.keys(), reverse=True)
    return jnp.sum(x) + jnp.sum(params[keys[0]] * x)


def test_loops_over_a_dicts_keys_differentiate_its_values():
    """sorted(d), list(d), enumerate(d) and reversed(list(d)) visit keys, which carry no
    derivative: sorted and list were differentiated as if they held the values (the
    cotangent came back a list), enumerate read d[0], reversed had no rule. Against JAX's
    gradient (jax 0.10.2), eager and jitted."""
    params = {"b": np.full(2, 3.0, np.float32), "a": np.array([1.0, 0.5], np.float32)}
    x = np.array([0.5, 1.0], np.float32)
    want = {"a": [1296.0, 324.0], "b": [513.0, 64.125]}
    for g in (redraft.grad(_dict_loops)(params, x),
              redraft.jit(redraft.grad(_dict_loops))(params, x)):
        assert sorted(g) == ["a", "b"]
        for k in want:
            np.testing.assert_allclose(np.asarray(g[k]), want[k], rtol=1e-5)


def _reversed_activations(x, ws):
    acts = []
    for w in ws:
        x = jnp.tanh(x @ w)
        acts.append(x)
    total = 0.0
    for k, a in enumerate(reversed(acts)):
        total = total + a.sum() * (k + 1)
    rows = [r * 2 for r in reversed(x)]
    return total + sum(r.sum() for r in rows) + jnp.sum(jnp.stack(list(reversed(tuple(ws)))) ** 2)


def test_reversed_lists_tuples_and_array_rows_differentiate():
    ws = [np.eye(3, dtype=np.float32) * 0.5, np.full((3, 3), 0.1, np.float32)]
    x = np.ones((2, 3), np.float32)
    gx, gw = redraft.grad(_reversed_activations, argnums=(0, 1))(x, ws)
    np.testing.assert_allclose(float(np.sum(gx)), 6.8018017, rtol=1e-5)   # JAX's sums
    np.testing.assert_allclose(float(np.sum(gw[0])), 43.81081, rtol=1e-5)
    np.testing.assert_allclose(float(np.sum(gw[1])), 26.280792, rtol=1e-5)


# ---- transforms of known functions made inside a function ----------------------------------------

def _sin_cube_sum(x):
    return jnp.sum(jnp.sin(x) ** 2 * x)


def _hvp(x, v):
    return redraft.jvp(redraft.grad(_sin_cube_sum), (x,), (v,))[1]


def _hvp_jit(x, v):
    return redraft.jvp(redraft.jit(redraft.grad(_sin_cube_sum)), (x,), (v,))[1]


def test_vmap_of_a_jvp_of_a_transformed_known_function():
    """`jvp(grad(f), ...)` (and of jit(grad(f))) inside a vmapped function: the transform of
    a known function is made when the source is read, so vmap batches a known derivative
    (it refused a jvp of a function value). Against the Hessian's rows."""
    x = np.arange(3.0, dtype=np.float32)
    want = np.asarray(redraft.hessian(_sin_cube_sum)(x))
    for fn in (_hvp, _hvp_jit):
        got = redraft.vmap(fn, in_axes=(None, 0))(x, np.eye(3, dtype=np.float32))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
