"""The backend's contract with the driver: None for what it cannot lower, argument checks
at the call boundary, results that alias arguments or constants, threads, text output."""
import subprocess
import sys
import threading

import numpy as np
import pytest
from backend_util import check, compiled, sample
from redraft.compiler.backend import interpret
from redraft.compiler.backend.llvm import (ArgumentError, assembly, compile_ir, llvm_ir,
                                          lower_function)

import redraft
import redraft.numpy as jnp
from redraft import lax


def halved(x):
    return (x.astype(jnp.float16) * 2.0).astype(jnp.float32)


def test_unsupported_dtype_falls_back():
    """float16 values have no buffers in this backend: compile_ir says None and the
    interpreter runs the function."""
    x = sample((10,), np.float32)
    fn = redraft.make_ir(halved)(x)
    assert compile_ir(fn) is None
    out, used = compiled(halved, x)
    assert used == "interpret"
    np.testing.assert_allclose(np.asarray(out), (x.astype(np.float16) * 2).astype(np.float32))


def test_an_operation_without_a_lowering_runs_on_the_host():
    """Complex arithmetic has no lowering: that equation alone calls the interpreter."""
    x = sample((10,), np.float32)
    out, used = compiled(lambda x: (x * (1.0 + 2.0j)).real + jnp.exp(x), x)
    assert used == "llvm"
    np.testing.assert_allclose(np.asarray(out), x + np.exp(x), rtol=1e-6)


def test_gather_and_sort_are_compiled():
    def f(x, idx):
        return lax.sort(x[idx] * 2.0)
    x, idx = sample((10,), np.float32), np.array([1, 3, 3, -1], np.int32)
    out, used = compiled(f, x, idx)
    assert used == "llvm"
    np.testing.assert_allclose(np.asarray(out), np.sort(x[idx] * 2.0))


def add(a, b):
    return a + b


def test_argument_checks():
    a = np.ones((3, 4), np.float32)
    runner = compile_ir(redraft.make_ir(add)(a, a))
    with pytest.raises(ArgumentError, match="shape"):
        runner([a, np.ones((4, 3), np.float32)])
    with pytest.raises(ArgumentError, match="takes 2"):
        runner([a])
    with pytest.raises(ArgumentError, match="dtype"):
        runner([a, np.ones((3, 4), np.complex64)])


def test_non_contiguous_and_converted_arguments():
    a = sample((4, 3), np.float32)
    runner = compile_ir(redraft.make_ir(add)(a, a))
    t = sample((3, 4), np.float32, seed=1).T          # a strided view
    out = runner([t, a[::1]])[0]
    np.testing.assert_array_equal(out, t + a)
    out = runner([a.astype(np.float16), a])[0]          # converted to float32
    np.testing.assert_allclose(out, a.astype(np.float16).astype(np.float32) + a)


def passthrough(x, y):
    z = x * 2.0
    return x, z, z, 7.0, y


def test_results_that_are_arguments_duplicates_or_constants():
    x, y = sample((5,), np.float32), sample((2,), np.float32, seed=1)
    got = check(passthrough, x, y)
    np.testing.assert_array_equal(got[0], x)


def test_concurrent_calls_share_nothing():
    def work(x):
        return jnp.tanh(x @ x.T).sum(axis=0) + x[:, 0]
    x = sample((300, 300), np.float32)
    jitted = redraft.jit(work)
    want = np.asarray(jitted(x))
    errors = []

    def run(seed):
        try:
            for _ in range(5):
                np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=1e-5)
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_text_of_each_stage():
    fn = redraft.make_ir(add)(np.ones(64, np.float32), np.ones(64, np.float32))
    text = llvm_ir(fn)
    assert "define void @redraft_main" in text and "fadd" in text
    assert "vaddps" in assembly(fn)


def test_interpreter_agrees_on_an_ir_function():
    x = sample((33,), np.float32)
    fn = redraft.make_ir(add)(x, x)
    np.testing.assert_array_equal(compile_ir(fn)([x, x])[0], interpret.run(fn, [x, x])[0])


CLI_SOURCE = """
import redraft.numpy as jnp

def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

def scaled(x, n):
    return x * n
"""


@pytest.mark.parametrize("stage,expect", [("core", "def selu"), ("ssa", "fused"),
                                          ("llvm", "define void"), ("asm", "redraft_main_py:")])
def test_cli_ir_stages(tmp_path, capsys, stage, expect):
    from redraft.cli import main
    path = tmp_path / "prog_stages.py"
    path.write_text(CLI_SOURCE)
    assert main(["ir", f"{path}::selu", "--sig", "f32[100]", "--stage", stage]) == 0
    assert expect in capsys.readouterr().out


def test_cli_signature_with_several_arguments(tmp_path, capsys):
    from redraft.cli import main, parse_signature
    args = parse_signature("f32[3,4],i32[],bool[2]")
    assert [(a.shape, a.dtype.name) for a in args] == [((3, 4), "float32"), ((), "int32"),
                                                        ((2,), "bool")]
    path = tmp_path / "prog_sig.py"
    path.write_text(CLI_SOURCE)
    assert main(["ir", f"{path}::scaled", "--sig", "f32[3,4],f32[]"]) == 0
    assert "f32[3,4]" in capsys.readouterr().out


def test_cli_as_a_command(tmp_path):
    path = tmp_path / "prog_cmd.py"
    path.write_text(CLI_SOURCE)
    run = subprocess.run([sys.executable, "-m", "redraft.cli", "ir", f"{path}::selu", "--sig",
                          "f32[100]", "--stage", "llvm"], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "define void @redraft_main" in run.stdout


def test_a_large_captured_constant_is_read_in_place_not_written_into_the_module():
    """A constant over 64 KiB is an external symbol of the module (printing 16 MB of IR
    text took seconds), holding a copy: changing the captured array later changes
    nothing, as in JAX; a standalone module (a build, llvm_ir) still holds the bytes."""
    table = np.arange(200 * 100, dtype=np.float32).reshape(200, 100)

    def f(w):
        return jnp.tanh(table @ w) + table[:, 3]

    w = np.linspace(-1, 1, 100).astype(np.float32) * 1e-3
    fn = redraft.make_ir(f)(w)
    lowered = lower_function(fn)
    assert len(lowered.constants) == 1 and len(str(lowered.module)) < 100_000
    assert len(llvm_ir(fn, optimised=False)) > 80_000
    want = np.tanh(table @ w) + table[:, 3]
    got = check(f, w, rtol=1e-5)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    jitted = redraft.jit(f)
    jitted(w)
    table[:] = 0.0
    np.testing.assert_allclose(jitted(w), want, rtol=1e-5)

