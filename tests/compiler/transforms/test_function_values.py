"""Python values under the transforms: functions passed as arguments, partials, bound
methods, closures transformed inside transformed code, models as callable pytrees, known
lists of functions, and the containers that carry parameters. Each construct runs eagerly
and under grad, vmap and jit (and their compositions), checked against NumPy and central
differences (redraft.test_util.numerical_grad)."""
from functools import partial

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, tree_util, vmap
from redraft.test_util import numerical_grad

XS = np.array([0.1, -0.7, 1.3], np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# ---- a function as an argument, held by identity ------------------------------------------------

def apply_fn(f, x):
    return jnp.sum(f(x))


def apply_twice(f, x):
    return apply_fn(f, f(x))  # the function value passed on to another user function


@pytest.mark.parametrize("f, df", [(jnp.tanh, lambda x: 1 - np.tanh(x) ** 2),
                                   (jnp.sin, np.cos)])
def test_function_argument_under_grad_jit_vmap(f, df):
    close(apply_fn(f, XS), np.sum(np.asarray(f(XS))))
    close(grad(apply_fn, argnums=1)(f, XS), df(XS))
    close(jit(apply_fn, static_argnums=0)(f, XS), np.sum(np.asarray(f(XS))))
    close(jit(grad(apply_fn, argnums=1), static_argnums=0)(f, XS), df(XS))
    rows = np.stack([XS, 2 * XS])
    close(vmap(grad(partial(apply_fn, f)))(rows), df(rows))


def test_function_argument_passed_on_to_another_function():
    ref = numerical_grad(lambda x: np.sum(np.sin(np.sin(x))), XS)
    close(grad(apply_twice, argnums=1)(jnp.sin, XS), ref, rtol=1e-4)
    close(jit(grad(lambda x: apply_twice(jnp.sin, x)))(XS), ref, rtol=1e-4)


def test_a_local_lambda_given_to_a_helper_under_jit_grad():
    w = np.array([1.0, 2.0, 3.0], np.float32)
    g = jit(grad(lambda x: apply_fn(lambda z: w * z ** 2, x)))(XS)
    close(g, 2 * w * XS)


ACTIVATIONS = [jnp.tanh, jnp.sin, lambda z: z * z]


@partial(jit, static_argnums=2)
def activation_layer(x, w, which):
    return jnp.sum(ACTIVATIONS[which](x * w))


@pytest.mark.parametrize("which, slope", [(0, lambda z: 1 - np.tanh(z) ** 2),
                                          (1, np.cos), (2, lambda z: 2 * z)])
def test_function_chosen_from_a_known_list_by_a_static_index(which, slope):
    value, g = redraft.value_and_grad(activation_layer, argnums=1)(XS, 0.7, which)
    z = XS.astype(np.float64) * 0.7
    close(value, np.sum([np.tanh, np.sin, np.square][which](z)), rtol=1e-5)
    close(g, np.sum(XS * slope(z)), rtol=1e-5)


# ---- functools.partial --------------------------------------------------------------------------

def scaled_project(W, x, scale=1.0):
    return scale * jnp.tanh(W @ x)


W = np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.0]], np.float32)


def test_partial_binding_an_array_and_a_keyword():
    fixed = partial(scaled_project, W, scale=2.0)
    close(fixed(XS), 2 * np.tanh(W @ XS), rtol=1e-5)
    close(jit(fixed)(XS), 2 * np.tanh(W @ XS), rtol=1e-5)
    rows = np.stack([XS, -XS])
    close(vmap(fixed)(rows), 2 * np.tanh(rows @ W.T), rtol=1e-5)
    ref = numerical_grad(lambda x: np.sum(2 * np.tanh(W.astype(np.float64) @ x)), XS)
    close(grad(lambda x: jnp.sum(fixed(x)))(XS), ref, rtol=1e-4)
    close(jit(vmap(grad(lambda x: jnp.sum(fixed(x)))))(rows)[0], ref, rtol=1e-4)


def test_partial_made_and_called_inside_a_transformed_function():
    def loss(W):
        return jnp.sum(partial(scaled_project, x=XS, scale=3.0)(W))

    ref = numerical_grad(lambda m: np.sum(3 * np.tanh(m @ XS)), W.astype(np.float64))
    close(grad(loss)(W), ref, rtol=1e-4, atol=1e-6)
    close(jit(grad(loss))(W), ref, rtol=1e-4, atol=1e-6)


# ---- bound methods and models as callable pytrees -----------------------------------------------

class Stack:
    def __init__(self, depth, activation):
        self.depth, self.activation = depth, activation

    def apply(self, params, x):
        h = x
        for i in range(self.depth):
            h = self.activation(h * params[i])
        return jnp.sum(h)


def np_stack(p, x, depth):
    h = x
    for i in range(depth):
        h = np.sin(h * p[i])
    return np.sum(h)


def test_bound_method_with_static_self():
    model = Stack(2, jnp.sin)
    p = np.array([0.5, 1.5], np.float32)
    ref = numerical_grad(lambda q: np_stack(q, XS.astype(np.float64), 2), p)
    close(grad(model.apply)(p, XS), ref, rtol=1e-4)
    close(jit(grad(model.apply))(p, XS), ref, rtol=1e-4)
    close(jit(vmap(model.apply, in_axes=(None, 0)))(p, XS),
          [np_stack(p, x, 2) for x in XS], rtol=1e-5)


@tree_util.register_pytree_node_class
class Affine:
    def __init__(self, w, b, squash=True):
        self.w, self.b, self.squash = w, b, squash

    def __call__(self, x):
        z = x * self.w + self.b
        return jnp.tanh(z) if self.squash else z

    def tree_flatten(self):
        return (self.w, self.b), self.squash

    @classmethod
    def tree_unflatten(cls, squash, children):
        return cls(*children, squash=squash)


def model_loss(model, x):
    return jnp.sum(model(x) ** 2)


@pytest.mark.parametrize("squash", [True, False])
def test_callable_pytree_model_as_parameters(squash):
    model = Affine(np.float32(0.8), np.float32(-0.2), squash)
    act = np.tanh if squash else (lambda z: z)
    g = jit(grad(model_loss))(model, XS)
    assert isinstance(g, Affine) and g.squash is squash
    ref_w = numerical_grad(lambda w: np.sum(act(XS * w - 0.2) ** 2), np.float64(0.8))
    close(g.w, ref_w, rtol=1e-4)
    close(jit(model_loss)(model, XS), np.sum(act(XS * 0.8 - 0.2) ** 2), rtol=1e-5)
    close(grad(model_loss)(model, XS).w, ref_w, rtol=1e-4)


# ---- closures transformed inside transformed functions ------------------------------------------

def bump(x, widths):
    return jnp.mean(vmap(lambda s: jnp.exp(-(x / s) ** 2))(widths))


def tilted(x, a):
    f = jit(lambda z: jnp.sin(a * z))
    return f(x) * x


def gram(xs, ys):
    return vmap(lambda x: vmap(lambda y: jnp.sum((x - y) ** 2))(ys))(xs)


def newton(x, a):
    f = lambda x: x ** 3 - a  # noqa: E731
    return x - f(x) / grad(f)(x)


def test_vmap_of_a_closure_inside_grad_and_vmap():
    widths = np.array([0.5, 1.0, 2.0], np.float32)

    def np_bump(x):
        return np.mean(np.exp(-(x / widths.astype(np.float64)) ** 2))

    close(bump(0.7, widths), np_bump(0.7), rtol=1e-5)
    close(grad(bump)(0.7, widths), numerical_grad(np_bump, 0.7), rtol=1e-4)
    close(jit(vmap(grad(bump), in_axes=(0, None)))(XS, widths),
          [numerical_grad(np_bump, float(x)) for x in XS], rtol=1e-4, atol=1e-6)


def test_jit_of_a_closure_differentiated_in_both_arguments():
    x, a = 0.9, 1.7
    close(grad(tilted)(x, a), a * np.cos(a * x) * x + np.sin(a * x), rtol=1e-5)
    close(jit(grad(tilted, argnums=1))(x, a), x ** 2 * np.cos(a * x), rtol=1e-5)


def test_nested_vmap_of_closures_and_its_gradient():
    ys = np.array([[0.5, 1.0], [-1.0, 0.2], [2.0, 0.0]], np.float32)
    xs = ys[:2] * 0.5
    d = xs[:, None, :].astype(np.float64) - ys[None, :, :]
    close(jit(gram)(xs, ys), np.sum(d ** 2, -1), rtol=1e-5)
    close(jit(grad(lambda a, b: jnp.sum(gram(a, b))))(xs, ys), 2 * d.sum(1), rtol=1e-5)


def test_grad_of_a_function_that_calls_grad_on_a_closure():
    x, a = 1.2, 2.0
    close(newton(x, a), x - (x ** 3 - a) / (3 * x ** 2), rtol=1e-6)
    close(grad(newton, argnums=1)(x, a), 1 / (3 * x ** 2), rtol=1e-5)
    close(jit(grad(newton))(x, a), 2 * (x ** 3 - a) / (3 * x ** 3), rtol=1e-5)


def test_a_capturing_closure_given_to_tree_map_under_jit():
    def scaled(p, c):
        return tree_util.tree_map(lambda v: v * c, p)

    out = jit(scaled)({"w": XS, "b": np.float32(1.0)}, 2.0)
    close(out["w"], 2 * XS)
    close(out["b"], 2.0)


# ---- a known tuple of functions: the loop unrolls -----------------------------------------------

def chain(*fns):
    def apply(params, x):
        for f, p in zip(fns, params):
            x = f(p * x)
        return x
    return apply


def test_loop_over_known_functions_unrolls_under_grad_and_jit():
    net = chain(jnp.tanh, jnp.sin)
    params = [np.float32(0.5), np.float32(1.5)]

    def np_net(p):
        return np.sin(p[1] * np.tanh(p[0] * XS.astype(np.float64)))

    close(jit(net)(params, XS), np_net(params), rtol=1e-5)
    g = jit(grad(lambda p: jnp.sum(net(p, XS))))(params)
    assert isinstance(g, list)
    ref = numerical_grad(lambda p: np.sum(np_net(p)), np.array(params, np.float64))
    close(np.array(g), ref, rtol=1e-4)


# ---- parameters in containers -------------------------------------------------------------------

def sq_error(params, x, y):
    return 0.5 * (jnp.dot(x, params["w"]) + params["b"] - y) ** 2


def layer_loss(params, x, y):
    (W, b), = params
    return jnp.sum((jnp.tanh(x @ W + b) - y) ** 2)


def test_per_example_gradients_of_a_dict_of_parameters():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    params = {"w": np.array([0.5, -1.0, 0.25], np.float32), "b": np.float32(0.1)}
    r = X.astype(np.float64) @ params["w"] + 0.1 - Y
    for g in (vmap(grad(sq_error), in_axes=(None, 0, 0))(params, X, Y),
              jit(vmap(grad(sq_error), in_axes=(None, 0, 0)))(params, X, Y)):
        close(g["w"], r[:, None] * X, rtol=1e-5)
        close(g["b"], r, rtol=1e-5)


def test_per_example_gradients_of_a_list_of_tuples():
    rng = np.random.default_rng(1)
    W, b = rng.normal(size=(3, 2)).astype(np.float32), np.float32([0.1, -0.1])
    X, Y = rng.normal(size=(3, 3)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)
    g = vmap(grad(layer_loss), in_axes=(None, 0, 0))([(W, b)], X, Y)
    assert isinstance(g, list) and isinstance(g[0], tuple)
    h = np.tanh(X.astype(np.float64) @ W + b)
    dz = 2 * (h - Y) * (1 - h ** 2)
    close(g[0][0], X[:, :, None] * dz[:, None, :], rtol=1e-4, atol=1e-6)
    close(g[0][1], dz, rtol=1e-4, atol=1e-6)


class Scaled:
    def __init__(self, w, settings):
        self.w, self.settings = w, settings


tree_util.register_pytree_node(Scaled, lambda s: ((s.w,), s.settings),
                               lambda settings, children: Scaled(children[0], settings))


def scaled_sum(m, x):
    return m.settings["scale"] * jnp.sum(jnp.tanh(m.w * x))


def test_dict_aux_data_is_keyed_by_its_contents():
    w = np.array([1.0, 2.0], np.float32)
    for scale in (2.0, 3.0, 2.0):
        m = Scaled(w, {"scale": scale})
        close(jit(scaled_sum)(m, 0.5), scale * np.sum(np.tanh(w * 0.5)), rtol=1e-5)


# ---- value_and_grad inside jit, custom rules ----------------------------------------------------

def loss_with_metrics(w, x):
    y = jnp.tanh(w * x)
    return jnp.sum(y ** 2), {"mean": jnp.mean(y)}


def test_value_and_grad_with_aux_inside_jit():
    @jit
    def step(w, x):
        (value, aux), g = redraft.value_and_grad(loss_with_metrics, has_aux=True)(w, x)
        return value, aux, g

    value, aux, g = step(0.7, XS)
    y = np.tanh(0.7 * XS.astype(np.float64))
    close(value, np.sum(y ** 2), rtol=1e-5)
    close(aux["mean"], np.mean(y), rtol=1e-5)
    close(g, np.sum(2 * y * (1 - y ** 2) * XS), rtol=1e-5)


def test_defjvps_rules_per_argument():
    @redraft.custom_jvp
    def scaled_norm(x, s):
        return s * jnp.sqrt(jnp.sum(x ** 2))

    scaled_norm.defjvps(lambda x_dot, ans, x, s: s * jnp.vdot(x, x_dot) / jnp.sqrt(
        jnp.sum(x ** 2)), lambda s_dot, ans, x, s: jnp.sqrt(jnp.sum(x ** 2)) * s_dot)
    x = np.array([3.0, -4.0], np.float32)
    gx, gs = jit(grad(scaled_norm, argnums=(0, 1)))(x, 0.5)
    close(gx, 0.5 * x / 5.0)
    close(gs, 5.0)


def test_vmap_of_a_custom_jvp_keeps_its_rule():
    @redraft.custom_jvp
    def ste_round(x):
        return jnp.round(x)

    @ste_round.defjvp
    def ste_round_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.round(x), t

    xs = np.array([0.2, 0.7, 1.6, -2.4], np.float32)
    close(vmap(ste_round)(xs), np.round(xs))
    close(jit(vmap(grad(lambda x: ste_round(x) * x)))(xs), np.round(xs) + xs)
    _, t = redraft.jvp(vmap(ste_round), (xs,), (np.full(4, 3.0, np.float32),))
    close(t, np.full(4, 3.0))


# ---- Python-level statements ------------------------------------------------------------------

SCALE = 3.0


def reads_a_global(x):
    global SCALE  # declared, only read
    return x * SCALE


def unpacks_one(pair):
    (x,) = pair
    return x * 2.0


def test_global_read_and_one_item_unpacking():
    close(jit(reads_a_global)(XS), 3 * XS)
    close(grad(lambda x: jnp.sum(reads_a_global(x)))(XS), np.full(3, 3.0))
    close(jit(unpacks_one)((XS,)), 2 * XS)
    close(grad(lambda x: jnp.sum(unpacks_one((x,))))(XS), np.full(3, 2.0))


def running_variance(x):
    stats = {"sum": 0.0, "sumsq": 0.0, "n": 0}
    for v in x:
        stats["sum"] = stats["sum"] + v
        stats["sumsq"] += v ** 2
        stats["n"] += 1
    mean = stats["sum"] / stats["n"]
    return stats["sumsq"] / stats["n"] - mean ** 2


def test_a_dict_updated_item_by_item_in_a_loop():
    x = np.array([1.0, 2.0, 4.0, -1.0], np.float32)
    xd = x.astype(np.float64)
    slope = 2 * (xd - xd.mean()) / 4
    close(running_variance(x), np.var(xd), rtol=1e-6)
    close(jit(running_variance)(x), np.var(xd), rtol=1e-6)
    close(grad(running_variance)(x), slope, rtol=1e-5)
    close(jit(grad(running_variance))(x), slope, rtol=1e-5)
    close(jit(vmap(grad(running_variance)))(np.stack([x, 2 * x])), [slope, 2 * slope],
          rtol=1e-5, atol=1e-6)


def item_assignment_on_an_argument(x):
    x[0] = 1.0
    return x


def test_item_assignment_on_an_array_is_still_refused_at_the_users_line():
    with pytest.raises(SyntaxError, match="immutable") as info:
        jit(item_assignment_on_an_argument)(XS)
    assert info.value.lineno == item_assignment_on_an_argument.__code__.co_firstlineno + 1


def leaf_sum(p):
    return sum(jnp.sum(leaf) for leaf in tree_util.tree_leaves(p))


def test_gradient_through_tree_leaves_and_static_aux_fields():
    params = {"dense": {"w": np.ones((1, 2), np.float32), "b": np.float32([0.5])},
              "scale": np.float32(2.0)}
    g = grad(leaf_sum)(params)
    close(g["dense"]["w"], np.ones((1, 2)))
    close(jit(grad(leaf_sum))(params)["scale"], 1.0)
    m = Scaled(np.array([1.0, 2.0], np.float32), {"scale": 2.0})
    gm = grad(scaled_sum)(m, 0.5)
    assert isinstance(gm, Scaled) and gm.settings == {"scale": 2.0}
    close(gm.w, 2.0 * 0.5 * (1 - np.tanh(m.w * 0.5) ** 2), rtol=1e-5)


def test_library_functions_transformed_directly():
    v = np.array([3.0, 4.0], np.float32)
    U = np.array([[1.0, 2.0], [2.0, 2.0], [0.0, 3.0]], np.float32)
    close(jit(jnp.linalg.norm)(v), 5.0)
    close(grad(jnp.linalg.norm)(v), v / 5.0)
    close(jit(jnp.linalg.norm, static_argnames=("axis",))(U, axis=1), np.linalg.norm(U, axis=1),
          rtol=1e-6)
    close(jit(redraft.nn.softmax)(v), np.exp(v) / np.exp(v).sum(), rtol=1e-6)
    close(vmap(grad(jnp.tanh))(XS), 1 - np.tanh(XS) ** 2, rtol=1e-6)


def cos_map(a, x):
    return a * jnp.cos(x)


def np_cos_fixed_point(a):
    x = a
    for _ in range(200):
        x = a * np.cos(x)
    return x, np.cos(x) / (1 + a * np.sin(x))


def test_custom_vjp_with_a_nondiff_function_argument():
    @partial(redraft.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(g, a, x0):
        def not_converged(state):
            prev, x, it = state
            return (jnp.abs(x - prev) > 1e-6) & (it < 100)

        def iterate(state):
            _, x, it = state
            return x, g(a, x), it + 1

        return redraft.lax.while_loop(not_converged, iterate, (x0, g(a, x0), 0))[1]

    def fixed_point_fwd(g, a, x0):
        x = fixed_point(g, a, x0)
        return x, (a, x)

    def fixed_point_bwd(g, res, x_bar):
        a, x = res
        _, vjp_a = redraft.vjp(lambda a: g(a, x), a)
        (a_bar,) = vjp_a(x_bar / (1.0 - grad(g, argnums=1)(a, x)))
        return a_bar, jnp.zeros_like(x)

    fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)
    close(fixed_point(cos_map, 0.5, 0.5), np_cos_fixed_point(0.5)[0], rtol=1e-5)
    close(grad(lambda a: fixed_point(cos_map, a, a))(0.5), np_cos_fixed_point(0.5)[1], rtol=1e-4)
    a_s = np.array([0.3, 0.8], np.float32)
    close(jit(vmap(grad(lambda a: fixed_point(cos_map, a, a))))(a_s),
          [np_cos_fixed_point(a)[1] for a in a_s], rtol=1e-4)


def swapped(a, b):
    a, b = b, a * 2.0
    return a - b


def test_parallel_assignment_and_a_custom_jvp_rule_that_calls_its_function():
    close(swapped(1.0, 5.0), 3.0)
    close(grad(swapped, argnums=(0, 1))(1.0, 5.0), [-2.0, 1.0])

    @redraft.custom_jvp
    def softplus(x):
        return jnp.logaddexp(x, 0.0)

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = softplus(x)
        return y, (1.0 - jnp.exp(-y)) * t

    sig = 1 / (1 + np.exp(-XS.astype(np.float64)))
    close(jit(grad(softplus))(2.5), 1 / (1 + np.exp(-2.5)), rtol=1e-5)
    close(jit(vmap(grad(softplus)))(XS), sig, rtol=1e-5)


def weight_decay(params):
    flat, _ = tree_util.tree_flatten_with_path(params)
    return sum(jnp.sum(v ** 2) for path, v in flat if tree_util.keystr(path).endswith("['w']"))


def test_decay_chosen_by_key_path_under_grad_and_jit():
    params = {"a": {"w": np.float32([1.0, -2.0]), "b": np.float32([0.5])},
              "out": {"w": np.float32([3.0]), "b": np.float32([1.0])}}
    close(jit(weight_decay)(params), 14.0)
    g = grad(weight_decay)(params)
    close(g["a"]["w"], [2.0, -4.0])
    close(g["a"]["b"], [0.0])
    close(jit(grad(weight_decay))(params)["out"]["w"], [6.0])


# ---- what transforms return is transformable again ----------------------------------------------

def squash(x):
    return jnp.tanh(W @ x)


def np_squash_jacobian(x):
    y = np.tanh(W.astype(np.float64) @ x)
    return (1 - y ** 2)[:, None] * W


def wiggly(x):
    return jnp.sum(jnp.sin(x) * x) + 0.5 * jnp.dot(x, x) ** 2


def test_vjp_fun_under_vmap_grad_and_jit():
    J = np_squash_jacobian(XS)
    _, vjp_fun = redraft.vjp(squash, XS)
    (rows,) = vmap(vjp_fun)(np.eye(2, dtype=np.float32))
    close(rows, J, rtol=1e-5)
    ct, w = np.float32([1.0, -1.0]), np.float32([0.5, 1.0, -2.0])
    close(jit(vjp_fun)(ct)[0], J.T @ ct, rtol=1e-5)
    close(jit(grad(lambda c: jnp.dot(vjp_fun(c)[0], w)))(ct), J @ w, rtol=1e-5)
    g = jit(grad(lambda x: 0.5 * jnp.sum(redraft.vjp(squash, x)[1](ct)[0] ** 2)))(XS)
    ref = numerical_grad(lambda x: 0.5 * np.sum((np_squash_jacobian(x).T @ ct) ** 2), XS)
    close(g, ref, rtol=1e-3, atol=1e-5)


def test_linearize_then_vmap_and_jit():
    J = np_squash_jacobian(XS)
    _, f_jvp = redraft.linearize(squash, XS)
    close(jit(vmap(f_jvp))(np.eye(3, dtype=np.float32)), J.T, rtol=1e-5)
    close(jit(f_jvp)(XS), J @ XS, rtol=1e-5)


def test_hessian_vector_products_in_every_order():
    v = np.float32([1.0, 0.5, -2.0])
    xd = XS.astype(np.float64)
    H = (np.diag(2 * np.cos(xd) - xd * np.sin(xd)) + 2 * (xd @ xd) * np.eye(3)
         + 4 * np.outer(xd, xd))
    close(jit(lambda x, v: redraft.jvp(grad(wiggly), (x,), (v,))[1])(XS, v), H @ v, rtol=1e-5)
    close(jit(grad(lambda x: redraft.jvp(wiggly, (x,), (v,))[1]))(XS), H @ v, rtol=1e-5)
    hvp = jit(lambda x, v: grad(lambda x: jnp.vdot(grad(wiggly)(x), v))(x))
    close(hvp(XS, v), H @ v, rtol=1e-5)


def test_custom_jvp_with_nondiff_argnums_takes_them_first():
    """JAX calls the rule as jvp(*nondiff_args, primals, tangents), the tuples holding
    only the other arguments."""
    @partial(redraft.custom_jvp, nondiff_argnums=(1,))
    def scaled(x, s):
        return x * s

    @scaled.defjvp
    def scaled_jvp(s, primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return x * s, x_dot * s * 2  # twice the true slope: the rule is what runs

    for transform in (grad, lambda f: redraft.jit(grad(f))):
        np.testing.assert_allclose(transform(lambda x: scaled(x, 3.0))(1.0), 6.0)
    out, out_dot = redraft.jvp(lambda x: scaled(x, 3.0), (2.0,), (1.0,))
    np.testing.assert_allclose((out, out_dot), (6.0, 6.0))

    @partial(redraft.custom_jvp, nondiff_argnums=(0,))
    def clip_tangent(t, x):
        return x

    @clip_tangent.defjvp
    def clip_tangent_jvp(t, primals, tangents):
        return primals[0], jnp.clip(tangents[0], -t, t)
    _, out_dot = redraft.jvp(lambda x: clip_tangent(0.5, 3.0 * x), (1.0,), (1.0,))
    np.testing.assert_allclose(out_dot, 0.5)


def test_transform_of_a_closure_with_a_tuple_of_argnums_under_jit():
    """`grad(loss, argnums=(0, 1))` of a local function capturing a traced value, inside
    jit: a literal tuple argument is a constant like a literal number (it was passed on as
    a closure value, which grad could not read: SourceUnavailableError)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    v = rng.standard_normal((8, 5)).astype(np.float32)
    w = rng.standard_normal((5, 5)).astype(np.float32)

    def step(x, v, w):
        def loss(v, w):
            return jnp.sum(jnp.tanh(x @ v) @ w)
        return redraft.grad(loss, argnums=(0, 1))(v, w)

    got = redraft.jit(step)(x, v, w)
    want = step(x, v, w)
    h = np.tanh(x.astype(np.float64) @ v)
    np.testing.assert_allclose(np.asarray(got[1]), h.T @ np.ones((16, 5)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(got[0]), x.T @ ((1 - h * h) * (np.ones((16, 5)) @ w.T)),
                               rtol=1e-4, atol=1e-4)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
