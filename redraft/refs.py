"""Mutable array references (jax.new_ref and kin) and `ds`, the slice helper used with them.

A Ref holds an array that `ref[idx] = v` and `ref[idx] += v` replace in place and `ref[idx]`
(or `ref[...]`) reads; `freeze(ref)` returns the final value and invalidates the Ref. In
redraft a Ref lives in eager Python code: compiled and transformed functions are pure
functions of arrays (redraft's frontend rejects item assignment there), so creating or
using a Ref while a function is being compiled raises, saying so.
"""
from __future__ import annotations

from typing import Any

from redraft.runtime.array import Array

__all__ = ["Ref", "new_ref", "empty_ref", "free_ref", "freeze", "ds"]


def _eager_only(what: str) -> None:
    from redraft.runtime.staging_context import active_builder
    if active_builder() is not None:
        raise NotImplementedError(
            f"{what} inside a compiled function: redraft compiles pure functions of arrays, "
            "so mutable references live in eager code; pass and return arrays instead")


class Ref:
    """A mutable reference to an array (see the module docstring)."""

    def __init__(self, value: Array) -> None:
        self._value: Array | None = value

    def _live(self) -> Array:
        if self._value is None:
            raise ValueError("this Ref was freed or frozen: it holds no value any more")
        _eager_only("reading a Ref")
        return self._value

    def __getitem__(self, index: Any) -> Array:
        value = self._live()
        return value if index is Ellipsis or index == () else value[index]

    def __setitem__(self, index: Any, update: Any) -> None:
        from redraft.numpy import asarray
        value = self._live()
        if index is Ellipsis or index == ():
            new = asarray(update).astype(value.dtype)
            if new.shape != value.shape:
                from redraft.numpy import broadcast_to
                new = broadcast_to(new, value.shape)
            self._value = new
        else:
            self._value = value.at[index].set(update)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._live().shape

    @property
    def dtype(self):
        return self._live().dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return "Ref(freed)" if self._value is None else f"Ref({self._value!r})"


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A Ref holding `init_val` (as an array)."""
    from redraft.numpy import asarray
    _eager_only("new_ref")
    return Ref(asarray(init_val))


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A Ref of `ty`'s shape and dtype (a ShapeDtypeStruct or an array), zero-filled (the
    contents of an empty Ref are unspecified in JAX)."""
    from redraft.numpy import zeros
    _eager_only("empty_ref")
    return Ref(zeros(tuple(ty.shape), ty.dtype))


def free_ref(ref: Ref) -> None:
    """Invalidate `ref`: later reads and writes raise."""
    ref._live()
    ref._value = None


def freeze(ref: Ref) -> Array:
    """The final value of `ref`, which is invalidated."""
    value = ref._live()
    ref._value = None
    return value


def ds(start: Any, size: Any = None, stride: int | None = None) -> slice:
    """The slice of `size` elements from `start` with `stride` (1 by default): a Python slice,
    so `x[ds(2, 3)]` indexes arrays and Refs. Start and size must be Python integers here;
    for a start known only at run time use lax.dynamic_slice."""
    if isinstance(start, Array) or isinstance(size, Array):
        raise TypeError("ds needs Python integers for start and size in redraft; for a start "
                        "known only at run time use lax.dynamic_slice_in_dim")
    if size is None:
        return slice(None, start, stride)
    step = 1 if stride is None else int(stride)
    return slice(int(start), int(start) + int(size) * step, step)
