"""The functions of the issue's Done-when: their NVVM IR prints, libNVVM compiles it, and
ptxas accepts the PTX for sm_80 and sm_90 (skipped where libNVVM or ptxas is missing)."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
from nvvm_util import needs_ptxas, optimised_ir

from redraft.cli import main
from redraft.compiler.backend import nvvm
from redraft.compiler.backend.nvvm import libnvvm

EXAMPLE = pathlib.Path(__file__).resolve().parents[4] / "examples" / "gpu_kernels.py"
_spec = importlib.util.spec_from_file_location("gpu_kernels", EXAMPLE)
gk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gk)

f32 = np.float32
DONE_WHEN = {
    "selu": (gk.selu, (np.zeros(1000003, f32),)),
    "grad_sum_logistic": (gk.grad_sum_logistic, (np.zeros(1000003, f32),)),
    "decay": (gk.decay, (np.zeros((2000, 2000), f32),)),
    "matmul": (gk.matmul, (np.zeros((128, 784), f32), np.zeros((784, 512), f32))),
    "mlp_step": (gk.mlp_step, (np.zeros((784, 512), f32), np.zeros(512, f32),
                               np.zeros((512, 10), f32), np.zeros(10, f32),
                               np.zeros((128, 784), f32), np.zeros((128, 10), f32))),
}


def test_nvvm_ir_has_kernel_marks_and_libdevice_calls():
    fn, args = DONE_WHEN["selu"]
    text = nvvm.nvvm_ir(optimised_ir(fn, *args))
    assert "!nvvm.annotations" in text and '!"kernel"' in text
    assert "!nvvmir.version" in text
    assert "__nv_expf" in text
    assert "llvm.nvvm.read.ptx.sreg.ctaid.x" in text
    assert "float*" in text and " ptr " not in text  # typed pointers, as libNVVM wants


def test_reduction_kernel_uses_shared_memory_and_barriers():
    def total(x):
        import redraft.numpy as jnp
        return jnp.sum(x)
    text = nvvm.nvvm_ir(optimised_ir(total, np.zeros(100000, f32)))
    assert "addrspace(3)" in text and "llvm.nvvm.barrier0" in text


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(DONE_WHEN))
def test_done_when_functions_pass_ptxas(name, arch):
    fn, args = DONE_WHEN[name]
    ir_fn = optimised_ir(fn, *args)
    ptx = nvvm.ptx(ir_fn, arch)
    assert f".target {arch}" in ptx
    assert ptx.count(".entry") == len(nvvm.program(ir_fn).kernels) > 0  # kernels, not .func
    libnvvm.check_ptx(ptx, arch)


@needs_ptxas
def test_cli_prints_nvvm_and_ptx(capsys):
    assert main(["ir", f"{EXAMPLE}::selu", "--sig", "f32[31]", "--stage", "nvvm"]) == 0
    assert "nvvm.annotations" in capsys.readouterr().out
    assert main(["ir", f"{EXAMPLE}::matmul", "--sig", "f32[128,784],f32[784,512]",
                 "--stage", "ptx", "--arch", "sm_90"]) == 0
    out = capsys.readouterr().out
    assert ".target sm_90" in out and ".shared" in out and "bar.sync" in out
