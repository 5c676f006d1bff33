"""1-D convolution and correlation, as JAX builds them: one lax.conv_general_dilated.

XLA's convolution is a cross-correlation, so `convolve` flips the kernel first and
`correlate` conjugates it. Both promote their operands to a common inexact dtype
(`convolve(int32 array, float32 array)` is float32).
"""
from __future__ import annotations

from redraft.compiler.primitives import shape as lax_shape
from redraft.runtime.array import Array

from redraft.numpy import shapes, ufuncs
from redraft.numpy.promotion import promote_inexact

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _padding(mode: str, kernel_size: int) -> tuple[int, int]:
    """The (low, high) zero padding of the signal for `mode`."""
    if mode == "valid":
        return (0, 0)
    if mode == "same":
        return (kernel_size // 2, kernel_size - kernel_size // 2 - 1)
    return (kernel_size - 1, kernel_size - 1)


def _conv(x, y, mode: str, op: str, precision, preferred_element_type) -> Array:
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {list(_MODES)}, got {mode!r}")
    from redraft.compiler.primitives.conv import conv_general_dilated
    x, y = promote_inexact(x, y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only supports 1-dimensional inputs, got shapes {x.shape} "
                         f"and {y.shape}")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}")
    reverse_output = False
    if op == "correlate":
        y = ufuncs.conj(y) if y.dtype.kind == "c" else y
        if x.shape[0] < y.shape[0]:
            x, y, reverse_output = y, x, True
    elif x.shape[0] < y.shape[0]:
        x, y = y, x
    if op == "convolve":
        y = lax_shape.rev(y, (0,))
    padding = _padding(mode, y.shape[0])
    out = conv_general_dilated(shapes.reshape(x, (1, 1, -1)), shapes.reshape(y, (1, 1, -1)),
                               (1,), [padding], precision=precision,
                               preferred_element_type=preferred_element_type)
    out = shapes.reshape(out, (-1,))
    return lax_shape.rev(out, (0,)) if reverse_output else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None
             ) -> Array:
    """Discrete linear convolution of two 1-D arrays ('full', 'same' or 'valid')."""
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None
              ) -> Array:
    """Cross-correlation of two 1-D arrays ('valid', 'same' or 'full')."""
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)
