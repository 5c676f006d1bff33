"""Calls through values known only when the code runs (compiler/transforms/calls/
value_calls.py): layers taken from a list, callable model objects (`self.l2(self.l1(x))`),
functions chosen from a dict. Each under grad, jvp, hessian and jit, checked against the
same model written with plain functions and against central differences."""
import dataclasses

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, tree_util
from redraft.test_util import numerical_grad


@tree_util.register_pytree_node_class
class Dense:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tree_util.register_pytree_node_class
class Model:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, x):
        return self.second(self.first(x))

    def scaled(self, x, s):
        return s * self(x)

    def tree_flatten(self):
        return (self.first, self.second), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


RNG = np.random.default_rng(0)
W1, B1 = RNG.normal(size=(3, 4)).astype(np.float32), RNG.normal(size=4).astype(np.float32)
W2, B2 = RNG.normal(size=(4, 2)).astype(np.float32), RNG.normal(size=2).astype(np.float32)
X = RNG.normal(size=(5, 3)).astype(np.float32)


def model() -> Model:
    return Model(Dense(jnp.asarray(W1), jnp.asarray(B1)), Dense(jnp.asarray(W2), jnp.asarray(B2)))


def plain_loss(w1, b1, w2, b2, x):
    return jnp.sum(jnp.tanh(jnp.tanh(x @ w1 + b1) @ w2 + b2) ** 2)


def plain_grads(x=X):
    return grad(plain_loss, argnums=(0, 1, 2, 3))(W1, B1, W2, B2, x)


def object_loss(m, x):
    return jnp.sum(m(x) ** 2)


def list_loss(layers, x):
    for layer in layers:
        x = layer(x)
    return jnp.sum(x ** 2)


def method_loss(m, x):
    return jnp.sum(m.scaled(x, 1.0) ** 2)


def close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("transform", [lambda f: f, jit], ids=["eager", "jit"])
@pytest.mark.parametrize("loss", [object_loss, method_loss], ids=["call", "method"])
def test_gradient_of_a_callable_model_object(transform, loss):
    g = transform(grad(loss))(model(), jnp.asarray(X))
    w1, b1, w2, b2 = plain_grads()
    assert isinstance(g, Model) and isinstance(g.first, Dense)
    close(g.first.w, w1)
    close(g.first.b, b1)
    close(g.second.w, w2)
    close(g.second.b, b2)


def test_gradient_through_layers_taken_from_a_list():
    m = model()
    g = grad(list_loss)([m.first, m.second], jnp.asarray(X))
    w1, b1, w2, b2 = plain_grads()
    close(g[0].w, w1)
    close(g[1].b, b2)


def test_input_gradient_against_central_differences():
    m = model()
    g = grad(object_loss, argnums=1)(m, jnp.asarray(X))
    w1, b1, w2, b2 = (np.asarray(a, np.float64) for a in (W1, B1, W2, B2))
    numeric = numerical_grad(lambda x: np.sum(np.tanh(np.tanh(x @ w1 + b1) @ w2 + b2) ** 2), X)
    close(g, numeric, rtol=2e-3, atol=2e-3)


def test_forward_mode_agrees_with_reverse_mode():
    m, x = model(), jnp.asarray(X)
    tangent = jnp.asarray(RNG.normal(size=X.shape).astype(np.float32))
    _, forward = redraft.jvp(lambda x: object_loss(m, x), (x,), (tangent,))
    reverse = grad(object_loss, argnums=1)(m, x)
    close(forward, jnp.sum(reverse * tangent), rtol=1e-4)


def test_hessian_through_a_model_object_against_plain_functions():
    m, x = model(), jnp.asarray(X[0])
    ours = redraft.hessian(lambda x: object_loss(m, x))(x)
    plain = redraft.hessian(lambda x: plain_loss(W1, B1, W2, B2, x))(x)
    close(ours, plain, rtol=1e-4)


def test_per_example_gradients_run_once_per_example():
    m, x = model(), jnp.asarray(X[:, None, :])
    per_example = redraft.vmap(grad(object_loss), in_axes=(None, 0))(m, x)
    for k in range(X.shape[0]):
        close(per_example.first.w[k], plain_grads(X[k:k + 1])[0])


ACTIVATIONS = {"tanh": jnp.tanh, "sin": jnp.sin}


def chosen_activation(w, x, name):
    return jnp.sum(ACTIVATIONS[name](x @ w))


@pytest.mark.parametrize("name,slope", [("tanh", lambda u: 1 - np.tanh(u) ** 2),
                                        ("sin", np.cos)])
def test_operation_chosen_from_a_dict(name, slope):
    g = grad(chosen_activation)(jnp.asarray(W1), jnp.asarray(X), name)
    close(g, X.T @ slope(X @ W1))


def test_python_methods_of_strings_stay_plain():
    def f(x):
        label = "{}".format("x")
        return jnp.sum(x ** 2) if label == "x" else x
    close(grad(f)(jnp.asarray(X)), 2 * X)


def test_an_ensemble_of_models_batched_runs_once_per_example():
    models = [model(), Model(Dense(jnp.asarray(W1 * 0.5), jnp.asarray(B1)),
                             Dense(jnp.asarray(W2), jnp.asarray(B2 * 2)))]
    stacked = tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *models)
    grads = redraft.vmap(grad(object_loss), in_axes=(0, None))(stacked, jnp.asarray(X))
    for k, m in enumerate(models):
        close(grads.second.b[k], grad(object_loss)(m, jnp.asarray(X)).second.b)


@tree_util.register_dataclass
@dataclasses.dataclass
class Scale:
    """A dataclass pytree: dataclasses compare by value, so their objects are unhashable."""
    w: object

    def __call__(self, x):
        return self.w * x


def test_jit_of_grad_through_an_unhashable_dataclass_model():
    def loss(layers, x):
        for layer in layers:
            x = layer(x)
        return jnp.sum(x ** 2)
    layers = [Scale(jnp.asarray(2.0)), Scale(jnp.asarray(3.0))]
    g = jit(grad(loss))(layers, jnp.asarray(X[0]))
    close(g[0].w, 2 * 36.0 * np.sum(X[0] ** 2) / 2.0)


def test_vmap_of_a_model_call_nested_and_jitted_against_a_loop():
    m, xs = model(), jnp.asarray(RNG.normal(size=(4, 3, 3)).astype(np.float32))
    expected = np.stack([[np.asarray(m(xs[i, j])) for j in range(3)] for i in range(4)])
    close(redraft.vmap(redraft.vmap(lambda x: m(x)))(xs), expected)
    close(jit(redraft.vmap(lambda x: m(x)))(xs[0]), expected[0])
    close(redraft.jacfwd(lambda x: object_loss(m, x))(xs[0, 0]),
          grad(object_loss, argnums=1)(m, xs[0, 0]))


def dict_loss(p, x):
    w = p.get("w")
    b = p.get("b", 0.0)
    return jnp.sum((x * w + b) ** 2) * p.get("scale", 2.0)


def test_dict_get_passes_gradients_as_indexing_does():
    p = {"w": jnp.asarray([1.0, 2.0]), "b": jnp.asarray(0.5)}
    x = jnp.asarray([1.0, -1.0])
    residual = x * p["w"] + p["b"]
    expected = {"w": 2 * 2.0 * residual * x, "b": 2 * 2.0 * jnp.sum(residual)}
    for transform in (lambda f: f, jit):
        g = transform(grad(dict_loss))(p, x)
        close(g["w"], expected["w"])
        close(g["b"], expected["b"])
    xs = jnp.stack([x, 2 * x])
    per_example = redraft.vmap(grad(dict_loss), in_axes=(None, 0))(p, xs)
    close(per_example["w"][1], grad(dict_loss)(p, xs[1])["w"])


def test_a_model_per_example_called_with_shared_arguments():
    models = Dense(jnp.stack([jnp.asarray(W1), 2 * jnp.asarray(W1)]),
                   jnp.stack([jnp.asarray(B1), jnp.asarray(B1)]))
    x = jnp.asarray(X[0])
    out = redraft.vmap(lambda m: jnp.sum(m(x)))(models)
    close(out, [jnp.sum(Dense(models.w[k], models.b[k])(x)) for k in range(2)])
