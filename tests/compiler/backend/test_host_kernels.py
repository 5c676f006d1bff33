"""The factorisations and the fft run compiled: the LLVM backend lowers each to a call of
its host kernel (kernels/host_calls.py) with the operands' buffers, and the rest of the
function natively. Results agree with the interpreter and eager mode."""
import numpy as np
import pytest
from backend_util import check, compiled
from redraft.compiler.backend.llvm import llvm_ir
from redraft.compiler.driver import stage
from redraft.compiler.ir.passes import run_pipeline
from redraft.kernels import host_calls

import redraft
import redraft.numpy as jnp
import redraft.scipy.linalg as rsl

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 5, 5)).astype(np.float32)
SPD = (A @ A.transpose(0, 2, 1) + 5 * np.eye(5)).astype(np.float32)
B = RNG.standard_normal((3, 5, 2)).astype(np.float32)
X = RNG.standard_normal((4, 16)).astype(np.float32)


def _cholesky_scaled(x):
    return jnp.linalg.cholesky(x) * 2.0 + 1.0


def _solve_det(a, b):
    return jnp.linalg.solve(a, b) + jnp.linalg.det(a)[:, None, None]


def _spectral(x):
    w, v = jnp.linalg.eigh(x)
    _u, s, _vh = jnp.linalg.svd(x.transpose(0, 2, 1), full_matrices=False)
    _q, r = jnp.linalg.qr(x)
    return jnp.sum(w) + jnp.sum(s) + jnp.sum(jnp.abs(v)) + jnp.sum(jnp.abs(r))


def _transposed_operand(x, b):
    """A strided (transposed) operand view goes to the kernel without a copy."""
    return rsl.solve_triangular(jnp.swapaxes(jnp.tril(x), -1, -2), b, lower=False)


def _filter(x):
    spectrum = jnp.fft.rfft(x, norm="ortho")
    return jnp.fft.irfft(spectrum, n=x.shape[-1], norm="ortho") * 3.0


def _gp_loss(kernel, y):
    chol = jnp.linalg.cholesky(kernel)
    alpha = rsl.cho_solve((chol, True), y)
    return jnp.sum(y * alpha) + 2 * jnp.sum(jnp.log(jnp.sum(chol * jnp.eye(5), axis=-1)))


CASES = [(_cholesky_scaled, (SPD,)), (_solve_det, (A, B)), (_spectral, (SPD,)),
         (_transposed_operand, (SPD, B)), (_filter, (X,)), (_gp_loss, (SPD, B))]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_compiled_agrees_with_interpreter_and_eager(fn, args):
    check(fn, *args, rtol=2e-4, atol=2e-4)


def test_the_module_calls_the_host_kernel():
    ir_fn, _ = stage(_cholesky_scaled, (SPD,), set())
    text = llvm_ir(run_pipeline(ir_fn), optimised=False)
    assert "redraft_host_kernel" in text


def test_gradients_and_vmap_compile_too():
    grad = redraft.grad(_gp_loss)
    out, used = compiled(grad, SPD[0], B[0, :, 0])
    assert used == "llvm"
    np.testing.assert_allclose(np.asarray(out), np.asarray(grad(SPD[0], B[0, :, 0])),
                               rtol=1e-3, atol=1e-4)
    batched = redraft.vmap(_cholesky_scaled)
    out, used = compiled(batched, SPD)
    assert used == "llvm"


def test_a_failing_kernel_gives_nan_not_a_crash():
    site = host_calls.KernelSite(lambda x: 1 / 0, (), (host_calls.BufferSpec(
        np.dtype(np.float32), (2,), (1,), 0, 1.0),), (host_calls.BufferSpec(
            np.dtype(np.float32), (2,), (1,), 0),), False)
    out = np.zeros(2, np.float32)
    host_calls.run_site(site, [0, out.ctypes.data])
    assert np.isnan(out).all()
    assert isinstance(host_calls.last_error[0], ZeroDivisionError)


def test_complex_arithmetic_runs_on_the_host_inside_compiled_code():
    """No lowering computes with complex numbers: each such equation is a call into the
    reference interpreter, and the rest of the function stays compiled."""
    def f(x):
        spectrum = jnp.fft.fft(x) * (1.0 - 2.0j)
        return jnp.abs(spectrum) + jnp.tanh(x), jnp.fft.ifft(spectrum * spectrum.conj()).real
    got, used = compiled(f, X)
    assert used == "llvm"
    want, _ = compiled(f, X, backend="interpret")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
