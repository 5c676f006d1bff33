"""lower_conv: convolutions become pad + strided slices + one dot_general (im2col); compiled
results (LLVM when available, reference interpreter otherwise) match eager execution."""
import numpy as np
import pytest
from conv_functions import (conv_1d_valid, conv_3d, conv_batch_grouped, conv_depthwise,
                            conv_grouped, conv_loss, conv_negative_padding, conv_nhwc_same,
                            conv_strided_dilated, depthwise_loss)

import redraft
import redraft.numpy as jnp

RNG = np.random.default_rng(3)

CASES = [
    (conv_strided_dilated, (2, 3, 9, 7), (4, 3, 3, 2)),
    (conv_nhwc_same, (2, 8, 8, 3), (3, 3, 3, 5)),
    (conv_1d_valid, (1, 1, 5), (1, 1, 3)),
    (conv_3d, (1, 2, 5, 6, 4), (3, 2, 2, 3, 1)),
    (conv_negative_padding, (2, 3, 8), (4, 3, 3)),
    # kernels with more offsets than output positions: one window slice per position
    (conv_strided_dilated, (2, 3, 5, 3), (4, 3, 3, 4)),
    (conv_1d_valid, (1, 2, 9), (3, 2, 7)),
    (conv_grouped, (2, 4, 6), (6, 2, 3)),
    (conv_depthwise, (2, 7, 6, 3), (3, 3, 1, 6)),
    (conv_batch_grouped, (4, 3, 6, 5), (6, 3, 2, 2)),
]


def _arrays(*shapes):
    return [jnp.array(RNG.standard_normal(s).astype(np.float32)) for s in shapes]


@pytest.fixture(params=["auto", "interpret"])
def backend(request, monkeypatch):
    monkeypatch.setenv("REDRAFT_BACKEND", request.param)
    monkeypatch.setenv("REDRAFT_LLVM_STRICT", "1")
    return request.param


@pytest.mark.parametrize("fn, x_shape, w_shape", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_compiled_convolution_matches_eager(backend, fn, x_shape, w_shape):
    x, w = _arrays(x_shape, w_shape)
    np.testing.assert_allclose(np.asarray(redraft.jit(fn)(x, w)), np.asarray(fn(x, w)),
                               rtol=1e-5, atol=1e-5)


def test_convolution_becomes_one_matrix_product():
    x, w = _arrays((2, 8, 8, 3), (3, 3, 3, 5))
    text = str(redraft.make_ir(conv_nhwc_same)(x, w))
    assert "conv_general_dilated" not in text
    assert text.count("dot_general") == 1 and text.count(" slice[") == 9, text


def test_weight_gradient_slices_per_output_position_not_per_pixel():
    """The weight gradient is a convolution whose kernel is the output gradient (12x12 here):
    its patches are one slice per 3x3 filter position, not one per pixel."""
    x, w = _arrays((2, 12, 12, 1), (3, 3, 1, 4))
    text = str(redraft.make_ir(redraft.grad(conv_loss, argnums=1))(x, w))
    assert text.count(" slice[") <= 2 * 9, text


def test_grouped_convolution_becomes_one_batched_product():
    x, w = _arrays((1, 4, 6), (4, 2, 3))
    text = str(redraft.make_ir(conv_grouped)(x, w))
    assert "conv_general_dilated" not in text and text.count("dot_general") == 1, text
    np.testing.assert_allclose(np.asarray(redraft.jit(conv_grouped)(x, w)),
                               np.asarray(conv_grouped(x, w)), rtol=1e-5, atol=1e-5)


def test_gradient_of_a_depthwise_convolution_compiles(backend):
    """The weight gradient of a grouped convolution is a batch-grouped one."""
    x, w = _arrays((2, 6, 5, 3), (3, 3, 1, 6))
    g = redraft.grad(depthwise_loss, argnums=(0, 1))
    assert "conv_general_dilated" not in str(redraft.make_ir(g)(x, w))
    for got, want in zip(redraft.jit(g)(x, w), g(x, w)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def test_gradient_of_a_convolution_compiles(backend):
    x, w = _arrays((2, 6, 6, 3), (3, 3, 3, 4))
    g = redraft.grad(conv_loss, argnums=(0, 1))
    for got, want in zip(redraft.jit(g)(x, w), g(x, w)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
