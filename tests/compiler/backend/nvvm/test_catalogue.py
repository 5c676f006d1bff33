"""Every function of the transforms' catalogue, and its gradient, through the GPU backend:
the emulated kernels agree with the reference interpreter, and all the kernels of the
catalogue, in one module, compile with libNVVM and pass ptxas for sm_80 and sm_90.

What the backend does not lower raises Unsupported; the reasons are checked against the
list the README gives, so that list stays true."""
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from nvvm_util import assert_close, host_buffers, needs_ptxas

import redraft
from redraft.compiler.backend import interpret, nvvm
from redraft.compiler.backend.nvvm import kernel as kernel_mod, libnvvm
from redraft.compiler.driver import stage
from redraft.compiler.ir.passes import run_pipeline
from redraft.runtime.pytree import tree_flatten

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "transforms"))
from catalogue import CATALOGUE, arguments, entry_id  # noqa: E402

ENTRIES = [e for e in CATALOGUE if "xfail" not in e[2]]
# What the README says is not lowered yet (a reason outside this list fails the test).
NOT_LOWERED = ("run-time indices", "cumsum", "cumprod", "cummax", "cummin", "sort",
               "gather", "scatter", "conv", "dtype", "pad", "dynamic_slice",
               "dynamic_update_slice", "select_n", "argmax", "argmin", "into another dtype")
LOWERED: dict[str, object] = {}
DECLINED: dict[str, str] = {}


def _cases():
    for e in ENTRIES:
        yield pytest.param(e, "value", id=entry_id(e) + "-value")
        yield pytest.param(e, "grad", id=entry_id(e) + "-grad")


def _staged(entry, what):
    fn, args = entry[0], arguments(entry)
    if what == "grad":
        out = fn(*args)
        if len(tree_flatten(out)[0]) != 1 or np.shape(out) != ():
            pytest.skip("not a scalar function")
        fn = redraft.grad(fn)
    try:
        ir_fn, _ = stage(fn, args, set())
    except Exception as e:  # noqa: BLE001 - jit cannot stage it at all: not this backend
        pytest.skip(f"not stageable: {e}")
    return run_pipeline(ir_fn), host_buffers(*args)


@pytest.mark.parametrize("entry,what", _cases())
def test_emulated_kernels_agree_with_the_interpreter(entry, what):
    ir_fn, bufs = _staged(entry, what)
    with np.errstate(all="ignore"):
        want = interpret.run(ir_fn, bufs)
        try:
            prog = nvvm.program(ir_fn)
        except nvvm.Unsupported as e:
            DECLINED[f"{entry_id(entry)}-{what}"] = str(e)
            assert any(reason in str(e) for reason in NOT_LOWERED), str(e)
            pytest.skip(f"not lowered: {e}")
        got = nvvm.emulated(prog)(bufs)
    LOWERED[f"{entry_id(entry)}-{what}"] = prog
    assert_close(got, want, rtol=2e-5, atol=1e-6)


def test_most_of_the_catalogue_is_lowered():
    if len(LOWERED) + len(DECLINED) < len(ENTRIES):
        pytest.skip("run with the whole module")
    assert len(LOWERED) >= 0.9 * (len(LOWERED) + len(DECLINED)), DECLINED


def _catalogue_module() -> tuple[str, int]:
    """The NVVM IR text of every lowered catalogue kernel (one module), and their count."""
    module = kernel_mod.nvvm_module("catalogue")
    for k, prog in enumerate(LOWERED.values()):
        nvvm.module_of(prog, prefix=f"c{k}_", module=module)
    return str(module), sum(len(prog.kernels) for prog in LOWERED.values())


def _compile_and_check(text: str, count: int, arch: str) -> None:
    ptx = libnvvm.compile_ptx(text, arch)
    assert ptx.count(".entry") == count
    libnvvm.check_ptx(ptx, arch)


@needs_ptxas
def test_every_catalogue_kernel_passes_ptxas_for_sm_80_and_sm_90():
    """About 1500 kernels; the two architectures compile side by side (libNVVM releases
    the GIL, ptxas is a process)."""
    if len(LOWERED) + len(DECLINED) < len(ENTRIES):
        pytest.skip("run with the whole module")
    text, count = _catalogue_module()
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(_compile_and_check, text, count, a) for a in ("sm_80", "sm_90")]:
            done.result()
