"""Products: dot, vdot, matmul, inner, outer, tensordot, trace, kron; built on dot_general."""
from __future__ import annotations

import numpy as np

from redraft.compiler.primitives.linalg import dot_general
from redraft.compiler.primitives.checks import canonical_axis
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array

from redraft.numpy.promotion import promote
from redraft.numpy import shapes, ufuncs, reductions


class ContractionShapeError(TypeError, ValueError):
    """Contracted dimensions of different sizes. A TypeError, as JAX raises (programs catch
    it), and a ValueError, as NumPy raises."""


def _contraction_error(what: str, a_shape, b_shape, a_dim: int, b_dim: int) -> Exception:
    """JAX's wording first, then which operands and dimensions disagree."""
    return ContractionShapeError(
        f"dot_general requires contracting dimensions to have the same shape, got "
        f"({a_shape[a_dim]},) and ({b_shape[b_dim]},): {what}: shapes {a_shape} and "
        f"{b_shape} are not aligned: {a_shape[a_dim]} (dim {a_dim}) != {b_shape[b_dim]} "
        f"(dim {b_dim})")


def dot(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """NumPy's dot: scalars multiply; otherwise contract a's last axis with b's second-last."""
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return ufuncs.multiply(a, b)
    contract_b = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[contract_b]:
        raise _contraction_error("dot", a.shape, b.shape, a.ndim - 1, contract_b)
    return dot_general(a, b, (((a.ndim - 1,), (contract_b,)), ((), ())),
                       preferred_element_type=preferred_element_type)


def matmul(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """NumPy's matmul: stacks of matrices with broadcast leading (batch) axes."""
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-dimensional, got shapes "
                         f"{a.shape} and {b.shape}")
    a2 = shapes.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = shapes.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise _contraction_error("matmul", a2.shape, b2.shape, a2.ndim - 1, b2.ndim - 2)
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = shapes.broadcast_to(a2, batch + a2.shape[-2:])
    b3 = shapes.broadcast_to(b2, batch + b2.shape[-2:])
    nb = len(batch)
    out = dot_general(a3, b3, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                      preferred_element_type=preferred_element_type)
    if a.ndim == 1:
        out = shapes.squeeze(out, -2)
    if b.ndim == 1:
        out = shapes.squeeze(out, -1)
    return out


def vdot(a, b, *, precision=None) -> Array:
    """Dot product of the flattened arrays (the first is conjugated)."""
    a, b = promote(a, b)
    a, b = shapes.ravel(a), shapes.ravel(b)
    if a.size != b.size:
        raise ValueError(f"vdot: arrays of sizes {a.size} and {b.size} differ")
    if a.dtype.kind == "c":
        a = ufuncs.conj(a)
    return dot_general(a, b, (((0,), (0,)), ((), ())))


def vecdot(a, b, axis: int = -1) -> Array:
    a, b = promote(a, b)
    if a.dtype.kind == "c":
        a = ufuncs.conj(a)
    return reductions.sum(ufuncs.multiply(a, b), axis=axis)


def inner(a, b) -> Array:
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return ufuncs.multiply(a, b)
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b) -> Array:
    a, b = promote(a, b)
    return ufuncs.multiply(shapes.reshape(shapes.ravel(a), (-1, 1)), shapes.ravel(b))


def tensordot(a, b, axes=2) -> Array:
    a, b = promote(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} does not fit shapes {a.shape}, {b.shape}")
        ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        ca, cb = axes
        ca = tuple(canonical_axis(x, a.ndim, "tensordot") for x in np.atleast_1d(ca))
        cb = tuple(canonical_axis(x, b.ndim, "tensordot") for x in np.atleast_1d(cb))
    return dot_general(a, b, ((ca, cb), ((), ())))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Array:
    x = as_array(a)
    from redraft.numpy.arrays import diagonal
    return reductions.sum(diagonal(x, offset, axis1, axis2), axis=-1, dtype=dtype)


def kron(a, b) -> Array:
    a, b = promote(a, b)
    nd = max(a.ndim, b.ndim)
    a = shapes.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = shapes.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_exp = shapes.reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    b_exp = shapes.reshape(b, tuple(x for d in b.shape for x in (1, d)))
    out = ufuncs.multiply(a_exp, b_exp)
    return shapes.reshape(out, tuple(p * q for p, q in zip(a.shape, b.shape)))
