"""Finding libNVVM, libdevice and ptxas: CUDA_HOME first, a clear error when missing."""
from __future__ import annotations

import pytest

from redraft.compiler.backend.nvvm import libnvvm, toolkit


def _fake_toolkit(root):
    (root / "lib64").mkdir(parents=True)
    (root / "lib64" / "libnvvm.so").write_bytes(b"")
    (root / "nvvm" / "libdevice").mkdir(parents=True)
    (root / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"")
    (root / "bin").mkdir()
    (root / "bin" / "ptxas").write_bytes(b"")


def test_cuda_home_is_searched_first(tmp_path, monkeypatch):
    _fake_toolkit(tmp_path)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    toolkit.find.cache_clear()
    try:
        found = toolkit.find()
        assert found.libnvvm == tmp_path / "lib64" / "libnvvm.so"
        assert found.libdevice == tmp_path / "nvvm" / "libdevice" / "libdevice.10.bc"
        assert found.ptxas == tmp_path / "bin" / "ptxas"
    finally:
        toolkit.find.cache_clear()


def test_pip_package_layout_is_a_root(tmp_path, monkeypatch):
    """CUDA 13 wheels (nvidia-nvvm, nvidia-cuda-nvcc) install under nvidia/cu13/."""
    root = tmp_path / "nvidia" / "cu13"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "libnvvm.so.4").write_bytes(b"")
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    assert root in toolkit.candidate_roots()


def test_missing_libnvvm_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(toolkit, "find", lambda: toolkit.Toolkit(None, None, None))
    libnvvm._library.cache_clear()
    try:
        with pytest.raises(libnvvm.NvvmError, match="gpu extra"):
            libnvvm.compile_ptx("", "sm_80")
        with pytest.raises(libnvvm.NvvmError, match="ptxas not found"):
            libnvvm.check_ptx("", "sm_80")
    finally:
        libnvvm._library.cache_clear()


def test_unknown_architecture_is_refused():
    with pytest.raises(libnvvm.NvvmError, match="architecture"):
        libnvvm.compile_ptx("", "gfx90a")
