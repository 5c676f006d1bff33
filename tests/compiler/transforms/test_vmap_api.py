"""redraft.vmap's interface: in_axes/out_axes in every form JAX takes, axis_size, keyword
arguments, per-example shapes, the errors JAX users know, and the source it prints."""
import subprocess
import sys

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import vmap

RNG = np.random.RandomState(2)
MAT = jnp.asarray(RNG.randn(5, 3).astype(np.float32))
XS = jnp.asarray(RNG.randn(4, 3).astype(np.float32))


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def apply_matrix(x):
    return jnp.dot(MAT, x)


def per_example_shapes(x):
    return jnp.zeros(()) + x.shape[0] * 100 + len(x) * 10 + x.ndim


def reduce_first_axis(x):
    return jnp.sum(x, axis=0)


def test_in_axes_and_out_axes_place_the_batch_axis():
    want = np.asarray(XS) @ np.asarray(MAT).T
    close(vmap(apply_matrix)(XS), want)
    close(vmap(apply_matrix, in_axes=1)(XS.T), want)
    close(vmap(apply_matrix, in_axes=-1, out_axes=-1)(XS.T), want.T)
    close(vmap(apply_matrix, out_axes=1)(XS), want.T)
    close(vmap(lambda m, v: jnp.dot(m, v), (None, 0))(MAT, XS), want)
    close(vmap(lambda m, v: jnp.dot(m, v), [None, 0])(MAT, XS), want)


def test_axis_size_with_no_mapped_argument_broadcasts():
    out = vmap(lambda x: x * 2.0, in_axes=None, axis_size=3)(jnp.ones(2))
    close(out, np.full((3, 2), 2.0))


def test_keyword_arguments_are_mapped_along_axis_0():
    f = lambda x, scale=1.0: x * scale
    scales = jnp.asarray(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    close(vmap(f)(XS, scale=scales), np.asarray(XS) * np.asarray(scales)[:, None])
    close(vmap(f)(XS), XS)


def test_shape_queries_see_one_example():
    out = vmap(per_example_shapes)(jnp.ones((4, 7, 2)))
    close(out, np.full(4, 7 * 100 + 7 * 10 + 2))


def test_pytree_in_axes_and_out_axes():
    def f(params, batch):
        x, y = batch
        return {"pred": jnp.dot(params["w"], x) - y, "w": params["w"]}
    params = {"w": jnp.asarray(RNG.randn(3).astype(np.float32))}
    ys = jnp.asarray(RNG.randn(4).astype(np.float32))
    out = vmap(f, in_axes=(None, (0, 0)), out_axes={"pred": 0, "w": None})(params, (XS, ys))
    close(out["pred"], np.asarray(XS) @ np.asarray(params["w"]) - np.asarray(ys))
    close(out["w"], params["w"])


def test_unmapped_results_broadcast_when_out_axes_is_an_int():
    out = vmap(lambda x, c: (x.sum(), c), in_axes=(0, None))(XS, jnp.float32(7.0))
    close(out[1], np.full(4, 7.0))


def test_inconsistent_sizes_name_the_arguments_and_their_sizes():
    with pytest.raises(ValueError) as info:
        vmap(lambda first, second: first + second)(XS, jnp.ones(5))
    message = str(info.value)
    assert "inconsistent sizes for array axes to be mapped" in message
    assert "axis 0 of argument first of type float32[4,3]" in message
    assert "size 5: axis 0 of argument second of type float32[5]" in message


def test_out_axes_none_for_a_mapped_result_says_why():
    with pytest.raises(ValueError, match="vmap has mapped output but out_axes is None"):
        vmap(lambda x: x * 2.0, out_axes=None)(XS)


def test_other_errors_jax_users_know():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=1"):
        vmap(apply_matrix, in_axes=(0, 0, 0))(XS)
    with pytest.raises(ValueError, match="its rank should be at least 3"):
        vmap(apply_matrix, in_axes=2)(XS)
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(apply_matrix, in_axes=None)(XS)
    with pytest.raises(TypeError, match="in_axes must be an int, None, or"):
        vmap(apply_matrix, in_axes=1.5)


def test_apply_matrix_batches_into_one_product_not_a_loop():
    source = redraft.emit(apply_matrix, "vmap")
    batched = source.split("def apply_matrix_vmap")[0]
    assert batched.count("vm.dot(") == 1
    assert "for " not in batched and "while " not in batched


def test_axis_arguments_move_past_the_batch_axis_in_the_source():
    source = redraft.emit(reduce_first_axis, "vmap")
    assert "jnp.sum(x, axis=1)" in source


def test_emit_with_in_axes_per_argument():
    source = redraft.emit(lambda m, v: jnp.dot(m, v), "vmap", in_axes=(None, 0))
    assert "vm.dot(m, v, a_batched=False, b_batched=True)" in source  # flags by keyword


def test_cli_prints_the_batched_source(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import redraft.numpy as jnp\n\n\ndef f(x, w):\n"
                    "    return jnp.sum(x * w, axis=0)\n")
    run = subprocess.run([sys.executable, "-m", "redraft.cli", "emit", f"{path}::f",
                          "--vmap", "0,None"], capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "def f_batched(x, w, axis_size):" in run.stdout
    assert "axis=1" in run.stdout




def _gamma_of_global_k(a):
    return redraft.random.gamma(k, a)  # noqa: F821 - the module global set below


def test_a_loop_batched_call_does_not_shadow_a_global_named_like_its_index():
    """vmap batches random.gamma by a loop over examples whose index was named `k`: it read
    the index in place of the user's global key `k`."""
    import redraft.random
    globals()["k"] = redraft.random.key(0)
    try:
        a = jnp.array([1.0, 2.0, 3.0])
        batched = redraft.vmap(_gamma_of_global_k)(a)
        one_by_one = [redraft.random.gamma(redraft.random.key(0), v) for v in (1.0, 2.0, 3.0)]
        np.testing.assert_array_equal(batched, np.stack(one_by_one))
    finally:
        del globals()["k"]


def _split_scale_join(x):
    parts = list(jnp.split(x, 3, axis=-1))
    parts[1] = parts[1] * 3.0
    return jnp.concatenate(parts, axis=-1)


def test_a_list_of_batched_arrays_into_a_looped_call_gives_each_example_its_items():
    """A list whose items are each batched (split's result, updated) is taken apart item by
    item when a call falls back to a loop over examples, not indexed as one array."""
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
    out = redraft.vmap(_split_scale_join)(jnp.asarray(x))
    np.testing.assert_allclose(out, [np.asarray(_split_scale_join(jnp.asarray(r))) for r in x])


def test_flip_without_an_axis_flips_every_example_axis_not_the_batch():
    x = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    out = redraft.vmap(lambda m: jnp.flip(m))(jnp.asarray(x))
    np.testing.assert_array_equal(out, [np.flip(m) for m in x])
    out = redraft.vmap(lambda m: jnp.flip(m, None))(jnp.asarray(x))
    np.testing.assert_array_equal(out, [np.flip(m) for m in x])
    out = redraft.vmap(lambda m: jnp.flip(m, 1))(jnp.asarray(x))
    np.testing.assert_array_equal(out, [np.flip(m, 1) for m in x])
