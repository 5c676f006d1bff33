"""Loops that grow or shrink a list by one item an iteration (scan's outputs, AD's tape, the
reverse pass's cotangents) stage as one IR loop over stacked arrays (compiler/staging/
stacks.py). Results must equal eager execution, which runs the Python loops unrolled."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, lax, tree_util
from redraft.compiler.ir.ssa import for_p, walk_eqns
from redraft.jit import make_ir

RNG = np.random.default_rng(3)


def close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def loops_and_eqns(fn, *args) -> tuple[int, int]:
    """(for loops, equations outside any loop) of fn's IR for these arguments."""
    body = make_ir(fn)(*args).body
    loops = sum(1 for e in walk_eqns(body) if e.prim is for_p)
    return loops, len(body.eqns)


# ---- functions under test ---------------------------------------------------------------------

def rnn_loss(params, xs, target):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(jnp.dot(x, wx) + jnp.dot(h, wh) + b)
        return h, h

    h0 = jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    h, hs = lax.scan(cell, h0, xs)
    return jnp.mean((h - target) ** 2) + 0.1 * jnp.mean(hs ** 2)


def scan_pytree_ys(x, xs):
    def body(c, v):
        c = jnp.sin(c) * v
        return c, (c, c.sum(), 2 * v)
    return lax.scan(body, x, xs)


def scan_reversed(x, xs):
    def body(c, v):
        c = c * 0.9 + v
        return c, c * c
    return lax.scan(body, x, xs, None, True)


def scan_length_only(x):
    def body(c, _):
        c = jnp.cos(c)
        return c, c + 1.0
    return lax.scan(body, x, None, 7)


def nested_scan(x, xs):
    def inner(c, v):
        c = jnp.tanh(c + v)
        return c, c

    def outer(c, row):
        c, ys = lax.scan(inner, c, row)
        return c, ys.sum(0)
    return lax.scan(outer, x, xs)


def user_list(x):
    out = []
    for i in range(6):
        x = jnp.sin(x) + i
        out.append(x)
    return jnp.stack(out), out[2]


def list_length_read(x):
    out = []
    for i in range(5):
        x = x * 0.5 + len(out)
        out.append(x)
    return x, out


def pair_body(c, x):
    a, n = c
    a = jnp.tanh(a * x + 0.3)
    return (a, n + 1), (a * 2.0, n)


def tuple_carry(x, xs):
    (a, n), (ys, ns) = lax.scan(pair_body, (x, 0), xs)
    return jnp.sum(a) + jnp.sum(ys ** 2) + jnp.sum(ns) * 0.5


def tuple_carry_jvp(x, xs):
    return redraft.jvp(lambda y: tuple_carry(y, xs), (x,), (jnp.ones_like(x),))


def tuple_carry_vmap(x, xs):
    return redraft.vmap(lambda r: tuple_carry(x, r))(jnp.stack([xs, xs * 0.5]))


def tuple_carry_grad_of_grad(x, xs):
    return grad(lambda y: grad(lambda z: tuple_carry(z, xs))(y).sum())(x)


def scan_in_while(x, xs):
    def step(c):
        i, a = c
        _, ys = lax.scan(lambda cc, v: (cc * v, cc), a, xs)
        return i + 1, a + ys.sum(0) * 0.01
    return lax.while_loop(lambda c: c[0] < 3, step, (0, x))


def fori_grad(x):
    return grad(lambda y: lax.fori_loop(0, 8, lambda i, c: jnp.sin(c) * (i + 1.0), y).sum())(x)


def rnn_data():
    params = [RNG.standard_normal((6, 8)).astype(np.float32) * 0.3,
              RNG.standard_normal((8, 8)).astype(np.float32) * 0.3,
              RNG.standard_normal(8).astype(np.float32) * 0.1]
    xs = RNG.standard_normal((9, 4, 6)).astype(np.float32)
    target = RNG.standard_normal((4, 8)).astype(np.float32)
    return [jnp.asarray(p) for p in params], jnp.asarray(xs), jnp.asarray(target)


# ---- tests ----------------------------------------------------------------------------------

def test_rnn_scan_and_its_gradient_stay_loops():
    args = rnn_data()
    loops, top = loops_and_eqns(grad(rnn_loss), *args)
    assert loops == 2  # the forward scan and its reverse pass; nothing unrolled
    assert top < 40
    close(jit(rnn_loss)(*args), rnn_loss(*args))
    close(jit(grad(rnn_loss))(*args), grad(rnn_loss)(*args), rtol=1e-4, atol=1e-6)


def test_rnn_gradient_against_finite_differences():
    params, xs, target = rnn_data()
    g = jit(grad(rnn_loss))(params, xs, target)
    wx = np.asarray(params[0], np.float64)
    direction = RNG.standard_normal(wx.shape)
    eps = 1e-2

    def at(w):
        p64 = [jnp.asarray(w.astype(np.float32)), params[1], params[2]]
        return float(rnn_loss(p64, xs, target))
    numeric = (at(wx + eps * direction) - at(wx - eps * direction)) / (2 * eps)
    analytic = float(np.sum(np.asarray(g[0]) * direction))
    assert abs(numeric - analytic) <= 2e-2 * max(1.0, abs(numeric))


@pytest.mark.parametrize("fn, args", [
    (scan_pytree_ys, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3))))),
    (scan_reversed, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3))))),
    (scan_length_only, (jnp.asarray(RNG.random(2)),)),
    (nested_scan, (jnp.asarray(RNG.random(2)), jnp.asarray(RNG.random((3, 4, 2))))),
    (user_list, (jnp.asarray(RNG.random(3)),)),
    (list_length_read, (jnp.asarray(RNG.random(3)),)),
    (fori_grad, (jnp.asarray(RNG.random(3)),)),
    (tuple_carry, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3))))),
    (tuple_carry_jvp, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3))))),
    (tuple_carry_vmap, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3))))),
    (tuple_carry_grad_of_grad, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3))))),
    (scan_in_while, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3))))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_jit_matches_eager(fn, args):
    close(jit(fn)(*args), fn(*args))


@pytest.mark.parametrize("fn, args", [
    (scan_pytree_ys, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3))))),
    (scan_reversed, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3))))),
    (nested_scan, (jnp.asarray(RNG.random(2)), jnp.asarray(RNG.random((3, 4, 2))))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_of_scans_match_eager(fn, args):
    def loss(*a):
        return sum(jnp.sum(leaf ** 2) for leaf in tree_util.tree_leaves(fn(*a)))
    close(jit(grad(loss))(*args), grad(loss)(*args), rtol=1e-5, atol=1e-6)
    close(jit(grad(loss, argnums=1))(*args), grad(loss, argnums=1)(*args), rtol=1e-5,
          atol=1e-6)


@pytest.mark.parametrize("fn, args, loops", [
    (scan_pytree_ys, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3)))), 1),
    (scan_reversed, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((5, 3)))), 1),
    (user_list, (jnp.asarray(RNG.random(3)),), 1),
    (tuple_carry, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3)))), 1),
    # the while's condition is known while compiling: three iterations, each one loop
    (scan_in_while, (jnp.asarray(RNG.random(3)), jnp.asarray(RNG.random((6, 3)))), 3),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loops_that_append_are_not_unrolled(fn, args, loops):
    assert loops_and_eqns(fn, *args)[0] == loops


def test_a_list_whose_length_the_body_reads_is_unrolled_and_right():
    x = jnp.asarray(RNG.random(3))
    assert loops_and_eqns(list_length_read, x)[0] == 0
    close(jit(list_length_read)(x), list_length_read(x))


def test_vmap_of_grad_of_scan():
    params, xs, target = rnn_data()
    batched = jnp.stack([target, target * 0.5])
    fn = redraft.vmap(grad(rnn_loss), in_axes=(None, None, 0))
    close(jit(fn)(params, xs, batched), fn(params, xs, batched), rtol=1e-4, atol=1e-6)
