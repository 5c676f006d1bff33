"""Strided views: how the backend addresses a value's elements without copying it.

Every array value lives in a buffer (an argument, a workspace slice, a constant) and is
read through a `View`: base pointer, element offset and per-axis element strides. Shape
primitives that only move indices around (broadcast_in_dim, transpose, reshape of a
contiguous value, squeeze, slice, rev, basic getitem) make new views of the same buffer, so
the loop nests that read them gather through strides and nothing is copied. A stride of 0
broadcasts. (Which value owns a buffer, and how long it lives, is storage.py's business.)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from llvmlite import ir


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of `shape`."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


@dataclass(frozen=True)
class View:
    """Elements of `dtype` at base + offset + sum(index[d] * strides[d])."""
    base: ir.Value | None
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    const: Any = None           # a scalar known at compile time (then base is None)

    @staticmethod
    def contiguous(base: ir.Value, dtype: np.dtype, shape: tuple[int, ...]) -> View:
        return View(base, np.dtype(dtype), tuple(shape), c_strides(shape), 0)

    @staticmethod
    def constant(value, dtype: np.dtype, shape: tuple[int, ...] = ()) -> View:
        """A compile-time scalar, broadcast to `shape`."""
        return View(None, np.dtype(dtype), tuple(shape), (0,) * len(shape), 0,
                    np.asarray(value, dtype))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def is_contiguous(self) -> bool:
        """Row-major and dense (size-1 axes may have any stride)."""
        want = c_strides(self.shape)
        return self.const is None and all(
            s == w for s, w, d in zip(self.strides, want, self.shape) if d != 1)

    # ---- index maps -----------------------------------------------------------------------

    def broadcast_to(self, shape: tuple[int, ...]) -> View:
        """NumPy broadcasting: align trailing axes, stride 0 where this view has size 1."""
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        strides = [0] * lead
        for d, (n, s) in enumerate(zip(self.shape, self.strides)):
            target = shape[lead + d]
            if n not in (1, target):
                raise ValueError(f"cannot broadcast {self.shape} to {shape}")
            strides.append(s if n == target and n != 1 else 0)
        return replace(self, shape=tuple(shape), strides=tuple(strides))

    def broadcast_in_dim(self, shape: tuple[int, ...], dims: tuple[int, ...]) -> View:
        strides = [0] * len(shape)
        for src, dst in enumerate(dims):
            if self.shape[src] == shape[dst] and shape[dst] != 1:
                strides[dst] = self.strides[src]
        return replace(self, shape=tuple(shape), strides=tuple(strides))

    def transpose(self, perm: tuple[int, ...]) -> View:
        return replace(self, shape=tuple(self.shape[p] for p in perm),
                       strides=tuple(self.strides[p] for p in perm))

    def squeeze(self, dims: tuple[int, ...]) -> View:
        keep = [d for d in range(self.ndim) if d not in dims]
        return replace(self, shape=tuple(self.shape[d] for d in keep),
                       strides=tuple(self.strides[d] for d in keep))

    def slice(self, start: tuple[int, ...], steps: tuple[int, ...],
              shape: tuple[int, ...]) -> View:
        """Elements start[d] + i * steps[d] along each axis (steps may be negative)."""
        if self.const is not None:
            return replace(self, shape=tuple(shape), strides=(0,) * len(shape))
        if any(n == 0 for n in shape):
            return replace(self, shape=tuple(shape), strides=c_strides(shape))
        offset = self.offset + sum(a * s for a, s in zip(start, self.strides))
        strides = tuple(s * k for s, k in zip(self.strides, steps))
        return replace(self, shape=tuple(shape), strides=strides, offset=offset)

    def rev(self, dims: tuple[int, ...]) -> View:
        start = [self.shape[d] - 1 if d in dims and self.shape[d] else 0
                 for d in range(self.ndim)]
        steps = [-1 if d in dims else 1 for d in range(self.ndim)]
        return self.slice(tuple(start), tuple(steps), self.shape)

    def reshape(self, shape: tuple[int, ...]) -> View | None:
        """The same elements in row-major order as `shape`, or None if that needs a copy."""
        shape = tuple(shape)
        if self.const is not None:
            return replace(self, shape=shape, strides=(0,) * len(shape))
        if self.size == 0 or self.is_contiguous():
            return replace(self, shape=shape, strides=c_strides(shape))
        strides = _nocopy_strides(self.shape, self.strides, shape)
        return None if strides is None else replace(self, shape=shape, strides=strides)

    def getitem(self, spec: tuple, shape: tuple[int, ...]) -> View | None:
        """Basic (static) indexing; None when `spec` has array or mask entries."""
        start, steps, axis = [], [], 0
        out_strides: list[int] = []
        for entry in spec:
            kind = entry[0]
            if kind == "none":
                out_strides.append(0)
                continue
            if kind == "int":
                start.append(entry[1])
                steps.append(1)
            elif kind == "slice":
                start.append(entry[1])
                steps.append(entry[3])
                out_strides.append(self.strides[axis] * entry[3])
            else:
                return None
            axis += 1
        for d in range(axis, self.ndim):  # trailing axes not named by the index
            start.append(0)
            steps.append(1)
            out_strides.append(self.strides[d])
        if self.const is not None or any(n == 0 for n in shape):
            return replace(self, shape=tuple(shape), strides=(0,) * len(shape)
                           if self.const is not None else c_strides(shape))
        offset = self.offset + sum(a * s for a, s in zip(start, self.strides))
        return replace(self, shape=tuple(shape), strides=tuple(out_strides), offset=offset)


def _nocopy_strides(old_shape, old_strides, new_shape) -> tuple[int, ...] | None:
    """Strides giving `new_shape` over the same elements (NumPy's no-copy reshape rule)."""
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    new = list(new_shape)
    out = [0] * len(new)
    i = j = 0
    while i < len(old) and j < len(new):
        if new[j] == 1:
            j += 1
            continue
        i0, j0 = i, j
        po, pn = old[i][0], new[j]
        while po != pn:
            if po < pn:
                i += 1
                po *= old[i][0]
            else:
                j += 1
                pn *= new[j]
        for k in range(i0, i):  # the old axes of the group must be contiguous together
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        step = old[i][1]
        for k in range(j, j0 - 1, -1):
            out[k] = step
            step *= new[k]
        i += 1
        j += 1
    return tuple(out)
