"""compiler/core/loader.py: generated functions are printed, loaded from real files, and
keep every default value a parameter had."""
import enum

import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.compiler.core import ir
from redraft.compiler.core.loader import load, source_of


class Activation(enum.Enum):
    TANH = 1
    RELU = 2


def _activated(x, act=Activation.TANH, scale=2.0):
    if act is Activation.TANH:
        return jnp.sum(jnp.tanh(x) * scale)
    return jnp.sum(jnp.maximum(x, 0.0) * scale)


def test_a_default_python_cannot_spell_is_bound_to_a_global():
    """An enum member as a default printed as its repr (`act=<Activation.TANH: 1>`), a
    syntax error in the generated file."""
    fn = ir.Function("f", ("x", "act", "scale"), [ir.Return(ir.Var("act"))],
                     (Activation.RELU, 2.0), "<test>", 1)
    text, namespace, _ = source_of(fn)
    assert "def f(x, act=act_default, scale=2.0):" in text
    assert namespace["act_default"] is Activation.RELU
    assert load(fn)(1.0) is Activation.RELU


def test_grad_of_a_function_with_an_enum_default():
    x = np.array([0.5, -1.0], np.float32)
    g = np.asarray(redraft.grad(_activated)(x))
    np.testing.assert_allclose(g, 2 / np.cosh(x) ** 2, rtol=1e-5)
    g = np.asarray(redraft.grad(_activated)(x, Activation.RELU))
    np.testing.assert_allclose(g, [2.0, 0.0])
