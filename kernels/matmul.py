"""Matrix product C = A @ B (float32, float64) in LLVM IR: packed panels, register blocking.

The structure is Goto's/BLIS's. B is packed once into KC x NR micro-panels (K cut into
slices of about KC: `slice_length`)
(`redraft_matmul_pack_b_<f32|f64>`, callable on column-panel ranges so threads can share the
work). Each thread then computes a range of rows of C (`redraft_matmul_rows_<f32|f64>`,
signatures in the `emit_*` docstrings below): per KC slice of K and MC block of rows it packs A
into MR x KC micro-panels (kept in L1) and runs an MR x NR micro-kernel over the B panels
(streamed from L2): MR * NR/VL accumulators stay in vector registers and every k step is
NR/VL vector loads of B, MR broadcasts of A and MR * NR/VL `llvm.fma` calls. With AVX-512
that is 12 x 32 floats (24 zmm accumulators). Operands are addressed through row and
column strides, so transposed and strided views need no copy.

Narrow products (N up to one vector: N = 10 classes) skip the packing of A, which would cost
more than the product: `redraft_matmul_dot<w>` (A by rows) takes dot products along k against
a transposed copy of B, `redraft_matmul_cols<w>` (A by columns) runs vectors down the rows of
C, each made for a width w >= N so that every lane computes a wanted value; they compile on
demand (about 10 ms each) into gemm_rows' table (MatmulKernel.prepare_narrow); other
layouts, and variants not compiled, take the packed path.

`matmul(a, b)` is the NumPy-facing driver: it compiles once per dtype, packs B and splits
the rows of C over a thread pool (ctypes drops the GIL during each call).
"""
from __future__ import annotations

import ctypes
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np
from llvmlite import ir
from redraft.kernels.llvm_loops import counted_loop, for_range

from .jit_host import CompiledModule, Precompiled, host_vector_bits, precompiled

_I1 = ir.IntType(1)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()


@dataclass(frozen=True)
class GemmConfig:
    """Blocking of the kernel: VL lanes per vector, MR x NR micro-tile, KC/MC/NC blocks."""

    dtype: np.dtype
    vl: int
    mr: int
    nr: int
    kc: int
    mc: int
    nc: int

    @property
    def suffix(self) -> str:
        return "f32" if self.dtype == np.float32 else "f64"

    @property
    def elem(self) -> ir.Type:
        return ir.FloatType() if self.dtype == np.float32 else ir.DoubleType()

    def packed_b_size(self, k: int, n: int) -> int:
        """Elements of the packed copy of a K x N right operand (N rounded up to NR)."""
        return k * (-(-n // self.nr) * self.nr)

    def padded_columns(self, n: int) -> int:
        """Columns the kernel computes for N: one vector for a narrow product, else N rounded
        up to NR (the work that decides whether threads pay)."""
        return self.vl if n <= self.vl else -(-n // self.nr) * self.nr

    @property
    def kc_max(self) -> int:
        """The longest K slice: KC and a quarter, so that K = 784 runs as three slices of
        264 rather than three of 256 and one of 16 (each slice reads and writes C again)."""
        return self.kc + self.kc // 4

    @property
    def workspace_size(self) -> int:
        """Elements of the per-thread A-packing workspace that the row function takes."""
        return self.mc * self.kc_max


def default_config(dtype: np.dtype | str, vector_bits: int | None = None) -> GemmConfig:
    """Blocking for this host: 12 x (2 vectors) with AVX-512's 32 registers, 6 x 2 with 16."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"matmul supports float32 and float64, not {dtype}")
    bits = vector_bits or host_vector_bits()
    vl = bits // (8 * dtype.itemsize)
    mr = 12 if bits >= 512 else 6
    kc = 256 if dtype == np.float32 else 192
    return GemmConfig(dtype, vl, mr, 2 * vl, kc=kc, mc=mr * 12, nc=2 * vl * 16)


# --- small IR helpers -------------------------------------------------------------------


DOT_WIDTHS = (2, 4, 8, 10, 12, 16)   # the narrow kernels' variants by N (rounded up)
DOT_ROWS = 2         # rows of A a dot kernel step reads (2 x 10 accumulators for N = 10)
COLUMN_VECTORS = 2   # vectors of rows of C a column kernel step computes
ROW_PANELS = 4       # NR-column panels of a row-major B that pack_b copies a row of at once
PREFETCH_ROWS = 16   # rows of B ahead that pack_b asks for: rows 4 KiB apart (B 1024 wide)
#                      are each on a page of their own, where the hardware prefetch stops
EDGE_ROWS = (2, 3)   # a last row tile of at most 2/3 of MR rows runs a kernel of that many


def _i64(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


def _declare(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    """The declaration `name` in `module`, added if absent."""
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, fnty, name=name)


def _if(b: ir.IRBuilder, cond: ir.Value, then: Callable[[], None],
        otherwise: Callable[[], None] | None, name: str) -> None:
    """Emit an if/else whose arms fall through to a common join block."""
    fn = b.function
    then_bb = fn.append_basic_block(f"{name}.then")
    else_bb = fn.append_basic_block(f"{name}.else")
    join = fn.append_basic_block(f"{name}.join")
    b.cbranch(cond, then_bb, else_bb)
    b.position_at_end(then_bb)
    then()
    b.branch(join)
    b.position_at_end(else_bb)
    if otherwise is not None:
        otherwise()
    b.branch(join)
    b.position_at_end(join)


class _GemmEmitter:
    """Writes the packing routines, the micro-kernel and the row driver for one config."""

    def __init__(self, module: ir.Module, cfg: GemmConfig) -> None:
        self.module = module
        self.cfg = cfg
        self.elem = cfg.elem
        self.vec = ir.VectorType(cfg.elem, cfg.vl)
        self.align = cfg.dtype.itemsize
        self.fma = _declare(module, f"llvm.fma.v{cfg.vl}{cfg.suffix}",
                            ir.FunctionType(self.vec, [self.vec] * 3))

    # addressing ---------------------------------------------------------------------------

    def at(self, b: ir.IRBuilder, base: ir.Value, offset: ir.Value) -> ir.Value:
        return b.gep(base, [offset], inbounds=True, source_etype=self.elem)

    def vec_at(self, b: ir.IRBuilder, base: ir.Value, offset: ir.Value) -> ir.Value:
        ptr = self.at(b, base, offset)
        if not ptr.type.is_opaque:  # llvmlite's alloca gives a typed pointer
            ptr = b.bitcast(ptr, self.vec.as_pointer())
        return ptr

    def load_vec(self, b: ir.IRBuilder, base: ir.Value, offset: ir.Value) -> ir.Value:
        return b.load(self.vec_at(b, base, offset), typ=self.vec, align=self.align)

    def store_vec(self, b: ir.IRBuilder, value: ir.Value, base: ir.Value,
                  offset: ir.Value) -> None:
        b.store(value, self.vec_at(b, base, offset), align=self.align)

    def splat(self, b: ir.IRBuilder, scalar: ir.Value) -> ir.Value:
        undef = ir.Constant(self.vec, ir.Undefined)
        one = b.insert_element(undef, scalar, ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), self.cfg.vl), [0] * self.cfg.vl)
        return b.shuffle_vector(one, undef, mask)

    def new_function(self, name: str, args: list[ir.Type], internal: bool) -> ir.Function:
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), args), name=name)
        fn.attributes.add("nounwind")
        if internal:
            fn.linkage = "internal"
            fn.attributes.add("alwaysinline")
        return fn

    # packing ------------------------------------------------------------------------------

    def emit_pack_b(self) -> ir.Function:
        """pack_b(B, rsb, csb, Bp, K, N, jp0, jp1): NR-column panels [jp0, jp1) of B, all K.

        Bp holds K in slices of `slice_length` rows; slice p (rows k0..k0+kc) starts at
        k0 * Npad and its panel jp at k0 * Npad + jp * NR * kc, stored k-major (NR contiguous
        values per k).
        Columns past N are zero. Disjoint panel ranges may be packed concurrently.
        """
        cfg = self.cfg
        args = [_PTR, _I64, _I64, _PTR, _I64, _I64, _I64, _I64]
        fn = self.new_function(pack_b_name(cfg), args, internal=False)
        src, rsb, csb, dst, k_total, n_total, jp0, jp1 = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        npad = b.mul(b.sdiv(b.add(n_total, _i64(cfg.nr - 1)), _i64(cfg.nr)), _i64(cfg.nr))

        step = self._k_step(b, k_total)

        def slice_body(k0: ir.Value) -> None:
            kc = _min(b, step, b.sub(k_total, k0))
            base = b.mul(k0, npad)

            def panel_body(jp: ir.Value) -> None:
                j0 = b.mul(jp, _i64(cfg.nr))
                out = b.add(base, b.mul(j0, kc))
                whole = b.icmp_signed("<=", b.add(j0, _i64(cfg.nr)), n_total)
                rows = b.and_(whole, b.icmp_signed("==", csb, _i64(1)))
                columns = b.and_(whole, b.icmp_signed("==", rsb, _i64(1)))
                args = [src, rsb, csb, dst, k0, kc, j0, out, n_total]

                def ragged() -> None:
                    _if(b, b.icmp_signed("==", csb, _i64(1)),
                        lambda: self._outlined(b, "masked", args),
                        lambda: self._outlined(b, "scalar", args), "bmask")

                def strided() -> None:
                    _if(b, columns, lambda: self._outlined(b, "columns", args), ragged,
                        "bcols")

                _if(b, rows, lambda: self._outlined(b, "rows", args), strided, "bfull")

            def group_body(jg: ir.Value) -> None:
                jg1 = b.add(jg, _i64(ROW_PANELS))
                whole = b.and_(b.icmp_signed("<=", jg1, jp1),
                               b.icmp_signed("<=", b.mul(jg1, _i64(cfg.nr)), n_total))
                _if(b, b.and_(whole, b.icmp_signed("==", csb, _i64(1))),
                    lambda: self._outlined(b, "group", [src, rsb, csb, dst, k0, kc, jg, base,
                                                        n_total]),
                    lambda: counted_loop(b, jg, _min(b, jg1, jp1), 1, panel_body, "jp"),
                    "bgroup")

            counted_loop(b, jp0, jp1, ROW_PANELS, group_body, "jg")

        counted_loop(b, _i64(0), k_total, step, slice_body, "k0")
        b.ret_void()
        return fn

    def _k_step(self, b: ir.IRBuilder, k_total: ir.Value) -> ir.Value:
        """slice_length(cfg, K) in IR: pack_b and gemm_rows both cut K by it, so the packed
        B has the slices the row function reads."""
        longest = _i64(self.cfg.kc_max)
        slices = b.sdiv(b.add(k_total, _i64(self.cfg.kc_max - 1)), longest)
        slices = b.select(b.icmp_signed("<", slices, _i64(1)), _i64(1), slices)
        step = b.sdiv(b.add(k_total, b.sub(slices, _i64(1))), slices)
        return _min(b, b.mul(b.sdiv(b.add(step, _i64(7)), _i64(8)), _i64(8)), longest)

    def _outlined(self, b: ir.IRBuilder, variant: str, args: list[ir.Value]) -> None:
        """Call pack_b's copy `variant` (the method `_copy_b_<variant>`; `args`: src, rsb,
        csb, dst, k0, kc, j0, out, N) as a function of its own, made on first use and never
        inlined, so that registers are allocated per copy loop: in one function the values
        that the transposing copy keeps live made the code generator spill the masked
        copy's pointers, and packing a 1024 x 10 B took 2.6 us more (3.6 instead of 1)."""
        name = f"redraft_matmul_pack_b_{variant}_{self.cfg.suffix}"
        fn = self.module.globals.get(name)
        if fn is None:
            types = [_PTR, _I64, _I64, _PTR, _I64, _I64, _I64, _I64, _I64]
            fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), types), name=name)
            fn.linkage = "internal"
            fn.attributes.add("nounwind")
            fn.attributes.add("noinline")
            inner = ir.IRBuilder(fn.append_basic_block("entry"))
            getattr(self, f"_copy_b_{variant}")(inner, *fn.args)
            inner.ret_void()
        b.call(fn, args)

    def _copy_b_group(self, b, src, rsb, csb, dst, k0, kc, jg, base, n_total) -> None:
        """ROW_PANELS whole panels from jg of a B stored by rows, a row of all of them per
        k: each row of B is read in one run of ROW_PANELS * NR values, not NR at a time
        with the rest left to later panels, which a row stride that is a multiple of 4 KiB
        (B 1024 x 1024) evicted first from the few cache sets its rows share (2x slower)."""
        cfg = self.cfg
        j0 = b.mul(jg, _i64(cfg.nr))
        panel = b.mul(kc, _i64(cfg.nr))
        out = b.add(base, b.mul(j0, kc))

        line = 64 // cfg.dtype.itemsize

        def row(k: ir.Value) -> None:
            row_src = b.add(b.mul(b.add(k0, k), rsb), j0)
            row_dst = b.add(out, b.mul(k, _i64(cfg.nr)))
            ahead = b.add(row_src, b.mul(_i64(PREFETCH_ROWS), rsb))
            for j in range(0, ROW_PANELS * cfg.nr, line):
                self.prefetch(b, src, b.add(ahead, _i64(j)), write=False)
            for p in range(ROW_PANELS):
                at = b.add(row_dst, b.mul(panel, _i64(p)))
                for v in range(0, cfg.nr, cfg.vl):
                    value = self.load_vec(b, src, b.add(row_src, _i64(p * cfg.nr + v)))
                    self.store_vec(b, value, dst, b.add(at, _i64(v)))

        counted_loop(b, _i64(0), kc, 1, row, "kg")

    def _copy_b_rows(self, b, src, rsb, csb, dst, k0, kc, j0, out, n_total) -> None:
        cfg = self.cfg

        def row(k: ir.Value) -> None:
            row_src = b.add(b.mul(b.add(k0, k), rsb), j0)
            row_dst = b.add(out, b.mul(k, _i64(cfg.nr)))
            for v in range(0, cfg.nr, cfg.vl):
                value = self.load_vec(b, src, b.add(row_src, _i64(v)))
                self.store_vec(b, value, dst, b.add(row_dst, _i64(v)))

        counted_loop(b, _i64(0), kc, 1, row, "kv")

    def _copy_b_masked(self, b, src, rsb, csb, dst, k0, kc, j0, out, n_total) -> None:
        """The last, partial panel of a B stored by rows (a narrow B: N = 10 is all of it):
        per k, masked vector loads of the columns left and whole stores (zeros past N)."""
        cfg = self.cfg
        i32 = ir.IntType(32)
        ivec = ir.VectorType(i32, cfg.vl)
        left = b.trunc(b.sub(n_total, j0), i32)
        left = b.shuffle_vector(b.insert_element(ir.Constant(ivec, ir.Undefined), left,
                                                 ir.Constant(i32, 0)),
                                ir.Constant(ivec, ir.Undefined), ir.Constant(ivec, [0] * cfg.vl))
        masks = [b.icmp_signed("<", ir.Constant(ivec, list(range(v, v + cfg.vl))), left)
                 for v in range(0, cfg.nr, cfg.vl)]
        load = _declare(self.module, f"llvm.masked.load.v{cfg.vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, masks[0].type, self.vec]))
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * cfg.vl)

        def row(k: ir.Value) -> None:
            row_src = b.add(b.mul(b.add(k0, k), rsb), j0)
            row_dst = b.add(out, b.mul(k, _i64(cfg.nr)))
            for g, mask in enumerate(masks):
                ptr = self.at(b, src, b.add(row_src, _i64(g * cfg.vl)))
                value = b.call(load, [ptr, ir.Constant(i32, self.align), mask, zero])
                self.store_vec(b, value, dst, b.add(row_dst, _i64(g * cfg.vl)))

        counted_loop(b, _i64(0), kc, 1, row, "km")

    def _copy_b_columns(self, b, src, rsb, csb, dst, k0, kc, j0, out, n_total) -> None:
        """A whole panel of a B stored by columns (B.T row-major, the `x @ w.T` layout) in
        VL x VL blocks: VL values along k from each of VL columns, transposed in registers
        and stored VL values of j per k. A block reads VL columns, not the panel's NR: at a
        stride that is a multiple of 4 KiB (B.T 1024 x 1024) the lines of all the columns
        read at once share one L1 set, and NR of them (more than its ways) ran the packing
        1.8x slower. The last block of k (all of K when K < VL: 128x10 @ 10x1024) is read
        by masked loads and stored as far as K goes (scalar moves took 5.6 us, this 3.0).
        One transpose in the code (each costs milliseconds of code generation)."""
        cfg = self.cfg
        vl = cfg.vl
        i32 = ir.IntType(32)
        ivec = ir.VectorType(i32, vl)
        lanes = ir.Constant(ivec, list(range(vl)))
        pad = ir.Constant(self.vec, ir.Undefined)
        load = _declare(self.module, f"llvm.masked.load.v{vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, ir.VectorType(_I1, vl), self.vec]))
        k_end = b.mul(b.sdiv(b.add(kc, _i64(vl - 1)), _i64(vl)), _i64(vl))

        def columns(g: ir.Value) -> None:
            def block(kk: ir.Value) -> None:
                left = _min(b, b.sub(kc, kk), _i64(vl))
                mask = b.icmp_signed("<", lanes, self._splat_i32(b, b.trunc(left, i32), ivec))
                first = b.add(b.mul(b.add(j0, g), csb), b.add(k0, kk))
                rows = [b.call(load, [self.at(b, src, b.add(first, b.mul(_i64(t), csb))),
                                      ir.Constant(i32, self.align), mask, pad])
                        for t in range(vl)]
                transposed = self._transpose(b, rows)
                base = b.add(out, b.add(b.mul(kk, _i64(cfg.nr)), g))

                def store(t: int) -> None:
                    self.store_vec(b, transposed[t], dst, b.add(base, _i64(t * cfg.nr)))

                def whole() -> None:
                    for t in range(1, vl):
                        store(t)

                def part() -> None:
                    for t in range(1, vl):
                        with b.if_then(b.icmp_signed("<", _i64(t), left)):
                            store(t)

                store(0)  # (kk < kc: the block has at least one value of k)
                _if(b, b.icmp_signed("==", left, _i64(vl)), whole, part, "kpart")

            counted_loop(b, _i64(0), k_end, vl, block, "kt")

        counted_loop(b, _i64(0), _i64(cfg.nr), vl, columns, "jt")

    def _transpose(self, b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
        """The VL x VL transpose of `rows` (VL vectors): one two-input shuffle per row and
        bit of the index, each stage swapping that bit between row and column index."""
        vl = self.cfg.vl
        i32 = ir.IntType(32)
        h = vl // 2
        while h:
            lo = [j if not j & h else vl + j - h for j in range(vl)]
            hi = [j + h if not j & h else vl + j for j in range(vl)]
            new = list(rows)
            for i in range(vl):
                if i & h:
                    continue
                pair = (rows[i], rows[i + h])
                new[i] = b.shuffle_vector(*pair, ir.Constant(ir.VectorType(i32, vl), lo))
                new[i + h] = b.shuffle_vector(*pair, ir.Constant(ir.VectorType(i32, vl), hi))
            rows = new
            h //= 2
        return rows

    def _copy_b_scalar(self, b, src, rsb, csb, dst, k0, kc, j0, out, n_total) -> None:
        cfg = self.cfg
        zero = ir.Constant(self.elem, 0.0)

        def row(k: ir.Value) -> None:
            row_src = b.mul(b.add(k0, k), rsb)
            row_dst = b.add(out, b.mul(k, _i64(cfg.nr)))

            def col(j: ir.Value) -> None:
                column = b.add(j0, j)
                inside = b.icmp_signed("<", column, n_total)
                safe = b.select(inside, column, _i64(0))
                value = b.load(self.at(b, src, b.add(row_src, b.mul(safe, csb))), typ=self.elem)
                b.store(b.select(inside, value, zero), self.at(b, dst, b.add(row_dst, j)))

            counted_loop(b, _i64(0), _i64(cfg.nr), 1, col, "js")

        counted_loop(b, _i64(0), kc, 1, row, "ks")

    def emit_pack_a(self) -> ir.Function:
        """pack_a(A, rsa, csa, Ap, i0, mc, k0, kc): rows i0..i0+mc of A as MR-row panels.

        Panel ir starts at ir * MR * kc and holds MR consecutive values per k; rows past
        mc are zero.
        """
        cfg = self.cfg
        args = [_PTR, _I64, _I64, _PTR, _I64, _I64, _I64, _I64]
        fn = self.new_function(f"redraft_matmul_pack_a_{cfg.suffix}", args, internal=True)
        src, rsa, csa, dst, i0, mc, k0, kc = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        zero = ir.Constant(self.elem, 0.0)

        def panel(ir0: ir.Value) -> None:
            out = b.mul(ir0, kc)
            rows = [b.add(ir0, _i64(i)) for i in range(cfg.mr)]
            inside = [b.icmp_signed("<", r, mc) for r in rows]
            row_off = [b.mul(b.add(i0, b.select(ok, r, _i64(0))), rsa)
                       for r, ok in zip(rows, inside)]

            def column(k: ir.Value) -> None:
                col_off = b.mul(b.add(k0, k), csa)
                dst_k = b.add(out, b.mul(k, _i64(cfg.mr)))
                for i in range(cfg.mr):
                    value = b.load(self.at(b, src, b.add(row_off[i], col_off)), typ=self.elem)
                    b.store(b.select(inside[i], value, zero),
                            self.at(b, dst, b.add(dst_k, _i64(i))))

            whole = b.icmp_signed("<=", b.add(ir0, _i64(cfg.mr)), mc)
            by_rows = b.and_(whole, b.icmp_signed("==", csa, _i64(1)))
            by_columns = b.and_(b.and_(whole, b.icmp_signed("==", rsa, _i64(1))),
                                b.icmp_signed("!=", csa, _i64(1)))
            start = b.select(by_rows, b.mul(b.sdiv(kc, _i64(cfg.vl)), _i64(cfg.vl)),
                             b.select(by_columns, kc, _i64(0)))
            _if(b, by_rows, lambda: self._pack_a_rows(b, src, row_off, k0, dst, out, start),
                None, "arows")
            _if(b, by_columns,
                lambda: self._pack_a_columns(b, src, row_off[0], k0, csa, dst, out, kc),
                None, "acols")
            counted_loop(b, start, kc, 1, column, "ka")

        counted_loop(b, _i64(0), mc, cfg.mr, panel, "ir")
        b.ret_void()
        return fn

    def _pack_a_rows(self, b, src, row_off, k0, dst, out, k_end) -> None:
        """A whole MR-row panel of a row-major A (the `x @ w` layout), k = 0..k_end (a
        multiple of VL): VL values along k from each row, transposed in registers (rows
        past MR are padding) and stored MR values per k."""
        cfg = self.cfg
        vl, mr = cfg.vl, cfg.mr
        pad = ir.Constant(self.vec, ir.Undefined)

        def block(kk: ir.Value) -> None:
            at = b.add(k0, kk)
            for lo in range(0, mr, vl):
                count = min(vl, mr - lo)
                rows = [self.load_vec(b, src, b.add(row_off[lo + t], at)) for t in range(count)]
                columns = self._transpose(b, rows + [pad] * (vl - count))
                for t, column in enumerate(columns):
                    where = b.add(out, b.add(b.mul(b.add(kk, _i64(t)), _i64(mr)), _i64(lo)))
                    if count == vl:
                        self.store_vec(b, column, dst, where)
                        continue
                    lanes = ir.Constant(ir.VectorType(ir.IntType(32), count), list(range(count)))
                    piece = b.shuffle_vector(column, pad, lanes)
                    ptr = self.at(b, dst, where)
                    if not ptr.type.is_opaque:
                        ptr = b.bitcast(ptr, piece.type.as_pointer())
                    b.store(piece, ptr, align=self.align)

        counted_loop(b, _i64(0), k_end, vl, block, "kav")

    def _pack_a_columns(self, b, src, first_row, k0, csa, dst, out, kc) -> None:
        """A whole MR-row panel of an A stored by columns (unit row stride: the `x.T @ g`
        layout), k = 0..kc: the MR values of each k are adjacent in memory, so each k is one
        masked load of MR lanes and one store (the scalar path spent a load, a select and a
        store on every value)."""
        cfg = self.cfg
        vl, mr = cfg.vl, cfg.mr
        i32 = ir.IntType(32)
        pieces = [(lo, min(vl, mr - lo)) for lo in range(0, mr, vl)]
        lanes = ir.VectorType(_I1, vl)
        load = _declare(self.module, f"llvm.masked.load.v{vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, lanes, self.vec]))
        pad = ir.Constant(self.vec, ir.Undefined)
        align = ir.Constant(i32, self.align)

        def column(k: ir.Value) -> None:
            at = b.add(first_row, b.mul(b.add(k0, k), csa))
            where = b.add(out, b.mul(k, _i64(mr)))
            for lo, count in pieces:
                mask = ir.Constant(lanes, [t < count for t in range(vl)])
                value = b.call(load, [self.at(b, src, b.add(at, _i64(lo))), align, mask, pad])
                if count < vl:
                    part = ir.Constant(ir.VectorType(i32, count), list(range(count)))
                    value = b.shuffle_vector(value, pad, part)
                ptr = self.at(b, dst, b.add(where, _i64(lo)))
                if not ptr.type.is_opaque:
                    ptr = b.bitcast(ptr, value.type.as_pointer())
                b.store(value, ptr, align=self.align)

        counted_loop(b, _i64(0), kc, 1, column, "kac")

    # micro-kernel -------------------------------------------------------------------------

    def emit_micro_kernel(self, rows: int | None = None) -> ir.Function:
        """ukernel(Ap, Bp, C, rsc, kc, mr, nr, first): C[:mr, :nr] (+)= Ap panel @ Bp panel.

        `rows` (below MR): a variant for the last row tile of a block, computing only its
        first `rows` rows of the MR-row A panel (a 128-row product ends in a tile of 8, which
        the MR kernel computes as 12); made out of line, it is called once per NR panel.
        """
        cfg = self.cfg
        rows = rows or cfg.mr
        args = [_PTR, _PTR, _PTR, _I64, _I64, _I64, _I64, _I1]
        suffix = "" if rows == cfg.mr else f"{rows}"
        fn = self.new_function(f"redraft_matmul_ukernel{suffix}_{cfg.suffix}", args,
                               internal=True)
        if rows != cfg.mr:
            fn.attributes.discard("alwaysinline")
            fn.attributes.add("noinline")
        ap, bp, c, rsc, kc, mr, nr, first = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        self._prefetch_tile(b, c, rsc, rows)
        acc = self._accumulate(b, ap, bp, kc, rows)
        if rows != cfg.mr:  # (a last tile: its stores under masks cost little, once a panel)
            self._store_edge(b, acc, c, rsc, mr, nr, first)
            b.ret_void()
            return fn
        full = b.and_(b.icmp_signed("==", mr, _i64(rows)),
                      b.icmp_signed("==", nr, _i64(cfg.nr)))
        _if(b, full, lambda: self._store_full(b, acc, c, rsc, first),
            lambda: self._store_edge(b, acc, c, rsc, mr, nr, first), "full")
        b.ret_void()
        return fn

    def prefetch(self, b: ir.IRBuilder, base: ir.Value, offset: ir.Value, write: bool) -> None:
        """Ask for the cache line holding base[offset] (a hint: never faults)."""
        i32 = ir.IntType(32)
        prefetch = _declare(self.module, "llvm.prefetch.p0",
                            ir.FunctionType(ir.VoidType(), [_PTR, i32, i32, i32]))
        flags = [ir.Constant(i32, v) for v in (int(write), 3, 1)]  # (write,) keep, data
        b.call(prefetch, [self.at(b, base, offset)] + flags)

    def _prefetch_tile(self, b: ir.IRBuilder, c, rsc, rows: int) -> None:
        """Ask for the C tile's cache lines now; they are read after the k loop."""
        cfg = self.cfg
        line = 64 // cfg.dtype.itemsize
        for i in range(rows):
            row = b.mul(_i64(i), rsc)
            for j in range(0, cfg.nr, line):
                self.prefetch(b, c, b.add(row, _i64(j)), write=True)

    def _accumulate(self, b: ir.IRBuilder, ap, bp, kc, rows: int) -> list[list[ir.Value]]:
        """The k loop: rows x NV vector accumulators carried in phis (registers), reading
        the first `rows` of the MR values the A panel holds per k."""
        cfg = self.cfg
        nv = cfg.nr // cfg.vl
        fn = b.function
        entry = b.block
        loop = fn.append_basic_block("kloop")
        done = fn.append_basic_block("kdone")
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * cfg.vl)
        b.cbranch(b.icmp_signed(">", kc, _i64(0)), loop, done)
        b.position_at_end(loop)
        k = b.phi(_I64, name="k")
        k.add_incoming(_i64(0), entry)
        phis = [[b.phi(self.vec) for _ in range(nv)] for _ in range(rows)]
        for row in phis:
            for p in row:
                p.add_incoming(zero, entry)
        b_off = b.mul(k, _i64(cfg.nr))
        a_off = b.mul(k, _i64(cfg.mr))
        bvecs = [self.load_vec(b, bp, b.add(b_off, _i64(v * cfg.vl))) for v in range(nv)]
        new = []
        for i in range(rows):
            a = b.load(self.at(b, ap, b.add(a_off, _i64(i))), typ=self.elem)
            a = self.splat(b, a)
            new.append([b.call(self.fma, [a, bvecs[v], phis[i][v]]) for v in range(nv)])
        k_next = b.add(k, _i64(1))
        k.add_incoming(k_next, loop)
        for row, row_new in zip(phis, new):
            for p, value in zip(row, row_new):
                p.add_incoming(value, loop)
        b.cbranch(b.icmp_signed("<", k_next, kc), loop, done)
        b.position_at_end(done)
        result = []
        for row, row_new in zip(phis, new):
            out_row = []
            for value in row_new:
                merged = b.phi(self.vec)
                merged.add_incoming(zero, entry)
                merged.add_incoming(value, loop)
                out_row.append(merged)
            result.append(out_row)
        return result

    def _store_full(self, b: ir.IRBuilder, acc, c, rsc, first) -> None:
        cfg = self.cfg

        def write(accumulate: bool) -> None:
            for i, row in enumerate(acc):
                row_off = b.mul(_i64(i), rsc)
                for v, value in enumerate(row):
                    off = b.add(row_off, _i64(v * cfg.vl))
                    if accumulate:
                        value = b.fadd(value, self.load_vec(b, c, off))
                    self.store_vec(b, value, c, off)

        _if(b, first, lambda: write(False), lambda: write(True), "first")

    def _store_edge(self, b: ir.IRBuilder, acc, c, rsc, mr, nr, first) -> None:
        """A tile cut by the edge of C (mr < MR rows or nr < NR columns): each row below mr
        stored as whole vectors under a mask of the columns below nr (accumulated into C
        after the first K slice). The row tiles of a 128-row product end in one of 8 rows,
        so every product with M not a multiple of MR has a row of these tiles: by vectors
        they cost about what full tiles do (by scalars through a buffer they cost more
        than the multiply when K is small: 128x10 @ 10x1024)."""
        cfg = self.cfg
        i32 = ir.IntType(32)
        masks = self._column_masks(b, nr)
        load = _declare(self.module, f"llvm.masked.load.v{cfg.vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, masks[0].type, self.vec]))
        store = _declare(self.module, f"llvm.masked.store.v{cfg.vl}{cfg.suffix}.p0",
                         ir.FunctionType(ir.VoidType(), [self.vec, _PTR, i32, masks[0].type]))
        align = ir.Constant(i32, self.align)
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * cfg.vl)
        for i, row in enumerate(acc):
            with b.if_then(b.icmp_signed("<", _i64(i), mr)):
                row_off = b.mul(_i64(i), rsc)
                for v, value in enumerate(row):
                    ptr = self.at(b, c, b.add(row_off, _i64(v * cfg.vl)))
                    old = b.call(load, [ptr, align, masks[v], zero])
                    value = b.select(first, value, b.fadd(value, old))
                    b.call(store, [value, ptr, align, masks[v]])

    def _column_masks(self, b: ir.IRBuilder, nr: ir.Value) -> list[ir.Value]:
        """Per vector of a tile row, the lanes whose column is below `nr`."""
        cfg = self.cfg
        i32 = ir.IntType(32)
        ivec = ir.VectorType(i32, cfg.vl)
        limit = self._splat_i32(b, b.trunc(nr, i32), ivec)
        return [b.icmp_signed("<", ir.Constant(ivec, list(range(v, v + cfg.vl))), limit)
                for v in range(0, cfg.nr, cfg.vl)]

    # driver -------------------------------------------------------------------------------

    def emit_gemm_rows(self, pack_a: ir.Function, ukernels: list[tuple[int, ir.Function]]
                       ) -> ir.Function:
        """rows(A, rsa, csa, Bp, C, rsc, N, K, m0, m1, Ap): C[m0:m1] = A[m0:m1] @ B.

        Strides are in elements; C needs unit column stride. Bp is B packed by pack_b for
        all of N (`GemmConfig.packed_b_size`), Ap a private workspace of
        `GemmConfig.workspace_size` elements. Disjoint row ranges may run concurrently.
        """
        cfg = self.cfg
        fn = self.new_function(gemm_rows_name(cfg), ROWS_ARGS, internal=False)
        a, rsa, csa, bp, c, rsc, n_total, k_total, m0, m1, ap = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        entry = self._narrow_entry(b, fn.args)
        fnty = ir.FunctionType(ir.VoidType(), [arg.type for arg in fn.args])
        _if(b, b.icmp_unsigned("!=", entry, _i64(0)),
            lambda: b.call(b.inttoptr(entry, ir.PointerType(fnty)), list(fn.args)),
            lambda: self._blocked_rows(b, pack_a, ukernels, fn.args), "narrow")
        b.ret_void()
        return fn

    def _narrow_entry(self, b: ir.IRBuilder, args) -> ir.Value:
        """The address of the narrow variant for this product (N <= VL, its layout and
        width) if MatmulKernel.prepare_narrow compiled it into the table, else 0 (the
        packed path then computes it)."""
        cfg = self.cfg
        a, rsa, csa, bp, c, rsc, n_total, k_total, m0, m1, ap = args
        widths = narrow_widths(cfg)
        table = ir.GlobalVariable(self.module, ir.ArrayType(_I64, 2 * len(widths)),
                                  narrow_table_name(cfg))
        table.initializer = ir.Constant(table.value_type, None)
        fits = b.icmp_signed("<=", b.mul(b.add(k_total, _i64(cfg.vl)), _i64(cfg.vl)),
                             _i64(cfg.workspace_size))
        dotted = b.and_(b.icmp_signed("==", csa, _i64(1)), fits)
        columns = b.icmp_signed("==", rsa, _i64(1))
        slot = _i64(0)
        for w in widths[:-1]:
            slot = b.add(slot, b.zext(b.icmp_signed(">", n_total, _i64(w)), _I64))
        slot = b.add(slot, b.select(dotted, _i64(0), _i64(len(widths))))
        slot = _min(b, slot, _i64(2 * len(widths) - 1))  # (N > VL reads a slot, unused)
        entry = b.load(b.gep(table, [_i64(0), slot], inbounds=True,
                             source_etype=table.value_type), typ=_I64)
        narrow = b.and_(b.icmp_signed("<=", n_total, _i64(cfg.vl)), b.or_(dotted, columns))
        return b.select(narrow, entry, _i64(0))

    def emit_column_rows(self, nv: int) -> ir.Function:
        """cols(A, rsa, csa, Bp, C, rsc, N, K, m0, m1, W): C[m0:m1] = A[m0:m1] @ B for
        N <= nv, A stored by columns (unit row stride: the `x.T @ g` layout).

        Vectors run down the rows of C: for RV = min(2, 24 // nv) vectors of rows at a time
        each k step loads RV vectors of A's column k and broadcasts nv values of B's row k
        into RV * nv FMAs, every lane useful; the accumulators (columns of a block of C) are
        copied out by rows. A last, short block reads under row masks.
        """
        cfg = self.cfg
        fn = self.new_function(narrow_name(cfg, "cols", nv), ROWS_ARGS, internal=False)
        a, _, csa, bp, c, rsc, n_total, k_total, m0, m1, _ = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        vl = cfg.vl
        rv = max(1, min(COLUMN_VECTORS, 24 // nv))
        i32 = ir.IntType(32)
        ivec = ir.VectorType(i32, vl)
        lanes = ir.Constant(ivec, list(range(vl)))
        mask_n = b.icmp_signed("<", lanes, self._splat_i32(b, b.trunc(n_total, i32), ivec))
        load = _declare(self.module, f"llvm.masked.load.v{vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, mask_n.type, self.vec]))
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * vl)
        align = ir.Constant(i32, self.align)
        # the block's columns are copied out through this tile by scalar moves: transposing
        # them in registers ran as fast but took 12 ms of code generation per transpose
        tile = b.alloca(self.elem, size=nv * rv * vl, name="tile")

        def block(i0: ir.Value) -> None:
            left = b.trunc(_min(b, _i64(rv * vl), b.sub(m1, i0)), i32)
            masks = [b.icmp_signed("<", ir.Constant(ivec, list(range(v * vl, (v + 1) * vl))),
                                   self._splat_i32(b, left, ivec)) for v in range(rv)]
            count = rv * nv

            def step(k: ir.Value, carried: list) -> list:
                acc, column, brow = carried[:count], carried[count], carried[count + 1]
                avecs = [b.call(load, [self.at(b, column, _i64(v * vl)), align, masks[v], zero])
                         for v in range(rv)]
                new = list(acc)
                for j in range(nv):
                    bj = self.splat(b, b.load(self.at(b, brow, _i64(j)), typ=self.elem))
                    for v in range(rv):
                        new[v * nv + j] = b.call(self.fma, [avecs[v], bj, acc[v * nv + j]])
                return new + [self.at(b, column, csa), self.at(b, brow, _i64(cfg.nr))]

            out = for_range(b, _i64(0), k_total, 1,
                            [zero] * count + [self.at(b, a, i0), bp], step, "ck")
            for v in range(rv):
                for j in range(nv):
                    self.store_vec(b, out[v * nv + j], tile, _i64((j * rv + v) * vl))

            def row(r: ir.Value) -> None:
                def column(j: ir.Value) -> None:
                    value = b.load(self.at(b, tile, b.add(b.mul(j, _i64(rv * vl)), r)),
                                   typ=self.elem)
                    b.store(value, self.at(b, c, b.add(b.mul(b.add(i0, r), rsc), j)))

                counted_loop(b, _i64(0), n_total, 1, column, "cj")

            counted_loop(b, _i64(0), b.zext(left, _I64), 1, row, "cr")

        counted_loop(b, m0, m1, rv * vl, block, "crow")
        b.ret_void()
        return fn

    def emit_dot_rows(self, nv: int) -> ir.Function:
        """dot(A, rsa, csa, Bp, C, rsc, N, K, m0, m1, W): C[m0:m1] = A[m0:m1] @ B for
        N <= nv, A stored by rows (unit column stride), W a workspace (gemm_rows' Ap).

        A narrow product as dot products along k: B's nv columns are copied transposed
        into W (VL values of k per vector, zero past K and N), then for R = min(2, 24 // nv) rows
        at a time each step loads VL values of k from every row of A and makes R * nv FMAs
        into R * nv vector accumulators, every lane useful (the packed path uses N of
        VL); the lanes of each accumulator are summed by a fixed tree at the end. Per row
        the arithmetic is the same whichever rows share its block, so splits over threads
        change no bit.
        """
        cfg = self.cfg
        fn = self.new_function(narrow_name(cfg, "dot", nv), ROWS_ARGS, internal=False)
        a, rsa, _, bp, c, rsc, n_total, k_total, m0, m1, w = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        vl = cfg.vl
        blocks = b.sdiv(b.add(k_total, _i64(vl - 1)), _i64(vl))
        self._transpose_b(b, bp, w, k_total, blocks, nv)
        i32 = ir.IntType(32)
        ivec = ir.VectorType(i32, vl)
        mask_n = b.icmp_signed("<", ir.Constant(ivec, list(range(vl))),
                               self._splat_i32(b, b.trunc(n_total, i32), ivec))
        k_left = b.trunc(b.sub(k_total, b.mul(b.sdiv(k_total, _i64(vl)), _i64(vl))), i32)
        mask_k = b.icmp_signed("<", ir.Constant(ivec, list(range(vl))),
                               self._splat_i32(b, k_left, ivec))
        store = _declare(self.module, f"llvm.masked.store.v{vl}{cfg.suffix}.p0",
                         ir.FunctionType(ir.VoidType(), [self.vec, _PTR, i32, mask_n.type]))
        rows_per_block = max(1, min(DOT_ROWS, 24 // nv))

        def rows(i0: ir.Value, count: int) -> None:
            starts = [self.at(b, a, b.mul(b.add(i0, _i64(r)), rsa)) for r in range(count)]
            acc = self._dot_accumulate(b, starts, w, k_total, nv, mask_k)
            for r in range(count):
                sums = self._lane_sums(b, acc[r * nv:(r + 1) * nv])
                ptr = self.at(b, c, b.mul(b.add(i0, _i64(r)), rsc))
                b.call(store, [sums, ptr, ir.Constant(i32, self.align), mask_n])

        whole_end = b.add(m0, b.mul(b.sdiv(b.sub(m1, m0), _i64(rows_per_block)),
                                    _i64(rows_per_block)))
        counted_loop(b, m0, whole_end, rows_per_block, lambda i0: rows(i0, rows_per_block),
                     "drow")
        counted_loop(b, whole_end, m1, 1, lambda i: rows(i, 1), "done")
        b.ret_void()
        return fn

    @staticmethod
    def _splat_i32(b: ir.IRBuilder, value: ir.Value, ivec: ir.VectorType) -> ir.Value:
        i32 = ir.IntType(32)
        one = b.insert_element(ir.Constant(ivec, ir.Undefined), value, ir.Constant(i32, 0))
        return b.shuffle_vector(one, ir.Constant(ivec, ir.Undefined),
                                ir.Constant(ivec, [0] * ivec.count))

    def _transpose_b(self, b: ir.IRBuilder, bp, w, k_total, blocks, nv: int) -> None:
        """W[(kb * nv + j) * VL + t] = B[kb * VL + t, j] (0 for k >= K) from the packed B (its
        single panel, zero past N): per k, its nv values scattered to their columns' vectors
        by scalar moves (a transpose in registers took 12 ms of code generation)."""
        cfg = self.cfg
        vl = cfg.vl

        def row(k: ir.Value) -> None:
            src = b.mul(k, _i64(cfg.nr))
            dst = b.add(b.mul(b.sdiv(k, _i64(vl)), _i64(nv * vl)), b.srem(k, _i64(vl)))
            for j in range(nv):
                value = b.load(self.at(b, bp, b.add(src, _i64(j))), typ=self.elem)
                b.store(value, self.at(b, w, b.add(dst, _i64(j * vl))))

        counted_loop(b, _i64(0), k_total, 1, row, "bt")
        zero = ir.Constant(self.elem, 0.0)

        def pad(k: ir.Value) -> None:
            dst = b.add(b.mul(b.sdiv(k, _i64(vl)), _i64(nv * vl)), b.srem(k, _i64(vl)))
            for j in range(nv):
                b.store(zero, self.at(b, w, b.add(dst, _i64(j * vl))))

        counted_loop(b, k_total, b.mul(blocks, _i64(vl)), 1, pad, "bpad")

    def _dot_accumulate(self, b: ir.IRBuilder, starts, w, k_total, nv: int,
                        mask_k) -> list[ir.Value]:
        """Accumulators acc[r * nv + j] = sum over k-blocks of A[r, block] * Bt[block, j],
        the last, partial block of A read with the mask `mask_k` (zeros past K)."""
        cfg = self.cfg
        vl = cfg.vl
        i32 = ir.IntType(32)
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * vl)
        count = len(starts) * nv
        load = _declare(self.module, f"llvm.masked.load.v{vl}{cfg.suffix}.p0",
                        ir.FunctionType(self.vec, [_PTR, i32, mask_k.type, self.vec]))

        def step(acc, pointers, wptr, read) -> list:
            avecs = [read(p) for p in pointers]
            new = list(acc)
            for j in range(nv):
                bvec = self.load_vec(b, wptr, _i64(j * vl))
                for r, avec in enumerate(avecs):
                    new[r * nv + j] = b.call(self.fma, [avec, bvec, acc[r * nv + j]])
            return new

        def body(kb: ir.Value, carried: list) -> list:
            acc, pointers, wptr = carried[:count], carried[count:-1], carried[-1]
            new = step(acc, pointers, wptr, lambda p: self.load_vec(b, p, _i64(0)))
            pointers = [self._opaque(b, self.at(b, p, _i64(vl))) for p in pointers]
            return new + pointers + [self.at(b, wptr, _i64(nv * vl))]

        full = b.sdiv(k_total, _i64(vl))
        out = for_range(b, _i64(0), full, 1, [zero] * count + list(starts) + [w], body, "dk")
        acc, pointers, wptr = out[:count], out[count:-1], out[-1]
        partial = b.icmp_signed("<", b.mul(full, _i64(vl)), k_total)
        entry = b.block
        with b.if_then(partial):
            tail = step(acc, pointers, wptr, lambda p: b.call(
                load, [p, ir.Constant(i32, self.align), mask_k, zero]))
            tail_block = b.block
        merged = []
        for before, after in zip(acc, tail):
            phi = b.phi(self.vec)
            phi.add_incoming(before, entry)
            phi.add_incoming(after, tail_block)
            merged.append(phi)
        return merged

    def _lane_sums(self, b: ir.IRBuilder, vectors: list[ir.Value]) -> ir.Value:
        """A vector whose lane j is the sum of the lanes of vectors[j] (up to VL of them):
        a transposing tree, each level adding two shuffles of a pair of vectors, so that
        lane runs of half the length hold partial sums of twice as many vectors (VL - 1
        adds for VL vectors, not VL * log2(VL)); the order of the adds is fixed."""
        vl = self.cfg.vl
        i32 = ir.IntType(32)
        zero = ir.Constant(self.vec, [ir.Constant(self.elem, 0.0)] * vl)
        current = list(vectors) + [zero] * (vl - len(vectors))
        half = vl // 2
        while half:
            def mask(offset: int) -> ir.Constant:
                lanes = [(lane // half // 2) * 2 * half + offset + lane % half
                         + (vl if (lane // half) % 2 else 0) for lane in range(vl)]
                return ir.Constant(ir.VectorType(i32, vl), lanes)

            current = [b.fadd(b.shuffle_vector(current[i], current[i + half], mask(0)),
                              b.shuffle_vector(current[i], current[i + half], mask(half)))
                       for i in range(half)]
            half //= 2
        return current[0]

    def _blocked_rows(self, b: ir.IRBuilder, pack_a: ir.Function,
                      ukernels: list[tuple[int, ir.Function]], args) -> None:
        """The packed path of gemm_rows: per KC slice and MC block, pack A and sweep."""
        cfg = self.cfg
        a, rsa, csa, bp, c, rsc, n_total, k_total, m0, m1, ap = args
        npad = b.mul(b.sdiv(b.add(n_total, _i64(cfg.nr - 1)), _i64(cfg.nr)), _i64(cfg.nr))

        step = self._k_step(b, k_total)

        def k_slice(k0: ir.Value) -> None:
            kc = _min(b, step, b.sub(k_total, k0))
            first = b.icmp_signed("==", k0, _i64(0))
            b_slice = self.at(b, bp, b.mul(k0, npad))

            def row_block(i0: ir.Value) -> None:
                mc = _min(b, _i64(cfg.mc), b.sub(m1, i0))
                b.call(pack_a, [a, rsa, csa, ap, i0, mc, k0, kc])
                c_block = self.at(b, c, b.mul(i0, rsc))
                self._sweep_block(b, ukernels, ap, b_slice, c_block, rsc, mc, n_total, kc,
                                  first)

            counted_loop(b, m0, m1, cfg.mc, row_block, "ic")

        counted_loop(b, _i64(0), k_total, step, k_slice, "pc")

    @staticmethod
    def _opaque(b: ir.IRBuilder, pointer: ir.Value) -> ir.Value:
        """`pointer` through an empty inline asm: the code generator's strength reduction
        cannot see that the row pointers differ by multiples of one stride, which it would
        otherwise rebuild from one register with a chain of dependent adds per k step."""
        return b.asm(ir.FunctionType(_PTR, [_PTR]), "", "=r,0", [pointer], False)

    def _sweep_block(self, b: ir.IRBuilder, ukernels: list[tuple[int, ir.Function]], ap,
                     b_slice, c_block, rsc, mc, n_total, kc, first) -> None:
        """Micro-kernel over a packed mc x kc block of A and all NR panels of a K slice of B:
        NC-column blocks, then MR rows (A panel stays in L1), then NR columns. `ukernels`:
        (rows, kernel) from MR down; a row tile takes the shortest kernel that covers it."""
        cfg = self.cfg

        def col_block(j0: ir.Value) -> None:
            j1 = _min(b, b.add(j0, _i64(cfg.nc)), n_total)

            def micro_row(ir0: ir.Value) -> None:
                mr = _min(b, _i64(cfg.mr), b.sub(mc, ir0))
                a_panel = self.at(b, ap, b.mul(ir0, kc))
                c_row = b.mul(ir0, rsc)

                def sweep(ukernel: ir.Function) -> None:
                    def micro_col(jj: ir.Value) -> None:
                        nr = _min(b, _i64(cfg.nr), b.sub(n_total, jj))
                        b_panel = self.at(b, b_slice, b.mul(jj, kc))
                        c_tile = self.at(b, c_block, b.add(c_row, jj))
                        b.call(ukernel, [a_panel, b_panel, c_tile, rsc, kc, mr, nr, first])

                    counted_loop(b, j0, j1, cfg.nr, micro_col, "jr")

                self._by_rows(b, mr, ukernels, sweep)

            counted_loop(b, _i64(0), mc, cfg.mr, micro_row, "ir")

        counted_loop(b, _i64(0), n_total, cfg.nc, col_block, "jc")

    def _by_rows(self, b: ir.IRBuilder, mr: ir.Value, ukernels: list[tuple[int, ir.Function]],
                 sweep: Callable[[ir.Function], None]) -> None:
        """`sweep(kernel)` with the first kernel of `ukernels` whose next one is too short
        for mr rows."""
        (_, kernel), shorter = ukernels[0], ukernels[1:]
        if not shorter:
            sweep(kernel)
            return
        _if(b, b.icmp_signed(">", mr, _i64(shorter[0][0])), lambda: sweep(kernel),
            lambda: self._by_rows(b, mr, shorter, sweep), f"rows{shorter[0][0]}")

    def emit_micro_kernels(self) -> list[tuple[int, ir.Function]]:
        """(rows, micro-kernel) for MR rows and for shorter last tiles (EDGE_ROWS: one more
        variant, not two, since each costs 10 ms of compile where the kernel library is not
        built)."""
        mr = self.cfg.mr
        short = mr * EDGE_ROWS[0] // EDGE_ROWS[1]
        return [(mr, self.emit_micro_kernel()), (short, self.emit_micro_kernel(short))]


ROWS_ARGS = [_PTR, _I64, _I64, _PTR, _PTR, _I64, _I64, _I64, _I64, _I64, _PTR]
NARROW_KINDS = ("dot", "cols")   # the halves of the narrow table, in order


def slice_length(cfg: GemmConfig, k: int) -> int:
    """The length of the K slices of a product (the last may be shorter): K in as few
    slices of at most KC_MAX as it takes, of equal length rounded up to 8 (within KC_MAX)."""
    slices = max(1, -(-k // cfg.kc_max))
    return min(-(-(-(-k // slices)) // 8) * 8, cfg.kc_max)


def narrow_widths(cfg: GemmConfig) -> list[int]:
    """The narrow variants' widths for this blocking (DOT_WIDTHS up to one vector)."""
    return [w for w in DOT_WIDTHS if w < cfg.vl] + [cfg.vl]


def narrow_name(cfg: GemmConfig, kind: str, nv: int) -> str:
    return f"redraft_matmul_{kind}{nv}_{cfg.suffix}"


def narrow_table_name(cfg: GemmConfig) -> str:
    """Symbol of the table of compiled narrow variants that gemm_rows calls through: the
    "dot" widths, then the "cols" widths (0 where a variant is not compiled)."""
    return f"redraft_matmul_narrow_table_{cfg.suffix}"


def narrow_kind(cfg: GemmConfig, rsa: int, csa: int, k: int) -> str | None:
    """The narrow variant gemm_rows picks for A's strides (None: the packed path)."""
    if csa == 1 and (k + cfg.vl) * cfg.vl <= cfg.workspace_size:
        return "dot"
    return "cols" if rsa == 1 else None


def build_narrow_module(cfg: GemmConfig, kind: str, nv: int) -> ir.Module:
    """A module with the one narrow variant `kind` ("dot" or "cols") of width nv."""
    module = ir.Module(name=narrow_name(cfg, kind, nv))
    emitter = _GemmEmitter(module, cfg)
    (emitter.emit_dot_rows if kind == "dot" else emitter.emit_column_rows)(nv)
    return module


def pack_b_name(cfg: GemmConfig) -> str:
    """Symbol of the B-packing function for `cfg`'s dtype."""
    return f"redraft_matmul_pack_b_{cfg.suffix}"


def gemm_rows_name(cfg: GemmConfig) -> str:
    """Symbol of the row-range product function for `cfg`'s dtype."""
    return f"redraft_matmul_rows_{cfg.suffix}"


def build_matmul_module(cfg: GemmConfig, module: ir.Module | None = None,
                        narrow_variants: bool = True) -> ir.Module:
    """Add the external pack-B and row-range functions for `cfg` to `module` (or a new one).

    With `narrow_variants`, every narrow variant too, entered in the narrow table by its
    initializer: the module that ahead-of-time objects and the persistent cache's runtime
    library are built from (once, then loaded), whose table nothing fills at run time. The
    JIT kernel leaves them out and compiles the ones it needs (MatmulKernel.prepare_narrow).
    Idempotent per dtype: a module that already has them is returned unchanged.
    """
    module = module or ir.Module(name=f"matmul_{cfg.suffix}")
    if gemm_rows_name(cfg) in module.globals:
        return module
    emitter = _GemmEmitter(module, cfg)
    emitter.emit_pack_b()
    emitter.emit_gemm_rows(emitter.emit_pack_a(), emitter.emit_micro_kernels())
    if narrow_variants:
        table = module.globals[narrow_table_name(cfg)]
        table.initializer = ir.Constant(table.value_type, [
            (emitter.emit_dot_rows if kind == "dot" else emitter.emit_column_rows)(nv).ptrtoint(
                _I64) for kind in NARROW_KINDS for nv in narrow_widths(cfg)])
    return module


# --- Python driver ----------------------------------------------------------------------

_P = ctypes.c_void_p
_L = ctypes.c_int64


class MatmulKernel:
    """pack_b / gemm_rows for one dtype, with a NumPy-facing `__call__`: compiled here, or
    taken from the kernel library (`library`, see jit_host.precompiled), whose gemm_rows has
    every narrow variant in its table."""

    def __init__(self, cfg: GemmConfig, library: Precompiled | None = None) -> None:
        self.cfg = cfg
        self.compiled, self._table = None, None
        if library is None:
            # the IR is written as LLVM would leave it (vectorised, blocked, in SSA form): the
            # kernel ran as fast without LLVM's IR pipeline (252 vs 253 GFLOP/s on 512^3, one
            # thread) and compiles in 0.10 s instead of 0.26 s, which the first call waits
            # for. The code generator's loop strength reduction takes a third of those
            # 0.10 s, but the kernel needs it: without it the CNN step (its convolution a
            # product with k = 9) ran 17% slower, though square products ran as fast
            self.compiled = CompiledModule(build_matmul_module(cfg, narrow_variants=False),
                                           opt_level=0, vectorise=False)
            self._table = self.compiled.engine.get_global_value_address(
                narrow_table_name(cfg))
            self.address = self.compiled.address
        else:
            self.address = library.address
        self.pack_b = self._entry(pack_b_name(cfg), [_P, _L, _L, _P, _L, _L, _L, _L])
        self.gemm_rows = self._entry(gemm_rows_name(cfg),
                                     [_P, _L, _L, _P, _P, _L, _L, _L, _L, _L, _P])
        self._narrow: dict[tuple[str, int], CompiledModule] = {}
        self._narrow_lock = threading.Lock()

    def _entry(self, name: str, argtypes: list) -> ctypes._CFuncPtr:
        """The function `name` as a ctypes callable (GIL released during the call) that
        keeps this kernel, and so its machine code, alive."""
        fn = ctypes.CFUNCTYPE(None, *argtypes)(self.address(name))
        fn._owner = self
        return fn

    def prepare_narrow(self, rsa: int, csa: int, k: int, n: int) -> None:
        """Compile the narrow variant that a product with A's strides (rsa, csa), K = k and
        N = n <= VL runs on, once, and enter it in gemm_rows' table. Variants compile on
        demand (10-20 ms each, twelve in all) so that the kernel's first compile, which
        every first call with a product waits for, stays 0.1 s; until then, and in builds
        that never ask (ahead-of-time objects), narrow products take the packed path.
        The kernel library's table holds them all: nothing to do."""
        if self._table is None:
            return
        kind = narrow_kind(self.cfg, rsa, csa, k)
        if n > self.cfg.vl or kind is None:
            return
        widths = narrow_widths(self.cfg)
        nv = next(w for w in widths if w >= n)
        with self._narrow_lock:
            if (kind, nv) in self._narrow:
                return
            compiled = CompiledModule(build_narrow_module(self.cfg, kind, nv), opt_level=0,
                                      vectorise=False)
            slot = NARROW_KINDS.index(kind) * len(widths) + widths.index(nv)
            ctypes.c_int64.from_address(self._table + 8 * slot).value = compiled.address(
                narrow_name(self.cfg, kind, nv))
            self._narrow[(kind, nv)] = compiled

    def __call__(self, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
                 threads: int | None = None) -> np.ndarray:
        a, b = _operand(a, self.cfg.dtype), _operand(b, self.cfg.dtype)
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise ValueError(f"matmul shapes {a.shape} and {b.shape} do not align")
        out = np.empty((m, n), self.cfg.dtype) if out is None else out
        if out.shape != (m, n) or out.dtype != self.cfg.dtype or (
                m > 0 and n > 1 and out.strides[1] != out.itemsize) or out.strides[0] < 0:
            raise ValueError("out must be an (M, N) array of the kernel's dtype with "
                             "unit column stride")
        if m == 0 or n == 0:
            return out
        if k == 0:
            out.fill(0)
            return out
        self.prepare_narrow(*_strides(a), k, n)
        workers = _thread_count(m, self.cfg.padded_columns(n), k) if threads is None else max(
            1, threads)
        packed = np.empty(self.cfg.packed_b_size(k, n), self.cfg.dtype)
        self._run_split(workers, -(-n // self.cfg.nr), 1,
                        lambda j0, j1: self.pack_b(b.ctypes.data, *_strides(b),
                                                   packed.ctypes.data, k, n, j0, j1))
        self._run_split(workers, m, self.cfg.mr,
                        lambda m0, m1: self._rows(a, packed, out, n, k, m0, m1))
        return out

    def _rows(self, a, packed, out, n, k, m0, m1) -> None:
        work = np.empty(self.cfg.workspace_size, self.cfg.dtype)
        self.gemm_rows(a.ctypes.data, *_strides(a), packed.ctypes.data, out.ctypes.data,
                       out.strides[0] // out.itemsize, n, k, m0, m1, work.ctypes.data)

    @staticmethod
    def _run_split(workers: int, total: int, grain: int,
                   task: Callable[[int, int], None]) -> None:
        """Run task(lo, hi) over [0, total) cut into `workers` chunks aligned to `grain`."""
        chunks = _split_range(total, workers, grain)
        if len(chunks) == 1:
            task(*chunks[0])
            return
        futures = [_pool().submit(task, lo, hi) for lo, hi in chunks]
        for f in futures:
            f.result()


def _operand(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """x as a 2-D array of `dtype` whose strides are whole elements (copied if needed)."""
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError("matmul kernel takes 2-D operands")
    if x.dtype != dtype or any(s % x.itemsize or s < 0 for s in x.strides):
        x = np.ascontiguousarray(x, dtype=dtype)
    return x


def _strides(x: np.ndarray) -> tuple[int, int]:
    return x.strides[0] // x.itemsize, x.strides[1] // x.itemsize


def _split_range(total: int, parts: int, grain: int) -> list[tuple[int, int]]:
    """[0, total) in at most `parts` contiguous chunks whose inner bounds are multiples of
    `grain`."""
    units = -(-total // grain)
    parts = max(1, min(parts, units))
    bounds = [min(total, (units * p // parts) * grain) for p in range(parts + 1)]
    bounds[-1] = total
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


_PARALLEL_FLOPS = 2 * 128 ** 3  # below this one thread is faster than the hand-off


def _thread_count(m: int, n: int, k: int) -> int:
    if 2 * m * n * k < _PARALLEL_FLOPS:
        return 1
    return os.cpu_count() or 1


@functools.lru_cache(maxsize=None)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                              thread_name_prefix="redraft-matmul")


@functools.lru_cache(maxsize=None)
def matmul_kernel(dtype: str = "float32") -> MatmulKernel:
    """The kernel for `dtype` with the host's default blocking (cached): the kernel
    library's where it is loaded, else compiled."""
    return MatmulKernel(default_config(dtype), precompiled())


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
           threads: int | None = None) -> np.ndarray:
    """a @ b for 2-D float32/float64 arrays (any strides) with the compiled kernel."""
    dtype = np.result_type(a, b)
    dtype = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    return matmul_kernel(dtype.name)(a, b, out=out, threads=threads)
