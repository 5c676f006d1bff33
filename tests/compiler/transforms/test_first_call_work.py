"""What a first call does once, not again: a user's function is read once per staging, a
transformed function is compiled as Python only when it runs, a callee's batch types are
analysed once where no recursion reads them, and a gradient's zero accumulators under
staging are one zero broadcast. Each must leave results unchanged."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.compiler import driver
from redraft.compiler.core import loader
from redraft.compiler.frontend import normalize
from redraft.compiler.transforms.batch import infer
from redraft.compiler.transforms.calls import callees
from redraft.compiler.transforms.runtime import ad


def _loss(w, x, y):
    z = jnp.dot(x, w)
    return jnp.logaddexp(0.0, z) - y * z


def _per_example(w, xs, ys):
    return redraft.vmap(redraft.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(5).astype(np.float32),
            rng.standard_normal((4, 5)).astype(np.float32),
            (rng.random(4) < 0.5).astype(np.float32))


def _expected(w, xs, ys):
    s = 1.0 / (1.0 + np.exp(-(xs @ w)))
    return (s - ys)[:, None] * xs


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_one_staging_reads_the_users_function_once(monkeypatch):
    lowered = _counting(monkeypatch, normalize, "lower_function")
    w, xs, ys = _data()
    out = redraft.jit(_per_example)(w, xs, ys)
    np.testing.assert_allclose(np.asarray(out), _expected(w, xs, ys), rtol=1e-5, atol=1e-6)
    assert sum(f is _loss for f in lowered) == 1


def test_a_later_staging_reads_a_changed_closure_again():
    def make(scale):
        def f(x):
            return jnp.sum(x * scale)
        return f

    x = np.ones(3, np.float32)
    assert float(redraft.jit(redraft.grad(make(2.0)))(x)[0]) == 2.0
    assert float(redraft.jit(redraft.grad(make(3.0)))(x)[0]) == 3.0


def test_staging_compiles_no_generated_python_and_a_call_loads_it(monkeypatch):
    loaded = _counting(monkeypatch, loader, "load")
    w, xs, ys = _data()

    def loss(w, x, y):  # a function of its own: no transform of it is cached yet
        return jnp.sum((jnp.dot(x, w) - y) ** 2)

    jitted = redraft.jit(redraft.vmap(redraft.grad(loss), in_axes=(None, 0, 0)))
    staged = jitted(w, xs, ys)
    assert loaded == []
    eager = redraft.vmap(redraft.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    assert loaded  # run eagerly, the generated functions are loaded and called
    np.testing.assert_allclose(np.asarray(staged), np.asarray(eager), rtol=1e-5, atol=1e-6)


def test_a_loaded_transform_carries_the_core_it_was_printed_from():
    def f(x):
        return jnp.sum(jnp.sin(x))

    made = callees.vjp_of(f, (True,), "grad")
    core = made.__redraft_transformable__()
    assert made.fn.__redraft_transformable__() is core
    assert made.__redraft_transformable__() is core
    np.testing.assert_allclose(np.asarray(made(np.ones(2, np.float32))[0]),
                               np.cos(np.ones(2)), rtol=1e-6)


def test_a_callees_batch_types_are_analysed_once_without_recursion(monkeypatch):
    analysed = _counting(monkeypatch, infer, "infer")
    w, xs, ys = _data()

    def loss(w, x, y):
        return jnp.sum(jnp.tanh(jnp.dot(x, w)) * y)

    redraft.jit(redraft.vmap(redraft.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys)
    names = [(core.name, core) for core in analysed]
    assert len({id(core) for _, core in names}) == len(names)  # no Core analysed twice


def test_recursive_callees_still_settle():
    def walk(x, n):
        if n == 0:
            return x
        return walk(jnp.sin(x), n - 1)

    xs = np.linspace(0.0, 1.0, 4).astype(np.float32)
    out = redraft.vmap(lambda x: walk(x, 3))(xs)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.sin(np.sin(xs))), rtol=1e-6)


def test_zeros_under_staging_are_a_broadcast_zero_and_stage_as_one(monkeypatch):
    made = []
    staged_zeros = ad._staged_zeros
    monkeypatch.setattr(ad, "_staged_zeros", lambda *a: made.append(staged_zeros(*a)) or made[-1])

    def f(x):
        return ad.zeros_like(x) + x

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ir_fn, _ = driver.stage(f, (jnp.asarray(x),), set())
    assert [z.shape for z in made] == [(2, 3)] and not any(made[0]._buf.strides)
    assert "broadcast_in_dim" in str(ir_fn)
    np.testing.assert_array_equal(np.asarray(redraft.jit(f)(x)), x)
    eager = ad.zeros_like(jnp.asarray(x))
    assert eager._buf.flags.c_contiguous and not eager._buf.any()
