"""Staging a function for the GPU backend, and the skips for missing CUDA pieces."""
from __future__ import annotations

import numpy as np
import pytest

from redraft.compiler.backend import interpret, nvvm
from redraft.compiler.backend.nvvm import libnvvm, toolkit
from redraft.compiler.driver import signature_of, stage
from redraft.compiler.ir.passes import run_pipeline

needs_libnvvm = pytest.mark.skipif(
    not libnvvm.available(), reason=f"libNVVM/libdevice not found ({toolkit.find().describe()})")
needs_ptxas = pytest.mark.skipif(
    not (libnvvm.available() and libnvvm.ptxas_available()),
    reason=f"libNVVM or ptxas not found ({toolkit.find().describe()})")


def optimised_ir(fn, *args, static=()):
    """The SSA IR the backends receive (after the pass pipeline)."""
    ir_fn, _ = stage(fn, args, set(static))
    return run_pipeline(ir_fn)


def host_buffers(*args) -> list[np.ndarray]:
    _, leaves = signature_of(args, set())
    return [np.asarray(leaf) for leaf in leaves]


def emulate(fn, *args):
    """(results of the emulated GPU kernels, results of the reference interpreter)."""
    ir_fn = optimised_ir(fn, *args)
    bufs = host_buffers(*args)
    with np.errstate(all="ignore"):
        return nvvm.emulated(ir_fn)(bufs), interpret.run(ir_fn, bufs)


def assert_close(got: list, want: list, rtol=2e-5, atol=1e-6) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
