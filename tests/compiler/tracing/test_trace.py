"""The tracing fallback: functions without readable source (exec, python -c) are run on
tracers and their recorded Core is transformed like any other; checked against NumPy and
central differences."""
import os
import subprocess
import sys

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.runtime.errors import ConcretizationTypeError, TracerBoolConversionError
from redraft.test_util import numerical_grad


def exec_function(source: str, name: str, **extra):
    ns = {"jnp": jnp, "lax": lax, **extra}
    exec(source, ns)
    return ns[name]


ENERGY = "def energy(x, w):\n    y = jnp.sin(x) * w\n    return jnp.sum(y ** 2 - 0.5 * x)\n"
X = np.array([0.3, -1.2, 2.0], np.float32)


def np_energy(x, w=1.5):
    return np.sum((np.sin(x) * w) ** 2 - 0.5 * x)


def test_exec_function_value_grad_jit():
    f = exec_function(ENERGY, "energy")
    np.testing.assert_allclose(f(X, 1.5), np_energy(X), rtol=1e-5)
    expected = numerical_grad(np_energy, X.astype(np.float64))
    np.testing.assert_allclose(redraft.grad(f)(X, 1.5), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(redraft.jit(f)(X, 1.5), np_energy(X), rtol=1e-5)
    np.testing.assert_allclose(redraft.jit(redraft.grad(f))(X, 1.5), expected, rtol=1e-4,
                               atol=1e-5)
    dw = numerical_grad(lambda w: np_energy(X.astype(np.float64), w), np.float64(1.5))
    np.testing.assert_allclose(redraft.grad(f, argnums=1)(X, 1.5), dw, rtol=1e-4)


def test_jit_of_an_exec_function_reuses_its_specialisation():
    """Repeated calls take the cached specialisation (not the binding of every call), with
    the arguments' values and the defaults the call leaves out."""
    f = redraft.jit(exec_function("def scaled(x, w=2.0):\n    return x * w + 1.0\n",
                                  "scaled"))
    for w in (None, 3.0, -1.0, None):
        for x in (X, X[:2], np.asarray(4.0, np.float32)):
            args = (x,) if w is None else (x, w)
            np.testing.assert_allclose(f(*args), np.asarray(x) * (2.0 if w is None else w)
                                       + 1.0, rtol=1e-6)
    assert len(f._specialised) == 6  # three shapes, with and without w


CONCRETE_INDEXING = """
def table_lookup(x, idx):
    return jnp.arange(10.0)[idx] * x + jnp.zeros(6).at[idx].add(x)[idx]

def placed(x):
    return jnp.zeros(5).at[2].set(jnp.sum(x)).at[jnp.argmax(x) + 1].multiply(3.0)
"""


def test_concrete_arrays_indexed_and_updated_by_traced_values():
    """A constant array made inside a traced function, indexed by or updated with traced
    values (no reflected operator exists for these), is recorded, not refused."""
    lookup = exec_function(CONCRETE_INDEXING, "table_lookup")
    placed = exec_function(CONCRETE_INDEXING, "placed")
    idx = np.array([1, 3, 3], np.int32)
    want = np.arange(10.0)[idx] * 2.0 + np.array([0, 2, 0, 4, 0, 0.0])[idx]
    np.testing.assert_allclose(redraft.jit(lookup)(2.0, idx), want)
    np.testing.assert_allclose(redraft.grad(lambda v: lookup(v, idx).sum())(2.0), 7.0 + 5.0)
    x = np.array([0.5, 4.0, 1.0], np.float32)
    np.testing.assert_allclose(redraft.jit(placed)(x), [0, 0, 16.5, 0, 0])
    np.testing.assert_allclose(redraft.grad(lambda v: placed(v)[2])(x), [3, 3, 3])


def test_concrete_array_operators_with_traced_values():
    """A concrete redraft array on the left of an operator whose right side is traced
    defers to the tracer's reflected operator (it raised ConcretizationTypeError)."""
    a = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    f = exec_function("def f(b):\n    return jnp.sum(a @ b) + jnp.sum(a[0] < b) - jnp.sum("
                      "a[1] ** b)\n", "f", a=a)
    b = np.array([0.5, 1.0, 2.0], np.float32)
    an = np.asarray(a)
    want = np.sum(an @ b) + np.sum(an[0] < b) - np.sum(an[1] ** b)
    np.testing.assert_allclose(redraft.jit(f)(b), want, rtol=1e-5)
    np.testing.assert_allclose(redraft.grad(f)(b), an.sum(0) - an[1] ** b * np.log(an[1]),
                               rtol=1e-5)


def test_exec_function_jvp_vjp_hessian():
    f = exec_function(ENERGY, "energy")
    v = np.array([1.0, 0.5, -2.0], np.float32)
    g = 2 * 1.5 ** 2 * np.sin(X) * np.cos(X) - 0.5
    out, tangent = redraft.jvp(f, (X, 1.5), (v, 0.0))
    np.testing.assert_allclose(out, np_energy(X), rtol=1e-5)
    np.testing.assert_allclose(tangent, np.dot(g, v), rtol=1e-4)
    _, f_vjp = redraft.vjp(f, X, np.float32(1.5))
    np.testing.assert_allclose(f_vjp(np.float32(1.0))[0], g, rtol=1e-4, atol=1e-6)
    h = redraft.hessian(f)(X, 1.5)
    np.testing.assert_allclose(h, np.diag(2 * 1.5 ** 2 * np.cos(2 * X)), rtol=1e-4,
                               atol=1e-5)


def test_exec_function_vmap_against_loop():
    f = exec_function(ENERGY, "energy")
    xs = np.stack([X, -X, 2 * X])
    looped = [np_energy(x) for x in xs]
    np.testing.assert_allclose(redraft.vmap(f, in_axes=(0, None))(xs, 1.5), looped, rtol=1e-5)
    np.testing.assert_allclose(redraft.jit(redraft.vmap(redraft.grad(f), in_axes=(0, None)))(
        xs, 1.5), [2 * 1.5 ** 2 * np.sin(x) * np.cos(x) - 0.5 for x in xs], rtol=1e-4,
        atol=1e-6)


def test_exec_lambda_with_methods_indexing_and_at():
    f = exec_function("f = lambda x, a: (a * x.T).sum() + x[1:].max() + x.at[0].set(2.0)[0]",
                      "f")
    x = np.array([0.5, 1.0, -3.0], np.float32)
    np.testing.assert_allclose(f(jnp.asarray(x), 2.0), 2 * x.sum() + 1.0 + 2.0, rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(f)(x, 2.0), [2.0, 3.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(redraft.jit(f)(x, 2.0), 2 * x.sum() + 3.0, rtol=1e-6)


def test_exec_function_calling_exec_function_in_a_loop():
    f = exec_function("def cell(h, w):\n    return jnp.tanh(w * h + 0.5)\n\n"
                      "def unrolled(w, h):\n    for _ in range(3):\n        h = cell(h, w)\n"
                      "    return h\n", "unrolled")

    def np_f(w, h=0.2):
        for _ in range(3):
            h = np.tanh(w * h + 0.5)
        return h

    np.testing.assert_allclose(f(1.3, 0.2), np_f(1.3), rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(f)(1.3, 0.2), numerical_grad(np_f, np.float64(1.3)),
                               rtol=1e-4)
    np.testing.assert_allclose(redraft.jit(redraft.vmap(f, in_axes=(0, None)))(
        np.array([1.3, -0.7], np.float32), 0.2), [np_f(1.3), np_f(-0.7)], rtol=1e-5)


def helper_with_source(x):
    """A function with a file: a traced function records a call to it (its source is read)."""
    if x.shape[0] > 1:
        return jnp.sum(x * x)
    return jnp.sum(x)


def test_exec_function_calling_a_function_with_source_records_a_call():
    f = exec_function("def f(x):\n    return 3.0 * helper(x)\n", "f",
                      helper=helper_with_source)
    assert "helper(x)" in redraft.emit(f, "core")
    np.testing.assert_allclose(redraft.grad(f)(X), 6.0 * X, rtol=1e-6)


def test_python_control_flow_on_a_traced_value_raises_jax_error():
    g = exec_function("def g(x):\n    if x > 0:\n        return x\n    return -x\n", "g")
    with pytest.raises(TracerBoolConversionError, match="source could not be read") as info:
        redraft.grad(g)(1.0)
    assert str(info.value).startswith("<string>:2:")
    h = exec_function("def h(x):\n    return jnp.zeros(int(x))\n", "h")
    with pytest.raises(ConcretizationTypeError, match="redraft traced `h`"):
        redraft.jit(h)(3.0)


def test_emit_prints_the_traced_core():
    f = exec_function(ENERGY, "energy")
    text = redraft.emit(f, "core")
    assert text.splitlines()[0] == "def energy(x, w):"
    assert "jnp.sin(x)" in text and "jnp.sum(" in text


def test_log_compiles_says_which_path(monkeypatch, capsys):
    monkeypatch.setenv("REDRAFT_LOG_COMPILES", "1")
    f = exec_function(ENERGY, "energy")
    redraft.grad(f)(X, 1.5)
    redraft.grad(helper_with_source)(X)
    err = capsys.readouterr().err
    assert "Core of energy (<string>:1) from its trace: its source could not be read" in err
    assert "Core of helper_with_source" in err and "from its source" in err


PROGRAM = """
import numpy as np
import redraft, redraft.numpy as jnp
f = lambda x: jnp.sum(jnp.exp(x) * x)
x = np.array([0.0, 1.0], np.float32)
print(np.asarray(redraft.grad(f)(x)).tolist(), float(redraft.jit(f)(x)))
"""


@pytest.mark.parametrize("how", ["-c", "stdin"])
def test_python_c_and_stdin_programs(how):
    cmd = [sys.executable, "-c", PROGRAM] if how == "-c" else [sys.executable, "-"]
    out = subprocess.run(cmd, input=None if how == "-c" else PROGRAM, capture_output=True,
                         text=True, timeout=300, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    grads, value = eval(out.stdout.strip().replace(" ", "").rsplit("]", 1)[0] + "]"), float(
        out.stdout.split()[-1])
    np.testing.assert_allclose(grads, [1.0, 2 * np.e], rtol=1e-5)
    np.testing.assert_allclose(value, np.e, rtol=1e-6)


def test_unpacking_a_traced_result_and_keys():
    from redraft import random
    f = exec_function("def f(x, key):\n    key, sub = random.split(key)\n"
                      "    a, b = jnp.split(x, 2)\n"
                      "    return jnp.sum(a * b) + random.normal(sub, ()), key\n", "f",
                      random=random)
    x = jnp.arange(4.0)
    key = random.key(0)
    value, new_key = redraft.jit(f)(x, key)
    eager_key, sub = random.split(key)
    np.testing.assert_allclose(value, 0.0 * 2.0 + 1.0 * 3.0 + random.normal(sub, ()),
                               rtol=1e-6)
    assert np.asarray(random.key_data(new_key)).tolist() == np.asarray(
        random.key_data(eager_key)).tolist()
    np.testing.assert_allclose(redraft.grad(lambda x, k: f(x, k)[0])(x, key), [2, 3, 0, 1])
    g = exec_function("def g(x):\n    for r in x:\n        x = x + r\n    return x\n", "g")
    with pytest.raises(ConcretizationTypeError, match="to iterate over it"):
        redraft.grad(g)(x)
