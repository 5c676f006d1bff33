"""A catalogue of functions that redraft's transforms must differentiate, one per construct.

Every function is defined at module level (the transforms read source). Each docstring
names the construct the function exercises. CATALOGUE lists (function, args_factory,
options); the factory returns a fresh tuple of float arguments (tiny shapes keep the whole
catalogue fast), and options may hold:

    id         the test id (default: the function's name)
    order      the highest order check_grads checks (default 2)
    modes      check_grads modes (default ("fwd", "rev"))
    atol/rtol  tolerances for check_grads
    numpy      a NumPy function computing the same value (checked against the eager run)
    grad       the closed-form gradient of a scalar function in its first argument
    xfail      a reason: the construct is known to be unsupported (a strict xfail)

Functions that take non-float arguments (an int n, a static flag) are wrapped by a
module-level function of the float arguments only, since check_grads perturbs every
argument it is given.
"""
from __future__ import annotations

import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax, tree_util

# ---- inputs ---------------------------------------------------------------------------------


def vec(n: int = 3, seed: int = 0, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """A float32 vector with entries drawn uniformly in [lo, hi)."""
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)


def mat(rows: int = 2, cols: int = 3, seed: int = 0, lo: float = -1.0,
        hi: float = 1.0) -> np.ndarray:
    """A float32 matrix with entries drawn uniformly in [lo, hi)."""
    return np.random.default_rng(seed).uniform(lo, hi, (rows, cols)).astype(np.float32)


def scalar(value: float) -> np.ndarray:
    return np.float32(value)


# ---- quickstart and plain expressions ---------------------------------------------------------

def sum_logistic(x):
    """Elementwise chain and a reduction: the quickstart's example."""
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def selu(x, alpha=1.67, lmbda=1.05):
    """Default arguments, and jnp.where selecting between two branches."""
    return jnp.sum(lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha))


def elementwise_chain(x):
    """Operators and transcendental functions in one expression."""
    return jnp.sum(jnp.tanh(x) * x ** 3 + jnp.sin(x) / 2 - jnp.cos(x) * jnp.exp(-x * x))


def powers(x, y):
    """`**` with integer, float and array exponents, and a scalar base."""
    return jnp.sum(x ** 2 + x ** 0.5 + 2.0 ** y + x ** y)


# ---- if / else -------------------------------------------------------------------------------

def branch_if_else(x):
    """Python if/else on an array value."""
    if x.sum() > 0:
        y = jnp.sin(x) * x
    else:
        y = jnp.cos(x) - x
    return y.sum()


def branch_elif(x, y):
    """if / elif / else on scalar values, with different names assigned in each branch."""
    if x > y:
        z = x * y
    elif x > 0:
        z = jnp.exp(x) + y
    else:
        z = y * y - x
    return z


def branch_no_else(x):
    """An if without else that rebinds a name (the branch merges with the old value)."""
    y = x * 2.0
    if x.mean() > 0:
        y = y * x
    return jnp.sum(y)


def branch_nested(x):
    """Nested branches on values computed from the input."""
    s = x.sum()
    if s > 0:
        if x[0] > x[1]:
            out = s * x[0]
        else:
            out = s * x[1]
    else:
        out = s ** 2
    return out


# ---- for over range --------------------------------------------------------------------------

def loop_range(x):
    """`for i in range(n)` updating a loop-carried array."""
    for i in range(5):
        x = x - 0.1 * jnp.sin(x)
    return x.sum()


def loop_range_index(x):
    """range(start, stop) whose index is used as a value."""
    acc = 0.0
    for i in range(1, 4):
        acc = acc + x ** i / i
    return acc.sum()


def loop_range_step(x):
    """range(start, stop, step), two carried values."""
    a = x
    b = jnp.ones_like(x)
    for k in range(0, 6, 2):
        a, b = a * b + k, jnp.sin(a)
    return jnp.sum(a + b)


def loop_nested(x):
    """Nested for loops, the inner one reading the outer index."""
    total = 0.0
    for i in range(3):
        for j in range(i + 1):
            total = total + jnp.sum(x ** (j + 1)) * 0.5
    return total


def loop_over_shape(x):
    """range(x.shape[0]) and indexing by the loop index."""
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i] * (i + 1)
    return s


def loop_with_branch(x):
    """A branch inside a loop: reverse mode replays the branch taken in each iteration."""
    for i in range(4):
        if i % 2 == 0:
            x = jnp.sin(x) + x
        else:
            x = x * x * 0.5
    return x.sum()


def loop_data_branch(x):
    """A branch on array values inside a loop."""
    for i in range(3):
        if x.sum() > 1.0:
            x = x * 0.5
        else:
            x = x + jnp.tanh(x)
    return jnp.sum(x * x)


def branch_same_condition(x):
    """Two branches on one condition: a name only the first defines is read by the second."""
    c = x.sum() > 0
    if c:
        t = jnp.sin(x)
    y = x * 2.0
    if c:
        y = y * t
    return jnp.sum(y)


def loop_nested_carried(x):
    """Nested loops that both carry the array (the inner loop is taped per outer step)."""
    for i in range(2):
        for j in range(3):
            x = jnp.sin(x) * 1.1 + 0.1 * i
        x = x * x
    return x.sum()


# ---- for over arrays and lists ----------------------------------------------------------------

def loop_over_rows(m):
    """`for row in m` over a differentiated 2-D array."""
    acc = 0.0
    for row in m:
        acc = acc + jnp.tanh(row @ row)
    return acc


def loop_over_list(xs):
    """`for x in xs` over a list of arrays passed in (a pytree argument)."""
    total = 0.0
    for x in xs:
        total = total + jnp.sum(x * x) * jnp.sum(x)
    return total


def loop_over_constants(x):
    """`for c in (1.0, 2.0, 3.0)`: a loop over Python constants (a Horner evaluation)."""
    y = 0.0 * x
    for c in (1.0, -2.0, 3.0, 0.5):
        y = y * x + c
    return y.sum()


def rnn(W, xs):
    """An RNN: `for x_t in xs` over the rows of an input matrix, h carried."""
    h = jnp.zeros(W.shape[0])
    for x_t in xs:
        h = jnp.tanh(W @ h + x_t)
    return h.sum()


# ---- while with a data-dependent trip count ---------------------------------------------------

def while_halving(x):
    """`while` whose trip count depends on the input value."""
    y = x
    while y > 0.1:
        y = y * 0.5
    return y * x


def while_vector(x):
    """`while` on an array norm, with several carried values."""
    n = 0.0
    while jnp.sum(x * x) > 0.5:
        x = x * 0.8 + 0.01 * jnp.sin(x)
        n = n + 1.0
    return jnp.sum(x) * n


def while_counter(x):
    """`while` on a Python counter, the counter and the array both carried."""
    i = 0
    while i < 3:
        x = jnp.sin(x) + x
        i = i + 1
    return x.sum()


def while_newton_sqrt(a):
    """Newton's iteration for sqrt(a), stopping when it has converged (data-dependent)."""
    y = a
    while jnp.abs(y * y - a) > 1e-4:
        y = 0.5 * (y + a / y)
    return y


def while_with_branch(x):
    """A branch on array values inside a while loop."""
    s = 0.0
    while s < 3.0:
        if x.sum() > 0:
            x = x * 1.2
        else:
            x = x - 0.1 * jnp.cos(x)
        s = s + 1.0
    return jnp.sum(x * x)


def while_tuple_state(x):
    """A while loop whose state is updated by tuple assignment."""
    i, s = 0, x
    while i < 3:
        i, s = i + 1, s * x + 0.5
    return jnp.sum(s)


# ---- recursion ----------------------------------------------------------------------------------

def power_rec(x, n):
    """Recursion on a Python int, with an early return as the base case."""
    if n == 0:
        return jnp.ones_like(x)
    return x * power_rec(x, n - 1)


def recursion(x):
    """A call to a recursive function (x ** 3 by recursion)."""
    return jnp.sum(power_rec(x, 3))


def nest_sin(x, depth):
    """Recursion that nests sin: x + sin(x + sin(x + ...))."""
    if depth <= 0:
        return x
    return x + jnp.sin(nest_sin(x, depth - 1))


def recursion_nested(x):
    """A recursive call whose result feeds an elementwise function."""
    return nest_sin(x, 3).sum()


def ping(x, n):
    """Mutual recursion with pong."""
    if n == 0:
        return x
    return pong(x * 1.1, n - 1)


def pong(x, n):
    """Mutual recursion with ping."""
    if n == 0:
        return x
    return ping(jnp.sin(x), n - 1)


def mutual_recursion(x):
    """A call into two mutually recursive functions."""
    return jnp.sum(ping(x, 4))


# ---- closures -----------------------------------------------------------------------------------

def make_affine(W, b):
    """Returns a closure over the arrays W and b."""
    def affine(x):
        """A closure over arrays defined in the enclosing scope (the function differentiated)."""
        return jnp.sum(jnp.tanh(W @ x + b))
    return affine


closure_affine = make_affine(mat(2, 3, seed=7), vec(2, seed=8))


def make_scaled_loss(scale, target):
    """Returns a closure over a Python float and an array, calling a module-level helper."""
    def scaled_loss(x):
        """A closure that calls another user function with a closed-over array."""
        return scale * squared_error(x, target)
    return scaled_loss


closure_scaled = make_scaled_loss(0.5, vec(3, seed=9))


# ---- calls to the user's other functions ---------------------------------------------------------

def squared_error(x, y):
    """A helper: the sum of squared differences."""
    d = x - y
    return jnp.sum(d * d)


def helper_sq(x):
    """A helper called more than once."""
    return jnp.sum(x * x)


def calls_helper(x):
    """Calls to another user function, transformed in turn."""
    return helper_sq(x) + helper_sq(jnp.sin(x)) * squared_error(x, 1.0)


def stats(x):
    """A helper with multiple return values."""
    m = jnp.mean(x)
    return m, jnp.mean((x - m) ** 2)


def calls_multi_return(x):
    """A call returning a tuple, unpacked by the caller."""
    m, v = stats(x)
    return m * v + v


def scale_by(x, s=2.0):
    """A helper with a default argument."""
    return x * s


def calls_with_default(x):
    """Calls that rely on the callee's default argument, or pass it by keyword."""
    return jnp.sum(scale_by(x) + scale_by(x, s=3.0))


def calls_with_keywords(x, y):
    """A call to a user function with every argument passed by keyword, out of order."""
    return squared_error(y=jnp.sin(y), x=x * 2.0)


def loop_helper(x):
    """A helper with a loop inside."""
    for i in range(3):
        x = jnp.cos(x) * x
    return x


def calls_loop_helper(x):
    """A call into a function whose body loops."""
    return jnp.sum(loop_helper(x) * x)


jitted_helper = redraft.jit(helper_sq)


def calls_jitted(x):
    """A call to a jit-compiled helper (differentiated through its source)."""
    return jitted_helper(jnp.tanh(x)) * 2.0


def calls_two_active(x, y):
    """A call with two differentiated arguments and one constant one."""
    return squared_error(x * y, 0.5) + squared_error(y, x)


# ---- methods, @, indexing, .at -------------------------------------------------------------------

def methods_reductions(x):
    """x.sum(), x.mean(), x.max(), x.min(), x.prod()."""
    return x.sum() + x.mean() * x.max() - x.min() + x.prod()


def methods_shapes(m):
    """x.T, x.reshape(...), x.ravel(), x.sum(axis)."""
    a = m.T @ m
    b = m.reshape(3, 2)
    c = m.reshape(-1)
    d = m.ravel()
    return a.sum() + (b * b).sum(0).sum() + c @ d + m.sum(axis=1).prod()


def methods_astype(x):
    """x.astype(float32) and x.mean(0) with a positional axis."""
    return (x.astype(jnp.float32) ** 2).mean(0).sum()


def matmul(W, x):
    """@ between a matrix and a vector, and jnp.dot."""
    y = W @ x
    return jnp.dot(y, y) + (x @ W.T).sum()


def matmul_matrices(A, B):
    """@ between matrices, and a transpose."""
    return jnp.sum(jnp.tanh(A @ B) @ A)


def indexing(m):
    """Integer, slice and multi-axis indexing."""
    return m[0, 1] * m[1, 2] + m[:, 0].sum() + (m[1:, :2] ** 2).sum() + m[-1].prod()


def at_set(x):
    """x.at[i].set(v): the overwritten element's gradient is zero."""
    y = x.at[0].set(x[1] * 2.0)
    return jnp.sum(y * y)


def at_add(x):
    """x.at[slice].add(v)."""
    y = x.at[1:].add(x[:-1] ** 2)
    return jnp.sum(jnp.sin(y))


def at_set_loop(x):
    """x.at[i].set(...) in a loop, building an array element by element."""
    y = jnp.zeros_like(x)
    for i in range(x.shape[0]):
        y = y.at[i].set(jnp.sin(x[i]) * (i + 1))
    return jnp.sum(y * x)


def concat_stack(x):
    """jnp.concatenate and jnp.stack of pieces of the input."""
    a = jnp.concatenate([x, x * 2.0])
    b = jnp.stack([x, jnp.sin(x)], axis=1)
    return jnp.sum(a * a) + jnp.sum(b[:, 1] * b[:, 0])


# ---- pytrees -------------------------------------------------------------------------------------

def dict_input(params):
    """A dict argument (the gradient is a dict)."""
    return jnp.sum(jnp.tanh(params["w"] * params["b"])) + jnp.sum(params["w"])


def tuple_input(pair):
    """A tuple argument unpacked in the body."""
    a, b = pair
    return jnp.sum(a * jnp.sin(b))


def nested_pytree(params):
    """A nested pytree: a dict holding a tuple and a scalar."""
    W, b = params["layer"]
    return jnp.sum(jnp.tanh(W @ b)) * params["scale"]


@tree_util.register_pytree_node_class
class Point:
    """The registered pytree class of SPEC.md's example."""

    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def __repr__(self):
        return f"Point({self.x}, {self.y}, {self.z})"

    def tree_flatten(self):
        return ((self.x, self.y, self.z), None)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children)


def point_dist(pt):
    """A registered pytree class: grad returns a Point (SPEC.md's dist_orig)."""
    return jnp.sqrt(pt.x ** 2 + pt.y ** 2 + pt.z ** 2)


def dict_output(x):
    """A dict result (jvp and vjp carry the structure)."""
    return {"sin": jnp.sin(x), "total": jnp.sum(x * x)}


def builds_dict(x):
    """A dict literal built in the body and read back."""
    d = {"a": x * 2.0, "b": jnp.exp(x)}
    return jnp.sum(d["a"] * d["b"])


# ---- early returns, and/or, conditional expressions, chained comparisons -------------------------

def early_return(x):
    """An early return in one branch; the rest of the body is the other branch."""
    if x.sum() < 0:
        return -x.sum()
    y = x * 2.0
    return jnp.sum(y * y)


def early_return_nested(x):
    """Early returns at two depths."""
    s = x.sum()
    if s > 0:
        if s > 100.0:
            return s
        t = s * s
        return t + jnp.sum(jnp.sin(x))
    return jnp.sum(jnp.cos(x))


def bool_and_or(x):
    """`and` / `or` on array comparisons in a condition."""
    if x.sum() > 0 and x.max() < 5.0 or x.min() > 10.0:
        return jnp.sum(x * x)
    return jnp.sum(x)


def or_default(x, scale=None):
    """`or` producing a value: a default of None replaced."""
    s = scale or 3.0
    return jnp.sum(s * x * x)


def ifexp(x):
    """A conditional expression `a if c else b` on values."""
    y = jnp.sin(x) if x.sum() > 0 else jnp.cos(x)
    return jnp.sum(y * x)


def chained_comparison(x):
    """A chained comparison `0 < s < 10` in a condition."""
    s = jnp.sum(x * x)
    if 0.0 < s < 10.0:
        return s * jnp.sum(x)
    return s


# ---- comprehensions, augmented assignment, unpacking, multiple results ---------------------------

def comprehension_stack(x):
    """A list comprehension building arrays, then jnp.stack."""
    rows = [jnp.sin(x * k) for k in range(1, 4)]
    return jnp.sum(jnp.stack(rows) ** 2)


def comprehension_rows(m):
    """A comprehension over the rows of a differentiated matrix."""
    return jnp.sum(jnp.stack([row * row.sum() for row in m]))


def comprehension_filtered(x):
    """A comprehension with an `if` filter."""
    terms = [x ** k for k in range(5) if k % 2 == 1]
    return jnp.sum(jnp.stack(terms))


def augmented_assignment(x):
    """+=, -=, *=, /=, **= on arrays."""
    y = x * 1.0
    y += 1.0
    y *= x
    y -= 0.5 * x
    y /= 2.0
    y **= 2
    return jnp.sum(y)


def tuple_unpacking(x):
    """Tuple unpacking, nested targets and a swap."""
    a, b = x[0], x[1]
    (c, d), e = (a * b, a + b), x[2]
    a, b = b, a
    return a * c - b * d + e * e


def multiple_results(x):
    """Several return values (a tuple result)."""
    return jnp.sin(x), jnp.sum(x * x), x[0] * x[1]


# ---- keyword arguments, stop_gradient, where, stability ------------------------------------------

def keyword_arguments(m):
    """Keyword arguments at call sites to jnp functions."""
    a = jnp.sum(m, axis=0, keepdims=True)
    b = jnp.mean(m, axis=1)
    c = jnp.clip(m, min=-0.5, max=0.5)
    return jnp.sum(a * c) + jnp.sum(b ** 2) + jnp.max(m, axis=None)


def uses_stop_gradient(x):
    """stop_gradient: no derivative flows through it (grad of x * sg(x) is sg(x))."""
    return jnp.sum(x * redraft.stop_gradient(x))


def where_log(x):
    """jnp.where(x > 0, log(x), 0): the untaken branch is NaN or -inf, the gradient is not."""
    return jnp.sum(jnp.where(x > 0, jnp.log(jnp.abs(x)), 0.0))


def where_log_unguarded(x):
    """jnp.where(x > 0, jnp.log(x), 0.) with log of negative numbers in the untaken branch."""
    return jnp.sum(jnp.where(x > 0, jnp.log(x), 0.0))


def where_exp_overflow(x):
    """jnp.where(x > 0, x, exp(1000 x)): the untaken branch overflows to inf."""
    return jnp.sum(jnp.where(x > 0, x, jnp.exp(1000 * x)))


def log1p_small(x):
    """log1p near zero, where log(1 + x) would lose every digit."""
    return jnp.sum(jnp.log1p(x * 1e-3))


def logsumexp_large(x):
    """jnp.logsumexp of values near 100, whose exp overflows float32."""
    return jnp.logsumexp(x + 100.0)


def logsumexp_manual(x):
    """A max-shifted logsumexp written by hand, the max held by stop_gradient."""
    m = redraft.stop_gradient(jnp.max(x))
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def softplus_stable(x):
    """logaddexp(x, 0): softplus that neither overflows nor underflows."""
    return jnp.sum(jnp.logaddexp(x * 100.0, 0.0))


# ---- a little of everything ----------------------------------------------------------------------

INPUTS = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.39],
                   [0.74, -2.49, 1.39]], dtype=np.float32)
TARGETS = np.array([1.0, 1.0, 0.0, 1.0], dtype=np.float32)


def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


def logistic_loss(W, b):
    """The seed's logistic regression: globals, a helper, a reduction."""
    preds = sigmoid(jnp.dot(INPUTS, W) + b)
    label_probs = preds * TARGETS + (1 - preds) * (1 - TARGETS)
    return -jnp.sum(jnp.log(label_probs))


def mlp(params, x):
    """A two-layer MLP over a list of (W, b) pairs, softmax cross-entropy at the end."""
    h = x
    for W, b in params:
        h = jnp.tanh(W @ h + b)
    logp = h - jnp.logsumexp(h)
    return -logp[0]


def global_array(x):
    """A module-level array read by the function (a constant, not differentiated)."""
    return jnp.sum(TARGETS[:3] * jnp.sin(x))


def len_of_list(xs):
    """len() of a list argument and indexing it."""
    total = 0.0
    for i in range(len(xs)):
        total = total + jnp.sum(xs[i]) * (i + 1.0)
    return total


def asserts(x):
    """An assert statement on a shape, kept in the transformed code."""
    assert x.shape == (3,), "x must have three elements"
    return jnp.sum(x ** 3)


def builtin_sum(x):
    """The builtin sum over a generator of array elements."""
    return sum(x[i] ** 2 for i in range(3))


def enumerate_zip(xs, ys):
    """enumerate and zip over lists of arrays, with a nested tuple target."""
    total = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        total = total + (i + 1.0) * jnp.sum(a * b)
    return total


# ---- local functions and lax control flow ------------------------------------------------------

def nested_def(x):
    """A def inside the differentiated function, closing over nothing."""
    def inner(y):
        return y * y
    return jnp.sum(inner(x))


def nested_def_closure(x):
    """A def inside the differentiated function that closes over a local array."""
    w = jnp.sin(x)

    def inner(y):
        return y * w
    return jnp.sum(inner(x) + inner(x * x))


def inner_lambda(x):
    """A lambda inside the differentiated function."""
    sq = lambda y: y * y  # noqa: E731
    return jnp.sum(sq(x))


def fori_loop_body(i, x):
    return x * 0.9 + jnp.sin(x)


def uses_fori_loop(x):
    """lax.fori_loop with a module-level body."""
    return jnp.sum(lax.fori_loop(0, 3, fori_loop_body, x))


def uses_lax_cond(x):
    """lax.cond on an array value, with lambdas as branches."""
    return jnp.sum(lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * v, lambda v: v * v, x))


def uses_while_loop(x):
    """lax.while_loop with a data-dependent trip count, state a tuple."""
    def cond(state):
        return state[1] < 3.0

    def body(state):
        v, s = state
        return v * 0.9 + jnp.sin(v), s + jnp.abs(jnp.sum(v)) + 1.0
    v, _ = lax.while_loop(cond, body, (x, 0.0))
    return jnp.sum(v)


# ---- known unsupported constructs (strict xfails) ------------------------------------------------

def uses_break(x):
    """`break` in a loop (not supported yet)."""
    for i in range(10):
        if x.sum() > 5.0:
            break
        x = x * 1.5
    return x.sum()


def uses_continue(x):
    """`continue` in a loop (not supported yet)."""
    for i in range(4):
        if i == 1:
            continue
        x = jnp.sin(x)
    return x.sum()


def return_in_loop(x):
    """`return` inside a loop (not supported yet)."""
    for i in range(4):
        if x.sum() > 3.0:
            return x.sum()
        x = x * 2.0
    return x.sum()


# ---- the catalogue -------------------------------------------------------------------------------

def _v(n=3, seed=0, lo=-1.0, hi=1.0):
    return lambda: (vec(n, seed, lo, hi),)


def _m(rows=2, cols=3, seed=0, lo=-1.0, hi=1.0):
    return lambda: (mat(rows, cols, seed, lo, hi),)


def _s(value):
    return lambda: (scalar(value),)


UNSUPPORTED = "not supported by the frontend yet"

CATALOGUE = [
    (sum_logistic, _v(), {"grad": lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2,
                          "numpy": lambda x: np.sum(1 / (1 + np.exp(-x)))}),
    (selu, lambda: (np.array([-0.7, 0.4, 1.3], np.float32),),
     {"numpy": lambda x: np.sum(1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67))}),
    (elementwise_chain, _v(seed=1), {
        "numpy": lambda x: np.sum(np.tanh(x) * x ** 3 + np.sin(x) / 2
                                  - np.cos(x) * np.exp(-x * x))}),
    (powers, lambda: (vec(seed=2, lo=0.5, hi=2.0), vec(seed=3)), {
        "numpy": lambda x, y: np.sum(x ** 2 + x ** 0.5 + 2.0 ** y + x ** y)}),
    (branch_if_else, _v(seed=4, lo=0.1), {
        "id": "branch_if_else-then",
        "grad": lambda x: np.sin(x) + x * np.cos(x)}),
    (branch_if_else, _v(seed=4, hi=-0.1), {
        "id": "branch_if_else-else",
        "grad": lambda x: -np.sin(x) - 1}),
    (branch_elif, lambda: (scalar(0.8), scalar(0.3)), {"id": "branch_elif-if"}),
    (branch_elif, lambda: (scalar(0.3), scalar(0.8)), {"id": "branch_elif-elif"}),
    (branch_elif, lambda: (scalar(-0.3), scalar(0.8)), {"id": "branch_elif-else"}),
    (branch_no_else, _v(seed=5, lo=0.2), {"grad": lambda x: 4 * x}),
    (branch_nested, lambda: (np.array([0.9, 0.2, 0.4], np.float32),), {}),
    (branch_nested, lambda: (np.array([0.1, 0.7, 0.4], np.float32),),
     {"id": "branch_nested-inner_else"}),
    (branch_nested, lambda: (np.array([-0.9, 0.2, 0.1], np.float32),),
     {"id": "branch_nested-outer_else", "grad": lambda x: 2 * np.sum(x) * np.ones_like(x)}),
    (loop_range, _v(seed=6), {}),
    (loop_range_index, _v(seed=7), {"grad": lambda x: 1 + x + x * x}),
    (loop_range_step, _v(seed=8), {}),
    (loop_nested, _v(seed=9), {"grad": lambda x: 0.5 * (3 + 2 * 2 * x + 3 * x * x)}),
    (loop_over_shape, _v(seed=10), {"grad": lambda x: 2 * x * np.arange(1, 4)}),
    (loop_with_branch, _v(seed=11), {}),
    (loop_data_branch, _v(seed=12, lo=0.2), {}),
    (branch_same_condition, _v(seed=90, lo=0.1), {"grad": lambda x: 2 * np.sin(x)
                                                  + 2 * x * np.cos(x)}),
    (branch_same_condition, _v(seed=90, hi=-0.1), {"id": "branch_same_condition-false",
                                                   "grad": lambda x: 2 * np.ones_like(x)}),
    (loop_nested_carried, _v(seed=91), {}),
    (loop_over_rows, _m(seed=13), {"numpy": lambda m: sum(np.tanh(r @ r) for r in m)}),
    (loop_over_list, lambda: ([vec(2, seed=14), vec(3, seed=15), vec(1, seed=16)],), {}),
    (loop_over_constants, _v(seed=17), {"grad": lambda x: 3 * x * x - 4 * x + 3}),
    (rnn, lambda: (mat(2, 2, seed=18), mat(3, 2, seed=19)), {}),
    (while_halving, _s(3.0), {"grad": lambda x: x / 16}),
    (while_vector, lambda: (vec(3, seed=20, lo=0.5, hi=1.0),), {}),
    (while_counter, _v(seed=21), {}),
    (while_newton_sqrt, _s(2.0), {"grad": lambda a: 0.5 / np.sqrt(a),
                                  "numpy": lambda a: np.sqrt(a), "grad_rtol": 1e-3}),
    (while_with_branch, _v(seed=92), {}),
    (while_tuple_state, _v(seed=93), {"grad": lambda x: 4 * x ** 3 + x + 0.5}),
    (recursion, _v(seed=22), {"grad": lambda x: 3 * x * x}),
    (recursion_nested, _v(seed=23), {}),
    (mutual_recursion, _v(seed=24), {}),
    (closure_affine, _v(seed=25), {"id": "closure_affine"}),
    (closure_scaled, _v(seed=26), {"id": "closure_scaled", "grad": lambda x: x - vec(3, seed=9)}),
    (calls_helper, _v(seed=27), {}),
    (calls_multi_return, _v(seed=28), {}),
    (calls_with_default, _v(seed=29), {"grad": lambda x: 5 * np.ones_like(x)}),
    (calls_with_keywords, lambda: (vec(seed=98), vec(seed=99)), {
        "grad": lambda x, y: 4 * (2 * x - np.sin(y))}),
    (calls_loop_helper, _v(seed=30), {}),
    (calls_jitted, _v(seed=94), {"grad": lambda x: 4 * np.tanh(x) * (1 - np.tanh(x) ** 2)}),
    (calls_two_active, lambda: (vec(seed=31), vec(seed=32)), {}),
    (methods_reductions, _v(seed=33, lo=0.5, hi=1.5), {
        "numpy": lambda x: x.sum() + x.mean() * x.max() - x.min() + x.prod()}),
    (methods_shapes, _m(seed=34), {}),
    (methods_astype, _m(seed=35), {}),
    (matmul, lambda: (mat(2, 3, seed=36), vec(3, seed=37)), {
        "numpy": lambda W, x: (W @ x) @ (W @ x) + (x @ W.T).sum()}),
    (matmul_matrices, lambda: (mat(2, 3, seed=38), mat(3, 2, seed=39)), {
        "numpy": lambda A, B: np.sum(np.tanh(A @ B) @ A)}),
    (indexing, _m(seed=40), {}),
    (at_set, _v(seed=41), {}),
    (at_add, _v(seed=42), {}),
    (at_set_loop, _v(seed=43), {}),
    (concat_stack, _v(seed=44), {}),
    (dict_input, lambda: ({"w": vec(seed=45), "b": vec(seed=46)},), {}),
    (tuple_input, lambda: ((vec(seed=47), vec(seed=48)),), {}),
    (nested_pytree, lambda: ({"layer": (mat(2, 3, seed=49), vec(3, seed=50)),
                              "scale": scalar(1.5)},), {}),
    (point_dist, lambda: (Point(scalar(1.0), scalar(2.0), scalar(3.0)),), {}),
    (dict_output, _v(seed=51), {}),
    (builds_dict, _v(seed=52), {"grad": lambda x: 2 * np.exp(x) * (1 + x)}),
    (early_return, _v(seed=53, lo=0.1), {"id": "early_return-late", "grad": lambda x: 8 * x}),
    (early_return, _v(seed=53, hi=-0.1), {"id": "early_return-early",
                                          "grad": lambda x: -np.ones_like(x)}),
    (early_return_nested, _v(seed=54, lo=0.1), {}),
    (early_return_nested, _v(seed=54, hi=-0.1), {"id": "early_return_nested-outer",
                                                 "grad": lambda x: -np.sin(x)}),
    (bool_and_or, _v(seed=55, lo=0.1), {"grad": lambda x: 2 * x}),
    (bool_and_or, _v(seed=55, hi=-0.1), {"id": "bool_and_or-false",
                                         "grad": lambda x: np.ones_like(x)}),
    (or_default, _v(seed=56), {"grad": lambda x: 6 * x}),
    (ifexp, _v(seed=57, lo=0.1), {"grad": lambda x: np.sin(x) + x * np.cos(x)}),
    (ifexp, _v(seed=57, hi=-0.1), {"id": "ifexp-else",
                                   "grad": lambda x: np.cos(x) - x * np.sin(x)}),
    (chained_comparison, _v(seed=58), {}),
    (chained_comparison, _v(seed=58, lo=2.0, hi=3.0), {"id": "chained_comparison-false",
                                                       "grad": lambda x: 2 * x}),
    (comprehension_stack, _v(seed=59), {}),
    (comprehension_rows, _m(seed=60), {}),
    (comprehension_filtered, _v(seed=61), {"grad": lambda x: 1 + 3 * x * x}),
    (augmented_assignment, _v(seed=62), {
        "numpy": lambda x: np.sum((((x + 1) * x - 0.5 * x) / 2) ** 2)}),
    (tuple_unpacking, _v(seed=63), {}),
    (multiple_results, _v(seed=64), {}),
    (keyword_arguments, _m(seed=65), {}),
    (uses_stop_gradient, _v(seed=66), {"grad": lambda x: x, "modes": ("rev",),
                                       "why_modes": "check_grads compares with finite "
                                                    "differences, which see through it"}),
    (where_log, lambda: (np.array([-1.0, 0.5, 2.0], np.float32),), {
        "grad": lambda x: np.where(x > 0, 1 / x, 0.0)}),
    (where_log_unguarded, lambda: (np.array([-1.0, 0.5, 2.0], np.float32),), {
        "grad": lambda x: np.where(x > 0, 1 / x, 0.0)}),
    (where_exp_overflow, lambda: (np.array([1.0, 2.0, -0.05], np.float32),), {
        "grad": lambda x: np.where(x > 0, 1.0, 1000 * np.exp(1000 * x))}),
    (log1p_small, lambda: (np.array([1e-5, -2e-6, 3e-4], np.float32),), {
        "grad": lambda x: 1e-3 / (1 + 1e-3 * x)}),
    (logsumexp_large, _v(seed=67), {
        "grad": lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum()}),
    (logsumexp_manual, _v(seed=68), {
        "grad": lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum()}),
    (softplus_stable, lambda: (np.array([-20.0, 0.001, 20.0], np.float32),), {
        "grad": lambda x: 100 / (1 + np.exp(-100.0 * x)), "atol": 0.5}),
    (logistic_loss, lambda: (vec(3, seed=69), scalar(0.1)), {}),
    (mlp, lambda: ([(mat(3, 2, seed=70), vec(3, seed=71)), (mat(2, 3, seed=72),
                                                            vec(2, seed=73))],
                   vec(2, seed=74)), {}),
    (global_array, _v(seed=75), {"grad": lambda x: TARGETS[:3] * np.cos(x)}),
    (len_of_list, lambda: ([vec(2, seed=76), vec(3, seed=77)],), {}),
    (asserts, _v(seed=78), {"grad": lambda x: 3 * x * x}),
    (nested_def, _v(seed=82), {"grad": lambda x: 2 * x}),
    (inner_lambda, _v(seed=83), {"grad": lambda x: 2 * x}),
    (nested_def_closure, _v(seed=95), {"grad": lambda x: (np.cos(x) * (x + x * x)
                                                         + np.sin(x) * (1 + 2 * x))}),
    (uses_fori_loop, _v(seed=84), {}),
    (uses_lax_cond, _v(seed=96, lo=0.1), {"grad": lambda x: np.sin(x) + x * np.cos(x)}),
    (uses_lax_cond, _v(seed=96, hi=-0.1), {"id": "uses_lax_cond-false",
                                           "grad": lambda x: 2 * x}),
    (uses_while_loop, _v(seed=97), {}),
    (uses_break, _v(seed=79), {}),
    (uses_continue, _v(seed=80), {}),
    (return_in_loop, _v(seed=81), {}),
    (builtin_sum, _v(seed=85), {}),
    (enumerate_zip, lambda: ([vec(2, seed=86), vec(3, seed=87)],
                             [vec(2, seed=88), vec(3, seed=89)]), {}),
]


def entry_id(entry) -> str:
    fn, _, options = entry
    return options.get("id", getattr(fn, "__name__", "f"))


def arguments(entry) -> tuple:
    """The entry's arguments, NumPy leaves made redraft arrays (as a caller would pass)."""
    return tree_util.tree_map(
        lambda v: jnp.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v,
        tuple(entry[1]()))
