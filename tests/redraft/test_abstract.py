"""redraft.eval_shape and ShapeDtypeStruct: shapes and dtypes staged, not computed."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.abstract import ShapeDtypeStruct, eval_shape


def pair(x, y):
    return {"prod": x @ y, "total": jnp.sum(x, axis=0).astype(jnp.int32)}


def test_eval_shape_of_a_pytree_result():
    out = eval_shape(pair, ShapeDtypeStruct((3, 4), np.float32), jnp.ones((4, 5)))
    assert out["prod"] == ShapeDtypeStruct((3, 5), np.float32)
    assert out["total"].shape == (4,) and out["total"].dtype == np.int32


def conv(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_eval_shape_of_a_convolution_takes_no_memory():
    big = ShapeDtypeStruct((64, 512, 512, 3), np.float32)
    out = eval_shape(conv, big, ShapeDtypeStruct((3, 3, 3, 8), np.float32))
    assert out.shape == (64, 256, 256, 8) and out.ndim == 4


def test_struct_properties():
    s = redraft.ShapeDtypeStruct((2, 3), jnp.float16)
    assert s.size == 6 and len(s) == 2 and s.dtype == np.float16


def test_typeof():
    assert redraft.typeof(jnp.ones((2, 3))) == ShapeDtypeStruct((2, 3), np.float32)
    assert redraft.typeof(2.0).weak_type


def scale_and_sum(x, y):
    return 2.0 * x + jnp.sum(y) * jnp.ones(3)


def test_linear_transpose_is_the_adjoint():
    x, y = jnp.zeros(3), jnp.zeros(2)
    transpose = redraft.linear_transpose(scale_and_sum, x, y)
    ct = jnp.array([1.0, 2.0, 3.0])
    tx, ty = transpose(ct)
    np.testing.assert_allclose(np.asarray(tx), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(np.asarray(ty), [6.0, 6.0])
    u, v = np.random.RandomState(0).randn(3), np.random.RandomState(1).randn(2)
    lhs = float(np.dot(np.asarray(scale_and_sum(jnp.asarray(u, jnp.float32),
                                                 jnp.asarray(v, jnp.float32))), ct))
    rhs = float(np.dot(np.asarray(tx), u) + np.dot(np.asarray(ty), v))
    assert np.isclose(lhs, rhs, rtol=1e-5)
