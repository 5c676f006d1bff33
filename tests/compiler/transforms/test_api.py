"""The public transforms as a user calls them: grad, value_and_grad, jvp, vjp, linearize,
jacfwd, jacrev, hessian, their options (argnums, has_aux), pytrees in and out, composition
with each other and with jit, and the errors they raise (JAX's classes and messages, the
user's own file and line)."""
import ast

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import tree_util

import catalogue
from catalogue import Point

X = np.array([0.3, -1.2, 0.8], np.float32)
M = np.array([[0.5, -0.2, 0.1], [0.3, 0.9, -0.7]], np.float32)
HERE = __file__


def close(actual, expected, rtol=1e-5, atol=1e-6):
    a_leaves, e_leaves = tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)
    assert len(a_leaves) == len(e_leaves)
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(e, np.float64),
                                   rtol=rtol, atol=atol)


# ---- functions under test ----------------------------------------------------------------------

def cube_sum(x):
    return jnp.sum(x ** 3)


def weighted(x, y, z):
    return jnp.sum(x * y ** 2) + z


def vector_out(x):
    return jnp.sin(x) * 2.0


def loss_with_aux(x):
    loss = jnp.sum(x * x)
    return loss, {"norm": jnp.sqrt(loss), "x": x}


def pair_out(x, y):
    return jnp.sum(x * y ** 2), x * y


def quartic(x):
    return x ** 4


def sine(x):
    return jnp.sin(x)


def keyword_scale(x, scale=2.0):
    return jnp.sum(x * x) * scale


def tree_loss(params):
    W, b = params["W"], params["b"]
    return jnp.sum(jnp.tanh(W @ b)) + jnp.sum(b * b)


def int_count(x, n):
    return jnp.sum(x) * n


def bad_matmul(x):
    y = jnp.sin(x)
    return jnp.sum(y @ jnp.ones((4, 2)))


def mutates(x):
    x[0] = 1.0
    return x.sum()


def uses_try(x):
    try:  # decided when the source is read; raising part of the way through a loop: refused
        for key in ("a", "b"):
            scale = {"a": 2.0}[key]
    except KeyError:
        scale = 1.0
    return jnp.sum(x * scale)


def breaks(x):
    for i in range(3):
        if i == 1:
            break
        x = x * 2
    return x.sum()


# ---- grad ---------------------------------------------------------------------------------------

def test_grad_of_a_scalar_function():
    close(redraft.grad(cube_sum)(X), 3 * X ** 2)


def test_grad_accepts_numbers_numpy_and_redraft_arrays():
    for arg in (X, jnp.asarray(X), list(map(float, X))):
        if isinstance(arg, list):
            continue
        close(redraft.grad(cube_sum)(arg), 3 * X ** 2)
    close(redraft.grad(sine)(0.5), np.cos(0.5))


def test_argnums():
    x, y = X, X + 1.0
    close(redraft.grad(weighted)(x, y, 1.0), y ** 2)
    close(redraft.grad(weighted, argnums=1)(x, y, 1.0), 2 * x * y)
    gx, gz = redraft.grad(weighted, argnums=(0, 2))(x, y, 1.0)
    close(gx, y ** 2)
    close(gz, 1.0)
    (gy,) = redraft.grad(weighted, argnums=(1,))(x, y, 1.0)
    close(gy, 2 * x * y)
    close(redraft.grad(weighted, argnums=-2)(x, y, 1.0), 2 * x * y)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        redraft.grad(cube_sum, argnums=3)(X)


def test_keyword_arguments_and_defaults():
    close(redraft.grad(keyword_scale)(X), 4 * X)
    close(redraft.grad(keyword_scale)(X, scale=3.0), 6 * X)
    close(redraft.grad(keyword_scale)(X, 0.5), X)
    close(redraft.grad(catalogue.selu)(np.float32(2.0)), 1.05)


def test_has_aux():
    g, aux = redraft.grad(loss_with_aux, has_aux=True)(X)
    close(g, 2 * X)
    assert set(aux) == {"norm", "x"}
    close(aux["norm"], np.sqrt(np.sum(X * X)))
    (value, aux), g = redraft.value_and_grad(loss_with_aux, has_aux=True)(X)
    close(value, np.sum(X * X))
    close(g, 2 * X)
    close(aux["x"], X)


def test_value_and_grad():
    value, g = redraft.value_and_grad(cube_sum)(X)
    close(value, np.sum(X ** 3))
    close(g, 3 * X ** 2)
    value, (gx, gy) = redraft.value_and_grad(weighted, argnums=(0, 1))(X, X, 2.0)
    close(value, np.sum(X ** 3) + 2.0)
    close(gx, X ** 2)
    close(gy, 2 * X * X)


def test_value_and_grad_runs_the_forward_pass_once(monkeypatch):
    """value_and_grad is one generated function (forward, seed, backward) run once: the
    function is not run again for its value, nor a vjp seeded from outside."""
    from redraft import transforms
    from redraft.compiler.transforms.calls import callees
    made, ran = [], []
    vjp_of = callees.vjp_of
    monkeypatch.setattr(callees, "vjp_of", lambda fn, mask, mode, *rest:
                        made.append(mode) or vjp_of(fn, mask, mode, *rest))
    monkeypatch.setattr(transforms, "fun_primal", lambda fn: ran.append(fn) or fn)
    value, g = redraft.value_and_grad(cube_sum)(X)
    close(value, np.sum(X ** 3))
    close(g, 3 * X ** 2)
    assert made == ["value_and_grad"] and ran == []
    source = callees.vjp_of(cube_sum, (True,), "value_and_grad").fn.__redraft_source__
    assert "ad.grad_seed(" in source
    with pytest.raises(TypeError, match="scalar output"):
        redraft.value_and_grad(lambda x: x * 2.0)(X)


def test_pytrees_in_and_out_of_grad():
    params = {"W": M, "b": X}
    g = redraft.grad(tree_loss)(params)
    assert isinstance(g, dict) and set(g) == {"W", "b"}
    assert g["W"].shape == M.shape and g["b"].shape == X.shape
    h = np.tanh(M @ X)
    close(g["W"], np.outer(1 - h ** 2, X), rtol=1e-5)
    close(g["b"], M.T @ (1 - h ** 2) + 2 * X, rtol=1e-5)
    g = redraft.grad(catalogue.point_dist)(Point(1.0, 2.0, 3.0))
    assert isinstance(g, Point)
    close([g.x, g.y, g.z], list(np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)))
    g = redraft.grad(catalogue.tuple_input)((X, M[0]))
    assert isinstance(g, tuple) and len(g) == 2


def test_grad_of_closure_sees_the_closed_over_values():
    W1 = np.eye(2, 3, dtype=np.float32)
    f1 = catalogue.make_affine(W1, np.zeros(2, np.float32))
    f2 = catalogue.make_affine(2 * W1, np.zeros(2, np.float32))
    g1, g2 = redraft.grad(f1)(X), redraft.grad(f2)(X)
    close(g1, W1.T @ (1 - np.tanh(W1 @ X) ** 2), rtol=1e-5)
    close(g2, 2 * W1.T @ (1 - np.tanh(2 * W1 @ X) ** 2), rtol=1e-5)


def test_stop_gradient():
    close(redraft.grad(catalogue.uses_stop_gradient)(X), X)
    close(redraft.stop_gradient(X), X)


# ---- higher order and jit ------------------------------------------------------------------------

def test_third_derivative():
    d3 = redraft.grad(redraft.grad(redraft.grad(sine)))
    close(d3(1.0), -np.cos(1.0), rtol=1e-5)
    d3 = redraft.grad(redraft.grad(redraft.grad(quartic)))
    close(d3(1.5), 24 * 1.5, rtol=1e-5)


def test_grad_composes_with_jit():
    close(redraft.grad(redraft.jit(quartic))(2.0), 32.0)
    close(redraft.jit(redraft.grad(quartic))(2.0), 32.0)
    close(redraft.grad(redraft.jit(redraft.grad(redraft.jit(redraft.grad(quartic)))))(2.0),
          48.0)
    g = redraft.grad(redraft.jit(catalogue.point_dist))(Point(1.0, 2.0, 3.0))
    assert isinstance(g, Point)


# ---- forward mode --------------------------------------------------------------------------------

def test_jvp():
    t = np.array([1.0, 0.5, -1.0], np.float32)
    out, out_dot = redraft.jvp(vector_out, (X,), (t,))
    close(out, 2 * np.sin(X))
    close(out_dot, 2 * np.cos(X) * t)
    out, out_dot = redraft.jvp(weighted, [X, X, 1.0], [t, np.zeros(3, np.float32), 1.0])
    close(out_dot, np.sum(t * X ** 2) + 1.0)


def test_jvp_pytrees_in_and_out():
    t = np.ones(3, np.float32)
    (a, b), (a_dot, b_dot) = redraft.jvp(pair_out, (X, X), (t, np.zeros(3, np.float32)))
    close(a_dot, np.sum(X ** 2))
    close(b_dot, X)
    out, out_dot = redraft.jvp(catalogue.dict_output, (X,), (t,))
    assert set(out) == set(out_dot) == {"sin", "total"}
    close(out_dot["sin"], np.cos(X))
    close(out_dot["total"], 2 * np.sum(X))
    params = {"W": M, "b": X}
    tangents = {"W": np.zeros_like(M), "b": t}
    _, d = redraft.jvp(tree_loss, (params,), (tangents,))
    close(d, np.sum(np.asarray(redraft.grad(tree_loss)(params)["b"])), rtol=1e-5)


def test_jvp_argument_errors():
    with pytest.raises(ValueError, match="equal shapes"):
        redraft.jvp(vector_out, (X,), (np.ones(2, np.float32),))
    with pytest.raises(ValueError, match="primals"):
        redraft.jvp(weighted, (X, X, 1.0), (X,))
    with pytest.raises(TypeError, match="tuples"):
        redraft.jvp(vector_out, X, X)


def test_linearize():
    out, f_jvp = redraft.linearize(vector_out, X)
    close(out, 2 * np.sin(X))
    t = np.array([1.0, 2.0, 3.0], np.float32)
    close(f_jvp(t), 2 * np.cos(X) * t)


# ---- reverse mode --------------------------------------------------------------------------------

def test_vjp():
    out, vjp_fun = redraft.vjp(vector_out, X)
    close(out, 2 * np.sin(X))
    ct = np.array([1.0, -1.0, 0.5], np.float32)
    (x_bar,) = vjp_fun(ct)
    close(x_bar, 2 * np.cos(X) * ct)
    out, vjp_fun = redraft.vjp(pair_out, X, M[0])
    x_bar, y_bar = vjp_fun((np.float32(1.0), np.zeros(3, np.float32)))
    close(x_bar, M[0] ** 2)
    close(y_bar, 2 * X * M[0])


def test_vjp_has_aux():
    out, vjp_fun, aux = redraft.vjp(loss_with_aux, X, has_aux=True)
    close(out, np.sum(X * X))
    close(aux["norm"], np.sqrt(np.sum(X * X)))
    close(vjp_fun(np.float32(2.0))[0], 4 * X)


def test_vjp_cotangent_errors():
    _, vjp_fun = redraft.vjp(vector_out, X)
    with pytest.raises(ValueError, match="shape"):
        vjp_fun(np.ones(2, np.float32))
    _, vjp_fun = redraft.vjp(pair_out, X, X)
    with pytest.raises(TypeError, match="structure"):
        vjp_fun(np.float32(1.0))


# ---- Jacobians and Hessians ----------------------------------------------------------------------

def test_jacfwd_and_jacrev():
    expected = np.diag(2 * np.cos(X))
    close(redraft.jacfwd(vector_out)(X), expected)
    close(redraft.jacrev(vector_out)(X), expected)
    close(redraft.jacobian(vector_out)(X), expected)


def test_jacobian_shapes_are_out_shape_plus_in_shape():
    def f(m):
        return jnp.tanh(m) @ m.T

    for jac in (redraft.jacfwd, redraft.jacrev):
        assert jac(catalogue.matmul_matrices, argnums=1)(M, M.T).shape == (3, 2)
    jf, jr = redraft.jacfwd(catalogue.methods_astype)(M), redraft.jacrev(
        catalogue.methods_astype)(M)
    assert jf.shape == jr.shape == (2, 3)
    close(jf, jr)


def test_jacobian_argnums_tuple():
    jx, jy = redraft.jacfwd(weighted, argnums=(0, 1))(X, X, 1.0)
    close(jx, X ** 2)
    close(jy, 2 * X * X)
    rx, ry = redraft.jacrev(weighted, argnums=(0, 1))(X, X, 1.0)
    close((rx, ry), (jx, jy))


def test_jacobian_of_pytree_output():
    jf = redraft.jacfwd(pair_out)(X, X + 1.0)
    jr = redraft.jacrev(pair_out)(X, X + 1.0)
    assert isinstance(jf, tuple) and isinstance(jr, tuple)
    assert jf[0].shape == (3,) and jf[1].shape == (3, 3)
    close(jf, jr)
    close(jf[1], np.diag(X + 1.0))


def test_jacobians_and_hessians_of_pytree_inputs():
    p = Point(1.0, 2.0, 3.0)
    jf, jr = redraft.jacfwd(catalogue.point_dist)(p), redraft.jacrev(catalogue.point_dist)(p)
    assert isinstance(jf, Point) and isinstance(jr, Point)
    close(jf, jr)
    h = redraft.hessian(catalogue.point_dist)(p)
    assert isinstance(h, Point) and isinstance(h.x, Point)
    v = np.array([1.0, 2.0, 3.0])
    n = np.linalg.norm(v)
    expected = (np.eye(3) - np.outer(v, v) / n ** 2) / n
    close([[h.x.x, h.x.y, h.x.z], [h.y.x, h.y.y, h.y.z], [h.z.x, h.z.y, h.z.z]],
          [list(row) for row in expected], rtol=1e-5)
    params = {"w": np.ones(2, np.float32), "b": np.full(2, 0.5, np.float32)}
    hr = redraft.jacrev(redraft.jacrev(catalogue.dict_input))(params)
    hf = redraft.hessian(catalogue.dict_input)(params)
    assert set(hr) == {"w", "b"} and set(hr["w"]) == {"w", "b"}
    assert hr["w"]["b"].shape == (2, 2)
    close(hr, hf, rtol=1e-5)
    close(hr["w"]["b"], np.asarray(hr["b"]["w"]).T, rtol=1e-5)


def test_hessian():
    close(redraft.hessian(cube_sum)(X), np.diag(6 * X))
    h = redraft.hessian(catalogue.sum_logistic)(X)
    s = 1 / (1 + np.exp(-X))
    close(h, np.diag(s * (1 - s) * (1 - 2 * s)), rtol=1e-5)
    assert redraft.hessian(catalogue.methods_astype)(M).shape == (2, 3, 2, 3)


def test_hessian_of_loops_branches_and_while():
    for fn in (catalogue.loop_range, catalogue.branch_if_else, catalogue.while_vector):
        x = np.array([0.4, 0.6, 0.3], np.float32)
        h_ff = redraft.jacfwd(redraft.jacfwd(fn))(x)
        h = redraft.hessian(fn)(x)
        close(h, h_ff, rtol=1e-4, atol=1e-5)
        close(h, np.asarray(h).T, rtol=1e-4, atol=1e-5)


# ---- errors --------------------------------------------------------------------------------------

def test_integer_inputs_to_grad_raise_jax_type_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        redraft.grad(cube_sum)(np.arange(3))
    with pytest.raises(TypeError, match="int32"):
        redraft.grad(cube_sum)(jnp.arange(3))
    with pytest.raises(TypeError, match="value_and_grad requires real"):
        redraft.value_and_grad(cube_sum)(jnp.arange(3))
    with pytest.raises(TypeError, match="requires real"):
        redraft.jacrev(vector_out)(jnp.arange(3))
    # an integer argument that is not differentiated is fine
    close(redraft.grad(int_count)(X, 3), 3 * np.ones(3))


def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match="grad requires a scalar output"):
        redraft.grad(vector_out)(X)


def test_errors_in_generated_code_name_the_users_line():
    with pytest.raises(ValueError) as info:
        redraft.grad(bad_matmul)(X)
    line = bad_matmul.__code__.co_firstlineno + 2
    notes = "".join(getattr(info.value, "__notes__", []))
    assert f"{HERE}:{line}" in notes


def test_unsupported_syntax_names_the_users_line():
    with pytest.raises(SyntaxError) as info:
        redraft.grad(mutates)(X)
    assert "immutable" in str(info.value) and ".at[" in str(info.value)
    line = mutates.__code__.co_firstlineno + 1
    assert f"{HERE}:{line}" in str(info.value)
    assert info.value.lineno == line
    for fn, offset in ((uses_try, 1),):
        with pytest.raises(SyntaxError) as info:
            redraft.grad(fn)(X)
        assert f"{HERE}:{fn.__code__.co_firstlineno + offset}" in str(info.value)


def test_emit_returns_readable_source():
    text = redraft.emit(catalogue.sum_logistic)
    ast.parse(text)
    assert "def sum_logistic_grad(x):" in text
    assert "x_bar" in text and "catalogue.py" in text.splitlines()[0]
    for mode in ("core", "grad", "vjp", "jvp", "jacfwd", "jacrev"):
        ast.parse(redraft.emit(catalogue.loop_range, mode))
    with pytest.raises(ValueError, match="unknown mode"):
        redraft.emit(catalogue.loop_range, "sideways")


def test_break_in_a_loop_is_differentiated():
    np.testing.assert_allclose(np.asarray(redraft.grad(breaks)(X)), 2 * np.ones(np.shape(X)))


def test_vjp_pullback_checks_the_cotangent_against_the_output():
    """A cotangent of another structure, shape or float dtype is a ValueError/TypeError that
    says so (as JAX's), never a failure deep in generated code; a Python scalar is taken in
    the output's dtype."""
    x = jnp.arange(3.0)
    _, pull = redraft.vjp(lambda v: jnp.sin(v), x)
    with pytest.raises(ValueError, match="shape"):
        pull(jnp.ones(4))
    with pytest.raises(ValueError, match="dtype float16 is not the output's tangent dtype"):
        pull(jnp.ones(3, jnp.float16))
    with pytest.raises(TypeError, match="structure"):
        pull((jnp.ones(3),))
    _, pull_scalar = redraft.vjp(lambda v: jnp.sum(jnp.sin(v)), x)
    np.testing.assert_allclose(pull_scalar(2.0)[0], 2.0 * np.cos(np.arange(3.0)), rtol=1e-6)
