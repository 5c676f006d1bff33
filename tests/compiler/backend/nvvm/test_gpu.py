"""Real launches on an NVIDIA GPU through pycuda (`make test-gpu`); skipped without one."""
from __future__ import annotations

import numpy as np
import pytest
from nvvm_util import assert_close, host_buffers, needs_libnvvm, optimised_ir
from test_emulation import branch, decay, halve_until_small, rand, selu, sum_logistic

import redraft
import redraft.numpy as jnp
from redraft.compiler.backend import nvvm
from redraft.runtime import cuda

pytestmark = [pytest.mark.gpu, needs_libnvvm,
              pytest.mark.skipif(cuda.gpu_count() == 0,
                                 reason=f"no GPU: {cuda.unavailable_reason()}")]


@pytest.mark.parametrize("fn,shape", [(selu, (1000003,)), (sum_logistic, (31,)),
                                      (redraft.grad(sum_logistic), (1000003,)),
                                      (decay, (2000, 2000)), (halve_until_small, (1001,)),
                                      (branch, (257,)), (lambda x: jnp.sum(x, axis=0),
                                                         (3000, 7))])
def test_gpu_agrees_with_the_emulation(fn, shape):
    x = rand(*shape)
    ir_fn = optimised_ir(fn, x)
    bufs = host_buffers(x)
    assert_close(nvvm.gpu_runner(ir_fn)(bufs), nvvm.emulated(ir_fn)(bufs), rtol=1e-4)


def test_gpu_tiled_dot():
    a, b = rand(128, 784, seed=1), rand(784, 512, seed=2)
    ir_fn = optimised_ir(lambda a, b: a @ b, a, b)
    (got,) = nvvm.gpu_runner(ir_fn)(host_buffers(a, b))
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)


def test_devices_lists_the_gpu():
    assert redraft.devices("gpu")[0].platform == "gpu"
