"""linear_transpose: the transpose of a linear function, through reverse mode.

For a linear f, the vector-Jacobian product at any point is the transpose map
ct -> f^T(ct), so it is computed with redraft.vjp at the example primals (which fix the
input shapes and dtypes; their values do not matter for a linear f)."""
from __future__ import annotations

from typing import Any, Callable


def linear_transpose(fun: Callable, *primals: Any, reduce_axes=()) -> Callable:
    """The transpose of the linear function `fun` at inputs shaped like `primals`: a function
    of an output cotangent returning the tuple of input cotangents."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose(reduce_axes=...) is not supported")
    from redraft.transforms import vjp
    _, pullback = vjp(fun, *primals)

    def transposed(cotangent) -> tuple:
        return tuple(pullback(cotangent))

    return transposed
