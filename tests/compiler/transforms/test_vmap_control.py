"""Control flow on batched values: `if` runs both branches and selects per example (with no
NaN gradient from the branch not taken), `while` runs until every example is done, and lax's
cond/while_loop/fori_loop/scan/switch batch the same way; also the generated source."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import grad, lax, vmap

XS = jnp.asarray(np.array([4.0, -1.0, 9.0, 0.0], np.float32))


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def safe_sqrt(x):
    if x > 0:
        y = jnp.sqrt(x)
    else:
        y = x * 0.0
    return y


def doubling(x):
    while x < 10.0:
        x = x * 2.0
    return x


def steps_until(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n = n + 1
    return n


def nested(x):
    if x > 0:
        if x > 5:
            y = x * 10.0
        else:
            y = x * 2.0
    else:
        y = -x
    return y


def loop_with_inner_if(x):
    acc = 0.0
    for i in range(4):
        if x > i:
            acc = acc + x
        else:
            acc = acc - 1.0
    return acc


def _sqrt_branch(x):
    return jnp.sqrt(x)


def _zero_branch(x):
    return x * 0.0


def lax_safe_sqrt(x):
    return lax.cond(x > 0, _sqrt_branch, _zero_branch, x)


def test_batched_if_selects_per_example():
    close(vmap(safe_sqrt)(XS), [2.0, 0.0, 3.0, 0.0])


def test_batched_if_has_no_nan_gradient_from_the_branch_not_taken():
    per_example = vmap(grad(safe_sqrt))(XS)
    close(per_example, [0.25, 0.0, 1 / 6, 0.0])
    total = grad(lambda x: jnp.sum(vmap(safe_sqrt)(x)))(XS)
    close(total, [0.25, 0.0, 1 / 6, 0.0])
    assert np.all(np.isfinite(np.asarray(total)))


def test_lax_cond_batched_and_its_gradients_stay_finite():
    close(vmap(lax_safe_sqrt)(XS), [2.0, 0.0, 3.0, 0.0])
    g = grad(lambda x: jnp.sum(vmap(lax_safe_sqrt)(x)))(XS)
    assert np.all(np.isfinite(np.asarray(g)))
    close(g, [0.25, 0.0, 1 / 6, 0.0])


def test_nested_batched_ifs():
    xs = jnp.asarray(np.array([7.0, 2.0, -3.0], np.float32))
    close(vmap(nested)(xs), [70.0, 4.0, 3.0])


def test_for_loop_with_a_batched_if_inside():
    xs = jnp.asarray(np.array([0.5, 2.5, 5.0], np.float32))
    want = [loop_with_inner_if(float(x)) for x in np.asarray(xs)]
    close(vmap(loop_with_inner_if)(xs), want)


def test_batched_while_runs_until_every_example_is_done():
    xs = jnp.asarray(np.array([1.0, 3.0, 20.0], np.float32))
    close(vmap(doubling)(xs), [16.0, 12.0, 20.0])
    counts = vmap(steps_until)(jnp.asarray(np.array([1.0, 8.0, 3.0], np.float32)))
    assert np.asarray(counts).tolist() == [0, 3, 2]


def test_gradients_through_a_batched_while():
    xs = jnp.asarray(np.array([1.0, 3.0, 20.0], np.float32))
    close(vmap(grad(doubling))(xs), [16.0, 4.0, 1.0])
    close(grad(lambda x: jnp.sum(vmap(doubling)(x)))(xs), [16.0, 4.0, 1.0])


def test_batched_if_source_runs_both_branches_and_selects():
    source = redraft.emit(safe_sqrt, "vmap")
    assert "vm.select(" in source and "jnp.sqrt(" in source and "if " not in source.split(
        "def safe_sqrt_batched")[1].split("def safe_sqrt_vmap")[0]


def test_batched_while_source_masks_finished_examples():
    source = redraft.emit(doubling, "vmap")
    assert "vm.any_example(" in source and "vm.select(" in source


def _body(i, x):
    return x * 1.5 + i


def _lt(x):
    return x < 10.0


def _twice(x):
    return x * 2.0


def _step(c, x):
    return c + x, c * x


def _b0(x):
    return x + 1.0


def _b1(x):
    return x * 10.0


def test_lax_loops_batched():
    xs = jnp.asarray(np.array([1.0, 3.0, 20.0], np.float32))
    close(vmap(lambda x: lax.fori_loop(0, 3, _body, x))(xs),
          [lax.fori_loop(0, 3, _body, float(x)) for x in np.asarray(xs)])
    close(vmap(lambda x: lax.while_loop(_lt, _twice, x))(xs), [16.0, 12.0, 20.0])
    m = jnp.arange(12.0).reshape(3, 4)
    carry, ys = vmap(lambda row: lax.scan(_step, 0.0, row))(m)
    for i in range(3):
        c, y = lax.scan(_step, 0.0, m[i])
        close(carry[i], c)
        close(ys[i], y)


def test_lax_switch_with_a_batched_index_runs_every_branch_and_selects():
    idx = jnp.asarray(np.array([0, 1, 5, -2], np.int32))
    xs = jnp.asarray(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    got = vmap(lambda i, x: lax.switch(i, [_b0, _b1], x))(idx, xs)
    close(got, [2.0, 20.0, 30.0, 5.0])


def _carry_step(c, x):
    return c + x * c, c * x


def scanned(xs):
    c, ys = lax.scan(_carry_step, 1.0, xs)
    return c + jnp.sum(ys)


def test_gradients_of_a_batched_scan_both_ways():
    m = jnp.asarray(np.random.RandomState(0).rand(3, 4).astype(np.float32))
    want = np.stack([np.asarray(grad(scanned)(m[i])) for i in range(3)])
    close(vmap(grad(scanned))(m), want, rtol=1e-5)
    close(grad(lambda a: jnp.sum(vmap(scanned)(a)))(m), want, rtol=1e-5)


_BRANCHES = [lambda v: v + 1, lambda v: v * 2, lambda v: -v]


def _switch_of_listed_lambdas(i, v):
    return lax.switch(i, _BRANCHES, v)


def test_switch_over_a_list_of_lambdas_batches_and_differentiates():
    # the generated source named a batched branch `<lambda>_batched`, which is no Python name
    i = jnp.array([0, 1, 2, 5])
    v = jnp.arange(4.0)
    got = redraft.vmap(_switch_of_listed_lambdas)(i, v)
    np.testing.assert_allclose(np.asarray(got), [1.0, 2.0, -2.0, -3.0])
    g = redraft.vmap(redraft.grad(_switch_of_listed_lambdas, argnums=1))(i, v)
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0, -1.0, -1.0])
