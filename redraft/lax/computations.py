"""The binary computations lax's reductions and scans know by name.

reduce, reduce_window and associative_scan take a computation as a function value. The
transforms cannot follow a function value through library code, so these functions map the
computations they know (lax.add, mul, max, min, bitwise and/or/xor, their jnp and operator
twins, jnp.logaddexp) to a name, and apply the one a name says; any other callable is refused with a
TypeError saying so.
"""
from __future__ import annotations

import operator

from redraft.compiler.primitives.elementwise import LAX_FUNCTIONS, convert_element_type, select
from redraft.numpy import ufuncs
from redraft.runtime.array import Array

ADD, MUL, MAX, MIN = (LAX_FUNCTIONS[n] for n in ("add", "mul", "max", "min"))
AND, OR, XOR = (LAX_FUNCTIONS[n] for n in ("and", "or", "xor"))
_SUB, _ABS, _EXP, _LOG1P, _EQ, _NEG = (LAX_FUNCTIONS[n] for n in (
    "sub", "abs", "exp", "log1p", "eq", "neg"))

# the computations known by name: the transforms read reduce and reduce_window with the
# operation chosen by that name, so they differentiate and batch through it
_KINDS: dict = {
    ADD: "add", ufuncs.add: "add", operator.add: "add",
    MUL: "mul", ufuncs.multiply: "mul", operator.mul: "mul",
    MAX: "max", ufuncs.maximum: "max", MIN: "min", ufuncs.minimum: "min",
    AND: "and", ufuncs.bitwise_and: "and", ufuncs.logical_and: "and", operator.and_: "and",
    OR: "or", ufuncs.bitwise_or: "or", ufuncs.logical_or: "or", operator.or_: "or",
    XOR: "xor", ufuncs.bitwise_xor: "xor", operator.xor: "xor",
    ufuncs.logaddexp: "logaddexp",
}


def kind_of(computation, op: str) -> str:
    """The name of a known computation; a TypeError for any other."""
    try:
        kind = _KINDS.get(computation)
    except TypeError:  # an unhashable callable
        kind = None
    if kind is None:
        raise TypeError(f"{op}: the computation must be one redraft knows by name, so that "
                        "grad and vmap can go through it: lax.add, lax.mul, lax.max, lax.min, "
                        "lax.bitwise_and/or/xor, or their jnp and operator twins; got "
                        f"{computation!r}")
    return kind


def combine(kind: str, a: Array, b: Array) -> Array:
    """The known computation `kind` applied to a and b."""
    if kind == "add":
        return ADD(a, b)
    if kind == "mul":
        return MUL(a, b)
    if kind == "max":
        return MAX(a, b)
    if kind == "min":
        return MIN(a, b)
    if kind == "and":
        return AND(a, b)
    if kind == "or":
        return OR(a, b)
    if kind == "logaddexp":
        return logaddexp(a, b)
    return XOR(a, b)


def logaddexp(a: Array, b: Array) -> Array:
    """log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|)); equal operands
    (infinities included) give a + log 2, and a zero gap where they are equal."""
    top = MAX(a, b)
    same = _EQ(a, b)
    zero = convert_element_type(0, a.dtype)
    gap = _NEG(_ABS(_SUB(select(same, zero, a), select(same, zero, b))))
    return ADD(top, _LOG1P(_EXP(gap)))
