"""The packed, register-blocked matmul kernel against NumPy on awkward shapes and layouts."""
from __future__ import annotations

import numpy as np
import pytest

from redraft.kernels.matmul import (GemmConfig, MatmulKernel, default_config, matmul,
                                    matmul_kernel, slice_length)


def assert_product(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """c matches a @ b within the classical bound k * eps * (|a| @ |b|)."""
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    exact = wide_a @ wide_b
    eps = np.finfo(c.dtype).eps
    bound = (a.shape[1] + 2) * eps * (np.abs(wide_a) @ np.abs(wide_b)) + 1e-300
    assert c.shape == exact.shape and c.dtype == np.result_type(a, b)
    assert np.all(np.abs(c - exact) <= bound)


def operands(m: int, k: int, n: int, dtype: type, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


SHAPES = [(1, 1, 1), (7, 13, 5), (129, 257, 63), (12, 32, 32), (13, 33, 31), (300, 1, 17),
          (1, 300, 1), (2, 700, 3), (50, 3, 200), (257, 300, 129)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matches_numpy(m: int, k: int, n: int, dtype: type) -> None:
    a, b = operands(m, k, n, dtype)
    assert_product(matmul(a, b), a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_and_strided_operands(dtype: type) -> None:
    rng = np.random.default_rng(1)
    at = rng.standard_normal((257, 129)).astype(dtype)
    bt = rng.standard_normal((63, 257)).astype(dtype)
    assert_product(matmul(at.T, bt.T), at.T, bt.T)
    b = np.ascontiguousarray(bt.T)
    assert_product(matmul(at.T, b), at.T, b)
    a = np.ascontiguousarray(at.T)
    assert_product(matmul(a, bt.T), a, bt.T)
    big = rng.standard_normal((300, 400)).astype(dtype)
    a, b = big[::2, 1::3], big[5:138:1, ::7]
    assert_product(matmul(a, b), a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_height_of_the_last_row_tile(dtype: type) -> None:
    """The last row tile of a block runs a shorter micro-kernel when it fits (MR, 2/3 MR,
    1/3 MR rows): each height from 1 to MR, after whole tiles and after a whole MC block."""
    cfg = default_config(dtype)
    for m in list(range(cfg.mr + 1, 2 * cfg.mr + 1)) + [cfg.mc + 1, cfg.mc + cfg.mr - 1]:
        a, b = operands(m, 40, 70, dtype, seed=m)
        assert_product(matmul(a, b), a, b)


LAYOUT_SHAPES = [(5, 3, 40), (12, 16, 32), (13, 17, 33), (37, 300, 65), (128, 10, 96),
                 (70, 257, 64), (33, 512, 97)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m,k,n", LAYOUT_SHAPES)
def test_every_transpose_layout(m: int, k: int, n: int, layout: str, dtype: type) -> None:
    """x @ w, x @ w.T, x.T @ g and x.T @ w.T: operands stored by rows or by columns (the
    column-stored right operand takes the transposing pack, including its k tail)."""
    a, b = operands(m, k, n, dtype, seed=4)
    if layout[0] == "T":
        a = np.ascontiguousarray(a.T).T
    if layout[1] == "T":
        b = np.ascontiguousarray(b.T).T
    assert_product(matmul(a, b), a, b)
    assert_product(matmul(a, b, threads=2), a, b)


def test_threads_split_rows_without_changing_results() -> None:
    a, b = operands(301, 517, 333, np.float32, seed=2)
    kernel = matmul_kernel("float32")
    one = kernel(a, b, threads=1)
    for threads in (2, 3, 7):
        assert np.array_equal(kernel(a, b, threads=threads).view(np.uint32), one.view(np.uint32))
    assert_product(one, a, b)


def test_out_argument_and_degenerate_sizes() -> None:
    a, b = operands(20, 30, 40, np.float32)
    out = np.full((20, 40), np.nan, np.float32)
    assert matmul(a, b, out=out) is out
    assert_product(out, a, b)
    assert np.array_equal(matmul(np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)),
                          np.zeros((3, 4), np.float32))
    assert matmul(np.ones((0, 5), np.float32), np.ones((5, 4), np.float32)).shape == (0, 4)
    with pytest.raises(ValueError):
        matmul(np.ones((3, 4), np.float32), np.ones((5, 6), np.float32))


def test_special_values_propagate() -> None:
    a = np.array([[1.0, np.inf], [np.nan, 2.0], [0.0, 1.0]], np.float32)
    b = np.array([[1.0, 0.0], [1.0, 3.0]], np.float32)
    got = matmul(a, b)
    with np.errstate(invalid="ignore"):
        ref = a @ b
    assert np.array_equal(got, ref, equal_nan=True)


@pytest.mark.parametrize("vector_bits", [256, 128])
def test_narrower_blockings_are_correct(vector_bits: int) -> None:
    cfg = default_config("float32", vector_bits=vector_bits)
    kernel = MatmulKernel(GemmConfig(cfg.dtype, cfg.vl, cfg.mr, cfg.nr, kc=40, mc=2 * cfg.mr,
                                     nc=3 * cfg.nr))
    for m in (49, 50, 52):  # last row tiles of 1, 2 and 4 rows (of MR = 6 or 3)
        a, b = operands(m, 97, 71, np.float32, seed=m)
        assert_product(kernel(a, b, threads=2), a, b)
    a, b = operands(53, 97, 71, np.float32, seed=3)
    assert_product(kernel(a, b, threads=2), a, b)
    bt = np.ascontiguousarray(b.T)
    assert_product(kernel(a, bt.T, threads=2), a, bt.T)


NARROW_M = [1, 5, 12, 13, 25, 130]
NARROW_K = [1, 15, 16, 17, 100, 1024, 3000]


@pytest.mark.parametrize("layout", ["NN", "TN", "NT"])
@pytest.mark.parametrize("k", NARROW_K)
def test_narrow_products_every_width(k: int, layout: str) -> None:
    """N up to one vector, every width: the dot-product variants (A by rows, B's transposed
    copy in the workspace; with K = 3000 it does not fit and A by rows takes the packed
    path), the column variants (A by columns), their row blocks, last short blocks and
    single rows, k tails, the masked B packing, and bit-identical splits over threads."""
    rng = np.random.default_rng(k)
    kernel = matmul_kernel("float32")
    for n in range(1, kernel.cfg.vl + 1):
        m = NARROW_M[n % len(NARROW_M)]
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        if layout[0] == "T":
            a = np.ascontiguousarray(a.T).T
        if layout[1] == "T":
            b = np.ascontiguousarray(b.T).T
        one = kernel(a, b, threads=1)
        assert_product(one, a, b)
        for threads in (2, 3):
            assert np.array_equal(kernel(a, b, threads=threads).view(np.uint32),
                                  one.view(np.uint32))


def test_narrow_products_keep_special_values_to_their_own_rows() -> None:
    a = np.ones((30, 40), np.float32)
    a[3, 7], a[17, 0] = np.inf, np.nan
    b = np.ones((40, 10), np.float32)
    got = matmul(a, b)
    assert np.isinf(got[3]).all() and np.isnan(got[17]).all()
    rest = np.delete(got, [3, 17], axis=0)
    assert np.array_equal(rest, np.full_like(rest, 40.0))


def test_narrow_products_before_their_variant_is_compiled(monkeypatch) -> None:
    """gemm_rows takes the packed path while the narrow table is empty (ahead-of-time
    objects never fill it), in every layout."""
    kernel = MatmulKernel(default_config("float32"))
    monkeypatch.setattr(kernel, "prepare_narrow", lambda *args: None)
    rng = np.random.default_rng(9)
    for layout in ("NN", "TN", "NT"):
        a = rng.standard_normal((37, 300)).astype(np.float32)
        b = rng.standard_normal((300, 10)).astype(np.float32)
        if layout[0] == "T":
            a = np.ascontiguousarray(a.T).T
        if layout[1] == "T":
            b = np.ascontiguousarray(b.T).T
        assert_product(kernel(a, b, threads=2), a, b)
    assert not kernel._narrow


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m,k,n", [(128, 10, 1024), (13, 10, 100), (25, 700, 45),
                                   (140, 520, 70), (11, 3, 33)])
def test_edge_tiles_every_layout(m: int, k: int, n: int, layout: str, dtype: type) -> None:
    """Tiles cut by C's last rows (M not a multiple of MR) or columns (N not a multiple of
    NR), stored by masked vectors: written on the first K slice, accumulated after it
    (K > KC), in every layout, on one thread and split; the columns past C's edge (here
    the next row of a wider C) are left as they were."""
    a, b = operands(m, k, n, dtype, seed=6)
    if layout[0] == "T":
        a = np.ascontiguousarray(a.T).T
    if layout[1] == "T":
        b = np.ascontiguousarray(b.T).T
    for threads in (1, 2):
        wide = np.full((m, n + 7), 7.0, dtype)
        out = wide[:, :n]
        matmul(a, b, out=out, threads=threads)
        assert_product(out, a, b)
        assert np.all(wide[:, n:] == 7.0)


@pytest.mark.parametrize("kc", [40, 192, 256])
def test_k_slices_are_as_few_as_fit_and_even(kc: int) -> None:
    """K runs in as few slices of at most KC_MAX as fit, all but the last of one length
    (784 as 264 + 264 + 256, not 256 + 256 + 256 + 16)."""
    base = default_config("float32")
    cfg = GemmConfig(base.dtype, base.vl, base.mr, base.nr, kc=kc, mc=base.mc, nc=base.nc)
    for k in list(range(1, 3 * cfg.kc_max + 2)) + [784, 1000, 4099]:
        step = slice_length(cfg, k)
        assert 0 < step <= cfg.kc_max
        assert -(-k // step) == -(-k // cfg.kc_max)
        assert k - (-(-k // step) - 1) * step > 0
    assert slice_length(default_config("float32"), 784) == 264


def packed_by_hand(b: np.ndarray, cfg: GemmConfig) -> np.ndarray:
    """pack_b's layout written in NumPy: per slice of K, its NR-column panels in turn,
    each k-major (NR values per k), columns past N zero."""
    k, n = b.shape
    panels = -(-n // cfg.nr)
    wide = np.zeros((k, panels * cfg.nr), b.dtype)
    wide[:, :n] = b
    step = slice_length(cfg, k)
    return np.concatenate([wide[k0:k0 + step, p * cfg.nr:(p + 1) * cfg.nr].ravel()
                           for k0 in range(0, k, step) for p in range(panels)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["rows", "columns", "strided"])
@pytest.mark.parametrize("k,n", [(10, 1024), (1, 64), (17, 200), (300, 1000), (256, 129),
                                 (1024, 256), (784, 100)])
def test_pack_b_layout_every_copy_path(k: int, n: int, layout: str, dtype: type) -> None:
    """pack_b against its layout written by hand, for B by rows (copied several panels a row
    at a time, the last, partial panel by masked loads), by columns (transposed in VL x VL
    blocks, K's last block by masked loads: K < VL, K not a multiple of VL, several KC
    slices, a power-of-two stride) and with neither stride 1 (scalar moves); then panel
    ranges that start and end inside a group of panels, as threads split them, each written
    where the whole packing puts it and nothing else."""
    kernel = matmul_kernel(np.dtype(dtype).name)
    cfg = kernel.cfg
    b = np.random.default_rng(7).standard_normal((k, n)).astype(dtype)
    if layout == "columns":
        b = np.asfortranarray(b)
    elif layout == "strided":
        b = np.repeat(np.repeat(b, 2, axis=0), 2, axis=1)[::2, ::2]
    strides = (b.strides[0] // b.itemsize, b.strides[1] // b.itemsize)
    panels = -(-n // cfg.nr)
    whole = np.full(cfg.packed_b_size(k, n), np.nan, dtype)
    kernel.pack_b(b.ctypes.data, *strides, whole.ctypes.data, k, n, 0, panels)
    assert np.array_equal(whole, packed_by_hand(b, cfg))
    for lo, hi in [(1, min(panels, 6)), (min(3, panels - 1), panels), (0, 1)]:
        part = np.full_like(whole, np.nan)
        kernel.pack_b(b.ctypes.data, *strides, part.ctypes.data, k, n, lo, hi)
        inside = np.zeros(whole.size, bool)
        step = slice_length(cfg, k)
        for k0 in range(0, k, step):
            kc = min(step, k - k0)
            start = k0 * panels * cfg.nr
            inside[start + lo * cfg.nr * kc:start + hi * cfg.nr * kc] = True
        assert np.array_equal(part[inside], whole[inside])
        assert np.all(np.isnan(part[~inside]))
