"""Checks shared by primitive families: broadcasting, axes and dtypes, with clear errors."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def broadcast_shapes(*shapes: tuple[int, ...], op: str = "operation") -> tuple[int, ...]:
    """NumPy's broadcasting of `shapes`; the error names every shape involved."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            listed = ", ".join(str(tuple(s)) for s in shapes)
            raise ValueError(f"{op}: shapes {listed} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def canonical_axis(axis: int, ndim: int, op: str = "operation") -> int:
    """A non-negative axis; negative axes count from the end."""
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{op}: axis {axis} is out of range for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def canonical_axes(axes, ndim: int, op: str = "operation") -> tuple[int, ...]:
    """A sorted tuple of distinct non-negative axes; `None` means every axis."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = tuple(sorted(canonical_axis(a, ndim, op) for a in axes))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {tuple(axes)}")
    return out


def check_dtype_kind(dtype: np.dtype, kinds: str, op: str, what: str) -> None:
    """Refuse `dtype` unless its NumPy kind letter is in `kinds`."""
    if np.dtype(dtype).kind not in kinds:
        raise TypeError(f"{op} does not accept dtype {np.dtype(dtype).name}: it needs {what}")


def check_same_dtypes(dtypes_: Sequence[np.dtype], op: str) -> None:
    if len({np.dtype(d) for d in dtypes_}) > 1:
        names = ", ".join(np.dtype(d).name for d in dtypes_)
        raise TypeError(f"lax.{op} requires arguments of the same dtype, got {names} "
                        f"(redraft.numpy promotes types; redraft.lax does not)")
