"""lax.square as its own primitive (square_p, as in JAX), added as the worked example of
docs/ARCHITECTURE.md's "adding a primitive" list: one family file
(compiler/primitives/elementwise.py) and one backend file (compiler/backend/llvm/
elementwise.py). Each rule is checked: the eager implementation against NumPy, the LLVM
lowering (jit) against eager, batching against a loop over the examples, derivatives
against finite differences, and the staged IR names the primitive."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.primitives import elementwise as ew
from redraft.test_util import numerical_grad

X = np.array([-3.5, -1.0, -0.25, 0.0, 0.5, 2.0, 7.25], np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint16])
def test_square_matches_numpy(dtype):
    x = (X * 3).astype(dtype)
    got = lax.square(jnp.asarray(x))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), np.square(x))


def test_bool_operands_are_refused():
    with pytest.raises(TypeError):
        lax.square(jnp.asarray([True, False]))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_compiled_matches_eager(dtype):
    x = jnp.asarray((X * 3).astype(dtype))

    def f(v):
        return lax.square(v) + v

    np.testing.assert_array_equal(np.asarray(redraft.jit(f)(x)), np.asarray(f(x)))


def test_staged_ir_applies_the_primitive():
    text = str(redraft.make_jaxpr(lax.square)(jnp.asarray(X)))
    assert "square" in text and "integer_pow" not in text


def _features(v):
    return lax.square(jnp.sin(v)) * 2.0 - lax.square(v)


def test_vmap_matches_a_loop_over_examples():
    x = jnp.asarray(np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6))
    looped = np.stack([np.asarray(_features(x[i])) for i in range(4)])
    np.testing.assert_allclose(np.asarray(redraft.vmap(_features)(x)), looped, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(redraft.vmap(_features))(x)), looped,
                               rtol=1e-6)


def _loss(v):
    return jnp.sum(_features(v))


def test_grad_matches_finite_differences():
    expected = numerical_grad(lambda a: float(np.sum(2 * np.sin(a) ** 2 - a * a)), X)
    for fn in (redraft.grad(_loss), redraft.jit(redraft.grad(_loss))):
        np.testing.assert_allclose(np.asarray(fn(jnp.asarray(X))), expected, rtol=1e-4,
                                   atol=1e-4)


def test_jvp_matches_finite_differences():
    t = np.linspace(0.5, 1.5, X.size).astype(np.float32)
    _, tangent = redraft.jvp(_features, (jnp.asarray(X),), (jnp.asarray(t),))
    eps = 1e-3
    x64, t64 = X.astype(np.float64), t.astype(np.float64)

    def f64(a):
        return 2 * np.sin(a) ** 2 - a * a

    expected = (f64(x64 + eps * t64) - f64(x64 - eps * t64)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), expected, rtol=1e-3, atol=1e-3)


def test_second_derivative():
    d2 = redraft.grad(redraft.grad(lambda v: lax.square(v)))
    assert float(d2(3.0)) == pytest.approx(2.0)


def test_the_family_declares_every_rule():
    from redraft.compiler.primitives.registry import BATCH_RULES, functions_of, rules_for
    assert functions_of(ew.square_p) == [lax.square]
    rules = rules_for(ew.square_p)
    assert set(rules.jvp) == set(rules.vjp) == {"x"}
    assert BATCH_RULES[lax.square].kind == "rule"
