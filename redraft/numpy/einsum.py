"""einsum: Einstein summation, lowered to diagonals, reduce_sum, dot_general and transpose.

A subscript string is parsed into one tuple of labels per operand. Letters are labels;
the dimensions an ellipsis stands for get labels ".0", ".1", ... counted from the right, so
ellipsis dimensions of different operands line up and broadcast as in NumPy. Then:

1. a label repeated within one operand takes that operand's diagonal;
2. a label no other operand and not the output needs is summed out at once;
3. operands are contracted pairwise, left to right, with dot_general: shared labels that
   are still needed later become batch dimensions, the others are contracted;
4. the result is summed over leftover labels and transposed into the output's order.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from redraft.compiler.primitives import reductions as lax_red
from redraft.compiler.primitives.linalg import dot_general
from redraft.runtime.array import Array

from redraft.numpy import shapes
from redraft.numpy.arrays import diagonal
from redraft.numpy.promotion import cast, promote

__all__ = ["einsum"]

Labels = tuple[str, ...]
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---- parsing ----------------------------------------------------------------------------------

def _interleaved_to_string(args: Sequence) -> tuple[str, list]:
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) as a subscript string."""
    operands, terms = list(args[0::2]), [_sublist_term(s) for s in args[1::2]]
    if len(args) % 2:
        operands = operands[:-1]
        return ",".join(terms[:len(operands)]) + "->" + _sublist_term(args[-1]), operands
    return ",".join(terms), operands


def _sublist_term(sublist) -> str:
    out = []
    for item in sublist:
        if item is Ellipsis:
            out.append("...")
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < len(_LETTERS):
            out.append(_LETTERS[int(item)])
        else:
            raise ValueError(f"einsum: sublist entries must be ints in [0, 52) or ..., "
                             f"got {item!r}")
    return "".join(out)


def _term_letters(term: str, where: str) -> tuple[list[str], bool]:
    """The letters of one term and whether it has an ellipsis."""
    has_ellipsis = "..." in term
    if term.count("...") > 1:
        raise ValueError(f"einsum: {where} term {term!r} has more than one ellipsis")
    letters = list(term.replace("...", ""))
    for ch in letters:
        if ch not in _LETTERS:
            raise ValueError(f"einsum: invalid subscript {ch!r} in {where} term {term!r}; "
                             "subscripts must be letters")
    return letters, has_ellipsis


def _ellipsis_labels(count: int) -> list[str]:
    return [f".{count - 1 - i}" for i in range(count)]


def _input_labels(term: str, ndim: int, index: int) -> Labels:
    letters, has_ellipsis = _term_letters(term, f"operand {index}")
    extra = ndim - len(letters)
    if extra < 0 or (extra and not has_ellipsis):
        raise ValueError(f"einsum: operand {index} has rank {ndim} but its subscripts "
                         f"{term!r} name {len(letters)} dimensions")
    if not has_ellipsis:
        return tuple(letters)
    head, tail = term.split("...")
    return tuple(list(head) + _ellipsis_labels(extra) + list(tail))


def _output_labels(term: str | None, inputs: list[Labels]) -> Labels:
    """Explicit output labels, or NumPy's implicit ones (ellipsis, then letters seen once,
    in alphabetical order)."""
    n_ellipsis = max((sum(lab.startswith(".") for lab in labels) for labels in inputs),
                     default=0)
    if term is None:
        counts: dict[str, int] = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        once = sorted(lab for lab, c in counts.items() if c == 1 and not lab.startswith("."))
        return tuple(_ellipsis_labels(n_ellipsis) + once)
    letters, has_ellipsis = _term_letters(term, "output")
    if len(set(letters)) != len(letters):
        raise ValueError(f"einsum: output subscripts {term!r} repeat a label")
    seen = {lab for labels in inputs for lab in labels}
    for ch in letters:
        if ch not in seen:
            raise ValueError(f"einsum: output label {ch!r} does not appear in any input")
    if not has_ellipsis:
        return tuple(letters)
    head, tail = term.split("...")
    return tuple(list(head) + _ellipsis_labels(n_ellipsis) + list(tail))


def _parse(subscripts: str, operands: list[Array]) -> tuple[list[Labels], Labels]:
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    lhs, out_term = spec.split("->") if "->" in spec else (spec, None)
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, but "
                         f"{len(operands)} were given")
    inputs = [_input_labels(t, x.ndim, i) for i, (t, x) in enumerate(zip(terms, operands))]
    return inputs, _output_labels(out_term, inputs)


# ---- shape checks and per-operand simplification -----------------------------------------

def _label_sizes(operands: list[Array], inputs: list[Labels]) -> dict[str, int]:
    """Each label's size; sizes of 1 broadcast, any other mismatch is an error."""
    sizes: dict[str, int] = {}
    for i, (x, labels) in enumerate(zip(operands, inputs)):
        for lab, dim in zip(labels, x.shape):
            known = sizes.setdefault(lab, dim)
            if dim != 1 and known != 1 and dim != known:
                name = "an ellipsis dimension" if lab.startswith(".") else f"label {lab!r}"
                raise ValueError(f"einsum: {name} has size {known} in one operand and {dim} "
                                 f"in operand {i} (shape {x.shape})")
            if known == 1:
                sizes[lab] = dim
    return sizes


def _drop_broadcast_axes(x: Array, labels: Labels, sizes: dict[str, int]
                         ) -> tuple[Array, Labels]:
    """Squeeze size-1 axes whose label is larger elsewhere: they broadcast."""
    axes = [i for i, (lab, d) in enumerate(zip(labels, x.shape)) if d == 1 and sizes[lab] != 1]
    if not axes:
        return x, labels
    return shapes.squeeze(x, tuple(axes)), tuple(lab for i, lab in enumerate(labels)
                                                 if i not in axes)


def _take_diagonals(x: Array, labels: Labels) -> tuple[Array, Labels]:
    """Replace every pair of axes sharing a label by their diagonal (a new last axis)."""
    while len(set(labels)) != len(labels):
        lab = next(lab for lab in labels if labels.count(lab) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        x = diagonal(x, 0, i, j)
        labels = tuple(lb for k, lb in enumerate(labels) if k not in (i, j)) + (lab,)
    return x, labels


def _sum_unneeded(x: Array, labels: Labels, needed: set[str]) -> tuple[Array, Labels]:
    """Sum out the axes whose labels nothing later needs (keeping the dtype, as NumPy)."""
    axes = tuple(i for i, lab in enumerate(labels) if lab not in needed)
    if not axes:
        return x, labels
    return lax_red.reduce_sum(x, axes), tuple(lab for lab in labels if lab in needed)


# ---- contraction ------------------------------------------------------------------------------

def _contract_pair(a: Array, a_labels: Labels, b: Array, b_labels: Labels, needed: set[str],
                   preferred_element_type) -> tuple[Array, Labels]:
    """dot_general of two operands: shared labels still needed are batch, the rest summed."""
    shared = [lab for lab in a_labels if lab in b_labels]
    batch = [lab for lab in shared if lab in needed]
    contract = [lab for lab in shared if lab not in needed]
    dims = ((tuple(a_labels.index(lab) for lab in contract),
             tuple(b_labels.index(lab) for lab in contract)),
            (tuple(a_labels.index(lab) for lab in batch),
             tuple(b_labels.index(lab) for lab in batch)))
    out = dot_general(a, b, dims, preferred_element_type=preferred_element_type)
    free_a = [lab for lab in a_labels if lab not in shared]
    free_b = [lab for lab in b_labels if lab not in shared]
    return out, tuple(batch + free_a + free_b)


def _contract_all(ops: list[tuple[Array, Labels]], output: Labels,
                  preferred_element_type) -> tuple[Array, Labels]:
    """Contract the operands left to right into one (array, labels)."""
    while len(ops) > 1:
        (a, a_labels), (b, b_labels) = ops[0], ops[1]
        later = set(output).union(*(set(labels) for _, labels in ops[2:]))
        a, a_labels = _sum_unneeded(a, a_labels, later | set(b_labels))
        b, b_labels = _sum_unneeded(b, b_labels, later | set(a_labels))
        ops = [_contract_pair(a, a_labels, b, b_labels, later, preferred_element_type)] + ops[2:]
    return ops[0]


def pairwise(subscripts: str, n: int) -> list[tuple[str, int]] | None:
    """An einsum of n > 2 operands as a chain of two-operand einsums, left to right:
    [(subscripts of step k, index of the operand it brings in)], each step keeping the
    labels a later operand or the output still needs; None where the subscripts hold '...'
    or do not name n operands. Transforms use it: their rules take one or two operands."""
    text = subscripts.replace(" ", "")
    if "." in text or n < 3:
        return None
    lhs, arrow, out = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != n:
        return None
    if not arrow:  # NumPy's implicit output: the labels used once, in order
        out = "".join(sorted(lab for lab in set(lhs) - {","} if lhs.count(lab) == 1))
    chain, acc = [], inputs[0]
    for k in range(1, n):
        needed = set(out).union(*inputs[k + 1:])
        keep = out if k == n - 1 else "".join(
            dict.fromkeys(lab for lab in acc + inputs[k] if lab in needed))
        chain.append((f"{acc},{inputs[k]}->{keep}", k))
        acc = keep
    return chain


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None) -> Array:
    """Einstein summation over the operands as `subscripts` describes (NumPy's rules:
    implicit or explicit output, '...', repeated labels for diagonals and traces)."""
    if out is not None:
        raise TypeError("einsum: out= is not supported (arrays are immutable)")
    if not isinstance(subscripts, str):
        subscripts, operand_list = _interleaved_to_string((subscripts,) + operands)
        operands = tuple(operand_list)
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    arrays = promote(*operands)
    inputs, output = _parse(subscripts, arrays)
    sizes = _label_sizes(arrays, inputs)
    ops = []
    for i, (x, labels) in enumerate(zip(arrays, inputs)):
        x, labels = _drop_broadcast_axes(x, labels, sizes)
        x, labels = _take_diagonals(x, labels)
        others = set(output).union(*(set(lb) for j, lb in enumerate(inputs) if j != i))
        ops.append(_sum_unneeded(x, labels, others))
    result, labels = _contract_all(ops, output, preferred_element_type)
    result, labels = _sum_unneeded(result, labels, set(output))
    result = shapes.transpose(result, tuple(labels.index(lab) for lab in output))
    if preferred_element_type is not None:
        result = cast(result, preferred_element_type)
    return result
