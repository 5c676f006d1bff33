"""Traced functions (no readable source) taking and returning pytrees: each argument's
structure is traced as that structure of tracers, once per structure, and every transform
reads the result; checked against NumPy, central differences and eager runs."""
from typing import NamedTuple

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.compiler.tracing.tracer import StructureUnknownError
from redraft.runtime.errors import TracerBoolConversionError
from redraft.test_util import numerical_grad


class State(NamedTuple):
    w: object
    b: object


def exec_function(source: str, name: str):
    ns = {"jnp": jnp, "redraft": redraft, "State": State}
    exec(source, ns)
    return ns[name]


MLP = """
def mlp(params, x):
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.sum(h)
"""

RNG = np.random.RandomState(0)


def layers(n: int) -> list:
    return [(RNG.randn(3, 3).astype(np.float32), RNG.randn(3).astype(np.float32))
            for _ in range(n)]


def np_mlp(params, x):
    h = x
    for w, b in params:
        h = np.tanh(h @ w + b)
    return np.sum(h)


X = RNG.randn(2, 3).astype(np.float32)


def fd_grad_params(params, x) -> list:
    """Central differences of np_mlp in each leaf of params."""
    out = []
    for k, (w, b) in enumerate(params):
        def at(leaf_w, leaf_b, k=k):
            p = [(a.astype(np.float64), c.astype(np.float64)) for a, c in params]
            p[k] = (leaf_w, leaf_b)
            return np_mlp(p, x.astype(np.float64))
        gw = numerical_grad(lambda v: at(v, b.astype(np.float64)), w.astype(np.float64))
        gb = numerical_grad(lambda v: at(w.astype(np.float64), v), b.astype(np.float64))
        out.append((gw, gb))
    return out


def assert_tree_close(got, want, rtol=1e-4, atol=1e-5):
    got_leaves, got_def = redraft.tree_util.tree_flatten(got)
    want_leaves, want_def = redraft.tree_util.tree_flatten(want)
    assert got_def == want_def
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def test_list_of_layers_jit_and_grad_retrace_per_structure():
    mlp = exec_function(MLP, "mlp")
    two, three = layers(2), layers(3)
    f = redraft.jit(mlp)
    np.testing.assert_allclose(f(two, X), np_mlp(two, X), rtol=1e-5)
    np.testing.assert_allclose(f(three, X), np_mlp(three, X), rtol=1e-5)
    np.testing.assert_allclose(f(two, X), np_mlp(two, X), rtol=1e-5)
    for params in (two, three, two):
        assert_tree_close(redraft.grad(mlp)(params, X), fd_grad_params(params, X),
                          rtol=1e-3, atol=1e-4)
    assert_tree_close(redraft.jit(redraft.grad(mlp))(three, X), fd_grad_params(three, X),
                      rtol=1e-3, atol=1e-4)


def test_grad_argnums_value_and_grad_and_jvp_vjp_agree():
    mlp = exec_function(MLP, "mlp")
    params = layers(2)
    value, (gp, gx) = redraft.value_and_grad(mlp, argnums=(0, 1))(params, X)
    np.testing.assert_allclose(value, np_mlp(params, X), rtol=1e-5)
    gx_fd = numerical_grad(lambda x: np_mlp([(w.astype(np.float64), b.astype(np.float64))
                                             for w, b in params], x), X.astype(np.float64))
    np.testing.assert_allclose(gx, gx_fd, rtol=1e-3, atol=1e-4)
    tangents = [(np.ones_like(w), np.ones_like(b)) for w, b in params]
    _, tangent_out = redraft.jvp(mlp, (params, X), (tangents, np.zeros_like(X)))
    expected = sum(np.sum(gw) + np.sum(gb) for gw, gb in gp)
    np.testing.assert_allclose(tangent_out, expected, rtol=1e-4)
    _, pullback = redraft.vjp(mlp, params, X)
    assert_tree_close(pullback(np.float32(1.0)), (gp, gx))
    assert_tree_close(redraft.jacrev(mlp)(params, X), gp)
    assert_tree_close(redraft.jacfwd(mlp)(params, X), gp)


def test_vmap_with_tree_in_axes_against_a_loop():
    mlp = exec_function(MLP, "mlp")
    params = layers(2)
    xs = RNG.randn(4, 2, 3).astype(np.float32)
    got = redraft.vmap(mlp, in_axes=(None, 0))(params, xs)
    np.testing.assert_allclose(got, [np_mlp(params, x) for x in xs], rtol=1e-5)
    per_example = redraft.jit(redraft.vmap(redraft.grad(mlp), in_axes=(None, 0)))(params, xs)
    for k, x in enumerate(xs):
        assert_tree_close([(gw[k], gb[k]) for gw, gb in per_example],
                          redraft.grad(mlp)(params, x))
    stacked = [(np.stack([w, 2 * w]), b) for w, b in params]
    got = redraft.vmap(mlp, in_axes=([(0, None), (0, None)], None))(stacked, X)
    for k in range(2):
        np.testing.assert_allclose(got[k], np_mlp([(w[k], b) for w, b in stacked], X),
                                   rtol=1e-5)


DICT = """
def loss(p, x):
    total = 0.0
    for name, v in p.items():
        total = total + jnp.sum(v * x)
    return total + jnp.sum(p["w"] ** 2) * len(p)
"""


def test_dict_items_keys_and_grad():
    loss = exec_function(DICT, "loss")
    p = {"w": np.float32([1.0, 2.0, 3.0]), "b": np.float32([0.5, -1.0, 2.0])}
    x = np.float32([0.1, 0.2, 0.3])
    want = np.sum((p["w"] + p["b"]) * x) + 2 * np.sum(p["w"] ** 2)
    np.testing.assert_allclose(redraft.jit(loss)(p, x), want, rtol=1e-5)
    g = redraft.grad(loss)(p, x)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"], x + 4 * p["w"], rtol=1e-5)
    np.testing.assert_allclose(g["b"], x, rtol=1e-5)
    three = dict(p, c=np.float32([1.0, 1.0, 1.0]))  # another structure: traced again
    np.testing.assert_allclose(redraft.jit(loss)(three, x),
                               want + np.sum(x) + np.sum(p["w"] ** 2), rtol=1e-5)


RESULTS = """
def split(p, x):
    (a, b), c = p
    return {"s": jnp.sum(a * x) * c, "t": (b * 2.0, [x * c])}

def shift(s, x):
    return State(s.w * x, s.b + 1.0)
"""


def test_unpacking_and_tree_results_keep_their_structure():
    split = exec_function(RESULTS, "split")
    a, b, c = np.float32([1.0, 2.0]), np.float32([3.0]), np.float32(2.0)
    x = np.float32([0.5, -1.0])
    for fn in (split, redraft.jit(split)):
        out = fn(((a, b), c), x)
        assert set(out) == {"s", "t"} and isinstance(out["t"], tuple)
        assert isinstance(out["t"][1], list)
        np.testing.assert_allclose(out["s"], np.sum(a * x) * c)
        np.testing.assert_allclose(out["t"][1][0], x * c)
    jac = redraft.jacrev(split)(((a, b), c), x)
    np.testing.assert_allclose(jac["s"][0][0], x * c)  # d s / d a


def test_namedtuple_argument_and_result():
    shift = exec_function(RESULTS, "shift")
    s = State(np.float32([1.0, 2.0]), np.float32(3.0))
    x = np.float32([2.0, 4.0])
    out = redraft.jit(shift)(s, x)
    assert type(out) is State
    np.testing.assert_allclose(out.w, [2.0, 8.0])
    np.testing.assert_allclose(out.b, 4.0)
    g = redraft.grad(lambda s, x: jnp.sum(shift(s, x).w) + shift(s, x).b ** 2)(s, x)
    assert type(g) is State
    np.testing.assert_allclose(g.w, x)
    np.testing.assert_allclose(g.b, 8.0)
    batched = redraft.vmap(shift, in_axes=(None, 0))(s, np.stack([x, 2 * x]))
    assert type(batched) is State
    np.testing.assert_allclose(batched.w, [[2.0, 8.0], [4.0, 16.0]])


AUX = """
def loss(p, x):
    l = jnp.sum(p[0] * x) ** 2 + p[1] * 3.0
    return l, {"norm": jnp.sum(p[0] ** 2)}

def doubled(p, x):
    q = redraft.tree_util.tree_map(lambda v: v * 2.0, p)
    return sum(jnp.sum(v * x) for v in redraft.tree_util.tree_leaves(q))
"""


def test_has_aux_python_float_leaf_and_tree_util_inside():
    loss = exec_function(AUX, "loss")
    w, x = np.float32([1.0, 2.0]), np.float32([0.5, 0.25])
    (g, aux) = redraft.grad(loss, has_aux=True)([w, 2.5], x)
    np.testing.assert_allclose(g[0], 2 * np.sum(w * x) * x, rtol=1e-6)
    np.testing.assert_allclose(g[1], 3.0)  # a Python float leaf is traced, as in JAX
    np.testing.assert_allclose(aux["norm"], 5.0)
    (value, aux), g = redraft.jit(redraft.value_and_grad(loss, has_aux=True))([w, 2.5], x)
    np.testing.assert_allclose(value, np.sum(w * x) ** 2 + 7.5, rtol=1e-6)
    doubled = exec_function(AUX, "doubled")
    p = {"a": w, "b": 2 * w}
    np.testing.assert_allclose(redraft.jit(doubled)(p, x), 2 * np.sum(3 * w * x), rtol=1e-6)
    g = redraft.grad(doubled)(p, x)
    np.testing.assert_allclose(g["a"], 2 * x)
    np.testing.assert_allclose(g["b"], 2 * x)


BRANCH = """
def relu_layers(params, x):
    for w in params:
        if jnp.sum(w) > 0:
            x = x * w
    return jnp.sum(x)
"""


def test_python_if_on_a_leaf_still_names_the_line():
    f = exec_function(BRANCH, "relu_layers")
    with pytest.raises(TracerBoolConversionError, match=r"<string>:4: the truth value"):
        redraft.jit(f)([np.float32([1.0]), np.float32([2.0])], np.float32([1.0]))


def test_a_single_leaf_tree():
    f = exec_function("def f(p, x):\n    return jnp.sum(p['a'] * x) ** 2\n", "f")
    x = np.float32([1.0, 2.0])
    g = redraft.grad(f)({"a": x}, x)
    np.testing.assert_allclose(g["a"], 2 * np.sum(x * x) * x)
    np.testing.assert_allclose(redraft.jit(f)({"a": x}, x), 25.0)


UPDATE = MLP + """
def update(params, x):
    grads = redraft.grad(mlp)(params, x)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]

def after_step(params, x):
    return mlp(update(params, x), x)
"""


def np_update(params, x):
    grads = fd_grad_params(params, x)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def test_a_traced_function_iterates_over_the_gradient_of_another():
    update = exec_function(UPDATE, "update")
    params = layers(2)
    assert_tree_close(redraft.jit(update)(params, X), np_update(params, X), rtol=1e-3,
                      atol=1e-4)
    after_step = exec_function(UPDATE, "after_step")
    value = redraft.jit(after_step)(params, X)
    np.testing.assert_allclose(value, after_step(params, X), rtol=1e-5)
    eps = 1e-3
    direction = [(np.ones_like(w), np.zeros_like(b)) for w, b in params]
    moved = lambda s: [(w + s * d, b) for (w, b), (d, _) in zip(params, direction)]
    g = redraft.grad(after_step)(params, X)
    fd = (after_step(moved(eps), X) - after_step(moved(-eps), X)) / (2 * eps)
    np.testing.assert_allclose(sum(np.sum(gw) for gw, _ in g), fd, rtol=2e-2)


def test_a_readable_function_calling_a_traced_one_under_grad_and_jit():
    mlp = exec_function(MLP, "mlp")
    params = layers(2)

    def doubled(params, x):
        return mlp(params, x) * 2.0

    def step(params, x):
        grads = redraft.grad(mlp)(params, x)
        return [(w - gw, b - gb) for (w, b), (gw, gb) in zip(params, grads)]

    expected = [(2 * gw, 2 * gb) for gw, gb in fd_grad_params(params, X)]
    assert_tree_close(redraft.grad(doubled)(params, X), expected, rtol=1e-3, atol=1e-4)
    assert_tree_close(redraft.jit(redraft.grad(doubled))(params, X), expected, rtol=1e-3,
                      atol=1e-4)
    assert_tree_close(redraft.jit(step)(params, X), step(params, X))
    three = layers(3)
    np.testing.assert_allclose(redraft.jit(doubled)(three, X), 2 * np_mlp(three, X),
                               rtol=1e-5)


def test_vmap_of_a_readable_caller_runs_the_traced_callee_per_example():
    mlp = exec_function(MLP, "mlp")
    params = layers(2)
    xs = RNG.randn(3, 2, 3).astype(np.float32)

    def doubled(params, x):
        return mlp(params, x) * 2.0

    expected = [2 * np_mlp(params, x) for x in xs]
    np.testing.assert_allclose(redraft.vmap(doubled, in_axes=(None, 0))(params, xs),
                               expected, rtol=1e-5)
    np.testing.assert_allclose(redraft.jit(redraft.vmap(doubled, in_axes=(None, 0)))(
        params, xs), expected, rtol=1e-5)
    grads = redraft.vmap(redraft.grad(doubled), in_axes=(None, 0))(params, xs)
    for k, x in enumerate(xs):
        assert_tree_close([(gw[k], gb[k]) for gw, gb in grads],
                          redraft.grad(doubled)(params, x))


def test_reading_a_traced_function_without_arguments_says_why_it_cannot():
    mlp = exec_function(MLP, "mlp")
    with pytest.raises(StructureUnknownError, match=r"<string>:4: the length .*parameter "
                       r"`params`.*read without them"):
        redraft.emit(mlp, "core")


DEFAULTS = """
def total(x, axis=0, scale=2.0):
    return jnp.sum(x, axis=axis) * scale

def repeat(p, n, x):
    for i in range(n):
        x = jnp.sin(x * p[0]) + p[1]
    return jnp.sum(x)
"""


def test_defaults_and_static_arguments_are_constants_of_the_trace():
    total = exec_function(DEFAULTS, "total")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(redraft.jit(total)(x), 2 * x.sum(0))
    np.testing.assert_allclose(redraft.jit(total, static_argnums=1)(x, 1), 2 * x.sum(1))
    np.testing.assert_allclose(redraft.grad(lambda x: total(x).sum())(x), np.full_like(x, 2))
    repeat = exec_function(DEFAULTS, "repeat")
    p, v = [np.float32(0.5), np.float32(0.1)], np.float32([0.3, -0.2])

    def np_repeat(p, n, x):
        for _ in range(n):
            x = np.sin(x * p[0]) + p[1]
        return np.sum(x)
    f = redraft.jit(repeat, static_argnums=1)
    np.testing.assert_allclose(f(p, 2, v), np_repeat(p, 2, v), rtol=1e-6)
    np.testing.assert_allclose(f(p, 3, v), np_repeat(p, 3, v), rtol=1e-6)
    g = redraft.grad(redraft.jit(repeat, static_argnums=1))(p, 3, v)
    fd = numerical_grad(lambda a: np_repeat([a, 0.1], 3, v.astype(np.float64)), np.float64(0.5))
    np.testing.assert_allclose(g[0], fd, rtol=1e-3)


REGISTERED = """
def lin_loss(m, x):
    return jnp.sum(m.w * x + m.b)

def lin_step(m, x):
    return Lin(m.w * x, m.b * 2.0)
"""


@redraft.tree_util.register_pytree_node_class
class Lin:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_a_registered_pytree_class_in_and_out():
    ns = {"jnp": jnp, "Lin": Lin}
    exec(REGISTERED, ns)
    m, x = Lin(np.float32([1.0, 2.0]), np.float32([0.5, 0.5])), np.float32([3.0, 4.0])
    g = redraft.grad(ns["lin_loss"])(m, x)
    assert type(g) is Lin
    np.testing.assert_allclose(g.w, x)
    np.testing.assert_allclose(g.b, [1.0, 1.0])
    out = redraft.jit(ns["lin_step"])(m, x)
    assert type(out) is Lin
    np.testing.assert_allclose(out.w, [3.0, 8.0])
    np.testing.assert_allclose(out.b, [1.0, 1.0])
