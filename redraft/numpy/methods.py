"""Attach operators and NumPy-style methods to Array, all routed through redraft.numpy.

Done once at import of redraft.numpy, so the runtime's Array class holds no numerics.
"""
from __future__ import annotations

import functools

import numpy as np

from redraft.runtime import dtypes
from redraft.runtime.array import (Array, install_index_modes, install_numpy_api,
                                   recorder_in, wrap_host)
from redraft.runtime.convert import as_array


def _swap(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


_OPERANDS = (Array, float, int, bool)  # operands that never record (checked first: cheap)


def _operator(fn):
    """`self <op> other`; NotImplemented where `other` records operations (a tracer of a
    function traced for lack of source), so that its reflected operator records this one."""
    def forward(self, other):
        if type(other) not in _OPERANDS and recorder_in(other) is not None:
            return NotImplemented
        return fn(self, other)
    return forward


def _astype(self, dtype, copy: bool = False) -> Array:
    from redraft.numpy.promotion import cast
    from redraft.runtime import dtypes
    out = cast(self, dtypes.check_dtype_arg(dtype, "astype"))
    return wrap_host(out._buf, False) if out._weak else out


def _reshape(self, *shape, order: str = "C") -> Array:
    from redraft.numpy.shapes import reshape
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return reshape(self, shape, order)


def _transpose(self, *axes) -> Array:
    from redraft.numpy.shapes import transpose
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
        axes = axes[0]
    return transpose(self, axes or None)


def _method(fn):
    """`x.name(...)` as jnp.name(x, ...), also taking NumPy's `out=None`: np.sum(x) and its
    kin call the method of an object that is not an ndarray with out=None, as on JAX's."""
    @functools.wraps(fn)
    def method(self, *args, out=None, **kwargs):
        if out is not None:
            raise TypeError(f"{fn.__name__}: out= is not supported (arrays are immutable)")
        return fn(self, *args, **kwargs)
    return method


def _rounding(jnp):
    def round_(self, ndigits=None) -> Array:
        """round(x): to the nearest integer as an int array, or to `ndigits` digits in x's
        own dtype, as round() of a JAX array gives."""
        if ndigits is None:
            return jnp.round(self).astype(dtypes.default_int())
        return jnp.round(self, ndigits)
    return round_


def _view(self, dtype=None) -> Array:
    """The same bytes read as `dtype` (the last axis rescaled where item sizes differ)."""
    if dtype is None:
        return self
    return wrap_host(np.ascontiguousarray(np.asarray(self)).view(np.dtype(dtype)), False)


def _matmul_operand(other):
    return other if isinstance(other, Array) else as_array(other)


def install_methods(jnp) -> None:
    """Give Array its operators (`+`, `@`, `<`, ...) and methods (`.sum()`, `.T`, ...)."""
    from redraft.numpy.indexing import (static_out_of_bounds, at_get_mode, at_update_mode,
                                        getitem, index_update)
    install_numpy_api(jnp, index_update)
    install_index_modes(at_get_mode, at_update_mode, static_out_of_bounds)
    binary = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "truediv": jnp.divide,
        "floordiv": jnp.floor_divide, "mod": jnp.remainder, "pow": jnp.power,
        "matmul": jnp.matmul, "and": jnp.bitwise_and, "or": jnp.bitwise_or,
        "xor": jnp.bitwise_xor, "lshift": jnp.left_shift, "rshift": jnp.right_shift,
        "divmod": jnp.divmod,
    }
    for name, fn in binary.items():
        setattr(Array, f"__{name}__", _operator(fn))
        setattr(Array, f"__r{name}__", _swap(fn))
    comparisons = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less, "le": jnp.less_equal,
                   "gt": jnp.greater, "ge": jnp.greater_equal}
    for name, fn in comparisons.items():
        setattr(Array, f"__{name}__", _operator(fn))
    Array.__neg__ = lambda self: jnp.negative(self)
    Array.__pos__ = lambda self: self
    Array.__abs__ = lambda self: jnp.absolute(self)
    Array.__invert__ = lambda self: jnp.invert(self)
    Array.__round__ = _rounding(jnp)
    Array.view = _view
    Array.tobytes = lambda self, order="C": np.asarray(self).tobytes(order)
    Array.is_fully_addressable = property(lambda self: True)  # one process holds it whole
    Array.__getitem__ = getitem
    reductions = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax",
                  "argmin", "cumsum", "cumprod", "ptp")
    for name in reductions:
        setattr(Array, name, _method(getattr(jnp, name)))
    for name in ("clip", "round", "conj", "conjugate", "dot", "ravel", "squeeze", "swapaxes",
                 "flatten", "nonzero", "sort", "argsort", "take", "trace", "diagonal",
                 "repeat", "real", "imag", "searchsorted", "cumsum"):
        if hasattr(jnp, name):
            setattr(Array, name, _method(getattr(jnp, name)))
    Array.flatten = lambda self, order="C": jnp.ravel(self)
    Array.astype = _astype
    Array.reshape = _reshape
    Array.transpose = _transpose
    Array.T = property(lambda self: jnp.transpose(self))
    Array.mT = property(lambda self: jnp.swapaxes(self, -1, -2))
    Array.real = property(lambda self: jnp.real(self))
    Array.imag = property(lambda self: jnp.imag(self))
    Array.copy = lambda self: self
