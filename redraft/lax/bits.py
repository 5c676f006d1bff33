"""lax's operations on the bits of numbers: bitcast_convert_type, reduce_precision, mulhi.

Each is composed of lax primitives: the same-width bitcast primitive (compiler/primitives/
bits.py) and integer arithmetic on the unsigned type of the operand's width, so jit lowers
them to LLVM and vmap reads their source.

- bitcast_convert_type to a narrower type splits each element into a trailing axis of parts,
  least significant first (the order XLA gives on little-endian machines); to a wider type
  it joins the trailing axis, whose length must be the ratio of the widths.
- reduce_precision rounds to `mantissa_bits` (to nearest, ties to even) and then clamps the
  exponent to `exponent_bits` as XLA's ReducePrecision does: too large becomes a signed
  infinity, too small (the target format's subnormals included) a signed zero; NaN stays NaN.
- mulhi is the high half of the double-width product, from half-width limbs so that no wider
  type is needed; a signed product corrects the unsigned one by the operands' signs.
"""
from __future__ import annotations

import numpy as np

from redraft.compiler.primitives.bits import bitcast_same_width, complex  # noqa: F401
from redraft.compiler.primitives.checks import check_dtype_kind
from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS, convert_element_type, select
from redraft.compiler.primitives.operands import strict_operands
from redraft.compiler.primitives.shape import concatenate, reshape
from redraft.lax.slicing import index_in_dim
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

__all__ = ["bitcast_convert_type", "complex", "mulhi", "reduce_precision"]

_AND, _OR, _ADD, _SUB, _MUL = (LAX_FUNCTIONS[n] for n in ("and", "or", "add", "sub", "mul"))
_SHL, _SHR, _LT, _GT, _LE = (LAX_FUNCTIONS[n] for n in (
    "shift_left", "shift_right_logical", "lt", "gt", "le"))
_ISNAN_NE = LAX_FUNCTIONS["ne"]

# (exponent bits, mantissa bits) of the floating types
_FLOAT_LAYOUT = {np.dtype(np.float16): (5, 10), np.dtype(np.float32): (8, 23),
                 np.dtype(np.float64): (11, 52)}


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def _word(value: int, dtype: np.dtype):
    """An unsigned constant of `dtype` (a Python int may not fit int32)."""
    return np.dtype(dtype).type(value)


def _check_bitcast(old: np.dtype, new: np.dtype) -> None:
    if (old.kind in "bc" or new.kind in "bc") and old != new:
        raise TypeError(f"lax.bitcast_convert_type does not support bool or complex values "
                        f"unless the operand and destination types match; got operand "
                        f"dtype={old.name}, new_dtype={new.name}")


def _check_join(shape: tuple, old: np.dtype, new: np.dtype) -> int:
    """The number of narrow parts per wide element, checked against the trailing axis."""
    ratio = new.itemsize // old.itemsize
    if not shape or shape[-1] != ratio:
        last = shape[-1] if shape else "no"
        raise ValueError(f"lax.bitcast_convert_type: converting an array of shape {shape} "
                         f"from {old.name} ({8 * old.itemsize} bits) to {new.name} "
                         f"({8 * new.itemsize} bits) needs a trailing axis of {ratio}, got "
                         f"{last}")
    return ratio


def bitcast_convert_type(operand, new_dtype) -> Array:
    """operand's bits read as `new_dtype`: the same shape for the same width, a trailing axis
    added (narrower) or removed (wider) otherwise."""
    x = as_array(operand)
    new = dtypes.check_dtype_arg(new_dtype)
    _check_bitcast(x.dtype, new)
    if new.itemsize == x.dtype.itemsize:
        return bitcast_same_width(x, new)
    if new.itemsize < x.dtype.itemsize:
        return _split(x, new)
    return _join(x, new)


def _split(x: Array, new: np.dtype) -> Array:
    """Each element as its parts of `new`'s width, least significant first, on a new axis."""
    wide = bitcast_same_width(x, _unsigned(x.dtype))
    narrow = _unsigned(new)
    bits = 8 * new.itemsize
    parts = []
    for k in range(x.dtype.itemsize // new.itemsize):
        part = convert_element_type(_SHR(wide, _word(bits * k, _unsigned(x.dtype))), narrow)
        parts.append(reshape(bitcast_same_width(part, new), tuple(x.shape) + (1,)))
    return concatenate(parts, len(x.shape))


def _join(x: Array, new: np.dtype) -> Array:
    """The trailing axis's parts, least significant first, as one element of `new`."""
    ratio = _check_join(tuple(x.shape), x.dtype, new)
    wide = _unsigned(new)
    bits = 8 * x.dtype.itemsize
    total = None
    for k in range(ratio):
        part = bitcast_same_width(index_in_dim(x, k, -1, False), _unsigned(x.dtype))
        shifted = _SHL(convert_element_type(part, wide), _word(bits * k, wide))
        total = shifted if total is None else _OR(total, shifted)
    return bitcast_same_width(total, new)


def _check_precision(dtype: np.dtype, exponent_bits, mantissa_bits) -> tuple[int, int]:
    check_dtype_kind(dtype, "f", "lax.reduce_precision", "a floating-point operand")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"lax.reduce_precision needs exponent_bits >= 1 and mantissa_bits "
                         f">= 0, got {exponent_bits} and {mantissa_bits}")
    return exponent_bits, mantissa_bits


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int) -> Array:
    """operand rounded to a float format of `exponent_bits` and `mantissa_bits`, kept in its
    own dtype (XLA's ReducePrecision)."""
    x = as_array(operand)
    exponent_bits, mantissa_bits = _check_precision(x.dtype, exponent_bits, mantissa_bits)
    src_exponent, src_mantissa = _FLOAT_LAYOUT[np.dtype(x.dtype)]
    unsigned = _unsigned(x.dtype)
    width = 8 * np.dtype(x.dtype).itemsize
    bits = bitcast_same_width(x, unsigned)
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = 1 << dropped
        kept_bit = _AND(_SHR(bits, _word(dropped, unsigned)), _word(1, unsigned))
        # to nearest, ties to even: add half an ulp less one, plus the last kept bit
        bits = _ADD(bits, _ADD(kept_bit, _word((last_kept >> 1) - 1, unsigned)))
        bits = _AND(bits, _word((1 << width) - last_kept, unsigned))
    if exponent_bits < src_exponent:
        sign = _AND(bits, _word(1 << (width - 1), unsigned))
        exponent_mask = _word(((1 << src_exponent) - 1) << src_mantissa, unsigned)
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = _AND(bits, exponent_mask)
        overflows = _GT(exponent, _word((bias + reduced_bias) << src_mantissa, unsigned))
        lowest = _word(max(bias - reduced_bias, 0) << src_mantissa, unsigned)
        underflows = _LE(exponent, lowest)
        bits = select(overflows, _OR(sign, exponent_mask), select(underflows, sign, bits))
    out = bitcast_same_width(bits, x.dtype)
    return select(_ISNAN_NE(x, x), x, out)


def mulhi(x, y) -> Array:
    """The high half of the double-width product x * y, elementwise, for integers of one
    dtype (signed products as two's complement)."""
    x, y = strict_operands("mulhi", (x, y))
    check_dtype_kind(x.dtype, "iu", "lax.mulhi", "an integer operand")
    check_dtype_kind(y.dtype, "iu", "lax.mulhi", "an integer operand")
    unsigned = _unsigned(x.dtype)
    ux, uy = bitcast_same_width(x, unsigned), bitcast_same_width(y, unsigned)
    half = 4 * np.dtype(x.dtype).itemsize
    mask = _word((1 << half) - 1, unsigned)
    shift = _word(half, unsigned)
    x_lo, x_hi = _AND(ux, mask), _SHR(ux, shift)
    y_lo, y_hi = _AND(uy, mask), _SHR(uy, shift)
    lo_lo, hi_lo = _MUL(x_lo, y_lo), _MUL(x_hi, y_lo)
    lo_hi, hi_hi = _MUL(x_lo, y_hi), _MUL(x_hi, y_hi)
    cross = _ADD(_ADD(_SHR(lo_lo, shift), _AND(hi_lo, mask)), lo_hi)
    high = _ADD(_ADD(hi_hi, _SHR(hi_lo, shift)), _SHR(cross, shift))
    if np.dtype(x.dtype).kind == "i":  # (x + 2^n [x<0]) (y + 2^n [y<0]) / 2^n, corrected
        zero = _AND(ux, _word(0, unsigned))
        high = _SUB(high, select(_LT(x, 0), uy, zero))
        high = _SUB(high, select(_LT(y, 0), ux, zero))
    return bitcast_same_width(high, x.dtype)
