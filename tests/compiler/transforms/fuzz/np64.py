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

    def set(self, value) -> Array64:
        return self._updated(lambda old: value)

    def add(self, value) -> Array64:
        return self._updated(lambda old: old + value)

    def multiply(self, value) -> Array64:
        return self._updated(lambda old: old * value)

    def get(self):
        return wrap(self._base[self._index])


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
