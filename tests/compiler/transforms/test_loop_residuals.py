"""Reverse mode saves on a loop's tape the values its adjoint reads (compiler/transforms/ad/
vjp.py: values_to_save), with the user's functions a loop calls inlined into its body
(ad/loops.py), so the reverse loop reads the forward pass's products instead of computing
them again. Gradients are checked against finite differences, a hand-written NumPy
backpropagation through time, and eager execution (whose Python loops run unrolled)."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, lax, tree_util
from redraft.compiler.ir.ssa import for_p
from redraft.jit import make_ir

RNG = np.random.default_rng(11)


def close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def rnn_loss(params, xs, target):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(jnp.dot(x, wx) + jnp.dot(h, wh) + b)
        return h, h

    h0 = jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    h, _ = lax.scan(cell, h0, xs)
    return jnp.mean((h - target) ** 2)


def rnn_data(dtype=np.float32):
    params = [RNG.standard_normal((5, 7)) * 0.4, RNG.standard_normal((7, 7)) * 0.4,
              RNG.standard_normal(7) * 0.1]
    xs = RNG.standard_normal((6, 3, 5))
    target = RNG.standard_normal((3, 7))
    return [p.astype(dtype) for p in params], xs.astype(dtype), target.astype(dtype)


def numpy_bptt(params, xs, target):
    """The RNN loss's gradient by hand, in float64."""
    wx, wh, b = (np.asarray(p, np.float64) for p in params)
    xs, target = np.asarray(xs, np.float64), np.asarray(target, np.float64)
    hs = [np.zeros((xs.shape[1], wh.shape[0]))]
    for x in xs:
        hs.append(np.tanh(x @ wx + hs[-1] @ wh + b))
    g = 2.0 * (hs[-1] - target) / target.size
    gwx, gwh, gb = np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    for t in range(len(xs) - 1, -1, -1):
        g_pre = g * (1.0 - hs[t + 1] ** 2)
        gwx += xs[t].T @ g_pre
        gwh += hs[t].T @ g_pre
        gb += g_pre.sum(0)
        g = g_pre @ wh.T
    return [gwx, gwh, gb]


def _loops(fn, *args):
    return [e for e in make_ir(fn)(*args).body.eqns if e.prim is for_p]


def _products(loop) -> list[tuple]:
    """(operand ids, dimension numbers) of each dot_general directly in a loop's body."""
    return [(tuple(id(a) for a in e.ins), e.params["dimension_numbers"])
            for e in loop.regions[0].eqns if e.prim.name == "dot_general"]


def test_reverse_loop_reads_the_forward_products_instead_of_recomputing_them():
    params, xs, target = rnn_data()
    params, xs, target = [jnp.asarray(p) for p in params], jnp.asarray(xs), jnp.asarray(target)
    forward, backward = _loops(grad(rnn_loss), params, xs, target)
    fwd = _products(forward)
    assert len(fwd) == 2  # x @ wx, h @ wh
    # the weights enter both loops as the same outer values: a product of the forward's
    # operands in the forward's layout would show the same right operand and dimensions
    fwd_rhs = {(ins[1], dims) for ins, dims in fwd}
    bwd = _products(backward)
    assert len(bwd) == 3  # g @ wh.T, h.T @ g, x.T @ g: the adjoint's products only
    assert not {(ins[1], dims) for ins, dims in bwd} & fwd_rhs


def test_the_tape_holds_the_cells_output():
    source = redraft.emit(rnn_loss, "grad")
    forward = source.split("reversed_tape")[0]
    assert "saved = (carry_1, i, h_1)" in forward  # the tanh output, saved once computed
    assert "cell_bwd" not in source  # the cell is inlined: no backward call recomputing it


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_rnn_gradient_matches_hand_written_backpropagation(compiled):
    params, xs, target = rnn_data()
    fn = jit(grad(rnn_loss)) if compiled else grad(rnn_loss)
    got = fn([jnp.asarray(p) for p in params], jnp.asarray(xs), jnp.asarray(target))
    close(got, numpy_bptt(params, xs, target), rtol=2e-4, atol=2e-6)


def test_rnn_gradient_against_finite_differences():
    params, xs, target = rnn_data()
    g = jit(grad(rnn_loss))([jnp.asarray(p) for p in params], jnp.asarray(xs),
                            jnp.asarray(target))

    def loss64(ps):
        return float(rnn_loss([jnp.asarray(p.astype(np.float32)) for p in ps],
                              jnp.asarray(xs), jnp.asarray(target)))
    eps = 1e-2
    for k in range(3):
        direction = RNG.standard_normal(params[k].shape)
        up = [p.astype(np.float64) for p in params]
        down = [p.astype(np.float64) for p in params]
        up[k] = up[k] + eps * direction
        down[k] = down[k] - eps * direction
        numeric = (loss64(up) - loss64(down)) / (2 * eps)
        analytic = float(np.sum(np.asarray(g[k]) * direction))
        assert abs(numeric - analytic) <= 2e-2 * max(1.0, abs(numeric))


# ---- cells of other shapes: saved values that are tuples, read for shape, or in branches --

def two_layer(x, xs):
    def layer(c, v):
        a = jnp.sin(c * v)
        b = jnp.exp(-a) * c
        return b, (a, b.sum())
    c, (ys, sums) = lax.scan(layer, x, xs)
    return jnp.sum(c) + jnp.sum(ys ** 2) + jnp.sum(sums)


def branchy_cell(x, xs):
    def cell(c, v):
        if v.shape[0] > 2:  # static branch: the cell is not straight-line code
            c = jnp.tanh(c * v)
        else:
            c = c * v
        return c, c
    c, _ = lax.scan(cell, x, xs)
    return jnp.sum(c ** 2)


def broadcast_bias(w, xs):
    def cell(c, v):
        pre = jnp.dot(c, w) + v  # v broadcast over rows: its adjoint sums (reads a shape)
        return jnp.tanh(pre), pre.sum()
    c, ys = lax.scan(cell, jnp.ones((2, 3)), xs)
    return jnp.sum(c) + jnp.sum(ys)


def python_loop(x, w):
    out = []
    for i in range(4):
        x = jnp.tanh(jnp.dot(x, w) + i)
        out.append(x)
    return jnp.sum(jnp.stack(out) ** 2)


CASES = [
    (two_layer, (RNG.random(3), RNG.random((5, 3)))),
    (branchy_cell, (RNG.random(3), RNG.random((5, 3)))),
    (broadcast_bias, (RNG.random((3, 3)), RNG.random((4, 3)))),
    (python_loop, (RNG.random((2, 3)), RNG.random((3, 3)))),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_match_eager_and_finite_differences(fn, args):
    args32 = [jnp.asarray(a.astype(np.float32)) for a in args]
    eager = grad(fn)(*args32)
    close(jit(grad(fn))(*args32), eager, rtol=1e-5, atol=1e-6)
    direction = RNG.standard_normal(args[0].shape)
    eps = 1e-3
    rest = args32[1:]

    def at(x):
        return float(fn(jnp.asarray(x.astype(np.float32)), *rest))
    numeric = (at(args[0] + eps * direction) - at(args[0] - eps * direction)) / (2 * eps)
    analytic = float(np.sum(np.asarray(eager) * direction))
    assert abs(numeric - analytic) <= 1e-2 * max(1.0, abs(numeric))


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order_gradients_with_saved_values(fn, args):
    x, other = (jnp.asarray(a.astype(np.float32)) for a in args)

    def inner(y):
        return jnp.sum(grad(fn)(y, other) ** 2)
    close(jit(grad(inner))(x), grad(inner)(x), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_vmap_of_gradients_with_saved_values(fn, args):
    x, other = (jnp.asarray(a.astype(np.float32)) for a in args)
    batch = jnp.stack([x, x * 0.5])
    batched = redraft.vmap(lambda y: grad(fn)(y, other))
    one_by_one = jnp.stack([grad(fn)(b, other) for b in batch])
    close(jit(batched)(batch), one_by_one, rtol=1e-5, atol=1e-6)
    close(batched(batch), one_by_one, rtol=1e-5, atol=1e-6)


def series_step(k, carry):
    y, order, term, total = carry
    kf = jnp.zeros_like(y) + k
    term = term * y / (kf * (kf + order))
    return y, order, term, total + term


def series(x):
    half = x / 2
    carry = (half * half, jnp.zeros_like(x) + 1, half, half)
    return lax.fori_loop(1, 6, series_step, carry)[3]


def test_reverse_over_reverse_of_a_loop_whose_tape_is_pushed_at_the_end():
    # the first-order code pushes after the body; reversing it again once added the tuple
    # carry's cotangents with `+` (concatenating them), since `ad.index_add` reads the tuple
    x = jnp.asarray(np.array([-1.5, 0.5, 2.0], np.float32))
    t = jnp.asarray(np.array([0.3, -0.7, 0.5], np.float32))
    ct = jnp.asarray(np.array([-1.0, -0.2, -0.15], np.float32))

    def bwd(y):
        return redraft.vjp(series, y)[1](ct)[0]
    forward = redraft.jvp(bwd, (x,), (t,))[1]  # H t by forward over reverse
    reverse = grad(lambda y: jnp.sum(bwd(y) * t))(x)  # H t by reverse over reverse
    close(reverse, forward, rtol=1e-4, atol=1e-6)
