"""A float64 NumPy stand-in for `redraft.numpy`, for the functions the fuzzer's programs use.

The fuzzer runs each generated program twice: with `jnp` bound to redraft.numpy (float32,
the code under test) and with `jnp` bound to this module (float64 NumPy, the reference).
Arrays here are an ndarray subclass with JAX's functional `.at[i].set/add/multiply`.
"""
from __future__ import annotations

import numpy as np

# the largest magnitude and the smallest nonzero one that array results have reached since
# reset() (the fuzzer's test for intermediates that overflow or underflow float32)
EXTREMES = [0.0, np.inf]


def reset() -> None:
    EXTREMES[:] = [0.0, np.inf]


def _note(arr) -> None:
    if arr.size and arr.dtype.kind == "f":
        magnitude = np.abs(arr)
        EXTREMES[0] = max(EXTREMES[0], float(np.max(magnitude)))
        nonzero = magnitude[magnitude > 0]
        if nonzero.size:
            EXTREMES[1] = min(EXTREMES[1], float(np.min(nonzero)))


class Array64(np.ndarray):
    """An ndarray with `.at[...]`: each update returns a new array, as in JAX."""

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        _note(np.asarray(arr))
        return super().__array_wrap__(arr, context, return_scalar)

    @property
    def at(self) -> "_At":
        return _At(self)

    # `a += b` rebinds `a` to a new array, as for immutable jax/redraft arrays; NumPy's
    # in-place update would also change every other name bound to the same buffer.
    def __iadd__(self, other):
        return wrap(np.add(self, other))

    def __isub__(self, other):
        return wrap(np.subtract(self, other))

    def __imul__(self, other):
        return wrap(np.multiply(self, other))

    def __itruediv__(self, other):
        return wrap(np.divide(self, other))

    def __getitem__(self, index):
        return super().__getitem__(_jax_index(self.shape, index, clamp=True))


def _jax_index(shape: tuple, index, clamp: bool) -> tuple:
    """`index` with JAX's rules for integer index arrays: a negative entry counts from the
    end once; then reads clamp into range (clamp) or, for updates, an entry still out of
    range is sent past the end (the caller drops it)."""
    out, axis = [], 0
    for entry in index if isinstance(index, tuple) else (index,):
        if entry is None:
            out.append(entry)
            continue
        if isinstance(entry, np.ndarray) and entry.dtype.kind in "iu":
            n = shape[axis]
            entry = np.where(entry < 0, entry + n, entry)
            entry = np.clip(entry, 0, n - 1) if clamp else np.where(
                (entry < 0) | (entry >= n), n, entry)
        out.append(entry)
        axis += 1
    return tuple(out)


class _At:
    def __init__(self, base: np.ndarray):
        self._base = base

    def __getitem__(self, index) -> "_AtIndex":
        return _AtIndex(self._base, index)


class _AtIndex:
    def __init__(self, base: np.ndarray, index):
        self._base, self._index = base, index

    def _updated(self, combine) -> Array64:
        out = np.array(self._base, dtype=np.float64)
        out[self._index] = combine(out[self._index])
        return out.view(Array64)

    def _scattered(self, ufunc, value) -> Array64:
        """An update at index arrays: out-of-range entries dropped (a trash slot past the
        end of the first axis), repeated ones applied in turn (ufunc.at), as in JAX."""
        base = np.asarray(self._base, dtype=np.float64)
        index = _jax_index(base.shape, self._index, clamp=False)
        out = np.concatenate([base, np.zeros((1,) + base.shape[1:])])
        padded = np.pad(out, [(0, 0)] + [(0, 1)] * (base.ndim - 1))
        target = np.broadcast_to(np.asarray(value, np.float64), padded[index].shape)
        ufunc.at(padded, index, target)
        return padded[tuple(slice(0, d) for d in base.shape)].view(Array64)

    def _has_arrays(self) -> bool:
        index = self._index if isinstance(self._index, tuple) else (self._index,)
        return any(isinstance(e, np.ndarray) and e.dtype.kind in "iu" for e in index)

    def set(self, value) -> Array64:
        if self._has_arrays():
            return self._scattered(_LAST, value)
        return self._updated(lambda old: value)

    def add(self, value) -> Array64:
        if self._has_arrays():
            return self._scattered(np.add, value)
        return self._updated(lambda old: old + value)

    def multiply(self, value) -> Array64:
        if self._has_arrays():
            return self._scattered(np.multiply, value)
        return self._updated(lambda old: old * value)

    def get(self):
        return wrap(self._base[self._index])


class _Last:
    """`ufunc.at` for `set`: the last of repeated entries wins."""

    @staticmethod
    def at(out: np.ndarray, index: tuple, values: np.ndarray) -> None:
        out[index] = values


_LAST = _Last()


def array(values):
    """An index array (the programs' jnp.array of integers)."""
    return np.asarray(values)


def sort(a):
    return wrap(np.sort(a, kind="stable"))


def argsort(a):
    return np.argsort(a, kind="stable")


def wrap(value):
    """A float64 Array64 for arrays, a float64 scalar for 0-d results."""
    arr = np.asarray(value, dtype=np.float64)
    _note(arr)
    return arr.view(Array64) if arr.ndim else np.float64(arr)


def asarray(value):
    return wrap(value)


def tanh(a):
    return wrap(np.tanh(a))


def sin(a):
    return wrap(np.sin(a))


def cos(a):
    return wrap(np.cos(a))


def exp(a):
    return wrap(np.exp(a))


def sum(a, axis=None):  # noqa: A001 - the name jnp uses
    return wrap(np.sum(a, axis=axis))


def mean(a, axis=None):
    return wrap(np.mean(a, axis=axis))


def reshape(a, shape):
    return wrap(np.reshape(a, shape))


def full(shape, fill_value):
    return wrap(np.full(shape, fill_value, dtype=np.float64))


def where(cond, a, b):
    return wrap(np.where(cond, a, b))


def concatenate(arrays, axis=0):
    return wrap(np.concatenate(arrays, axis=axis))


def outer(a, b):
    return wrap(np.outer(a, b))


def matmul(a, b):
    return wrap(np.matmul(a, b))


def stack(arrays, axis=0):
    return wrap(np.stack(arrays, axis=axis))
