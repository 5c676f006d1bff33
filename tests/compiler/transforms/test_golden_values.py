"""Golden files of the source redraft emits for functions specialised on Python values:
*args spread to a call's arity, a functools.partial, and a function-valued argument held
by identity (compiler/frontend/specialise.py). Run with REDRAFT_UPDATE_GOLDEN=1 to rewrite
them; otherwise the output is compared with golden/values_*.py.txt."""
import ast
import os
import pathlib
import re
from functools import partial

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.compiler.frontend import specialise

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
ROOT = pathlib.Path(__file__).resolve().parents[3]


def poly(x, *coeffs):
    return sum(c * x ** i for i, c in enumerate(coeffs))


def project(W, x, scale=1.0):
    return scale * jnp.tanh(W @ x)


def apply_fn(f, x):
    return jnp.sum(f(x))


W = np.array([[1.0, -0.5], [0.3, 0.8]], np.float32)


def star_args():
    """poly(x, *coeffs) for a call with three coefficients: flat parameters."""
    return specialise.specialise_call(poly, (np.float32(1.5), 1.0, -2.0, 0.5), {})[0], 0


def partial_function():
    """partial(project, W, scale=2.0): the Core takes what is left open, x."""
    return partial(project, W, scale=2.0), 0


def function_argument():
    """apply_fn specialised on f = jnp.tanh: the call through f is a call of tanh."""
    return specialise.bound(apply_fn, ((0, jnp.tanh),)), 1


CASES = {"star_args": star_args, "partial": partial_function,
         "function_argument": function_argument}


def normalise(text: str) -> str:
    def relative(match):
        path = pathlib.Path(match.group(1))
        try:
            path = path.resolve().relative_to(ROOT)
        except ValueError:
            pass
        return f"{path.as_posix()}:N"
    return re.sub(r"(/\S+\.py):\d+", relative, text)


def emitted(name: str) -> str:
    fn, argnum = CASES[name]()
    return normalise(redraft.emit(fn, "grad", argnums=argnum))


@pytest.mark.parametrize("name", sorted(CASES))
def test_emitted_source_matches_golden_file(name):
    text = emitted(name)
    ast.parse(text)
    path = GOLDEN / f"values_{name}.grad.py.txt"
    if os.environ.get("REDRAFT_UPDATE_GOLDEN") == "1":
        path.write_text(text)
        return
    assert path.exists(), f"no golden file {path.name}: run with REDRAFT_UPDATE_GOLDEN=1"
    assert text == path.read_text(), (f"emitted source of {name} changed; if intended, rerun "
                                      f"with REDRAFT_UPDATE_GOLDEN=1 and review {path.name}")


def test_emitted_source_is_deterministic():
    assert [emitted(n) for n in sorted(CASES)] == [emitted(n) for n in sorted(CASES)]


def test_the_emitted_functions_compute_the_gradient():
    fn, _ = star_args()
    np.testing.assert_allclose(redraft.grad(fn)(np.float32(1.5), 1.0, -2.0, 0.5), -0.5,
                               rtol=1e-6)
    fn, _ = partial_function()
    x = np.array([0.2, -0.4], np.float32)
    y = np.tanh(W.astype(np.float64) @ x)
    np.testing.assert_allclose(redraft.grad(lambda v: jnp.sum(fn(v)))(x),
                               2 * W.T @ (1 - y ** 2), rtol=1e-5)
    fn, _ = function_argument()
    np.testing.assert_allclose(redraft.grad(fn, argnums=1)(jnp.tanh, x), 1 - np.tanh(x) ** 2,
                               rtol=1e-5)
