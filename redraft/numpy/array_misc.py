"""More array functions composed from existing ones: choose, compress, extract, put,
put_along_axis, fill_diagonal, resize, block, partition, argpartition, lexsort,
geomspace, gradient, unwrap, gcd, lcm, bitwise_count; and host-side I/O and printing
helpers that work on concrete arrays through NumPy."""
from __future__ import annotations

import numpy as np
from numpy import get_printoptions, printoptions, set_printoptions  # noqa: F401
from numpy.exceptions import ComplexWarning  # noqa: F401

from redraft.numpy import base as jnp
from redraft.runtime.array import Array

__all__ = ["choose", "compress", "extract", "put", "put_along_axis", "fill_diagonal",
           "resize", "block", "partition", "argpartition", "lexsort", "geomspace", "gradient",
           "unwrap", "gcd", "lcm", "bitwise_count", "array_repr", "array_str", "einsum_path",
           "frombuffer", "fromstring", "fromiter", "fromfile", "load", "save", "savez",
           "get_printoptions", "printoptions", "set_printoptions", "ComplexWarning", "place",
           "from_dlpack"]


def choose(a, choices, out=None, mode: str = "raise") -> Array:
    """choices[a[i]][i] elementwise ('wrap' and 'clip' fix out-of-range indices; 'raise'
    checks concrete ones)."""
    if out is not None:
        raise NotImplementedError("choose: the out argument is not supported (arrays are "
                                  "immutable)")
    a = jnp.asarray(a)
    stacked = jnp.stack(jnp.broadcast_arrays(*[jnp.asarray(c) for c in choices]))
    n = stacked.shape[0]
    if mode == "raise":
        values = np.asarray(a)
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = jnp.clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: invalid mode {mode!r}")
    shape = jnp.broadcast_shapes(a.shape, stacked.shape[1:])
    stacked = jnp.broadcast_to(stacked, (n,) + shape)
    return jnp.take_along_axis(stacked, jnp.broadcast_to(a, shape)[None], axis=0)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0) -> Array:
    """The slices of a along axis where condition is true."""
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    keep = np.flatnonzero(np.asarray(condition))
    keep = keep[keep < a.shape[axis]]
    out = jnp.take(a, jnp.asarray(keep.astype(np.int32)), axis=axis)
    if size is not None:
        n = out.shape[axis]
        if n >= size:
            return jnp.take(out, jnp.arange(size), axis=axis)
        pad = [(0, 0)] * out.ndim
        pad[axis] = (0, size - n)
        out = jnp.pad(out, pad, constant_values=fill_value)
    return out


def extract(condition, arr, *, size=None, fill_value=0) -> Array:
    """The elements of arr where condition is true, flattened."""
    return compress(jnp.ravel(jnp.asarray(condition)), jnp.ravel(jnp.asarray(arr)), size=size,
                    fill_value=fill_value)


def put(a, ind, v, mode=None, *, inplace: bool = True) -> Array:
    """a with the flat positions ind set to v; as in JAX, inplace=False is required (arrays
    are immutable) and a new array is returned."""
    if inplace:
        raise ValueError("put: redraft arrays are immutable; pass inplace=False to get the "
                         "updated array")
    a = jnp.asarray(a)
    flat = jnp.ravel(a)
    ind = jnp.ravel(jnp.asarray(ind))
    if mode == "wrap":
        ind = ind % flat.shape[0]
    elif mode == "clip":
        ind = jnp.clip(ind, 0, flat.shape[0] - 1)
    values = resize(jnp.ravel(jnp.asarray(v)).astype(a.dtype), ind.shape)
    return flat.at[ind].set(values).reshape(a.shape)


def place(arr, mask, vals, inplace: bool = True) -> Array:
    """arr with the positions where mask is true set to vals in order, vals repeated as
    needed (NumPy's place); as in JAX, inplace=False is required and a new array returned
    (a keyword of JAX's, positional here too so that transforms can bind it)."""
    if inplace:
        raise ValueError("place: redraft arrays are immutable; pass inplace=False to get the "
                         "updated array")
    arr = jnp.asarray(arr)
    flat_mask = jnp.ravel(jnp.asarray(mask)).astype(bool)
    if flat_mask.shape[0] != arr.size:
        raise ValueError(f"place: mask of {flat_mask.shape[0]} elements for an array of "
                         f"{arr.size}")
    values = jnp.ravel(jnp.asarray(vals)).astype(arr.dtype)
    if values.shape[0] == 0:
        raise ValueError("place: vals must have at least one element")
    rank = jnp.cumsum(flat_mask.astype(jnp.int32)) - 1  # the how-many-th selected position
    chosen = values[jnp.where(flat_mask, rank, 0) % values.shape[0]]
    return jnp.where(flat_mask, chosen, jnp.ravel(arr)).reshape(arr.shape)


def from_dlpack(x, /, *, device=None, copy=None) -> Array:
    """An array from any object that offers the DLPack protocol (a NumPy array, a tensor
    of another library on the CPU); the data is copied into redraft's own buffer."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack needs an object with __dlpack__, got {type(x).__name__}")
    return jnp.asarray(np.from_dlpack(x))


def put_along_axis(arr, indices, values, axis, inplace: bool = True, *, mode=None) -> Array:
    """arr with arr[..., indices, ...] (along axis) set to values; inplace=False required."""
    if inplace:
        raise ValueError("put_along_axis: redraft arrays are immutable; pass inplace=False")
    arr, indices = jnp.asarray(arr), jnp.asarray(indices)
    axis = axis % arr.ndim
    shape = jnp.broadcast_shapes(indices.shape, arr.shape[:axis] + (indices.shape[axis],)
                                 + arr.shape[axis + 1:])
    indices = jnp.broadcast_to(indices, shape)
    grids = jnp.meshgrid(*[jnp.arange(d) for d in shape], indexing="ij")
    grids[axis] = jnp.where(indices < 0, indices + arr.shape[axis], indices)
    values = jnp.broadcast_to(jnp.asarray(values).astype(arr.dtype), shape)
    return arr.at[tuple(grids)].set(values)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True) -> Array:
    """a with its main diagonal set to val (cycled); inplace=False required."""
    if inplace:
        raise ValueError("fill_diagonal: redraft arrays are immutable; pass inplace=False")
    a = jnp.asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError("fill_diagonal: array must be at least 2-d, with equal dimensions "
                         "beyond 2")
    n = min(a.shape) if a.ndim == 2 else a.shape[0]
    if a.ndim == 2 and wrap and a.shape[0] > a.shape[1]:
        step = a.shape[1] + 1
        flat_positions = np.arange(0, a.shape[0] * a.shape[1], step)
        flat_positions = flat_positions[(flat_positions // a.shape[1]) % step != a.shape[1]]
        rows, cols = flat_positions // a.shape[1], flat_positions % a.shape[1]
    else:
        rows = cols = np.arange(n)
    idx = (jnp.asarray(rows),) + (jnp.asarray(cols),) * (a.ndim - 1)
    values = resize(jnp.ravel(jnp.asarray(val)).astype(a.dtype), (len(rows),))
    return a.at[idx].set(values)


def resize(a, new_shape) -> Array:
    """a's elements repeated cyclically to fill new_shape."""
    a = jnp.ravel(jnp.asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    total = int(np.prod(new_shape))
    if a.shape[0] == 0:
        return jnp.zeros(new_shape, a.dtype)
    repeats = -(-total // a.shape[0])
    return jnp.tile(a, repeats)[:total].reshape(new_shape)


def block(arrays) -> Array:
    """An array assembled from nested lists of blocks (the innermost lists join along the
    last axis)."""
    def depth(x) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) else 0

    d = depth(arrays)

    def ndim_of(x) -> int:
        return max(ndim_of(y) for y in x) if isinstance(x, list) else jnp.ndim(x)

    target = max(d, ndim_of(arrays))

    def assemble(x, level: int):
        if not isinstance(x, list):
            v = jnp.asarray(x)
            return v.reshape((1,) * (target - v.ndim) + v.shape)
        parts = [assemble(y, level + 1) for y in x]
        return jnp.concatenate(parts, axis=level - d)

    return assemble(arrays, 0)


def partition(a, kth: int, axis: int = -1) -> Array:
    """a rearranged so that position kth holds its sorted value, smaller ones before and
    larger ones after (here: fully sorted, which satisfies that)."""
    return jnp.sort(a, axis=axis)


def argpartition(a, kth: int, axis: int = -1) -> Array:
    """Indices that partition a around kth (a stable argsort, which satisfies that)."""
    return jnp.argsort(a, axis=axis)


def lexsort(keys, axis: int = -1) -> Array:
    """Indices sorting by the last key, then the one before, ... (stable)."""
    keys = [jnp.asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    order = jnp.argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        by_key = jnp.take_along_axis(key, order, axis=axis)
        order = jnp.take_along_axis(order, jnp.argsort(by_key, axis=axis, stable=True),
                                    axis=axis)
    return order


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
              axis: int = 0) -> Array:
    """num numbers spaced evenly on a log scale from start to stop (same signs)."""
    start, stop = jnp.asarray(start), jnp.asarray(stop)
    dtype = jnp.result_type(start, stop, 1.0) if dtype is None else np.dtype(dtype)
    sign = jnp.sign(start)
    logs = jnp.linspace(jnp.log10(jnp.abs(start)), jnp.log10(jnp.abs(stop)), num,
                        endpoint=endpoint, axis=axis)
    out = sign * 10.0 ** logs
    if num > 0:
        out = jnp.moveaxis(out, axis, 0)
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
        out = jnp.moveaxis(out, 0, axis)
    return out.astype(dtype)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient by second-order central differences inside and first-order ones at the
    ends, along every axis (or the given ones), with unit or given spacings."""
    if edge_order not in (None, 1):
        raise NotImplementedError("gradient: only edge_order=1 is supported (as in JAX)")
    f = jnp.asarray(f)
    if not np.issubdtype(f.dtype, np.inexact):
        f = f.astype(float)
    axes = tuple(range(f.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    spacings = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacings) == 1 and len(axes) > 1:
        spacings = spacings * len(axes)
    out = []
    for ax, h in zip(axes, spacings):
        g = jnp.moveaxis(f, ax, 0)
        if g.shape[0] < 2:
            raise ValueError("gradient: each axis needs at least 2 points")
        if jnp.ndim(h) == 0:
            inner = (g[2:] - g[:-2]) / (2 * h)
            first, last = (g[1] - g[0]) / h, (g[-1] - g[-2]) / h
        else:
            x = jnp.asarray(h).astype(g.dtype)
            dx = jnp.diff(x)
            shape = (-1,) + (1,) * (g.ndim - 1)
            d1, d2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
            inner = (d1 ** 2 * g[2:] - d2 ** 2 * g[:-2] + (d2 ** 2 - d1 ** 2) * g[1:-1]) / (
                d1 * d2 * (d1 + d2))
            first, last = (g[1] - g[0]) / dx[0], (g[-1] - g[-2]) / dx[-1]
        full = jnp.concatenate([first[None], inner, last[None]], axis=0)
        out.append(jnp.moveaxis(full, 0, ax))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis: int = -1, period: float = 2 * np.pi) -> Array:
    """p with jumps larger than discont (default period/2) replaced by their period
    complement, along axis."""
    p = jnp.asarray(p)
    if not np.issubdtype(p.dtype, np.inexact):
        p = p.astype(float)
    discont = period / 2 if discont is None else discont
    moved = jnp.moveaxis(p, axis, -1)
    dd = jnp.diff(moved, axis=-1)
    half = period / 2
    ddmod = jnp.mod(dd + half, period) - half
    ddmod = jnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    fixed = jnp.concatenate([moved[..., :1], moved[..., 1:] + jnp.cumsum(correction, -1)],
                            axis=-1)
    return jnp.moveaxis(fixed, -1, axis)


def gcd(x1, x2) -> Array:
    """The greatest common divisor of integers, by Euclid's algorithm (a fixed number of
    steps enough for the integer width)."""
    a, b = jnp.abs(jnp.asarray(x1)), jnp.abs(jnp.asarray(x2))
    if not (np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer)):
        raise TypeError("gcd: arguments must be integers")
    a, b = jnp.broadcast_arrays(a, b)
    for _ in range(8 * max(a.dtype.itemsize, b.dtype.itemsize) * 3 // 2):
        safe_b = jnp.where(b == 0, 1, b)
        a, b = jnp.where(b == 0, a, b), jnp.where(b == 0, 0, a % safe_b)
    return a


def lcm(x1, x2) -> Array:
    """The least common multiple of integers (0 when either is 0)."""
    a, b = jnp.abs(jnp.asarray(x1)), jnp.abs(jnp.asarray(x2))
    g = gcd(a, b)
    safe_g = jnp.where(g == 0, 1, g)
    return jnp.where(g == 0, 0, a * (b // safe_g))


def bitwise_count(x) -> Array:
    """The number of 1 bits in |x| for integers."""
    x = jnp.asarray(x)
    if not np.issubdtype(x.dtype, np.integer) and x.dtype != np.bool_:
        raise TypeError("bitwise_count: argument must be an integer")
    v = jnp.abs(x).astype(np.dtype(f"uint{8 * x.dtype.itemsize}"))
    count = jnp.zeros(x.shape, jnp.uint8)
    for bit in range(8 * x.dtype.itemsize):
        count = count + ((v >> bit) & 1).astype(jnp.uint8)
    return count


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    return repr(jnp.asarray(arr))


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """NumPy's contraction order for these operands (shapes only matter)."""
    return np.einsum_path(subscripts, *[np.asarray(o) for o in operands], optimize=optimize)


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0) -> Array:
    return jnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count: int = -1, *, sep: str) -> Array:
    return jnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count: int = -1) -> Array:
    return jnp.asarray(np.fromiter(iterable, dtype=dtype, count=count))


def fromfile(*args, **kwargs) -> Array:
    return jnp.asarray(np.fromfile(*args, **kwargs))


def load(file, *args, **kwargs):
    """np.load, with arrays returned as redraft Arrays (npz archives stay NumPy's)."""
    out = np.load(file, *args, **kwargs)
    return jnp.asarray(out) if isinstance(out, np.ndarray) else out


def save(file, arr, allow_pickle: bool = True) -> None:
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds) -> None:
    np.savez(file, *[np.asarray(a) for a in args], **{k: np.asarray(v) for k, v in kwds.items()})
