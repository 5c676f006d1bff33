"""jit: staging Core into SSA IR, caching per signature, control flow on run-time values,
print at run time, errors at the user's line. Results must equal eager execution."""
import io
import threading
from contextlib import redirect_stdout

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import grad, jit, tree_util
from redraft.runtime.errors import NonConcreteBooleanIndexError

from . import jit_functions as fns

RNG = np.random.default_rng(0)


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn, args", [
    (fns.selu, (jnp.array(RNG.standard_normal(50)),)),
    (fns.decay, (jnp.array(RNG.random((4, 5))),)),
    (fns.halve_until_small, (jnp.ones(3),)),
    (fns.branch_on_value, (jnp.array([1.0, 2.0]),)),
    (fns.branch_on_value, (jnp.array([-1.0, -2.0]),)),
    (fns.loop_index_used, (jnp.arange(3.0),)),
    (fns.loop_over_rows, (jnp.array(RNG.random((4, 3))),)),
    (fns.shape_arithmetic, (jnp.ones((2, 3)),)),
    (fns.calls_inner, (jnp.arange(4.0),)),
    (fns.fori, (jnp.arange(3.0),)),
    (fns.sum_logistic, (jnp.arange(3.0),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_jit_matches_eager(fn, args):
    expected = tree_util.tree_leaves(fn(*args))
    actual = tree_util.tree_leaves(jit(fn)(*args))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        close(a, e)


def test_loops_stay_loops_in_the_ir():
    text = str(redraft.make_jaxpr(fns.decay)(jnp.ones(3)))
    assert text.count(" for ") == 1 and text.count("mul") == 1, text
    text = str(redraft.make_jaxpr(fns.halve_until_small)(jnp.ones(3)))
    assert " while " in text, text


def test_branch_on_run_time_value_is_a_cond():
    text = str(redraft.make_jaxpr(fns.branch_on_value)(jnp.ones(3)))
    assert " cond " in text and "exp" in text, text


def test_python_bool_argument_compiles_to_a_branch():
    f = jit(fns.sign_branch)
    r = f(1, True)
    assert int(r) == -1 and repr(r) == "Array(-1, dtype=int32, weak_type=True)"
    assert int(f(1, False)) == 1
    assert f.cache_size == 1  # both calls share the signature (i32~, bool)


def test_same_signature_compiles_once_new_one_recompiles(monkeypatch, capsys):
    monkeypatch.setenv("REDRAFT_LOG_COMPILES", "1")
    f = jit(fns.selu)
    f(jnp.ones(3))
    f(jnp.zeros(3))
    assert f.cache_size == 1
    f(jnp.ones(4))
    assert f.cache_size == 2
    err = capsys.readouterr().err
    assert err.count("redraft: compiling selu") == 2 and "new signature" in err


def test_threads_that_call_a_new_function_at_once_compile_it_once(monkeypatch, capsys):
    """pmap's devices call a jitted body together on its first call: one thread compiles,
    the others wait for it (two compilations would race in LLVM and drop one's code)."""
    monkeypatch.setenv("REDRAFT_LOG_COMPILES", "1")
    f = jit(fns.selu)
    start = threading.Barrier(4)
    results = [None] * 4

    def call(i):
        start.wait()
        results[i] = np.asarray(f(jnp.full(5, float(i) - 1.5)))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert capsys.readouterr().err.count("redraft: compiling selu") == 1
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, np.asarray(fns.selu(jnp.full(5, float(i) - 1.5))),
                                   rtol=1e-6)


def test_static_arguments():
    f = jit(fns.static_power, static_argnums=(1,))
    close(f(jnp.arange(3.0), 3), np.arange(3.0) ** 3)
    close(f(jnp.arange(3.0), 2), np.arange(3.0) ** 2)
    assert f.cache_size == 2
    g = jit(fns.static_power, static_argnames="n")
    close(g(jnp.arange(3.0), n=2), np.arange(3.0) ** 2)
    with pytest.raises(ValueError, match="hashable"):
        jit(fns.sign_branch, static_argnums=1)(1.0, [1])


def test_pytrees_in_and_out():
    params = {"w": jnp.array(RNG.random((3, 2))), "b": jnp.array(RNG.random(2))}
    x = jnp.array(RNG.random((4, 3)))
    out = jit(fns.pytree_in_out)(params, x)
    ref = fns.pytree_in_out(params, x)
    assert set(out) == {"h", "norm"}
    close(out["h"], ref["h"])
    close(out["norm"], ref["norm"])


def test_print_happens_at_run_time_every_call():
    f = jit(fns.prints)
    x, y = np.ones((3, 4), np.float32), np.ones(4, np.float32)
    for _ in range(2):
        buf = io.StringIO()
        with redirect_stdout(buf):
            out = f(x, y)
        assert "Running f():" in buf.getvalue() and "  x = [[1. 1. 1. 1.]" in buf.getvalue()
        assert "result = [16. 16. 16.]" in buf.getvalue()
    close(out, (x + 1) @ (y + 1))


def test_boolean_mask_raises_jax_error_at_user_line():
    with pytest.raises(NonConcreteBooleanIndexError, match=r"jit_functions.py:\d+"):
        jit(fns.get_negatives)(jnp.array([1.0, -2.0]))


def test_grad_of_jit_and_jit_of_grad():
    x = jnp.arange(3.0)
    expected = grad(fns.sum_logistic)(x)
    close(grad(jit(fns.sum_logistic))(x), expected)
    close(jit(grad(fns.sum_logistic))(x), expected)
    close(grad(jit(grad(jit(grad(fns.sum_logistic)))))(1.0), -0.0353256, rtol=1e-4)


def test_python_scalars_and_numpy_arrays_take_the_fast_path_with_slow_path_results():
    f = jit(fns.selu)
    x64 = np.linspace(-2.0, 2.0, 5)  # float64: converted to float32 as the slow path does
    first = f(x64)
    again = f(x64)
    assert f.cache_size == 1 and len(f._fast) == 1
    assert again.dtype == np.float32 and np.array_equal(np.asarray(first), np.asarray(again))
    np.testing.assert_allclose(np.asarray(again), np.asarray(fns.selu(jnp.asarray(x64))),
                               rtol=1e-6)
    g = jit(fns.sign_branch)
    assert int(g(3, True)) == -3 and int(g(4, True)) == -4 and int(g(4, False)) == 4
    r = g(5, True)
    assert repr(r) == "Array(-5, dtype=int32, weak_type=True)" and g.cache_size == 1
    h = jit(fns.decay)
    assert float(h(2.0)) == float(h(jnp.float32(2.0))) and h.cache_size == 2  # weak, strong
    assert h(2.5).weak_type and float(h(2.5)) == pytest.approx(fns.decay(2.5), rel=1e-6)
    assert h.cache_size == 2


def test_an_int_beyond_int32_is_refused_on_every_call():
    g = jit(fns.sign_branch)
    g(1, True)
    for _ in range(2):
        with pytest.raises(OverflowError):
            g(2 ** 40, True)


def test_a_transform_of_a_jitted_function_is_compiled_once():
    inner = jit(grad(jit(grad(fns.sum_logistic))))
    outer = grad(inner)
    assert float(outer(1.0)) == pytest.approx(-0.0353256, rel=1e-4)
    assert float(outer(0.5)) == pytest.approx(float(grad(grad(grad(fns.sum_logistic)))(0.5)),
                                              rel=1e-5)
    with pytest.raises(TypeError, match="real- or complex-valued"):
        outer(jnp.asarray(1))


def test_nested_jit_is_inlined():
    g = jit(fns.inner)

    def outer(x):  # not read as source: calls g, which is staged into outer's IR
        return g(x) + 1.0
    close(jit(fns.calls_inner)(jnp.ones(2)), fns.calls_inner(jnp.ones(2)))
    assert g(jnp.ones(2)).shape == (2,)
    del outer


def test_lower_and_make_ir_print_the_ir():
    text = jit(fns.selu).lower(jnp.ones(3)).as_text()
    assert text.startswith("{ lambda selu ;") and "exp" in text and "select" in text
    assert str(redraft.make_ir(fns.selu)(jnp.ones(3))) == str(
        redraft.make_jaxpr(fns.selu)(jnp.ones(3)))


def test_shape_mismatch_between_branches_names_the_variable():
    def f(x):
        return x
    with pytest.raises(TypeError, match="has shape"):
        jit(_mismatched_branches)(jnp.ones(3))
    del f


def _mismatched_branches(x):
    if x.sum() > 0:
        y = x
    else:
        y = x[:2]
    return y


def test_while_condition_joined_by_and_of_run_time_values():
    """`while a > tol and i < n:` on run-time values: the condition's block holds a staged
    branch, whose merged value the loop reads after the block (it was dropped as dead)."""
    def newton_sqrt(a):
        x = a
        i = 0
        while jnp.abs(x * x - a) > 1e-5 and i < 50:
            x = 0.5 * (x + a / x)
            i += 1
        return x
    np.testing.assert_allclose(jit(newton_sqrt)(2.0), np.sqrt(2.0), rtol=1e-5)
    np.testing.assert_allclose(jit(newton_sqrt)(9.0), newton_sqrt(9.0), rtol=1e-6)


def test_lower_then_compile_calls_with_the_lowered_signature():
    """jit(f).lower(*args).compile() as in JAX: called with the non-static arguments of the
    lowered shapes and dtypes; other shapes raise TypeError."""
    compiled = jit(lambda x, n: x * n, static_argnums=1).lower(jnp.ones(3), 3).compile()
    np.testing.assert_allclose(compiled(jnp.arange(3.0)), [0.0, 3.0, 6.0])
    assert "mul" in compiled.as_text()
    with pytest.raises(TypeError, match="lowered for other"):
        compiled(jnp.ones(4))


def test_fori_loop_and_range_with_a_run_time_bound():
    """lax.fori_loop(0, n, ...) and `for i in range(1, n)` with n only known when the code
    runs stage as while loops on a counter (as JAX turns such a fori_loop into a
    while_loop), forward-differentiable."""
    def doubling(n, x):
        return redraft.lax.fori_loop(0, n, lambda i, v: v * 2 + i, x)

    def partial_sums(n, x):
        s = x
        for i in range(1, n):
            s = s + i * x
        return s
    for n in (0, 1, 3):
        np.testing.assert_allclose(jit(doubling)(n, 1.0), doubling(n, 1.0))
        np.testing.assert_allclose(jit(partial_sums)(n + 1, 2.0), partial_sums(n + 1, 2.0))
    _, slope = redraft.jvp(lambda x: jit(doubling)(3, x), (1.0,), (1.0,))
    np.testing.assert_allclose(slope, 8.0)


def test_linspace_with_an_end_known_only_at_run_time():
    for args, kwargs in ((2.0,), {}), ((jnp.array([1.0, 2.0]),), {"endpoint": False}), (
            (jnp.array([1.0, 2.0]),), {"axis": -1}):
        a = args[0]
        got = jit(lambda a: jnp.linspace(a, 3 * a, 4, **kwargs))(a)
        np.testing.assert_allclose(got, np.linspace(np.asarray(a), 3 * np.asarray(a), 4,
                                                    **kwargs), rtol=1e-6)


def _steps(x, n=4):
    return redraft.lax.fori_loop(0, n, lambda i, c: c * 2.0, x) + jnp.zeros(n).sum()


def _scanned(x, length=3):
    return redraft.lax.scan(lambda c, _: (c + 1.0, c), x, None, length=length)


def test_a_default_the_caller_leaves_out_stays_a_python_value():
    # as in JAX, jit traces only what the call passes: `length=n` and `jnp.zeros(n)` of a
    # defaulted n need a compile-time int
    close(jit(_steps)(1.0), 16.0)
    close(jit(_steps, static_argnums=1)(1.0, 2), 4.0)  # passed: traced unless static
    carry, ys = jit(_scanned)(jnp.float32(0.0))
    close(carry, 3.0)
    close(ys, [0.0, 1.0, 2.0])
