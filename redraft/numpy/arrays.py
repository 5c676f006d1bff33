"""Array rearrangement: diagonals and triangles, flips and rolls, tiling, splitting, padding.

Everything here is built from lax primitives (slice, pad, rev, concatenate, gathers) and
other redraft.numpy functions. NumPy only computes static index maps from Python integers
(for instance where a reflected pad reads from), never touches array data.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from redraft.compiler.primitives import reductions as lax_red
from redraft.compiler.primitives import shape as lax_shape
from redraft.compiler.primitives.checks import canonical_axes, canonical_axis
from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array

from redraft.numpy import reductions, shapes, ufuncs
from redraft.numpy.creation import zeros
from redraft.numpy.indexing import getitem, take
from redraft.numpy.promotion import cast, promote

__all__ = ["diagonal", "diag", "diagflat", "tril", "triu", "flip", "fliplr", "flipud", "roll",
           "rot90", "tile", "repeat", "split", "array_split", "hsplit", "vsplit", "dsplit",
           "pad", "meshgrid", "diff", "ediff1d", "cross", "append", "insert", "delete",
           "select", "trim_zeros"]


def _static_ints(values: Sequence[int]) -> Array:
    """An int32 constant from static Python integers (an index map, not user data)."""
    return wrap_host(np.asarray(values, dtype=np.int32).reshape(-1))


def _axis_slice(x: Array, axis: int, start: int, stop: int) -> Array:
    """x[..., start:stop, ...] along `axis` for static 0 <= start, stop <= size."""
    index = (slice(None),) * axis + (slice(start, max(stop, start)),)
    return x[index]  # indexing's rules: transforms differentiate it as x[...]


# ---- diagonals and triangles ----------------------------------------------------------------

def _diagonal_length(rows: int, cols: int, offset: int) -> int:
    if offset >= 0:
        return max(0, min(rows, cols - offset))
    return max(0, min(rows + offset, cols))


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The `offset` diagonal of the (axis1, axis2) planes, as a new last axis."""
    x = as_array(a)
    if x.ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{x.shape}")
    ax1, ax2 = canonical_axis(axis1, x.ndim, "diagonal"), canonical_axis(axis2, x.ndim,
                                                                         "diagonal")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are {ax1}")
    x = shapes.moveaxis(x, (ax1, ax2), (-2, -1))
    offset = int(offset)
    n = _diagonal_length(x.shape[-2], x.shape[-1], offset)
    rows = _static_ints([i - min(offset, 0) for i in range(n)])
    cols = _static_ints([i + max(offset, 0) for i in range(n)])
    return getitem(x, (Ellipsis, rows, cols))


def diag(v, k: int = 0) -> Array:
    """A 1-D input becomes a square matrix with it on diagonal `k`; a 2-D input gives its
    diagonal `k`."""
    x = as_array(v)
    k = int(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"diag: input must be 1-D or 2-D, got shape {x.shape}")
    n = x.shape[0] + abs(k)
    rows = _static_ints([i - min(k, 0) for i in range(x.shape[0])])
    cols = _static_ints([i + max(k, 0) for i in range(x.shape[0])])
    return zeros((n, n), x.dtype).at[rows, cols].set(x)


def diagflat(v, k: int = 0) -> Array:
    """diag of the flattened input."""
    return diag(shapes.ravel(v), k)


def _triangle(m, k: int, lower: bool, name: str) -> Array:
    x = as_array(m)
    if x.ndim < 2:
        raise ValueError(f"{name} requires an array of at least two dimensions, got shape "
                         f"{x.shape}")
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, int(k), dtype=bool) if lower else ~np.tri(rows, cols, int(k) - 1,
                                                                       dtype=bool)
    zero = cast(as_array(0), x.dtype)
    return ufuncs.where(wrap_host(keep), x, zero)


def tril(m, k: int = 0) -> Array:
    """The lower triangle of the last two axes (at and below diagonal `k`); the rest zero."""
    return _triangle(m, k, True, "tril")


def triu(m, k: int = 0) -> Array:
    """The upper triangle of the last two axes (at and above diagonal `k`); the rest zero."""
    return _triangle(m, k, False, "triu")


# ---- flips, rolls, rotations ---------------------------------------------------------------

def flip(m, axis=None) -> Array:
    """Reverse the order of elements along `axis` (every axis when None)."""
    x = as_array(m)
    return lax_shape.rev(x, canonical_axes(axis, x.ndim, "flip"))


def fliplr(m) -> Array:
    """Reverse the columns (axis 1)."""
    x = as_array(m)
    if x.ndim < 2:
        raise ValueError(f"fliplr requires an array of at least two dimensions, got shape "
                         f"{x.shape}")
    return flip(x, 1)


def flipud(m) -> Array:
    """Reverse the rows (axis 0)."""
    x = as_array(m)
    if x.ndim < 1:
        raise ValueError("flipud requires an array of at least one dimension")
    return flip(x, 0)


def _roll_static(x: Array, shift: int, axis: int) -> Array:
    n = x.shape[axis]
    if n == 0:
        return x
    cut = n - shift % n
    if cut == n:
        return x
    return lax_shape.concatenate([_axis_slice(x, axis, cut, n), _axis_slice(x, axis, 0, cut)],
                                 axis)


def _roll_dynamic(x: Array, shift: Array, axis: int) -> Array:
    """A shift known only at run time: read a window of the array written twice."""
    n = x.shape[axis]
    if n == 0:
        return x
    doubled = lax_shape.concatenate([x, x], axis)
    start = ufuncs.remainder(ufuncs.negative(cast(shift, dtypes.int32)), n)
    starts = [0] * x.ndim
    starts[axis] = start
    return lax_shape.dynamic_slice(doubled, starts, x.shape)


def roll(a, shift, axis=None) -> Array:
    """Shift elements along `axis` cyclically; `axis=None` rolls the flattened array."""
    x = as_array(a)
    if axis is None:
        return shapes.reshape(roll(shapes.ravel(x), shift, 0), x.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = (shift,) if np.ndim(shift) == 0 else tuple(shift)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts do not match {len(axes)} axes")
    for s, ax in zip(shifts, axes):
        ax = canonical_axis(ax, x.ndim, "roll")
        if isinstance(s, (int, np.integer)):
            x = _roll_static(x, int(s), ax)
        else:
            x = _roll_dynamic(x, as_array(s), ax)
    return x


def rot90(m, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """Rotate by 90 degrees `k` times in the plane of `axes` (from the first toward the
    second)."""
    x = as_array(m)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must name two axes, got {axes}")
    if x.ndim < 2:
        raise ValueError(f"rot90 requires an array of at least two dimensions, got shape "
                         f"{x.shape}")
    ax0, ax1 = (canonical_axis(ax, x.ndim, "rot90") for ax in axes)
    if ax0 == ax1:
        raise ValueError(f"rot90: axes must differ, got {axes}")
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, (ax0, ax1))
    perm = list(range(x.ndim))
    perm[ax0], perm[ax1] = perm[ax1], perm[ax0]
    if k == 1:
        return shapes.transpose(flip(x, ax1), perm)
    return flip(shapes.transpose(x, perm), ax1)


# ---- tiling and repeating -----------------------------------------------------------------

def tile(A, reps) -> Array:  # noqa: N803 - NumPy's name
    """Repeat the whole array `reps` times along each axis."""
    x = as_array(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    x = shapes.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    interleaved = tuple(v for d in x.shape for v in (1, d))
    spread = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    out = shapes.broadcast_to(shapes.reshape(x, interleaved), spread)
    return shapes.reshape(out, tuple(r * d for r, d in zip(reps, x.shape)))


def _repeat_scalar(x: Array, count: int, axis: int) -> Array:
    if count < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {count}")
    expanded = shapes.expand_dims(x, axis + 1)
    target = x.shape[:axis + 1] + (count,) + x.shape[axis + 1:]
    out = shapes.broadcast_to(expanded, target)
    return shapes.reshape(out, x.shape[:axis] + (x.shape[axis] * count,) + x.shape[axis + 1:])


def _repeat_each(x: Array, counts: Array, axis: int, total: int | None) -> Array:
    """Element i of `axis` appears counts[i] times: gather at searchsorted positions."""
    if counts.shape != (x.shape[axis],):
        raise ValueError(f"repeat: {counts.shape[0] if counts.ndim else counts.shape} repeats "
                         f"do not match axis {axis} of size {x.shape[axis]}")
    from redraft.numpy.searching import searchsorted
    counts = cast(counts, dtypes.int32)
    ends = reductions.cumsum(counts)
    if total is None:
        total = int(reductions.sum(counts))
    positions = lax_shape.iota(dtypes.int32, total)
    source = searchsorted(ends, positions, side="right")
    # past the last count (total_repeat_length longer than the counts' sum): the last element
    return take(x, source, axis=axis, mode="clip")


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None
           ) -> Array:
    """Repeat each element `repeats` times (an int, or one count per element of `axis`)."""
    x = as_array(a)
    if axis is None:
        x, axis = shapes.ravel(x), 0
    axis = canonical_axis(axis, x.ndim, "repeat")
    if np.ndim(repeats) == 0 and not isinstance(repeats, Array) and (
            total_repeat_length is None):
        return _repeat_scalar(x, int(repeats), axis)
    counts = as_array(repeats)
    if not dtypes.is_integer(counts.dtype):
        raise TypeError(f"repeat: repeats must be integers, got {counts.dtype.name}")
    if counts.ndim == 0:
        counts = shapes.broadcast_to(counts, (x.shape[axis],))
    return _repeat_each(x, counts, axis, total_repeat_length)


# ---- splitting ------------------------------------------------------------------------------

def _split_bounds(n: int, indices_or_sections, equal: bool, name: str) -> list[tuple[int, int]]:
    """(start, stop) of every piece, as NumPy computes them."""
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(f"{name}: array of size {n} does not split into {sections} equal "
                             "sections")
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        edges = np.cumsum([0] + sizes).tolist()
        return list(zip(edges[:-1], edges[1:]))
    cuts = [int(i) for i in indices_or_sections]
    edges = [0] + cuts + [n]
    bounds = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        start, stop, _ = slice(lo, hi).indices(n)
        bounds.append((start, max(start, stop)))
    return bounds


def _split(ary, indices_or_sections, axis: int, equal: bool, name: str) -> list[Array]:
    x = as_array(ary)
    if x.ndim == 0:
        raise ValueError(f"{name}: cannot split a 0-d array")
    axis = canonical_axis(axis, x.ndim, name)
    bounds = _split_bounds(x.shape[axis], indices_or_sections, equal, name)
    return [_axis_slice(x, axis, lo, hi) for lo, hi in bounds]


def split(ary, indices_or_sections, axis: int = 0) -> list[Array]:
    """Split into equal sections, or at the given indices, along `axis`."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis: int = 0) -> list[Array]:
    """As split, but sections may differ in size by one (the first ones are longer)."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections) -> list[Array]:
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    x = as_array(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(x, indices_or_sections, 1 if x.ndim > 1 else 0, True, "hsplit")


def vsplit(ary, indices_or_sections) -> list[Array]:
    """Split along axis 0; needs at least two dimensions."""
    x = as_array(ary)
    if x.ndim < 2:
        raise ValueError(f"vsplit only works on arrays of 2 or more dimensions, got shape "
                         f"{x.shape}")
    return _split(x, indices_or_sections, 0, True, "vsplit")


def dsplit(ary, indices_or_sections) -> list[Array]:
    """Split along axis 2; needs at least three dimensions."""
    x = as_array(ary)
    if x.ndim < 3:
        raise ValueError(f"dsplit only works on arrays of 3 or more dimensions, got shape "
                         f"{x.shape}")
    return _split(x, indices_or_sections, 2, True, "dsplit")


# ---- padding -------------------------------------------------------------------------------

_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")
_PAD_MODES = ("constant", "empty", "maximum", "minimum", "mean", "median",
              "linear_ramp") + _INDEX_MODES


def _pad_pairs(widths, ndim: int, what: str) -> list[tuple]:
    """`widths` (a scalar, a pair, or one pair per axis) as one (before, after) per axis."""
    arr = np.asarray(widths, dtype=object)
    try:
        pairs = np.broadcast_to(arr, (ndim, 2)) if arr.ndim <= 2 else None
    except ValueError:
        pairs = None
    if pairs is None:
        raise ValueError(f"pad: {what} {widths!r} does not fit an array of rank {ndim}; give "
                         "a scalar, a (before, after) pair, or one pair per axis")
    return [tuple(row) for row in pairs.tolist()]


def _pad_constant(x: Array, widths, constant_values) -> Array:
    """lax.pad along one axis and one side at a time, each side with its own value. The
    loops run over range(...): reverse mode reads their indices back from its tape as ints
    without derivatives (ad.tape_constant), so forward mode over the gradient works too."""
    values = _pad_pairs(constant_values, x.ndim, "constant_values")
    for axis in range(x.ndim):
        lo, hi = widths[axis]
        v_lo, v_hi = values[axis]
        if lo:
            x = lax_shape.pad(x, cast(as_array(v_lo), x.dtype), _one_side(x.ndim, axis, lo, 0))
        if hi:
            x = lax_shape.pad(x, cast(as_array(v_hi), x.dtype), _one_side(x.ndim, axis, 0, hi))
    return x


def _one_side(ndim: int, axis: int, lo: int, hi: int) -> tuple:
    """lax.pad's configuration padding `axis` only, by `lo` before and `hi` after."""
    return tuple((lo, hi, 0) if d == axis else (0, 0, 0) for d in range(ndim))


def _pad_by_index(x: Array, widths, mode: str) -> Array:
    """Modes that copy existing elements: gather along each axis at a static index map."""
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot extend empty axis {axis} in mode {mode!r}")
        source = np.pad(np.arange(n), (lo, hi), mode=mode)
        x = take(x, _static_ints(source.tolist()), axis=axis)
    return x


def _pad_odd_reflection(x: Array, widths, mode: str) -> Array:
    """'reflect' or 'symmetric' with reflect_type='odd': each mirrored copy is also turned
    about its edge value (2 * edge - copy). A copy holds at most one axis length less the
    edge ('reflect') or one axis length ('symmetric'); a wider pad mirrors the copies
    already made, about their own outer edge, as NumPy and JAX do."""
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot extend empty axis {axis} in mode {mode!r}")
        skip = 1 if mode == "reflect" and n > 1 else 0  # a lone element reflects itself
        x = _odd_copies(x, axis, lo, n - skip, skip, True)
        x = _odd_copies(x, axis, hi, n - skip, skip, False)
    return x


def _odd_copies(x: Array, axis: int, width: int, most: int, skip: int, before: bool
                ) -> Array:
    """`x` extended by `width` odd-reflected elements along `axis`, at most `most` a copy,
    at its start (`before`) or its end. Each copy's bounds come from x's shape alone, so a
    reverse-mode tape of this loop holds x and no integer that a transform of the gradient
    would take for a value to differentiate."""
    target = x.shape[axis] + width
    for _ in range(-(-width // most)):
        m = x.shape[axis]
        size = min(target - m, most)
        if before:
            edge = _axis_slice(x, axis, 0, 1)
            copy = _axis_slice(x, axis, skip, skip + size)
        else:
            edge = _axis_slice(x, axis, m - 1, m)
            copy = _axis_slice(x, axis, m - skip - size, m - skip)
        turned = ufuncs.subtract(ufuncs.multiply(edge, 2), lax_shape.rev(copy, (axis,)))
        x = lax_shape.concatenate([turned, x] if before else [x, turned], axis)
    return x


def _pad_statistic(x: Array, widths, mode: str, stat_length) -> Array:
    """'maximum', 'minimum', 'mean', 'median': each side filled with the statistic of the
    `stat_length` elements nearest it along the padded axis (all of them by default), one
    axis after another, so later axes see the earlier padding (NumPy's order). Integer
    means and medians are rounded to the nearest, as NumPy and JAX do."""
    lengths = _pad_pairs(stat_length, x.ndim, "stat_length") if stat_length is not None else (
        [(None, None)] * x.ndim)
    for axis, ((lo, hi), (n_lo, n_hi)) in enumerate(zip(widths, lengths)):
        if lo == hi == 0:
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot compute the {mode} of empty axis {axis}")
        # the end first: the start of x stays where it was (no list of pieces: vmap of the
        # gradient batches fixed concatenations better than a list grown in branches)
        if hi:
            count = n if n_hi is None else max(1, min(int(n_hi), n))
            edge = _statistic(_axis_slice(x, axis, n - count, n), axis, mode)
            x = lax_shape.concatenate([x, tile(edge, _reps(x.ndim, axis, hi))], axis)
        if lo:
            count = n if n_lo is None else max(1, min(int(n_lo), n))
            edge = _statistic(_axis_slice(x, axis, 0, count), axis, mode)
            x = lax_shape.concatenate([tile(edge, _reps(x.ndim, axis, lo)), x], axis)
    return x


def _statistic(part: Array, axis: int, mode: str) -> Array:
    """The statistic of `part` along `axis`, kept as an axis of size 1, in part's dtype."""
    if mode in ("maximum", "minimum"):
        reduce = lax_red.reduce_max if mode == "maximum" else lax_red.reduce_min
        return shapes.expand_dims(reduce(part, (axis,)), axis)
    from redraft.numpy.searching import median
    stat = (reductions.mean(part, axis=axis, keepdims=True) if mode == "mean"
            else median(part, axis=axis, keepdims=True))
    if np.issubdtype(part.dtype, np.integer):
        stat = ufuncs.round(stat)
    return cast(stat, part.dtype)


def _pad_linear_ramp(x: Array, widths, end_values) -> Array:
    """'linear_ramp': each side runs linearly from its end value (outermost) to the edge
    value of the array, as NumPy's linspace without its endpoint."""
    ends = _pad_pairs(end_values, x.ndim, "end_values")
    for axis, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(widths, ends)):
        if lo == hi == 0:
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot extend empty axis {axis} in mode 'linear_ramp'")
        if hi:  # the end first: the start of x stays where it was
            steps = np.arange(hi)[::-1] / hi
            ramp = _ramp(_axis_slice(x, axis, n - 1, n), end_hi, steps, axis)
            x = lax_shape.concatenate([x, ramp], axis)
        if lo:
            steps = np.arange(lo) / lo
            ramp = _ramp(_axis_slice(x, axis, 0, 1), end_lo, steps, axis)
            x = lax_shape.concatenate([ramp, x], axis)
    return x


def _ramp(edge: Array, end, steps: np.ndarray, axis: int) -> Array:
    """end + (edge - end) * steps along `axis`, in `edge`'s dtype (computed in floating
    point for integers, then truncated as NumPy's linspace casts)."""
    compute = edge.dtype if np.issubdtype(edge.dtype, np.inexact) else np.float32
    shape = tuple(len(steps) if d == axis else 1 for d in range(edge.ndim))
    t = as_array(steps.reshape(shape).astype(compute))
    start = cast(as_array(end), compute)
    ramp = ufuncs.add(start, ufuncs.multiply(ufuncs.subtract(cast(edge, compute), start), t))
    return cast(ramp, edge.dtype)


def _reps(ndim: int, axis: int, count: int) -> tuple[int, ...]:
    return tuple(count if i == axis else 1 for i in range(ndim))


def pad(array, pad_width, mode: str = "constant", *, constant_values=0,
        reflect_type: str = "even", stat_length=None, end_values=0) -> Array:
    """Pad with a constant, the edge values, a linear ramp, a statistic, a reflection, or a
    wrap-around copy."""
    x = as_array(array)
    widths = [(int(lo), int(hi)) for lo, hi in _pad_pairs(pad_width, x.ndim, "pad_width")]
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"pad: pad widths must be non-negative, got {widths}")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; use one of {_PAD_MODES}")
    if mode == "constant":
        return _pad_constant(x, widths, constant_values)
    if mode == "empty":
        return _pad_constant(x, widths, 0)
    if mode == "linear_ramp":
        return _pad_linear_ramp(x, widths, end_values)
    if mode in ("maximum", "minimum", "mean", "median"):
        return _pad_statistic(x, widths, mode, stat_length)
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    if reflect_type == "odd" and mode in ("reflect", "symmetric"):
        return _pad_odd_reflection(x, widths, mode)
    return _pad_by_index(x, widths, mode)


# every mode is slices, rev, concatenate, lax.pad, gathers at static indices and reductions,
# each with rules: the transforms read pad's source, so a mode differentiates as JAX's does
defsource_derivative(pad, "lax.pad, slices, rev, concatenate, static gathers and reductions")
defbatch_source(pad)  # the same operations batched: no loop over the examples


# ---- grids, differences, cross products -------------------------------------------------------

def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Array]:
    """Coordinate matrices from coordinate vectors ('xy': Cartesian, 'ij': matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [shapes.ravel(v) for v in xi]
    dims = list(range(len(vectors)))
    if indexing == "xy" and len(vectors) >= 2:
        dims[0], dims[1] = 1, 0
    shape = [0] * len(vectors)
    for v, d in zip(vectors, dims):
        shape[d] = v.shape[0]
    out = []
    for v, d in zip(vectors, dims):
        if sparse:
            out.append(shapes.reshape(v, tuple(s if i == d else 1 for i, s in enumerate(shape))))
        else:
            out.append(lax_shape.broadcast_in_dim(v, tuple(shape), (d,)))
    return out


def _edge_operand(value, x: Array, axis: int) -> Array:
    """A prepend/append value: scalars broadcast to one slice of `x` along `axis`."""
    v = as_array(value)
    if v.ndim == 0:
        return shapes.broadcast_to(v, x.shape[:axis] + (1,) + x.shape[axis + 1:])
    return v


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> Array:
    """The n-th discrete difference x[i+1] - x[i] along `axis` (bools: x[i+1] != x[i])."""
    x = as_array(a)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires an input of at least one dimension")
    axis = canonical_axis(axis, x.ndim, "diff")
    pieces = [x]
    if prepend is not None:
        pieces.insert(0, _edge_operand(prepend, x, axis))
    if append is not None:
        pieces.append(_edge_operand(append, x, axis))
    if len(pieces) > 1:
        x = shapes.concatenate(pieces, axis)
    for _ in range(int(n)):
        size = x.shape[axis]
        later, earlier = _axis_slice(x, axis, 1, size), _axis_slice(x, axis, 0, size - 1)
        if x.dtype == dtypes.bool_:
            x = ufuncs.not_equal(later, earlier)
        else:
            x = ufuncs.subtract(later, earlier)
    return x


def ediff1d(ary, to_end=None, to_begin=None) -> Array:
    """Differences of the flattened array, with optional values before and after."""
    d = diff(shapes.ravel(ary))
    pieces = [shapes.ravel(to_begin)] if to_begin is not None else []
    pieces.append(d)
    if to_end is not None:
        pieces.append(shapes.ravel(to_end))
    return shapes.concatenate(pieces) if len(pieces) > 1 else d


def _cross_components(v: Array) -> list[Array]:
    """The 3 components of vectors along the last axis (a 2-vector gets z = 0)."""
    comps = [_axis_slice(v, v.ndim - 1, i, i + 1) for i in range(v.shape[-1])]
    comps = [shapes.squeeze(c, -1) for c in comps]
    if len(comps) == 2:
        comps.append(ufuncs.multiply(comps[0], 0))
    return comps


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
          ) -> Array:
    """The cross product of 2- or 3-vectors along the given axes (broadcasting the rest)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = promote(a, b)
    x = shapes.moveaxis(x, canonical_axis(axisa, x.ndim, "cross"), -1)
    y = shapes.moveaxis(y, canonical_axis(axisb, y.ndim, "cross"), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(f"cross: incompatible vector dimensions {x.shape[-1]} and "
                         f"{y.shape[-1]} (must be 2 or 3)")
    (a0, a1, a2), (b0, b1, b2) = _cross_components(x), _cross_components(y)
    z = ufuncs.subtract(ufuncs.multiply(a0, b1), ufuncs.multiply(a1, b0))
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return z
    cx = ufuncs.subtract(ufuncs.multiply(a1, b2), ufuncs.multiply(a2, b1))
    cy = ufuncs.subtract(ufuncs.multiply(a2, b0), ufuncs.multiply(a0, b2))
    shape = np.broadcast_shapes(cx.shape, cy.shape, z.shape)
    out = shapes.stack([shapes.broadcast_to(c, shape) for c in (cx, cy, z)], -1)
    return shapes.moveaxis(out, -1, canonical_axis(axisc, out.ndim, "cross"))


# ---- appending, inserting, deleting -------------------------------------------------------

def append(arr, values, axis: int | None = None) -> Array:
    """`values` joined after `arr` (both flattened when axis is None)."""
    if axis is None:
        return shapes.concatenate([shapes.ravel(arr), shapes.ravel(values)], 0)
    return shapes.concatenate([arr, values], axis)


def insert(arr, obj, values, axis: int | None = None) -> Array:
    """Insert `values` before the single static index `obj` along `axis`."""
    x = as_array(arr)
    if axis is None:
        x, axis = shapes.ravel(x), 0
    axis = canonical_axis(axis, x.ndim, "insert")
    if not isinstance(obj, (int, np.integer)):
        raise NotImplementedError("insert: only a single static integer index is supported")
    n = x.shape[axis]
    if not -n <= int(obj) <= n:
        raise IndexError(f"insert: index {obj} is out of bounds for axis {axis} with size {n}")
    at = int(obj) + n if int(obj) < 0 else int(obj)
    v = cast(as_array(values), x.dtype)
    v = shapes.moveaxis(shapes.reshape(v, (1,) * (x.ndim - v.ndim) + v.shape), 0, axis)
    v = shapes.broadcast_to(v, x.shape[:axis] + (v.shape[axis],) + x.shape[axis + 1:])
    pieces = [_axis_slice(x, axis, 0, at), v, _axis_slice(x, axis, at, n)]
    return lax_shape.concatenate(pieces, axis)


def delete(arr, obj, axis: int | None = None) -> Array:
    """`arr` without the static indices `obj` (an int, a slice or a sequence) along `axis`."""
    x = as_array(arr)
    if axis is None:
        x, axis = shapes.ravel(x), 0
    axis = canonical_axis(axis, x.ndim, "delete")
    n = x.shape[axis]
    if isinstance(obj, Array):
        obj = obj.tolist()
    drop = np.zeros(n, dtype=bool)
    try:
        drop[obj] = True
    except IndexError:
        raise IndexError(f"delete: index {obj} is out of bounds for axis {axis} with size "
                         f"{n}") from None
    keep = np.flatnonzero(~drop)
    return take(x, _static_ints(keep.tolist()), axis=axis)


# ---- select, trim_zeros -------------------------------------------------------------------------

def select(condlist, choicelist, default=0) -> Array:
    """choicelist[i] where condlist[i] is the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    conds = [as_array(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != dtypes.bool_:
            raise TypeError(f"select: condlist entry {i} must be boolean, got {c.dtype.name}")
    choices = promote(*choicelist, default)
    out = choices[-1]
    for cond, choice in zip(reversed(conds), reversed(choices[:-1])):
        out = ufuncs.where(cond, choice, out)
    return out


def trim_zeros(filt, trim: str = "fb") -> Array:
    """Strip leading ('f') and/or trailing ('b') zeros of a 1-D array (eager: the result's
    length depends on the values)."""
    x = as_array(filt)
    if x.ndim != 1:
        raise ValueError(f"trim_zeros requires a 1-D array, got shape {x.shape}")
    nonzero = ufuncs.not_equal(x, 0)
    if not bool(reductions.any(nonzero)):
        return _axis_slice(x, 0, 0, 0)
    first = int(reductions.argmax(nonzero)) if "f" in trim.lower() else 0
    last = x.shape[0] - int(reductions.argmax(flip(nonzero))) if "b" in trim.lower() else (
        x.shape[0])
    return _axis_slice(x, 0, first, last)
