"""pmap over 2 local CPU devices with collectives, grad and jit, against NumPy."""
import threading

import numpy as np
import pytest
from redraft.runtime.collectives import CollectiveError

import redraft
import redraft.numpy as jnp
from redraft import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3) - 2.0


@pytest.fixture(autouse=True)
def two_devices(monkeypatch):
    monkeypatch.setenv("REDRAFT_NUM_CPU_DEVICES", "2")


def test_two_cpu_devices_from_the_environment():
    assert redraft.local_device_count("cpu") == 2 == redraft.device_count("cpu")
    assert [d.id for d in redraft.local_devices(backend="cpu")] == [0, 1]
    assert redraft.process_index() == 0 and redraft.process_count() == 1


def _psum(v):
    return lax.psum(v, "i")


def _pmean_max_min(v):
    return lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i")


def _gather(v):
    return lax.all_gather(v, "i"), lax.all_gather(v, "i", axis=1), lax.all_gather(
        v, "i", tiled=True)


def _rotate(v):
    return lax.ppermute(v, "i", [(0, 1), (1, 0)]) + 10.0 * lax.axis_index("i")


def _scatter(v):
    return lax.psum_scatter(jnp.stack([v, 2.0 * v]), "i")


def test_reductions_match_numpy():
    np.testing.assert_allclose(redraft.pmap(_psum, axis_name="i")(X), [X.sum(0)] * 2)
    mean, hi, lo = redraft.pmap(_pmean_max_min, axis_name="i")(X)
    np.testing.assert_allclose(mean, [X.mean(0)] * 2)
    np.testing.assert_allclose(hi, [X.max(0)] * 2)
    np.testing.assert_allclose(lo, [X.min(0)] * 2)


def test_all_gather_ppermute_axis_index_psum_scatter():
    stacked, along1, tiled = redraft.pmap(_gather, axis_name="i")(X)
    np.testing.assert_allclose(stacked, [X] * 2)
    np.testing.assert_allclose(along1, [X.T] * 2)
    np.testing.assert_allclose(tiled, [X.reshape(-1)] * 2)
    np.testing.assert_allclose(redraft.pmap(_rotate, axis_name="i")(X),
                               X[::-1] + np.array([[0.0], [10.0]]))
    both = np.stack([X, 2 * X], axis=1).sum(0)  # the psum of each device's stack
    np.testing.assert_allclose(redraft.pmap(_scatter, axis_name="i")(X), both)


def _scale(w, x):
    return w * x


def test_in_axes_out_axes_and_static_arguments():
    f = redraft.pmap(_scale, axis_name="i", in_axes=(None, 1), out_axes=1)
    np.testing.assert_allclose(f(np.float32(3.0), X.T), 3.0 * X.T)

    def power(x, k):
        return x ** k
    g = redraft.pmap(power, axis_name="i", static_broadcasted_argnums=1)
    np.testing.assert_allclose(g(X, 3), X ** 3, rtol=1e-6)


def _loss(w, x):
    return lax.psum(jnp.sum(jnp.sin(w * x)), "i")


def test_pmap_of_grad_transposes_psum_into_psum():
    g = redraft.pmap(redraft.grad(_loss), axis_name="i", in_axes=(None, 0))(np.float32(0.5), X)
    local = np.sum(X * np.cos(0.5 * X), axis=1)
    np.testing.assert_allclose(g, 2.0 * local, rtol=1e-5)  # psum(ones) = 2 per device


def _mixed(w, x):
    gathered = lax.all_gather(w * x, "i")
    return jnp.sum(gathered ** 2) + jnp.sum(lax.ppermute(w * x, "i", [(0, 1), (1, 0)]) * x)


def test_pmap_of_grad_through_all_gather_and_ppermute():
    g = redraft.pmap(redraft.grad(_mixed), axis_name="i", in_axes=(None, 0))(np.float32(0.5), X)
    # d/dw_i: both devices' sums reach device i's block (2 * 2 w x_i^2), and ppermute's
    # transpose sends device i the other device's x
    expected = 2 * 2 * 0.5 * (X ** 2).sum(1) + (X * X[::-1]).sum(1)
    np.testing.assert_allclose(g, expected, rtol=1e-5)


def _device_pmax(w, x):
    return lax.pmax(w * x, "i")


def test_pmap_of_grad_through_pmax_reaches_the_device_holding_the_max():
    x = np.array([[1.0, -2.0], [3.0, -1.0]], np.float32)
    g = redraft.pmap(redraft.grad(lambda w, x: jnp.sum(_device_pmax(w, x))), axis_name="i",
                     in_axes=(None, 0))(np.float32(1.5), x)
    # w * x = [1.5, -3] and [4.5, -1.5]: device 1 holds both maxima, and both devices'
    # copies of the sum (2 per element) reach it: 2 * (3 - 1)
    np.testing.assert_allclose(g, [0.0, 4.0], rtol=1e-6)


def _device_mean(w, x):
    return lax.pmean(jnp.sin(w * x), "i")


_MAPPED_MEAN = redraft.pmap(_device_mean, axis_name="i", in_axes=(None, 0))


def _total(w):
    return jnp.sum(_MAPPED_MEAN(w, X))


def _indexed(w, x):
    return jnp.sin(w * x) * lax.axis_index("i")


_MAPPED_INDEXED = redraft.pmap(_indexed, axis_name="i")


def _total_indexed(w):
    return jnp.sum(_MAPPED_INDEXED(w, X))


def test_grad_of_a_pmapped_loss():
    w = np.float32(0.5)
    expected = 2.0 * np.sum(np.mean(X * np.cos(w * X), axis=0))  # both rows hold the mean
    np.testing.assert_allclose(redraft.grad(_total)(w), expected, rtol=1e-5)
    eps = 1e-3
    fd = (float(_total(np.float64(w + eps))) - float(_total(np.float64(w - eps)))) / (2 * eps)
    np.testing.assert_allclose(redraft.grad(_total)(w), fd, rtol=1e-3)
    ws = np.array([0.5, 0.25], np.float32)
    np.testing.assert_allclose(redraft.grad(_total_indexed)(ws),
                               [0.0, np.sum(X[1] * np.cos(0.25 * X[1]))], rtol=1e-5)


@redraft.jit
def _compiled_step(w, x):
    g = redraft.grad(_loss)(w, x)
    return w - 0.1 * g, lax.axis_index("i")


def test_jit_of_the_per_device_body_with_grad_and_collectives():
    w, index = redraft.pmap(_compiled_step, axis_name="i", in_axes=(None, 0))(np.float32(0.5), X)
    local = np.sum(X * np.cos(0.5 * X), axis=1)
    np.testing.assert_allclose(w, 0.5 - 0.1 * 2.0 * local, rtol=1e-5)
    np.testing.assert_array_equal(index, [0, 1])


def _batched_psum(v):
    return redraft.vmap(lambda row: lax.psum(row, "i") * 2.0)(v)


def test_vmap_inside_pmap_carries_the_batch_axis():
    x = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(redraft.pmap(_batched_psum, axis_name="i")(x),
                               [2.0 * x.sum(0)] * 2)


def test_unbound_axis_name_and_mismatched_sizes_are_clear_errors():
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        redraft.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(X, "i")
    with pytest.raises(ValueError, match="only 2 local devices"):
        redraft.pmap(_psum, axis_name="i")(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        redraft.pmap(_scale, axis_name="i")(np.zeros(2, np.float32), np.zeros(1, np.float32))


def _fails_on_device_1(v):
    if lax.axis_index("i") == 1:
        raise RuntimeError("device 1 broke")
    return lax.psum(v, "i")


def test_a_failing_participant_stops_the_others(monkeypatch):
    with pytest.raises(RuntimeError, match="device 1 broke"):
        redraft.pmap(_fails_on_device_1, axis_name="i")(X)
    assert threading.active_count() < 10  # no participant left waiting


def _skips_the_collective(v):
    if lax.axis_index("i") == 1:
        return v
    return lax.psum(v, "i")


def test_a_participant_that_never_arrives_times_out(monkeypatch):
    monkeypatch.setenv("REDRAFT_COLLECTIVE_TIMEOUT", "0.5")
    with pytest.raises(CollectiveError, match="timed out"):
        redraft.pmap(_skips_the_collective, axis_name="i")(X)


def _every_collective(v):
    return (lax.all_gather(v, "i"), lax.ppermute(v[1:], "i", [(0, 1)]),
            lax.pmax(jnp.sum(v), "i"), lax.psum_scatter(jnp.stack([v, 2.0 * v]), "i"),
            lax.pmean(v * v, "i"), lax.axis_index("i"))


def test_compiled_body_calls_the_runtime_at_each_collective(monkeypatch):
    monkeypatch.setenv("REDRAFT_LLVM_STRICT", "2")  # no fallback to the interpreter
    compiled = redraft.jit(_every_collective)
    gathered, shifted, hi, scattered, mean, index = redraft.pmap(compiled, axis_name="i")(X)
    np.testing.assert_allclose(gathered, [X] * 2)
    np.testing.assert_allclose(shifted, [np.zeros(2), X[0, 1:]])
    np.testing.assert_allclose(hi, [X.sum(1).max()] * 2)
    np.testing.assert_allclose(scattered, np.stack([X, 2 * X], axis=1).sum(0))
    np.testing.assert_allclose(mean, [(X * X).mean(0)] * 2, rtol=1e-6)
    np.testing.assert_array_equal(index, [0, 1])
    from redraft.runtime import collectives as rc
    with rc.bound(rc.AxisFrame("i", 2, 0, 0, rc.Group(2))):  # staging reads the axis size
        lowered = redraft.jit(_every_collective).lower(X[0])
    assert lowered.compiled.backend == "llvm"
    assert "psum_scatter" in lowered.as_text() and "axis_index" in lowered.as_text()


def test_collectives_are_never_folded_merged_or_dropped():
    from redraft.compiler.ir.passes.common import has_effects
    from redraft.compiler.ir.ssa import Eqn
    from redraft.compiler.primitives.collectives import axis_index_p, psum_p
    for prim in (psum_p, axis_index_p):
        assert has_effects(Eqn(prim, [], [], {}, [], None))


def _tangent(v, t):
    return redraft.jvp(lambda u: lax.psum(jnp.sin(u), "i"), (v,), (t,))


def test_pmap_of_jvp_pushes_tangents_through_psum():
    out, tangent = redraft.pmap(_tangent, axis_name="i")(X, np.ones_like(X))
    np.testing.assert_allclose(out, [np.sin(X).sum(0)] * 2, rtol=1e-6)
    np.testing.assert_allclose(tangent, [np.cos(X).sum(0)] * 2, rtol=1e-6)


def _normalised(v):
    return v / lax.psum(v, "i") + lax.pmax(v, "i") * lax.axis_index("i")


def test_vmap_with_an_axis_name_runs_the_collectives_over_the_examples():
    x = np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3)
    out = redraft.vmap(_normalised, axis_name="i")(x)
    np.testing.assert_allclose(out, x / x.sum(0) + x.max(0) * np.arange(4)[:, None], rtol=1e-6)
    # the same function over 2 devices and over 2 examples agrees
    np.testing.assert_allclose(redraft.vmap(_normalised, axis_name="i")(X + 3.0),
                               redraft.pmap(_normalised, axis_name="i")(X + 3.0), rtol=1e-6)
    gathered = redraft.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(gathered, [x] * 4)


_SHARE = redraft.vmap(lambda w, v: jnp.sin(w * v) * lax.pmean(v, "i"), axis_name="i",
                      in_axes=(None, 0))
_ROWS = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2)


def _share_loss(w):
    return jnp.sum(_SHARE(w, _ROWS))


def test_grad_through_a_named_vmap_against_numpy():
    w = np.float32(0.3)
    expected = np.sum(_ROWS * np.cos(w * _ROWS) * _ROWS.mean(0))
    np.testing.assert_allclose(redraft.grad(_share_loss)(w), expected, rtol=1e-5)


def _squares(v):
    return lax.psum(v * v, "i")


_ALONG_1 = redraft.pmap(_squares, axis_name="i", in_axes=1, out_axes=1)
_REPLICATED = redraft.pmap(_squares, axis_name="i", out_axes=None)


def _weighted(v):
    return jnp.sum(_ALONG_1(v) * jnp.arange(2.0))


def _replicated_total(v):
    return jnp.sum(_REPLICATED(v))


def test_grad_through_a_pmap_mapped_along_axis_1():
    # every device's output column holds the sum of squares; only column 1 is weighted
    np.testing.assert_allclose(redraft.grad(_weighted)(X.T), 2 * X.T, rtol=1e-6)


def test_grad_through_replicated_outputs_says_what_to_do_instead():
    np.testing.assert_allclose(_REPLICATED(X), (X * X).sum(0))
    with pytest.raises(NotImplementedError, match="out_axes=None"):
        redraft.grad(_replicated_total)(X)


def _two_axes(v):
    return (lax.psum(v, "j") + 100 * lax.psum(v, "i") + 1000 * lax.axis_index("i")
            + 10000 * lax.axis_index("j"))


def test_nested_pmaps_bind_both_axis_names(monkeypatch):
    monkeypatch.setenv("REDRAFT_NUM_CPU_DEVICES", "4")
    x = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)
    out = redraft.pmap(redraft.pmap(_two_axes, axis_name="j"), axis_name="i")(x)
    expected = (x.sum(1, keepdims=True) + 100 * x.sum(0, keepdims=True)
                + 1000 * np.arange(2)[:, None, None] + 10000 * np.arange(2)[None, :, None])
    np.testing.assert_allclose(out, expected)


def _transpose_blocks(v):
    return lax.all_to_all(v, "i", 0, 0), lax.all_to_all(v, "i", 0, 1, tiled=True)


def test_all_to_all_sends_block_j_to_device_j_eager_and_compiled():
    x = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)  # device, block, item
    for f in (_transpose_blocks, redraft.jit(_transpose_blocks)):
        stacked, tiled = redraft.pmap(f, axis_name="i")(x)
        np.testing.assert_allclose(stacked, np.swapaxes(x, 0, 1))
        # tiled: device i concatenates along axis 1 its rows (1 x 2) from devices 0 and 1
        np.testing.assert_allclose(tiled, [np.concatenate([x[j, i:i + 1] for j in range(2)], 1)
                                           for i in range(2)])


def _scrambled(w, v):
    return jnp.sum(lax.all_to_all(w * v, "i", 0, 0) * jnp.arange(4.0).reshape(2, 2))


def test_grad_through_all_to_all_is_all_to_all_back():
    x = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)
    g = redraft.pmap(redraft.grad(_scrambled), axis_name="i", in_axes=(None, 0))(
        np.float32(1.0), x)
    weights = np.arange(4.0).reshape(2, 2)
    # device i's block j lands on device j at row i, weighted there by weights[i]
    expected = [sum(np.sum(x[i, j] * weights[i]) for j in range(2)) for i in range(2)]
    np.testing.assert_allclose(g, expected, rtol=1e-6)


# ---- axis_index_groups and jit(pmap) ---------------------------------------------------------

GROUPS = [[0, 2], [1, 3]]
X4 = np.arange(12.0, dtype=np.float32).reshape(4, 3) - 5.0


def _group_rows(values: np.ndarray) -> np.ndarray:
    """Row i: the rows of device i's group, in group order (the grouped all_gather)."""
    return np.stack([values[g] for i in range(4) for g in GROUPS if i in g])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_grouped_collectives_reduce_within_each_group(monkeypatch, compiled):
    monkeypatch.setenv("REDRAFT_NUM_CPU_DEVICES", "4")
    wrap = redraft.jit if compiled else (lambda f: f)

    def body(v):
        g = GROUPS
        return (lax.psum(v, "i", axis_index_groups=g), lax.pmean(v, "i", axis_index_groups=g),
                lax.pmax(v, "i", axis_index_groups=g), lax.pmin(v, "i", axis_index_groups=g),
                lax.all_gather(v, "i", axis_index_groups=g),
                lax.psum_scatter(jnp.stack([v, 2.0 * v]), "i", axis_index_groups=g))
    total, mean, hi, lo, gathered, scattered = redraft.pmap(wrap(body), "i")(X4)
    rows = _group_rows(X4)
    np.testing.assert_allclose(total, rows.sum(1))
    np.testing.assert_allclose(mean, rows.mean(1), rtol=1e-6)
    np.testing.assert_allclose(hi, rows.max(1))
    np.testing.assert_allclose(lo, rows.min(1))
    np.testing.assert_allclose(gathered, rows)
    position = [g.index(i) for i in range(4) for g in GROUPS if i in g]
    np.testing.assert_allclose(scattered, [(1.0 + p) * rows[i].sum(0)
                                           for i, p in enumerate(position)])


def test_grad_through_grouped_collectives_against_finite_differences(monkeypatch):
    """psum's transpose keeps the groups; all_gather's is psum_scatter within the group."""
    monkeypatch.setenv("REDRAFT_NUM_CPU_DEVICES", "4")

    def loss(v):
        s = lax.psum(v, "i", axis_index_groups=GROUPS)
        g = lax.all_gather(jnp.sin(v), "i", axis_index_groups=GROUPS)
        return jnp.sum(s * v) + jnp.sum(g ** 2)
    grads = np.asarray(redraft.pmap(redraft.grad(loss), "i")(X4))
    rows = _group_rows(X4)
    # d/dv_i: 2 * (the group's sum) + 2 * (group size) * sin(v_i) cos(v_i)
    expected = 2.0 * rows.sum(1) + 2.0 * 2 * np.sin(X4) * np.cos(X4)
    np.testing.assert_allclose(grads, expected, rtol=1e-5, atol=1e-5)


def test_axis_index_groups_must_partition_the_axis(monkeypatch):
    monkeypatch.setenv("REDRAFT_NUM_CPU_DEVICES", "4")
    with pytest.raises(ValueError, match="exactly once"):
        redraft.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]), "i")(X4)
    with pytest.raises(ValueError, match="same size"):
        redraft.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0], [1, 2, 3]]), "i")(X4)


def test_jit_of_pmap_is_pmap_of_the_compiled_body():
    f = redraft.pmap(lambda v: v * lax.psum(v, "i"), axis_name="i")
    np.testing.assert_allclose(redraft.jit(f)(X), X * X.sum(0))
    assert isinstance(redraft.jit(f), type(f))


def test_pmap_called_inside_a_jitted_function_says_what_to_write():
    f = redraft.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    with pytest.raises(NotImplementedError, match=r"jit\(pmap\(f\)\)"):
        redraft.jit(lambda v: f(v) + 1.0)(X)


def test_jvp_of_a_pmapped_function_is_a_pmap_of_jvp():
    f = redraft.pmap(lambda v: jnp.sin(v) * lax.psum(v, "i"), axis_name="i")
    t = np.full_like(X, 0.5)
    out, dot = redraft.jvp(f, (jnp.asarray(X),), (jnp.asarray(t),))
    eps = 1e-2
    x64, t64 = X.astype(np.float64), t.astype(np.float64)

    def f64(v):
        return np.sin(v) * v.sum(0)
    fd = (f64(x64 + eps * t64) - f64(x64 - eps * t64)) / (2 * eps)
    np.testing.assert_allclose(out, f64(x64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dot, fd, rtol=1e-3, atol=1e-4)
    # inside a function being differentiated in forward mode, and against reverse mode
    _, dot2 = redraft.jvp(lambda v: 2.0 * f(v), (jnp.asarray(X),), (jnp.asarray(t),))
    np.testing.assert_allclose(dot2, 2.0 * np.asarray(dot), rtol=1e-6)
    g = redraft.grad(lambda v: jnp.sum(f(v)))(jnp.asarray(X))
    _, along = redraft.jvp(lambda v: jnp.sum(f(v)), (jnp.asarray(X),), (jnp.asarray(t),))
    np.testing.assert_allclose(along, np.sum(np.asarray(g) * t), rtol=1e-5)
