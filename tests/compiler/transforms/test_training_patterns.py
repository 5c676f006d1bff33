"""Patterns of training programs that once failed or differed: a split under vmap
differentiated, a partial of a model object as a scan body, keyword and spread arguments in
calls through function values, tree_map inside a differentiated function. Each checked
against NumPy, float64 central differences or the same sum taken example by example."""
import functools
from typing import NamedTuple

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, jvp, lax, tree_util, vmap
from redraft.test_util import numerical_grad

RNG = np.random.default_rng(0)


# ---- grad of vmap of a function whose split is batched example by example ------------------

def _split_attention(w, x):
    q, k, v = jnp.split(x @ w, 3, axis=-1)
    return jnp.sum(jnp.tanh(q * k) * v)


def test_grad_of_vmap_through_a_split_of_three_pieces():
    # the cotangent of the stacked per-example pieces (a tuple of three) was cut into one
    # row per tuple item instead of one tuple per example: a shape error, or wrong numbers
    # when the batch had three examples
    w = RNG.normal(size=(4, 6)).astype(np.float32)
    for batch in (3, 5):
        xs = RNG.normal(size=(batch, 2, 4)).astype(np.float32)
        got = grad(lambda w_: jnp.sum(vmap(_split_attention, (None, 0))(w_, xs)))(w)
        want = sum(np.asarray(grad(_split_attention)(w, xs[i])) for i in range(batch))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


# ---- a partial of a callable object as a scan body --------------------------------------------

class _Cell:
    def __call__(self, p, h, x):
        h = jnp.tanh(x * p + h)
        return h, h


_CELL = _Cell()


def _scan_loss(p, xs):
    step = functools.partial(_CELL, p)
    _, hs = lax.scan(step, 0.0, xs)
    return jnp.sum(hs)


def _scan_loss64(p, xs):
    h, total = 0.0, 0.0
    for x in xs:
        h = np.tanh(x * p + h)
        total += h
    return total


def test_partial_of_a_model_object_as_scan_body():
    # the partial was never made in the lowered loop: its name was read unbound
    xs = np.array([0.3, -1.0, 2.0], np.float32)
    np.testing.assert_allclose(float(_scan_loss(0.5, xs)), _scan_loss64(0.5, xs), rtol=1e-6)
    want = numerical_grad(lambda p: _scan_loss64(float(p), xs.astype(np.float64)), 0.5)
    np.testing.assert_allclose(float(grad(_scan_loss)(0.5, xs)), want, rtol=1e-4)
    np.testing.assert_allclose(float(jit(grad(_scan_loss))(0.5, xs)), want, rtol=1e-4)
    per = vmap(grad(_scan_loss), (None, 0))(0.5, np.stack([xs, 2 * xs]))
    np.testing.assert_allclose(float(per[1]), numerical_grad(
        lambda p: _scan_loss64(float(p), 2 * xs.astype(np.float64)), 0.5), rtol=1e-4)


# ---- keyword arguments through a function value ----------------------------------------------

@tree_util.register_pytree_node_class
class _Net:
    def __init__(self, w):
        self.w = w

    def __call__(self, x, *, scale=1.0):
        return jnp.tanh(x @ self.w) * scale

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def _apply(net, x, scale=1.0):
    return net(x, scale=scale)


def _loss_with(apply_fn, net, x):
    return jnp.sum(apply_fn(net, x, scale=3.0) ** 2)


def _loss64(w, x):
    return np.sum((np.tanh(x @ w) * 3.0) ** 2)


def test_keyword_arguments_through_a_function_value_and_a_model_object():
    w = RNG.normal(size=(3, 2)).astype(np.float32)
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    want = numerical_grad(lambda w_: _loss64(w_, x.astype(np.float64)), w)
    for fn in (grad(_loss_with, argnums=1), jit(grad(_loss_with, argnums=1), static_argnums=0)):
        got = fn(_apply, _Net(jnp.asarray(w)), x)
        np.testing.assert_allclose(np.asarray(got.w), want, rtol=1e-4, atol=1e-5)
    tangent = RNG.normal(size=w.shape).astype(np.float32)
    _, dot = jvp(lambda net: _loss_with(_apply, net, x), (_Net(jnp.asarray(w)),),
                 (_Net(jnp.asarray(tangent)),))
    np.testing.assert_allclose(float(dot), float(np.sum(want * tangent)), rtol=1e-4)


def _apply_each(apply_fn, net, xs):
    return vmap(lambda x: apply_fn(net, x, scale=2.0))(xs)


def test_keyword_arguments_through_a_function_value_under_vmap():
    w = RNG.normal(size=(3, 2)).astype(np.float32)
    xs = RNG.normal(size=(5, 3)).astype(np.float32)
    got = _apply_each(_apply, _Net(jnp.asarray(w)), xs)
    np.testing.assert_allclose(np.asarray(got), np.tanh(xs @ w) * 2.0, rtol=1e-5, atol=1e-6)


# ---- spread arguments through a function value -------------------------------------------------

def _call_spread(f, items):
    return f(*items)


def _spread_loss(a, b):
    c = len(a.shape) * 2.0  # captured, not differentiated: the lambda is a value at run time
    return jnp.sum(_call_spread(lambda u, v: jnp.sin(u) * v * c, (a, b))) / 2.0


def test_spread_arguments_through_a_function_value():
    a = RNG.normal(size=3).astype(np.float32)
    b = RNG.normal(size=3).astype(np.float32)
    ga, gb = grad(_spread_loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), np.cos(a) * b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gb), np.sin(a), rtol=1e-5)
    _, dot = jvp(_spread_loss, (a, b), (np.ones(3, np.float32), np.zeros(3, np.float32)))
    np.testing.assert_allclose(float(dot), float(np.sum(np.cos(a) * b)), rtol=1e-5)
    per = vmap(_spread_loss)(np.stack([a, b]), np.stack([b, a]))
    np.testing.assert_allclose(np.asarray(per), [np.sum(np.sin(a) * b), np.sum(np.sin(b) * a)],
                               rtol=1e-5)


# ---- tree_map inside a differentiated function ------------------------------------------------

def _tree_sum(tree):
    return sum(jnp.sum(leaf) for leaf in tree_util.tree_leaves(tree))


def test_tree_map_of_one_and_two_trees_under_grad():
    params = {"a": jnp.asarray(RNG.normal(size=3).astype(np.float32)),
              "b": [jnp.asarray(RNG.normal(size=(2, 2)).astype(np.float32))]}
    one = grad(lambda p: _tree_sum(tree_util.tree_map(lambda v: v ** 3, p)))(params)
    two = jit(grad(lambda p: _tree_sum(tree_util.tree_map(lambda u, v: u * v, p, p))))(params)
    for leaf_one, leaf_two, leaf in zip(tree_util.tree_leaves(one), tree_util.tree_leaves(two),
                                        tree_util.tree_leaves(params)):
        np.testing.assert_allclose(np.asarray(leaf_one), 3 * np.asarray(leaf) ** 2, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(leaf_two), 2 * np.asarray(leaf), rtol=1e-5)
    flat, treedef = tree_util.tree_flatten(params)
    rebuilt = grad(lambda fl: _tree_sum(tree_util.tree_unflatten(treedef, [
        2.0 * v for v in tree_util.tree_flatten(tree_util.tree_unflatten(treedef, fl))[0]])))(
        flat)
    for g, leaf in zip(rebuilt, flat):
        np.testing.assert_allclose(np.asarray(g), np.full(np.shape(leaf), 2.0), rtol=1e-6)


def test_values_a_closure_captures_are_differentiated_through_tree_map():
    # the closure reached tree_map as a value whose captured `s` was a constant: refused,
    # or (through other paths) a zero derivative
    params = {"a": jnp.asarray([1.0, 2.0, 3.0]), "b": [jnp.asarray(-1.0)]}

    def scaled(p, s):
        return _tree_sum(tree_util.tree_map(lambda u, v: u * v * s, p, p))

    for fn in (grad(scaled, argnums=(0, 1)), jit(grad(scaled, argnums=(0, 1)))):
        gp, gs = fn(params, 2.0)
        np.testing.assert_allclose(np.asarray(gp["a"]), [4.0, 8.0, 12.0], rtol=1e-6)
        np.testing.assert_allclose(float(gp["b"][0]), -4.0, rtol=1e-6)
        np.testing.assert_allclose(float(gs), 15.0, rtol=1e-6)
    dfwd = redraft.jacfwd(lambda s: scaled(params, s))(2.0)
    np.testing.assert_allclose(float(dfwd), 15.0, rtol=1e-6)


def test_closure_over_a_batched_value_passed_to_tree_map_under_vmap():
    params = {"w": jnp.asarray([[1.0, 2.0], [3.0, 4.0]]), "b": jnp.asarray([0.5, -0.5])}
    xs = jnp.asarray([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])

    def one(x):
        n = jnp.sum(x ** 2)
        return tree_util.tree_map(lambda t: t * n, params)

    for fn in (vmap(one), jit(vmap(one))):
        out = fn(xs)
        norms = np.sum(np.asarray(xs) ** 2, axis=1)
        np.testing.assert_allclose(np.asarray(out["w"]),
                                   norms[:, None, None] * np.asarray(params["w"]), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(out["b"]),
                                   norms[:, None] * np.asarray(params["b"]), rtol=1e-6)


# ---- dict spreads and NamedTuple fields in differentiated code -------------------------------

def test_dict_spread_passes_each_items_derivative():
    params = {"w": jnp.asarray([1.0, 2.0]), "b": jnp.asarray(3.0)}

    def loss(p, scale):
        q = {**p, "w": p["w"] * scale}  # b from p, w replaced
        r = {"extra": scale, **q}
        return jnp.sum(r["w"] ** 2) + r["b"] * r["extra"]

    g, gs = grad(loss, argnums=(0, 1))(params, 2.0)
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * np.asarray([1.0, 2.0]) * 4.0)
    np.testing.assert_allclose(float(g["b"]), 2.0)
    np.testing.assert_allclose(float(gs), 2 * 2.0 * 5.0 + 3.0)
    _, dot = jvp(lambda s: loss(params, s), (2.0,), (1.0,))
    np.testing.assert_allclose(float(dot), float(gs))
    per = vmap(loss, (None, 0))(params, jnp.asarray([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(per), [5.0 + 3.0, 20.0 + 6.0])


class _State(NamedTuple):
    h: jnp.ndarray
    c: jnp.ndarray = 0.0
    n: int = 0


def _rnn_loss(w, xs):
    def step(state, x):
        h = jnp.tanh(w * x + state.h)
        return _State(h, c=state.c + h), h
    final, hs = lax.scan(step, _State(jnp.zeros(())), xs)
    return jnp.sum(hs) + final.c, _State(c=final.c, h=final.h, n=1)


def _rnn_loss64(w, xs):
    h, c, total = 0.0, 0.0, 0.0
    for x in xs:
        h = np.tanh(w * x + h)
        c += h
        total += h
    return total + c


def test_namedtuple_built_in_a_scan_body_and_returned_as_aux():
    xs = np.array([0.5, -0.3, 1.2], np.float32)
    g, aux = grad(_rnn_loss, has_aux=True)(0.7, xs)
    want = numerical_grad(lambda w: _rnn_loss64(float(w), xs.astype(np.float64)), 0.7)
    np.testing.assert_allclose(float(g), want, rtol=1e-4)
    assert isinstance(aux, _State) and aux.n == 1
    gj, _ = jit(grad(_rnn_loss, has_aux=True))(0.7, xs)
    np.testing.assert_allclose(float(gj), want, rtol=1e-4)
    # a NamedTuple's cotangent was read as one array by tuple() under vmap: wrong numbers
    per, _ = vmap(grad(_rnn_loss, has_aux=True), (0, None))(jnp.asarray([0.7, -0.2]), xs)
    np.testing.assert_allclose(float(per[0]), want, rtol=1e-4)
    np.testing.assert_allclose(float(per[1]), numerical_grad(
        lambda w: _rnn_loss64(float(w), xs.astype(np.float64)), -0.2), rtol=1e-4)


# ---- a pytree object built in differentiated code; sorted over a dict's items ---------------

@tree_util.register_pytree_node_class
class _Affine:
    def __init__(self, w, b, scale=1.0):
        self.w, self.b, self.scale = w, b, scale

    def __call__(self, x):
        return (x @ self.w + self.b) * self.scale

    def tree_flatten(self):
        return (self.b, self.w), self.scale  # children in another order than the arguments

    @classmethod
    def tree_unflatten(cls, scale, children):
        b, w = children
        return cls(w, b, scale)


@tree_util.register_pytree_node_class
class _Normalised:
    def __init__(self, w):
        self.w = w / jnp.sum(w)  # a leaf computed from the argument

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.w = children[0]
        return obj


def _layers_loss(params, x):
    h = x
    for name, p in sorted(params.items()):  # "a" before "b", whatever the dict's order
        h = jnp.tanh(_Affine(p["w"], b=p["b"], scale=2.0)(h))
    return jnp.sum(h)


def _layers_loss64(params, x):
    h = x
    for name in sorted(params):
        h = np.tanh((h @ params[name]["w"] + params[name]["b"]) * 2.0)
    return np.sum(h)


def test_pytree_object_built_in_a_loss_and_sorted_items():
    params = {"b": {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)},
              "a": {"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=3)}}
    params = tree_util.tree_map(lambda v: jnp.asarray(v.astype(np.float32)), params)
    x = RNG.normal(size=(4, 2)).astype(np.float32)
    p64 = tree_util.tree_map(lambda v: np.asarray(v, np.float64), params)
    for fn in (grad(_layers_loss), jit(grad(_layers_loss))):
        got = fn(params, x)
        for name in ("a", "b"):
            for leaf in ("w", "b"):
                def f(v, name=name, leaf=leaf):
                    q = {k: dict(d) for k, d in p64.items()}
                    q[name][leaf] = v
                    return _layers_loss64(q, x.astype(np.float64))
                want = numerical_grad(f, p64[name][leaf])
                np.testing.assert_allclose(np.asarray(got[name][leaf]), want, rtol=1e-4,
                                           atol=1e-5)
    tangent = tree_util.tree_map(jnp.ones_like, params)
    _, dot = jvp(lambda p: _layers_loss(p, x), (params,), (tangent,))
    g = grad(_layers_loss)(params, x)
    np.testing.assert_allclose(float(dot), float(sum(jnp.sum(v) for v in
                                                      tree_util.tree_leaves(g))), rtol=1e-4)
    per = vmap(_layers_loss, (None, 0))(params, np.stack([x, 2 * x]))
    np.testing.assert_allclose(np.asarray(per), [_layers_loss64(p64, x.astype(np.float64)),
                                                 _layers_loss64(p64, 2 * x.astype(np.float64))],
                               rtol=1e-5)


def test_a_pytree_object_computing_its_leaves_is_refused_under_grad():
    with pytest.raises(TypeError, match="computes a leaf"):
        grad(lambda w: jnp.sum(_Normalised(w).w))(jnp.ones(3))


def test_jvp_reads_no_tangent_from_an_objects_static_field():
    # the tangent object holds the primal's aux data (scale = 2.0) where its tangent would
    # be: reading it as a tangent added (x @ w + b) * 2.0 to the derivative
    w = jnp.asarray(RNG.normal(size=(2, 3)).astype(np.float32))
    b = jnp.asarray(RNG.normal(size=3).astype(np.float32))
    x = RNG.normal(size=(4, 2)).astype(np.float32)
    model = _Affine(w, b, scale=2.0)
    tangent = _Affine(jnp.ones_like(w), jnp.zeros_like(b), scale=2.0)
    for fn in (jvp, jit(jvp, static_argnums=0)):
        _, dot = fn(lambda m: jnp.sum(m(x)), (model,), (tangent,))
        np.testing.assert_allclose(float(dot), float(np.sum(x @ np.ones((2, 3)) * 2.0)),
                                   rtol=1e-5)


def test_grad_of_a_batch_with_a_mask_and_integer_labels():
    # the mask reached jnp.where's condition as a differentiated value: refused
    class Batch(NamedTuple):
        x: jnp.ndarray
        y: jnp.ndarray
        mask: jnp.ndarray

    batch = Batch(jnp.asarray([1.0, -2.0, 3.0]), jnp.asarray([0, 1, 1]),
                  jnp.asarray([True, False, True]))

    def loss(b):
        per = (b.x - b.y) ** 2
        return jnp.sum(jnp.where(b.mask, per, 0.0))

    g = grad(loss, allow_int=True)(batch)
    np.testing.assert_allclose(np.asarray(g.x), [2.0, 0.0, 4.0])


def test_container_copy_methods_pass_their_items_derivatives():
    # `params[0].copy()` was read as a method carrying no derivative: a zero gradient
    params = [{"w": jnp.asarray([1.0, 2.0])}, [jnp.asarray(3.0), jnp.asarray(4.0)]]

    def loss(p):
        d = p[0].copy()
        d = {**d, "w": d["w"] * 2}
        items = p[1].copy()
        return jnp.sum(d["w"] ** 2) + items[0] * items[1]

    g = grad(loss)(params)
    np.testing.assert_allclose(np.asarray(g[0]["w"]), [8.0, 16.0])
    np.testing.assert_allclose([float(g[1][0]), float(g[1][1])], [4.0, 3.0])
    gj = jit(grad(loss))(params)
    np.testing.assert_allclose(np.asarray(gj[0]["w"]), [8.0, 16.0])
    _, dot = jvp(loss, (params,), (tree_util.tree_map(jnp.ones_like, params),))
    np.testing.assert_allclose(float(dot), 8.0 + 16.0 + 4.0 + 3.0)


def test_setdefault_inside_an_expression_passes_the_items_derivative():
    # once refused (its value would have been a method result carrying no derivative); now
    # read as `v = d.setdefault(k, x)`: d rebound to the dict with k, v its item after
    def loss(p):
        d = p[0]
        return jnp.sum(d.setdefault("w", jnp.ones(2)) ** 2) + jnp.sum(
            d.setdefault("b", jnp.ones(2)) * 3.0)

    params = [{"w": jnp.asarray([1.0, 2.0])}]
    g = grad(loss)(params)
    np.testing.assert_allclose(np.asarray(g[0]["w"]), [2.0, 4.0])
    assert list(params[0]) == ["w"]  # the caller's dict is not changed
    np.testing.assert_allclose(float(jit(loss)(params)), 5.0 + 6.0)


def test_zip_of_a_spread_and_tree_map_with_path_under_grad():
    params = {"layers": [{"kernel": jnp.asarray([1.0, 2.0]), "bias": jnp.asarray([3.0])},
                         {"kernel": jnp.asarray([4.0]), "bias": jnp.asarray([5.0, 6.0])}]}

    def loss(p):
        pairs = [(jnp.sum(layer["kernel"]), jnp.sum(layer["bias"])) for layer in p["layers"]]
        ks, bs = zip(*pairs)  # a transpose, read as one
        decay = tree_util.tree_map_with_path(
            lambda path, v: 0.0 if "bias" in tree_util.keystr(path) else jnp.sum(v ** 2), p)
        return 2.0 * sum(ks) + 3.0 * sum(bs) + sum(tree_util.tree_leaves(decay))

    for fn in (grad(loss), jit(grad(loss))):
        g = fn(params)
        np.testing.assert_allclose(np.asarray(g["layers"][0]["kernel"]), [4.0, 6.0])
        np.testing.assert_allclose(np.asarray(g["layers"][1]["kernel"]), [10.0])
        np.testing.assert_allclose(np.asarray(g["layers"][1]["bias"]), [3.0, 3.0])
    _, dot = jvp(loss, (params,), (tree_util.tree_map(jnp.ones_like, params),))
    np.testing.assert_allclose(float(dot), 4 + 6 + 10 + 3 * 3)


def test_vmap_of_a_random_sampler_itself_and_under_grad():
    # vmap(random.categorical) read the sampler's source (a wrapper that pops from a dict)
    from redraft import random
    keys = random.split(random.PRNGKey(0), 4)
    logits = jnp.asarray(RNG.normal(size=(4, 5)).astype(np.float32))
    got = vmap(random.categorical)(keys, logits)
    want = [int(random.categorical(keys[i], logits[i])) for i in range(4)]
    np.testing.assert_array_equal(np.asarray(got), want)

    def loss(w):
        actions = vmap(random.categorical)(keys, lax.stop_gradient(logits * w))
        chosen = jnp.take_along_axis(jax_log_softmax(logits * w), actions[:, None], axis=1)
        return -jnp.sum(chosen)

    def jax_log_softmax(z):
        return z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))

    w0 = 1.5
    want_g = numerical_grad(lambda w: float(loss(float(w))), w0, eps=1e-3)
    np.testing.assert_allclose(float(grad(loss)(w0)), want_g, rtol=1e-3)


def test_per_example_gradients_through_a_batched_switch_over_a_dict():
    # the branches' gradients (dicts, typed "every leaf batched") were selected as arrays
    params = {"w": jnp.asarray(RNG.normal(size=(3, 4)).astype(np.float32)),
              "b": jnp.asarray(RNG.normal(size=4).astype(np.float32))}
    xs = jnp.asarray(RNG.normal(size=(5, 3)).astype(np.float32))
    modes = jnp.asarray([0, 1, 2, 1, 0])

    def loss(p, x, mode):
        return lax.switch(mode, [lambda q: jnp.sum(jnp.tanh(x @ q["w"])),
                                 lambda q: 0.1 * jnp.sum((x @ q["w"]) ** 2),
                                 lambda q: jnp.sum(jnp.sin(x @ q["w"] + q["b"]))], p)

    for fn in (vmap(grad(loss), (None, 0, 0)), jit(vmap(grad(loss), (None, 0, 0)))):
        got = fn(params, xs, modes)
        for i in range(5):
            want = grad(loss)(params, xs[i], int(modes[i]))
            for k in ("w", "b"):
                np.testing.assert_allclose(np.asarray(got[k][i]), np.asarray(want[k]),
                                           rtol=1e-5, atol=1e-6)


class _Chain:
    """A model object holding layer functions (configuration, not a pytree)."""

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, w, x):
        h = jnp.tanh(x @ w) * self.scale
        return h, jnp.sum(h)


def test_vmap_and_grad_of_a_callable_object_itself():
    # vmap(model) read the object as if it were a function's source
    w = jnp.asarray(RNG.normal(size=(3, 2)).astype(np.float32))
    xs = jnp.asarray(RNG.normal(size=(4, 3)).astype(np.float32))
    model = _Chain(2.0)
    hs, totals = vmap(model, in_axes=(None, 0), out_axes=(1, 0))(w, xs)
    want = np.tanh(np.asarray(xs) @ np.asarray(w)) * 2.0
    np.testing.assert_allclose(np.asarray(hs), want.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(totals), want.sum(axis=1), rtol=1e-5)
    g = grad(lambda w_: model(w_, xs)[1])(w)
    x64 = np.asarray(xs, np.float64)
    np.testing.assert_allclose(np.asarray(g), numerical_grad(
        lambda w_: np.sum(np.tanh(x64 @ w_) * 2.0), np.asarray(w)), rtol=1e-4, atol=1e-5)
