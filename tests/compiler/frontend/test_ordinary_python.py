"""Ordinary Python in transformed functions: what JAX users write runs under jit, grad and vmap
with the values plain Python gives (checked against the function run eagerly, against
closed forms, and vmap against a loop)."""
import functools
from functools import reduce

import numpy as np

import redraft
import redraft.numpy as jnp

X = jnp.asarray(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32))
W = jnp.asarray(np.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], np.float32))


def _layer(x, w, activation=jnp.tanh, scale=1.0):
    return activation(x @ w) * scale


def with_default_activation(x, w):
    return jnp.sum(_layer(x, w))


def with_keyword_activation(x, w):
    return jnp.sum(_layer(x, w, activation=jnp.sin))


def with_spread_keywords(x, w):
    kw = {"activation": jnp.sin, "scale": 2.0}
    return jnp.sum(_layer(x, w, **kw))


def test_function_values_by_keyword_default_and_spread_dict():
    """A function passed by keyword, left to its default, or spread from a local dict is
    known to the transforms (the callee is specialised on it)."""
    z = np.asarray(X) @ np.asarray(W)
    cases = [(with_default_activation, np.tanh, lambda t: 1 - np.tanh(t) ** 2, 1.0),
             (with_keyword_activation, np.sin, np.cos, 1.0),
             (with_spread_keywords, np.sin, np.cos, 2.0)]
    for fn, act, slope, scale in cases:
        np.testing.assert_allclose(redraft.jit(fn)(X, W), scale * act(z).sum(), rtol=1e-5)
        expected = np.asarray(X).T @ (scale * slope(z))
        np.testing.assert_allclose(redraft.grad(fn, argnums=1)(X, W), expected, rtol=1e-5)
        np.testing.assert_allclose(redraft.jit(redraft.grad(fn, argnums=1))(X, W), expected,
                                   rtol=1e-5)


def _mlp(params, x):
    def layer(h, wb):
        w, b = wb
        return jnp.tanh(h @ w + b)
    return functools.reduce(layer, params, x)


def _squares(xs):
    return reduce(lambda acc, v: acc + v * v, xs)


def test_functools_reduce_is_the_loop_it_stands_for():
    params = [(W, jnp.zeros(2)), (jnp.eye(2, dtype=jnp.float32), jnp.ones(2))]
    eager = np.tanh(np.tanh(np.asarray(X) @ np.asarray(W)) + 1.0)
    np.testing.assert_allclose(redraft.jit(_mlp)(params, X), eager, rtol=1e-5)
    loss = lambda p, x: jnp.sum(_mlp(p, x))  # noqa: E731
    grads = redraft.grad(loss)(params, X)
    jitted = redraft.jit(redraft.grad(loss))(params, X)
    for g, j in zip(redraft.tree_util.tree_leaves(grads), redraft.tree_util.tree_leaves(jitted)):
        np.testing.assert_allclose(g, j, rtol=1e-5)
    assert float(_squares([1.0, 2.0, 3.0])) == 1.0 + 4.0 + 9.0  # no initial: first item starts
    assert [float(g) for g in redraft.grad(_squares)([1.0, 2.0, 3.0])] == [1.0, 4.0, 6.0]
    assert float(redraft.jit(_squares)(jnp.arange(3.0))) == 5.0


def _reshaped_sum(x, w):
    shape = [1] * x.ndim
    shape[-1] = x.shape[-1]
    parts = list(jnp.split(x * jnp.reshape(w, tuple(shape)), 3, axis=-1))
    parts[1] = parts[1] * 3.0
    return jnp.sum(jnp.concatenate(parts, axis=-1))


def test_item_assignment_on_a_local_list_rebinds_it():
    w = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    expected_grad = np.asarray(X).sum(0) * np.array([1.0, 3.0, 1.0], np.float32)
    np.testing.assert_allclose(redraft.jit(_reshaped_sum)(X, w),
                               float(_reshaped_sum(X, w)), rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(_reshaped_sum, argnums=1)(X, w), expected_grad,
                               rtol=1e-6)
    batched = redraft.vmap(_reshaped_sum, in_axes=(0, None))(X, w)
    np.testing.assert_allclose(batched, [float(_reshaped_sum(row[None], w)) for row in X],
                               rtol=1e-6)


def _apply_twice(f, x):
    return f(f(x))


def _through_a_helper(w, x):
    g = lambda v: jnp.tanh(w * v)  # noqa: E731 - a closure over w
    return jnp.sum(_apply_twice(g, x))


def test_a_closure_passed_to_a_users_function_is_differentiated_through_its_captures():
    """The helper is specialised on the closure's code, and the captured w passed along,
    so the derivative reaches w (an RK4 step taking the ODE's right-hand side, say)."""
    x = jnp.asarray(np.array([0.0, 1.0, 2.0], np.float32))

    def closed_form(w):
        inner = np.tanh(w * np.asarray(x))
        outer = np.tanh(w * inner)
        d_inner = (1 - inner ** 2) * np.asarray(x)
        return np.sum((1 - outer ** 2) * (inner + w * d_inner))

    for w in (0.5, -1.25):
        np.testing.assert_allclose(redraft.jit(_through_a_helper)(w, x),
                                   float(_through_a_helper(w, x)), rtol=1e-6)
        np.testing.assert_allclose(redraft.grad(_through_a_helper)(w, x), closed_form(w),
                                   rtol=1e-5)
        np.testing.assert_allclose(redraft.jit(redraft.grad(_through_a_helper))(w, x),
                                   closed_form(w), rtol=1e-5)
        np.testing.assert_allclose(redraft.jacfwd(_through_a_helper)(w, x), closed_form(w),
                                   rtol=1e-5)
    ws = jnp.asarray(np.array([0.5, -1.25], np.float32))
    np.testing.assert_allclose(redraft.vmap(redraft.grad(_through_a_helper),
                                            in_axes=(0, None))(ws, x),
                               [closed_form(0.5), closed_form(-1.25)], rtol=1e-5)


def _walrus(x):
    if (total := jnp.sum(x * x)) > 1.0:
        return total / (n := x.shape[0]) + n
    return total


def test_assignment_expressions_bind_their_name():
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    assert float(redraft.jit(_walrus)(x)) == 5.0 / 2 + 2
    np.testing.assert_allclose(redraft.grad(_walrus)(x), [1.0, 2.0])


def _joined(x):
    a = [x, x * x]
    b = a + [jnp.sin(x)]
    c = b[:1] + [x * 5.0] + b[1:]
    return c[0] + c[1] * 10.0 + c[2] * 100.0 + c[3] * 1000.0


def _in_place(x):
    ys = [x]
    ys.extend([x * x, jnp.sin(x)])
    ys.insert(1, x * 5.0)
    ys.insert(-1, jnp.cos(x))
    last = ys.pop()
    ys.reverse()
    first = ys.pop(0)
    zs = [x, x]
    zs.clear()
    zs.append(x * 11.0)
    return (sum(v * 10.0 ** i for i, v in enumerate(ys)) + last * 1000.0 + first * 1e4
            + zs[0])


def _in_place_by_hand(x):
    ys = [x * x, x * 5.0, x]  # [x, 5x, x², cos x, sin x] less its last, reversed, less [0]
    first = jnp.cos(x)
    last = jnp.sin(x)
    return ys[0] + ys[1] * 10.0 + ys[2] * 100.0 + last * 1000.0 + first * 1e4 + x * 11.0


def test_list_concatenation_and_in_place_methods_are_sequences_to_the_transforms():
    """`a + [y]` of lists joins them (never an array sum), and extend / insert / pop /
    reverse / clear rebind the list to what they leave, under jit, grad and vmap."""
    xs = jnp.asarray(np.array([0.5, -1.5], np.float32))
    joined_by_hand = lambda x: x + 50.0 * x + 100.0 * x * x + 1000.0 * jnp.sin(x)  # noqa
    for fn, by_hand in ((_joined, joined_by_hand), (_in_place, _in_place_by_hand)):
        for x in (0.5, -1.5):
            np.testing.assert_allclose(float(redraft.jit(fn)(x)), float(by_hand(x)), rtol=1e-5)
            np.testing.assert_allclose(redraft.grad(fn)(x), redraft.grad(by_hand)(x),
                                       rtol=1e-5)
        np.testing.assert_allclose(redraft.vmap(redraft.grad(fn))(xs),
                                   [float(redraft.grad(by_hand)(x)) for x in (0.5, -1.5)],
                                   rtol=1e-5)


PARAMS = {"a": jnp.asarray(np.array([1.0, -2.0], np.float32)),
          "b": jnp.asarray(np.array([0.5, 3.0], np.float32)),
          "c": jnp.asarray(np.array([2.0, 2.0], np.float32))}


def _over_items(params, x):
    total = 0.0
    for name, value in params.items():
        total = total + jnp.sum(value * x) * (2.0 if name == "b" else 1.0)
    return total


def _over_values(params, x):
    return sum(jnp.sum(v * v * x) for v in params.values())


def _by_comprehension(params, x):
    scaled = {k: v * 2.0 for k, v in params.items() if k != "c"}
    return sum(jnp.sum(v * x) for v in scaled.values()) + scaled["a"][0]


def test_dict_items_values_and_comprehensions_carry_gradients_to_the_dict():
    """Iterating a dict of parameters (its items or values) and building one by a
    comprehension: the gradient reaches every entry (it was silently zero)."""
    x = jnp.asarray(np.array([1.0, 0.5], np.float32))
    xs = np.asarray(x)
    cases = [
        (_over_items, {"a": xs, "b": 2 * xs, "c": xs}),
        (_over_values, {k: 2 * np.asarray(v) * xs for k, v in PARAMS.items()}),
        (_by_comprehension, {"a": 2 * xs + np.array([2.0, 0.0]), "b": 2 * xs,
                             "c": np.zeros(2)}),
    ]
    for fn, expected in cases:
        for got in (redraft.grad(fn)(PARAMS, x), redraft.jit(redraft.grad(fn))(PARAMS, x)):
            assert sorted(got) == sorted(expected)
            for k in expected:
                np.testing.assert_allclose(got[k], expected[k], rtol=1e-6)
        batched = redraft.vmap(redraft.grad(fn), in_axes=(None, 0))(PARAMS, jnp.stack([x, x]))
        np.testing.assert_allclose(batched["a"], [expected["a"]] * 2, rtol=1e-6)


class _Net:
    def __init__(self, scale):
        self.scale = scale

    def layer(self, x, w):
        return jnp.tanh(x @ w) * self.scale

    def __call__(self, params, x):
        for w in params:
            x = self.layer(x, w)
        return x


_NET = _Net(2.0)


def _net_loss(params, x):
    return jnp.sum(_NET(params, x))


def test_an_object_with_a_call_method_is_called_through_it():
    w = jnp.asarray(np.array([[0.5, -0.25], [0.1, 0.3]], np.float32))
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    h = 2.0 * np.tanh(np.asarray(x) @ np.asarray(w))
    np.testing.assert_allclose(redraft.jit(_net_loss)([w], x),
                               np.sum(h), rtol=1e-6)
    expected = np.outer(np.asarray(x), 2.0 * (1 - np.tanh(np.asarray(x) @ np.asarray(w)) ** 2))
    np.testing.assert_allclose(redraft.grad(_net_loss)([w], x)[0], expected, rtol=1e-5)


def _scan_by_keyword(x):
    def step(c, _):
        c = c * 0.9 + 1.0
        return c, c ** 2
    c, ys = redraft.lax.scan(step, x, length=4)
    return jnp.sum(ys) + c


def _scan_loop_by_hand(x):
    total, c = 0.0, x
    for _ in range(4):
        c = c * 0.9 + 1.0
        total = total + c ** 2
    return total + c


def test_lax_control_flow_arguments_by_keyword():
    """lax.scan(f, init, length=4) and fori_loop(..., unroll=2): keywords take their
    parameter's place, the parameters skipped before them their defaults."""
    for transform in (lambda f: f, redraft.jit, redraft.grad, lambda f: redraft.jit(
            redraft.grad(f))):
        got = transform(_scan_by_keyword)(1.5)
        want = transform(_scan_loop_by_hand)(1.5)
        np.testing.assert_allclose(got, want, rtol=1e-6)

    def fori(x):
        return redraft.lax.fori_loop(0, 3, lambda i, v: v * x + i, init_val=1.0, unroll=2)
    np.testing.assert_allclose(redraft.grad(fori)(2.0), 3 * 2.0 ** 2 + 1, rtol=1e-6)  # x^3+x+2


def _decorated_checkpoint(x):
    @redraft.checkpoint
    def cell(c, _):
        return jnp.sin(c) * 1.1, None
    c, _ = redraft.lax.scan(cell, x, None, length=3)
    return c


def _decorated_vmap(x, w):
    @functools.partial(redraft.vmap, in_axes=(0, None))
    def apply(xi, scale):
        return jnp.tanh(xi @ w) * scale
    return jnp.sum(apply(x, 2.0))


def _decorated_twice(x):
    @redraft.jit
    @redraft.grad
    def inner(y):
        return jnp.sum(jnp.sin(y) * x)
    return inner(x)


def test_decorated_local_functions():
    """`@d def g` inside a transformed function is `g = d(g)`, innermost decorator first."""
    def by_hand(c):
        for _ in range(3):
            c = jnp.sin(c) * 1.1
        return c
    for transform in (redraft.grad, lambda f: redraft.jit(redraft.grad(f))):
        np.testing.assert_allclose(transform(_decorated_checkpoint)(0.7),
                                   redraft.grad(by_hand)(0.7), rtol=1e-6)
    x, w = np.asarray(X), np.asarray(W)
    slope = 1 - np.tanh(x @ w) ** 2
    np.testing.assert_allclose(redraft.grad(_decorated_vmap, argnums=1)(X, W),
                               2.0 * x.T @ slope, rtol=1e-5)
    v = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(redraft.jit(_decorated_twice)(v), np.cos(v) * v, rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(lambda t: jnp.sum(_decorated_twice(t)))(v),
                               np.cos(v) - v * np.sin(v), rtol=1e-5)


def _local_defaults_and_keywords(x):
    out = 0.0
    for i in range(3):
        times_i = lambda t, i=i: t * i  # noqa: E731 - the default keeps this i
        out = out + times_i(x)

    def affine(t, scale=2.0, shift=x):
        return t * scale + shift
    return jnp.sum(out + affine(x) + affine(x, scale=3.0) + affine(t=x, shift=1.0))


def test_local_functions_with_defaults_and_keyword_calls():
    """Defaults are evaluated where the local function is defined (as Python does), and
    calls may pass keywords: 3x + (2x + x) + (3x + x) + (2x + 1) = 12x + 1."""
    v = np.array([1.0, -0.5], np.float32)
    np.testing.assert_allclose(_local_defaults_and_keywords(v), np.sum(12 * v + 1), rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(_local_defaults_and_keywords)(v),
                               np.sum(12 * v + 1), rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(_local_defaults_and_keywords)(v), [12.0, 12.0])


def _over_a_local_list_of_functions(x):
    fs = [jnp.sin, lambda t: t * 2]
    out = 0.0
    for f in fs:
        out = out + f(x)
    return jnp.sum(out + sum(g(x) for g in fs))


def test_loops_over_a_local_list_of_functions_unroll():
    """`fs = [jnp.sin, lambda t: 2 * t]` assigned once is known when the source is read,
    as a global list is: loops and comprehensions over it call known functions."""
    v = np.array([0.3, 1.2], np.float32)
    for transform in (redraft.grad, lambda f: redraft.jit(redraft.grad(f))):
        np.testing.assert_allclose(transform(_over_a_local_list_of_functions)(v),
                                   2 * (np.cos(v) + 2), rtol=1e-6)


def _spread_in_displays(x, ys):
    t = (x, *ys, x * 2)
    items = [*ys, x]
    return jnp.sum(jnp.stack(t)) + jnp.sum(jnp.stack(items) ** 2)


def _tuple_and_list_of_one_sequence(ys):
    return jnp.sum(jnp.stack(tuple(ys)) * jnp.stack(list(ys)))


def test_spreads_in_tuple_and_list_displays():
    """`(x, *ys, 2 * x)` and `[*ys, x]` are sequences joined item by item; the cotangents
    that reach ys through two of them add item by item (they were concatenated, giving a
    cotangent list twice as long)."""
    x = np.ones(2, np.float32)
    ys = [np.ones(2, np.float32), 2 * np.ones(2, np.float32)]
    np.testing.assert_allclose(redraft.jit(_spread_in_displays)(x, ys), 24.0)
    gx, gys = redraft.grad(_spread_in_displays, argnums=(0, 1))(x, ys)
    np.testing.assert_allclose(gx, 1 + 2 + 2 * x)
    assert len(gys) == 2
    np.testing.assert_allclose(gys[0], 1 + 2 * ys[0])
    np.testing.assert_allclose(gys[1], 1 + 2 * ys[1])
    g = redraft.grad(_tuple_and_list_of_one_sequence)(ys)
    assert len(g) == 2
    np.testing.assert_allclose(g[1], 2 * ys[1])


def test_size_bounded_nonzero_and_unique_compile():
    @redraft.jit
    def positions_and_values(x):
        idx = jnp.nonzero(x > 0, size=3, fill_value=-1)[0]
        return idx, jnp.unique(x, size=4, fill_value=0.0)
    idx, u = positions_and_values(jnp.array([1.0, -1.0, 2.0, 2.0, 3.0]))
    np.testing.assert_array_equal(idx, [0, 2, 3])
    np.testing.assert_array_equal(u, [-1.0, 1.0, 2.0, 3.0])


def _bisect(f, lo, hi):
    def not_narrow(s):
        return s[1] - s[0] > 1e-6

    def halve(s):
        lo, hi = s
        mid = (lo + hi) / 2
        return jnp.where(f(mid) > 0, lo, mid), jnp.where(f(mid) > 0, mid, hi)
    return redraft.lax.while_loop(not_narrow, halve, (lo, hi))[0]


def test_a_closure_passed_in_reaches_the_local_functions_that_call_it():
    """bisect(lambda x: x ** 3 - a, ...) under jit: the loop body, a local function of
    bisect, calls the closure, so it captures the closure's values too (NameError)."""
    cube_root = redraft.jit(lambda a: _bisect(lambda x: x ** 3 - a, 0.0, 3.0))
    np.testing.assert_allclose(cube_root(8.0), 2.0, atol=1e-5)
    np.testing.assert_allclose(cube_root(1.0), 1.0, atol=1e-5)
