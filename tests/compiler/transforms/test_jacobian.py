"""Jacobians as one batched jvp or backward pass (compiler/transforms/ad/jacobian.py) against
independent methods: the loop over basis vectors they replace (one jvp or backward pass
per basis vector, still built where vmap refuses), float64 finite differences, jacfwd
against jacrev, jit against eager; on random programs and on every form JAX has (argnums,
has_aux, pytrees, scalars, nesting, control flow, custom rules, vmap of a Jacobian)."""
from __future__ import annotations

import importlib.util
import itertools
import pathlib

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.core.loader import load
from redraft.compiler.transforms.ad.jacobian import jacobian_function
from redraft.compiler.transforms.calls.callable_core import core_of
from redraft.runtime.pytree import tree_flatten
from redraft.transforms import _built_jacobian


def looped(fn, forward: bool, argnum: int = 0):
    """The Jacobian by the loop over basis vectors (the independent method)."""
    core = core_of(fn)
    return load(jacobian_function(fn, core, argnum, forward, batched=False))


def assert_trees_close(got, want, rtol=1e-5, atol=1e-6):
    got_leaves, got_def = tree_flatten(got)
    want_leaves, want_def = tree_flatten(want)
    assert got_def == want_def, (got_def, want_def)
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w)
        assert np.result_type(g) == np.result_type(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# ---- random programs ----------------------------------------------------------------------------
# Each line maps y (shape (3,)) to y again, in operations NumPy spells as redraft does, so the
# same text runs with jnp = NumPy in float64 for the finite differences.
LINES = ("y = jnp.tanh(y) * 1.5", "y = jnp.sin(y) + x", "y = W @ y", "y = jnp.cumsum(y) * 0.5",
         "y = y[::-1] * y", "y = jnp.where(y > 0.1, y, 0.3 * y)", "y = jnp.exp(-y * y)",
         "y = y / (1.0 + y * y)", "y = jnp.cos(y) * jnp.sum(y)", "y = jnp.outer(y, x) @ y")
RESULTS = ("y", "y.reshape(1, 3)", "(y, jnp.sum(y * x))", "{'a': y, 'b': y[:2] * 2.0}")


def random_program(seed: int, tmp: pathlib.Path):
    """(redraft module, float64 NumPy module) of one random program f(x) -> a pytree."""
    rng = np.random.default_rng(seed)
    lines = [LINES[k] for k in rng.integers(0, len(LINES), 4)]
    result = RESULTS[seed % len(RESULTS)]
    w = np.round(rng.uniform(-1, 1, (3, 3)), 3).tolist()
    text = ("import numpy as np\nimport redraft.numpy as jnp\n\n"
            f"W = jnp.asarray(np.array({w}, np.float32))\n\n\n"
            "def f(x):\n    y = x\n" + "".join(f"    {line}\n" for line in lines)
            + f"    return {result}\n")
    path = tmp / f"program_{seed}.py"
    path.write_text(text)
    modules = []
    for reference in (False, True):
        spec = importlib.util.spec_from_file_location(f"program_{seed}_{reference}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if reference:
            module.jnp = np
            module.W = np.array(w, np.float64)
        modules.append(module)
    return modules


def finite_differences(f64, x: np.ndarray, h: float = 1e-6):
    """The Jacobian of f64 (float64 NumPy) by central differences, shaped as JAX's."""
    out = f64(x)
    leaves, treedef = tree_flatten(out)
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        plus = tree_flatten(f64(x + e.reshape(x.shape)))[0]
        minus = tree_flatten(f64(x - e.reshape(x.shape)))[0]
        columns.append([(p - m) / (2 * h) for p, m in zip(plus, minus)])
    blocks = [np.stack([c[k] for c in columns], axis=-1).reshape(np.shape(leaf) + x.shape)
              for k, leaf in enumerate(leaves)]
    return treedef, blocks


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_against_the_loop_and_finite_differences(seed, tmp_path):
    module, reference = random_program(seed, tmp_path)
    x64 = np.random.default_rng(100 + seed).uniform(-1, 1, 3)
    x = jnp.asarray(x64.astype(np.float32))
    treedef, blocks = finite_differences(reference.f, x64)
    for forward in (True, False):
        jac = (redraft.jacfwd if forward else redraft.jacrev)(module.f)
        got = jac(x)
        assert_trees_close(got, looped(module.f, forward)(x), rtol=1e-5, atol=1e-5)
        assert_trees_close(redraft.jit(jac)(x), got, rtol=1e-4, atol=1e-5)
        got_leaves, got_def = tree_flatten(got)
        assert got_def == treedef
        for g, want in zip(got_leaves, blocks):
            np.testing.assert_allclose(np.asarray(g), want, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("seed", range(4))
def test_random_hessians_forward_over_reverse_against_reverse_over_forward(seed, tmp_path):
    module, _ = random_program(seed * len(RESULTS), tmp_path)  # an array result

    def scalar(x):
        return jnp.sum(module.f(x) ** 2)
    x = jnp.asarray(np.random.default_rng(seed).uniform(-1, 1, 3).astype(np.float32))
    h = redraft.hessian(scalar)(x)
    np.testing.assert_allclose(h, redraft.jacrev(redraft.jacfwd(scalar))(x), rtol=2e-4,
                               atol=2e-5)
    np.testing.assert_allclose(h, looped(redraft.grad(scalar), True)(x), rtol=2e-4,
                               atol=2e-5)
    np.testing.assert_allclose(redraft.jit(redraft.hessian(scalar))(x), h, rtol=2e-4,
                               atol=2e-5)


# ---- every form ---------------------------------------------------------------------------------

def mixed(p, s):
    return {"u": jnp.sin(p["a"]) * s, "v": (p["b"] @ p["a"], jnp.sum(p["b"]) * s)}


def test_pytree_arguments_and_results_match_the_loop():
    p = {"a": jnp.array([0.3, -0.2]), "b": jnp.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]])}
    s = jnp.array(1.5)
    for forward, argnum in itertools.product((True, False), (0, 1)):
        jac = redraft.jacfwd if forward else redraft.jacrev
        got = jac(mixed, argnums=argnum)(p, s)
        assert_trees_close(got, looped(mixed, forward, argnum)(p, s))
        assert_trees_close(redraft.jit(jac(mixed, argnums=argnum))(p, s), got)
    both = redraft.jacrev(mixed, argnums=(0, 1))(p, s)
    assert_trees_close(both[1], redraft.jacfwd(mixed, argnums=1)(p, s))


def test_tuple_and_list_arguments():
    def f(xs):
        a, b = xs[0], xs[1]
        return [a * b, jnp.sum(a) + b[0]]
    for xs in ((jnp.array([1.0, 2.0]), jnp.array([3.0, -1.0])),
               [jnp.array([1.0, 2.0]), jnp.array([3.0, -1.0])]):
        fwd, rev = redraft.jacfwd(f)(xs), redraft.jacrev(f)(xs)
        assert_trees_close(fwd, rev)
        assert_trees_close(fwd, looped(f, True)(xs))
        assert isinstance(fwd, list) and type(fwd[0]) is type(xs)


def test_scalars_in_and_out_keep_their_shapes_and_dtypes():
    cases = [(lambda x: x * 2.0, 3.0), (lambda x: jnp.sum(x ** 2), jnp.array([1.0, 2.0])),
             (lambda x: jnp.stack([x, x * x]), jnp.float32(2.0)),
             (lambda x: x * 3.0, jnp.array(2.0))]
    for f, x in cases:
        for jac in (redraft.jacfwd, redraft.jacrev):
            got = jac(f)(x)
            want = looped(f, jac is redraft.jacfwd)(redraft.numpy.asarray(x))
            assert np.shape(got) == np.shape(want) and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_result_that_does_not_depend_on_the_argument_is_zeros():
    def f(x, y):
        return {"c": jnp.zeros(3), "y": y * 2.0, "x": x[0]}
    x, y = jnp.array([1.0, 2.0]), jnp.array(3.0)
    for jac in (redraft.jacfwd, redraft.jacrev):
        got = jac(f)(x, y)
        assert got["c"].shape == (3, 2) and not np.any(np.asarray(got["c"]))
        assert got["y"].shape == (2,) and not np.any(np.asarray(got["y"]))
        np.testing.assert_allclose(got["x"], [1.0, 0.0])


def test_has_aux_and_float64_leaves():
    def f(x):
        return jnp.tanh(x) * 2.0, {"norm": jnp.sum(x * x)}
    x = jnp.array([0.1, 0.2, 0.3])
    for jac in (redraft.jacfwd, redraft.jacrev):
        j, aux = jac(f, has_aux=True)(x)
        np.testing.assert_allclose(j, np.diag(2.0 * (1 - np.tanh(x) ** 2)), rtol=1e-6)
        np.testing.assert_allclose(aux["norm"], 0.14, rtol=1e-6)


def test_nested_forms_agree():
    def f(x):
        return jnp.sin(x) * jnp.sum(x ** 2)
    x = jnp.array([0.3, -0.5, 0.8])
    h = redraft.hessian(lambda v: jnp.sum(f(v)))(x)
    forms = [redraft.jacfwd(redraft.jacfwd(f)), redraft.jacfwd(redraft.jacrev(f)),
             redraft.jacrev(redraft.jacfwd(f)), redraft.jacrev(redraft.jacrev(f))]
    third = [form(x) for form in forms]
    for t in third:
        np.testing.assert_allclose(t, third[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.sum(third[0], axis=0), h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(redraft.jit(forms[1])(x), third[0], rtol=1e-5, atol=1e-6)


def _scan(x):
    def step(c, v):
        c = jnp.sin(c) * v + c
        return c, c * c
    c, ys = lax.scan(step, x[0], x)
    return ys + c


def _fori(x):
    return lax.fori_loop(0, 3, lambda i, v: jnp.tanh(v) * x + v * 0.5, x)


def _while(x):
    return lax.while_loop(lambda cv: cv[0] < 4, lambda cv: (cv[0] + 1, jnp.sin(cv[1]) * x),
                          (0, x))[1]


def _cond(x):
    return lax.cond(jnp.sum(x) > 0, lambda v: jnp.exp(v) * v, lambda v: v ** 3, x)


@redraft.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t / (1.0 + jnp.exp(-x))


@redraft.custom_vjp
def _clip_grad(x):
    return jnp.sin(x)


def _clip_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _clip_bwd(c, g):
    return (jnp.clip(g * c, -0.5, 0.5),)


_clip_grad.defvjp(_clip_fwd, _clip_bwd)


@pytest.mark.parametrize("f", [_scan, _fori, _while, _cond, _softplus],
                         ids=["scan", "fori_loop", "while_loop", "cond", "custom_jvp"])
def test_control_flow_and_custom_rules(f):
    x = jnp.array([0.4, -0.3, 0.7])
    want = looped(f, True)(x)
    for jac in (redraft.jacfwd, redraft.jacrev):
        np.testing.assert_allclose(jac(f)(x), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(redraft.jit(jac(f))(x), want, rtol=1e-5, atol=1e-6)
    hess = redraft.hessian(lambda v: jnp.sum(f(v) ** 2))
    np.testing.assert_allclose(hess(x), redraft.jacrev(redraft.jacrev(
        lambda v: jnp.sum(f(v) ** 2)))(x), rtol=1e-4, atol=1e-5)


def test_custom_vjp_takes_its_rule_in_jacrev_and_is_refused_by_jacfwd():
    x = jnp.array([0.2, 1.5, -3.0])
    want = np.diag(np.clip(np.cos(np.asarray(x)), -0.5, 0.5))
    np.testing.assert_allclose(redraft.jacrev(_clip_grad)(x), want, rtol=1e-6)
    np.testing.assert_allclose(looped(_clip_grad, False)(x), want, rtol=1e-6)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        redraft.jacfwd(_clip_grad)(x)


def test_vmap_of_jacobians_matches_a_loop_over_examples():
    def f(x):
        return jnp.sin(x) * jnp.sum(x)
    xs = jnp.asarray(np.random.default_rng(0).uniform(-1, 1, (4, 3)).astype(np.float32))
    for jac in (redraft.jacfwd(f), redraft.jacrev(f), redraft.hessian(lambda v: jnp.sum(f(v)))):
        want = np.stack([np.asarray(jac(x)) for x in xs])
        np.testing.assert_allclose(redraft.vmap(jac)(xs), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(redraft.jit(redraft.vmap(jac))(xs), want, rtol=1e-5,
                                   atol=1e-6)


def test_vmap_of_a_pytree_jacobian():
    rng = np.random.default_rng(1)
    ps = {"a": jnp.asarray(rng.uniform(-1, 1, (3, 2)).astype(np.float32)),
          "b": jnp.asarray(rng.uniform(-1, 1, (3, 3, 2)).astype(np.float32))}
    s = jnp.array(2.0)
    for jac in (redraft.jacfwd(mixed), redraft.jacrev(mixed)):
        got = redraft.vmap(jac, in_axes=(0, None))(ps, s)
        for k in range(3):
            one = jac({"a": ps["a"][k], "b": ps["b"][k]}, s)
            example = [leaf[k] for leaf in tree_flatten(got)[0]]
            for g, w in zip(example, tree_flatten(one)[0]):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ---- where vmap refuses -------------------------------------------------------------------------

@redraft.custom_jvp
def _refused(x):
    return jnp.sin(x)


@_refused.defjvp
def _refused_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    (every,) = jnp.nonzero(t == t)  # a shape that depends on values: vmap refuses it
    return jnp.sin(x), jnp.cos(x)[every] * t[every]


def test_where_vmap_refuses_the_loop_is_built_and_says_why():
    source = _built_jacobian(_refused, 0, True).__redraft_source__
    assert "for " in source and "_jvp_batched" not in source
    assert "vmap of _refused_jvp was refused" in source and "jnp.nonzero" in source
    x = jnp.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(redraft.jacfwd(_refused)(x), np.diag(np.cos(np.asarray(x))),
                               rtol=1e-6)


def test_weak_types_follow_jax():
    """jacfwd's blocks take the output's weak type, jacrev's the input's, as JAX 0.10.2's:
    of a Python float, jacfwd of a weak result and jacrev of anything are weak."""
    import redraft as jax

    def weak(x):
        return jnp.sin(x) * 2

    def strong(x):
        return jnp.sin(x) * jnp.float32(2)

    def vector(x):
        return jnp.sin(x) * jnp.ones(3)

    got = {(t.__name__, f.__name__): t(f)(1.0).weak_type
           for t in (jax.jacfwd, jax.jacrev, jax.hessian) for f in (weak, strong, vector)
           if not (t is jax.hessian and f is vector)}
    assert got == {("jacfwd", "weak"): True, ("jacfwd", "strong"): False,
                   ("jacfwd", "vector"): False, ("jacrev", "weak"): True,
                   ("jacrev", "strong"): True, ("jacrev", "vector"): True,
                   ("hessian", "weak"): True, ("hessian", "strong"): True}
    assert not jax.jacrev(weak)(jnp.float32(1.0)).weak_type
    assert jax.jit(jax.jacfwd(weak))(1.0).weak_type
